// Executor::check: compares a run's outputs with the collective's definition.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>

#include "buffer_location.h"
#include "element_ops.h"
#include "plan.h"
#include "schedule.h"
#include "weft/runtime/cpu_executor.h"

namespace weft::cpu {

namespace {

constexpr std::size_t kMismatchesKept = 10;

// What one output chunk must hold, element by element. Integer types: the exact bytes (wrapping
// arithmetic is associative, so any order gives them). Floating types: the exact value and the
// error any reduction order may add.
struct ExpectedChunk {
  std::vector<std::byte> exact;
  std::vector<long double> value;
  std::vector<long double> tolerance;
};

class Checker {
 public:
  Checker(const ir::Algorithm& algo, const RunOptions& options, const detail::ElementOps& ops,
          const std::vector<RankBuffers>& inputs)
      : algo_(algo), options_(options), ops_(ops), inputs_(inputs) {}

  // Valid until the next call for a single contributor: a plain copy, whose expected values
  // are not worth keeping (an alltoall has one per output chunk, millions at scale).
  const ExpectedChunk& expected(const std::vector<ChunkId>& contributors) {
    if (contributors.size() == 1) {
      single_ = compute(contributors);
      return single_;
    }
    auto [it, inserted] = memo_.try_emplace(contributors);
    if (inserted) it->second = compute(contributors);
    return it->second;
  }

  const std::byte* input_chunk(ChunkId id) const {
    const auto where =
        detail::locate(algo_, id.rank, ir::BufferKind::Input, id.chunk, options_.in_place);
    const auto& bytes = detail::bytes_of(inputs_[static_cast<std::size_t>(id.rank)], where.buffer);
    return bytes.data() +
           static_cast<std::size_t>(where.chunk) * options_.chunk_elements * ops_.size;
  }

