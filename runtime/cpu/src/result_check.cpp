// Executor::check: compares a run's outputs with the collective's definition.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>

#include <fmt/format.h>

#include "buffer_location.h"
#include "element_ops.h"
#include "input_values.h"
#include "run_cache.h"
#include "schedule.h"
#include "weft/cpu/cpu_executor.h"
#include "weft/cpu/plan.h"

namespace weft::cpu {

namespace {

constexpr std::size_t kMismatchesKept = 10;

using detail::ExpectedChunk;

class Checker {
 public:
  // `inputs` null: the run started from make_inputs' values, made again here chunk by chunk.
  Checker(const ir::Algorithm& algo, const RunOptions& options, const detail::ElementOps& ops,
          const std::vector<RankBuffers>* inputs, detail::ExpectedByList& memo)
      : algo_(algo), options_(options), ops_(ops), inputs_(inputs), memo_(memo) {
    if (inputs_ == nullptr) made_.resize(options_.chunk_elements * ops_.size);
  }

  // The expected values of a list with several contributors, computed once per list: an
  // allreduce's ranks all expect the same list for a chunk.
  const ExpectedChunk& expected(int list, std::span<const ChunkId> contributors) {
    auto [it, inserted] = memo_.try_emplace(list);
    if (inserted) it->second = compute(contributors);
    return it->second;
  }

  // The chunk's input values; where they are made here, valid until the next call.
  const std::byte* input_chunk(ChunkId id) {
    if (inputs_ == nullptr) {
      detail::store_input_chunk(ops_, options_.op, id.rank, id.chunk, options_.chunk_elements,
                                made_.data());
      return made_.data();
    }
    const auto where =
        detail::locate(algo_, id.rank, ir::BufferKind::Input, id.chunk, options_.in_place);
    const auto& bytes =
        detail::bytes_of((*inputs_)[static_cast<std::size_t>(id.rank)], where.buffer);
    return bytes.data() +
           static_cast<std::size_t>(where.chunk) * options_.chunk_elements * ops_.size;
  }

  // Contributor by contributor, each element's terms in the contributors' order.
  ExpectedChunk compute(std::span<const ChunkId> contributors) {
    const std::size_t elements = options_.chunk_elements;
    ExpectedChunk out;
    if (!is_floating(ops_.type)) {
      const std::byte* first = input_chunk(contributors.front());
      out.exact.assign(first, first + elements * ops_.size);
      for (std::size_t k = 1; k < contributors.size(); ++k) {
        ops_.combine(out.exact.data(), out.exact.data(), input_chunk(contributors[k]), elements);
      }
      return out;
    }
    const long double infinity = std::numeric_limits<long double>::infinity();
    std::vector<long double> sum(elements, 0), magnitude(elements, 0), product(elements, 1);
    std::vector<long double> low(elements, infinity), high(elements, -infinity);
    for (const ChunkId id : contributors) {
      const std::byte* chunk = input_chunk(id);
      for (std::size_t e = 0; e < elements; ++e) {
        const long double x = ops_.value(chunk + e * ops_.size);
        sum[e] += x;
        magnitude[e] += std::fabs(x);
        product[e] *= x;
        low[e] = std::min(low[e], x);
        high[e] = std::max(high[e], x);
      }
    }
    const auto n = static_cast<long double>(contributors.size());
    const auto u = static_cast<long double>(detail::unit_roundoff(ops_.type));
    const auto tiny = static_cast<long double>(detail::smallest_subnormal(ops_.type));
    out.value.resize(elements);
    out.tolerance.resize(elements);
    for (std::size_t e = 0; e < elements; ++e) {
      long double exact = 0, scale = 0;
      switch (options_.op) {
        case ReduceOp::Sum:
          exact = sum[e], scale = magnitude[e];
          break;
        case ReduceOp::Avg: {
          const auto ranks = static_cast<long double>(algo_.ngpus);
          exact = sum[e] / ranks, scale = magnitude[e] / ranks;
          break;
        }
        case ReduceOp::Prod:
          exact = product[e], scale = std::fabs(product[e]);
          break;
        case ReduceOp::Min:
          exact = low[e];
          break;  // one of the inputs: exact
        case ReduceOp::Max:
          exact = high[e];
          break;
      }
      out.value[e] = exact;
      // Each of the (at most n) roundings errs by u relative to a partial result bounded by
      // `scale`; the n + 1 leaves room for the premultiplication of avg and the double rounding
      // of half and bfloat16 through float. Underflow errs by at most `tiny` per operation.
      out.tolerance[e] = scale > 0 ? (n + 1) * u * scale + n * tiny : 0;
    }
    return out;
  }