 private:
  ExpectedChunk compute(const std::vector<ChunkId>& contributors) const {
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
    std::vector<const std::byte*> chunks;
    for (ChunkId id : contributors) chunks.push_back(input_chunk(id));
    const auto n = static_cast<long double>(contributors.size());
    const auto u = static_cast<long double>(detail::unit_roundoff(ops_.type));
    const auto tiny = static_cast<long double>(detail::smallest_subnormal(ops_.type));
    out.value.resize(elements);
    out.tolerance.resize(elements);
    for (std::size_t e = 0; e < elements; ++e) {
      long double sum = 0, magnitude = 0, product = 1;
      long double low = std::numeric_limits<long double>::infinity(), high = -low;
      for (const std::byte* chunk : chunks) {
        const long double x = ops_.value(chunk + e * ops_.size);
        sum += x;
        magnitude += std::fabs(x);
        product *= x;
        low = std::min(low, x);
        high = std::max(high, x);
      }
      long double exact = 0, scale = 0;
      switch (options_.op) {
        case ReduceOp::Sum:
          exact = sum, scale = magnitude;
          break;
        case ReduceOp::Avg: {
          const auto ranks = static_cast<long double>(algo_.ngpus);
          exact = sum / ranks, scale = magnitude / ranks;
          break;
        }
        case ReduceOp::Prod:
          exact = product, scale = std::fabs(product);
          break;
        case ReduceOp::Min:
          exact = low;
          break;  // one of the inputs: exact
        case ReduceOp::Max:
          exact = high;
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

  const ir::Algorithm& algo_;
  const RunOptions& options_;
  const detail::ElementOps& ops_;
  const std::vector<RankBuffers>& inputs_;
  // Hashed: an allreduce looks up every rank's copy of the same long list of contributors, which
  // an ordered map compares element by element at every level.
  struct Hash {
    std::size_t operator()(const std::vector<ChunkId>& ids) const {
      std::uint64_t h = ids.size();
      for (const ChunkId& id : ids) {
        h = (h ^ ((static_cast<std::uint64_t>(static_cast<std::uint32_t>(id.rank)) << 32) |
                  static_cast<std::uint32_t>(id.chunk))) *
            0x9e3779b97f4a7c15ULL;
        h ^= h >> 29;
      }
      return static_cast<std::size_t>(h);
    }
  };
  std::unordered_map<std::vector<ChunkId>, ExpectedChunk, Hash> memo_;
  ExpectedChunk single_;
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
  if (spec.ngpus != algo.ngpus || spec.expected.size() != static_cast<std::size_t>(algo.ngpus)) {
    return fmt::format("the collective spec is for {} ranks, the algorithm has {}", spec.ngpus,
                       algo.ngpus);
  }
  // Every contributor is checked against its rank's input extent, looked up once per rank.
  std::vector<int> input_extents(static_cast<std::size_t>(algo.ngpus));
  for (int r = 0; r < algo.ngpus; ++r) {
    input_extents[static_cast<std::size_t>(r)] = ir::input_extent_chunks(algo, r);
  }
  for (int r = 0; r < spec.ngpus; ++r) {
    const auto& outputs = spec.expected[static_cast<std::size_t>(r)];
    const int extent = ir::output_extent_chunks(algo, r);
    if (outputs.size() > static_cast<std::size_t>(std::max(extent, 0))) {
      return fmt::format("the collective spec names {} output chunks of rank {}, which has {}",
                         outputs.size(), r, extent);
    }
    for (std::size_t c = 0; c < outputs.size(); ++c) {
      for (ChunkId id : outputs[c]) {
        if (id.rank < 0 || id.rank >= algo.ngpus || id.chunk < 0 ||
            id.chunk >= input_extents[static_cast<std::size_t>(id.rank)]) {
          return fmt::format(
              "the collective spec has rank {} output chunk {} take input chunk {} of rank {}, "
              "which does not exist",
              r, c, id.chunk, id.rank);
        }
      }
    }
  }
  return {};
}

}  // namespace

bool Executor::check(const RunOptions& options, const std::vector<RankBuffers>& inputs,
                     const std::vector<RankBuffers>& results, RunResult& into) const {
  auto refuse = [&into](std::string message) {
    into.outcome = Outcome::Error;
    into.message = std::move(message);
    return false;
  };
  // A broadcast or reduce spec is re-derived for the root the run names.
  CollectiveSpec derived;
  const CollectiveSpec* spec = &spec_;
  if (spec_.root >= 0 && options.root != spec_.root) {
    if (options.root < 0 || options.root >= algo_.ngpus) {
      return refuse(fmt::format("root {} is not a rank of this {}-rank algorithm", options.root,
                                algo_.ngpus));
    }
    derived = standard_spec(algo_, options.root);
    spec = &derived;
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
  for (const auto* buffers : {&inputs, &results}) {
    std::string sizes =
        detail::check_buffer_sizes(*plan_, layout, options.chunk_elements, ops->size, *buffers);
    if (!sizes.empty()) {
      return refuse(fmt::format("{}: {}", buffers == &inputs ? "inputs" : "results", sizes));
    }
  }

  Checker checker(algo_, options, *ops, inputs);
  const std::size_t elements = options.chunk_elements;
  std::size_t checked = 0;
  std::size_t wrong = 0;
  std::vector<Mismatch> kept;
  // Ranks often expect the same contributors in the same chunk (allreduce, allgather): compared
  // with the previous rank's list, that costs no hashing of long lists.
  std::vector<const ExpectedChunk*> previous;
  for (int r = 0; r < spec->ngpus; ++r) {
    const auto& outputs = spec->expected[static_cast<std::size_t>(r)];
    const auto* before = r > 0 ? &spec->expected[static_cast<std::size_t>(r) - 1] : nullptr;
    previous.resize(std::max(previous.size(), outputs.size()), nullptr);
    for (std::size_t c = 0; c < outputs.size(); ++c) {
      if (outputs[c].empty()) continue;  // left unspecified by the collective
      const ExpectedChunk* same = nullptr;
      if (before != nullptr && c < before->size() && previous[c] != nullptr &&
          (*before)[c] == outputs[c]) {
        same = previous[c];
      }
      const ExpectedChunk& expected = same != nullptr ? *same : checker.expected(outputs[c]);
      previous[c] = outputs[c].size() == 1 ? nullptr : &expected;
      const auto where =
          detail::locate(algo_, r, ir::BufferKind::Output, static_cast<int>(c), options.in_place);
      const std::byte* found =
          detail::bytes_of(results[static_cast<std::size_t>(r)], where.buffer).data() +
          static_cast<std::size_t>(where.chunk) * elements * ops->size;
      for (std::size_t e = 0; e < elements; ++e) {
        ++checked;
        const std::byte* element = found + e * ops->size;
        bool ok;
        if (!expected.exact.empty()) {
          ok = std::memcmp(element, expected.exact.data() + e * ops->size, ops->size) == 0;
        } else {
          const long double value = ops->value(element);
          ok = std::fabs(value - expected.value[e]) <= expected.tolerance[e];
        }
        if (ok) continue;
        if (++wrong <= kMismatchesKept) {
          kept.push_back({r, ir::BufferKind::Output, static_cast<int>(c), e,
                          describe_expected(*ops, expected, e), describe_found(*ops, element)});
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