 private:
  const ir::Algorithm& algo_;
  const RunOptions& options_;
  const detail::ElementOps& ops_;
  const std::vector<RankBuffers>* inputs_;
  std::vector<std::byte> made_;  // a chunk made again, where inputs_ is null
  detail::ExpectedByList& memo_;
};

std::string describe_expected(const detail::ElementOps& ops, const ExpectedChunk& expected,
                              std::size_t e) {
  if (!expected.exact.empty()) return ops.format(expected.exact.data() + e * ops.size);
  const auto value = static_cast<double>(expected.value[e]);
  if (expected.tolerance[e] == 0) return fmt::format("{:.9g}", value);
  return fmt::format("{:.9g} (± {:.2g})", value, static_cast<double>(expected.tolerance[e]));
}

std::string describe_found(const detail::ElementOps& ops, const std::byte* element) {
  std::string text = ops.format(element);
  if (detail::is_poison(ops.type, element))
    text += " (poison: never written, or computed from an element that was not)";
  return text;
}

// Empty when every chunk the spec names exists; otherwise the first one that does not.
std::string check_spec_fits(const ir::Algorithm& algo, const CollectiveSpec& spec) {
  if (spec.ngpus == 0) {
    return fmt::format(
        "no collective spec to check '{}' against (a custom collective needs its own; a standard "
        "one needs nchunksperloop to fit the ranks)",
        spec.name.empty() ? algo.collective_name : spec.name);
  }
  const ExpectedOutputs& expected = spec.expected;
  if (spec.ngpus != algo.ngpus || expected.ranks() != algo.ngpus) {
    return fmt::format("the collective spec is for {} ranks, the algorithm has {}", spec.ngpus,
                       algo.ngpus);
  }
  // Every contributor is checked against its rank's input extent, looked up once per rank, and
  // every list once however many chunks share it.
  std::vector<int> input_extents(static_cast<std::size_t>(algo.ngpus));
  for (int r = 0; r < algo.ngpus; ++r) {
    input_extents[static_cast<std::size_t>(r)] = ir::input_extent_chunks(algo, r);
  }
  std::vector<char> fits(static_cast<std::size_t>(expected.lists()), 0);
  for (int r = 0; r < spec.ngpus; ++r) {
    const int extent = ir::output_extent_chunks(algo, r);
    if (expected.chunks(r) > std::max(extent, 0)) {
      return fmt::format("the collective spec names {} output chunks of rank {}, which has {}",
                         expected.chunks(r), r, extent);
    }
    for (int c = 0; c < expected.chunks(r); ++c) {
      const int list = expected.list(r, c);
      if (list == ExpectedOutputs::kUnspecified || fits[static_cast<std::size_t>(list)]) continue;
      for (ChunkId id : expected.items(list)) {
        if (id.rank < 0 || id.rank >= algo.ngpus || id.chunk < 0 ||
            id.chunk >= input_extents[static_cast<std::size_t>(id.rank)]) {
          return fmt::format(
              "the collective spec has rank {} output chunk {} take input chunk {} of rank {}, "
              "which does not exist",
              r, c, id.chunk, id.rank);
        }
      }
      fits[static_cast<std::size_t>(list)] = 1;
    }
  }
  return {};
}

}  // namespace

bool Executor::check(const RunOptions& options, const std::vector<RankBuffers>& inputs,
                     const std::vector<RankBuffers>& results, RunResult& into) const {
  return check(options, &inputs, results, into, nullptr);
}

bool Executor::check(const RunOptions& options, const std::vector<RankBuffers>* inputs,
                     const std::vector<RankBuffers>& results, RunResult& into,
                     detail::RunCacheState* cache) const {
  auto refuse = [&into](std::string message) {
    into.outcome = Outcome::Error;
    into.message = std::move(message);
    return false;
  };
  // A broadcast or reduce spec is re-derived for the root the run names; its list ids are its
  // own, so the cache's expected values do not apply to it.
  CollectiveSpec derived;
  const CollectiveSpec* spec = &spec_;
  if (spec_.root >= 0 && options.root != spec_.root) {
    if (options.root < 0 || options.root >= algo_.ngpus) {
      return refuse(fmt::format("root {} is not a rank of this {}-rank algorithm", options.root,
                                algo_.ngpus));
    }
    derived = standard_spec(algo_, options.root);
    spec = &derived;
    cache = nullptr;
  }
  if (std::string problem = check_spec_fits(algo_, *spec); !problem.empty()) return refuse(problem);
  if (!plan_->error.empty()) return refuse(plan_->error);
  const detail::ModeLayout& layout = plan_->layout(options.in_place);
  if (!layout.error.empty()) return refuse(layout.error);
  const auto ops = detail::element_ops(options.dtype, options.op);
  if (!ops) {
    return refuse(fmt::format("unsupported: reduction '{}' on {}", to_string(options.op),
                              to_string(options.dtype)));
  }
  if (std::string size = detail::check_call_size(*plan_, layout, options.chunk_elements, ops->size);
      !size.empty()) {
    return refuse(size);
  }
  for (const auto* buffers : {inputs, &results}) {
    if (buffers == nullptr) continue;
    std::string sizes =
        detail::check_buffer_sizes(*plan_, layout, options.chunk_elements, ops->size, *buffers);
    if (!sizes.empty()) {
      return refuse(fmt::format("{}: {}", buffers == inputs ? "inputs" : "results", sizes));
    }
  }

  detail::ExpectedByList own;
  Checker checker(algo_, options, *ops, inputs, cache != nullptr ? cache->expected : own);
  const ExpectedOutputs& expected_outputs = spec->expected;
  const std::size_t elements = options.chunk_elements;
  const std::size_t chunk_bytes = elements * ops->size;
  // A copy must hold its input's bytes; with avg every input is scaled first, so it need not.
  const bool copies_compare_bytes = options.op != ReduceOp::Avg;
  std::size_t checked = 0;
  std::size_t wrong = 0;
  std::vector<Mismatch> kept;
  ExpectedChunk single;
  for (int r = 0; r < spec->ngpus; ++r) {
    for (int c = 0; c < expected_outputs.chunks(r); ++c) {
      const int list = expected_outputs.list(r, c);
      if (list == ExpectedOutputs::kUnspecified) continue;  // left unspecified by the collective
      const std::span<const ChunkId> contributors = expected_outputs.items(list);
      const auto where = detail::locate(algo_, r, ir::BufferKind::Output, c, options.in_place);
      const std::byte* found =
          detail::bytes_of(results[static_cast<std::size_t>(r)], where.buffer).data() +
          static_cast<std::size_t>(where.chunk) * chunk_bytes;
      const ExpectedChunk* expected = nullptr;
      if (contributors.size() == 1) {
        // Equal bytes pass element by element too (the exact value; for integers, the bytes);
        // only a chunk that differs is worth its expected values.
        if (copies_compare_bytes &&
            std::memcmp(found, checker.input_chunk(contributors.front()), chunk_bytes) == 0) {
          checked += elements;
          continue;
        }
        single = checker.compute(contributors);
        expected = &single;
      } else {
        expected = &checker.expected(list, contributors);
      }
      for (std::size_t e = 0; e < elements; ++e) {
        ++checked;
        const std::byte* element = found + e * ops->size;
        bool ok;
        if (!expected->exact.empty()) {
          ok = std::memcmp(element, expected->exact.data() + e * ops->size, ops->size) == 0;
        } else {
          const long double value = ops->value(element);
          ok = std::fabs(value - expected->value[e]) <= expected->tolerance[e];
        }
        if (ok) continue;
        if (++wrong <= kMismatchesKept) {
          kept.push_back({r, ir::BufferKind::Output, c, e, describe_expected(*ops, *expected, e),
                          describe_found(*ops, element)});
        }
      }
    }
  }
  if (wrong == 0) return true;
  into.outcome = Outcome::WrongResult;
  into.mismatch_count = wrong;
  into.mismatches = std::move(kept);
  into.message = fmt::format("{} of {} checked output elements are wrong; the first: {}", wrong,
                             checked, into.mismatches.front().str());
  return false;
}

}  // namespace weft::cpu
