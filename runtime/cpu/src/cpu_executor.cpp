#include "weft/cpu/cpu_executor.h"

#include <algorithm>
#include <new>

#include <fmt/format.h>

#include "element_ops.h"
#include "run_cache.h"
#include "schedule.h"
#include "weft/cpu/plan.h"
#include "weft/ir/geometry.h"

namespace weft::cpu {

namespace {

RunResult error_result(std::string message) {
  RunResult result;
  result.outcome = Outcome::Error;
  result.message = std::move(message);
  return result;
}

// Avg as NCCL's PreMulSum: every input element times 1/ngpus, once, before any reduction.
void premultiply_inputs(const ir::Algorithm& algo, const detail::ElementOps& ops, bool in_place,
                        std::size_t chunk_elements, std::vector<RankBuffers>& buffers) {
  const double factor = 1.0 / static_cast<double>(algo.ngpus);
  for (int r = 0; r < algo.ngpus; ++r) {
    RankBuffers& rank = buffers[static_cast<std::size_t>(r)];
    const int chunks = ir::input_extent_chunks(algo, r);
    if (chunks <= 0) continue;
    ir::Alias first{ir::BufferKind::Input, 0};
    if (in_place) first = ir::resolve_in_place(algo, r, ir::BufferKind::Input, 0);
    auto& bytes = first.buffer == ir::BufferKind::Input ? rank.input : rank.output;
    const std::size_t begin = static_cast<std::size_t>(first.chunk) * chunk_elements;
    ops.scale(bytes.data() + begin * ops.size, static_cast<std::size_t>(chunks) * chunk_elements,
              factor);
  }
}

std::string out_of_memory(const RunOptions& options) {
  return fmt::format("out of memory running with {} elements per chunk in tiles of {}",
                     options.chunk_elements, options.tile_elements);
}

// The smallest depth in [low, high] that completes, where `high` does and depths below `low`
// do not; completion is monotone in the depth.
template <class Completes>
int bisect(int low, int high, const Completes& completes) {
  while (low < high) {
    const int middle = low + (high - low) / 2;
    if (completes(middle)) {
      high = middle;
    } else {
      low = middle + 1;
    }
  }
  return low;
}

}  // namespace

Executor::Executor(const ir::Algorithm& algo, CollectiveSpec spec)
    : algo_(algo),
      spec_(std::move(spec)),
      plan_(std::make_shared<const detail::Plan>(detail::build_plan(algo))) {}

RunResult Executor::execute(const RunOptions& options, std::vector<RankBuffers>& buffers) const {
  return execute(options, buffers, true);
}

RunResult Executor::execute(const RunOptions& options, std::vector<RankBuffers>& buffers,
                            bool move_data) const {
  if (!plan_->error.empty()) return error_result(plan_->error);
  const detail::ModeLayout& layout = plan_->layout(options.in_place);
  if (!layout.error.empty()) return error_result(layout.error);
  if (options.fifo_depth < 0) {
    return error_result(fmt::format("FIFO depth {} is negative", options.fifo_depth));
  }
  const auto ops = detail::element_ops(options.dtype, options.op);
  if (!ops) {
    return error_result(fmt::format(
        "unsupported: reduction '{}' on {}; avg is defined for floating-point types only",
        to_string(options.op), to_string(options.dtype)));
  }
  std::string sizes = detail::check_call_size(*plan_, layout, options.chunk_elements, ops->size);
  if (sizes.empty() && move_data) {  // a run that moves no data touches no buffer
    sizes = detail::check_buffer_sizes(*plan_, layout, options.chunk_elements, ops->size, buffers);
  }
  if (!sizes.empty()) return error_result(std::move(sizes));
  if (move_data && options.op == ReduceOp::Avg) {
    premultiply_inputs(algo_, *ops, options.in_place, options.chunk_elements, buffers);
  }
  detail::ScheduleOptions schedule;
  schedule.chunk_elements = options.chunk_elements;
  schedule.tile_elements = options.tile_elements;
  schedule.fifo_depth = options.fifo_depth;
  schedule.seed = options.seed;
  schedule.record_trace = options.record_trace;
  schedule.check_races = options.check_races;
  schedule.move_data = move_data;
  try {
    return detail::run_schedule(*plan_, layout, *ops, schedule, buffers);
  } catch (const std::bad_alloc&) {
    return error_result(out_of_memory(options));
  }
}

RunCache::RunCache() : state_(std::make_unique<detail::RunCacheState>()) {}
RunCache::~RunCache() = default;
RunCache::RunCache(RunCache&&) noexcept = default;
RunCache& RunCache::operator=(RunCache&&) noexcept = default;

RunResult Executor::run(const RunOptions& options) const {
  try {
    if (options.completion_only) return complete(options);
    std::vector<RankBuffers> buffers;
    return run_checked(options, buffers, nullptr);
  } catch (const std::bad_alloc&) {
    return error_result(out_of_memory(options));
  }
}

RunResult Executor::run(const RunOptions& options, RunCache& cache) const {
  detail::RunCacheState& state = *cache.state_;
  try {
    if (state.owner != this) {
      state = detail::RunCacheState{};
      state.owner = this;
    }
    if (options.completion_only) return complete(options);
    const detail::InputShape shape = detail::InputShape::of(options);
    if (state.expected_shape != shape) {
      state.expected.clear();
      state.expected_shape = shape;
    }
    return run_checked(options, state.results, &state);
  } catch (const std::bad_alloc&) {
    state = detail::RunCacheState{};  // whatever it held may be incomplete
    return error_result(out_of_memory(options));
  }
}

RunResult Executor::complete(const RunOptions& options) const {
  RunOptions completion = options;
  completion.check_races = false;
  std::vector<RankBuffers> none(static_cast<std::size_t>(algo_.ngpus));
  return execute(completion, none, false);
}

RunResult Executor::run_checked(const RunOptions& options, std::vector<RankBuffers>& buffers,
                                detail::RunCacheState* cache) const {
  if (!fill_inputs(options, buffers)) {
    // The algorithm or the call cannot run; execute says why.
    buffers.clear();
    std::vector<RankBuffers> none;
    return execute(options, none);
  }
  RunResult result = execute(options, buffers);
  if (result.outcome == Outcome::Pass) check(options, nullptr, buffers, result, cache);
  if (result.outcome == Outcome::Race) {
    // The race is the verdict whatever the data; a wrong result too is worth showing.
    RunResult checked;
    checked.outcome = Outcome::Pass;
    if (!check(options, nullptr, buffers, checked, cache)) {
      if (checked.outcome == Outcome::Error) {
        checked.races = std::move(result.races);
        checked.race_count = result.race_count;
        return checked;
      }
      result.mismatches = std::move(checked.mismatches);
      result.mismatch_count = checked.mismatch_count;
      result.message += "; the result is wrong too: " + checked.message;
    }
  }
  return result;
}

std::optional<int> Executor::min_fifo_depth(const RunOptions& options) const {
  return min_fifo_depth(options, {});
}

std::optional<int> Executor::min_fifo_depth(const RunOptions& options, KnownDepths known) const {
  try {
    return search_min_fifo_depth(options, known);
  } catch (const std::bad_alloc&) {
    return std::nullopt;
  }
}

std::optional<int> Executor::search_min_fifo_depth(const RunOptions& options,
                                                   KnownDepths known) const {
  // Whether an algorithm completes does not depend on the data, nor (each threadblock being a
  // deterministic process that only blocks on FIFOs and flags) on the interleaving: a sum over
  // the given type and one seed decide it.
  RunOptions probe = options;
  probe.op = ReduceOp::Sum;
  probe.record_trace = false;
  probe.check_races = false;  // only completion matters here
  auto completes = [&](int depth) {
    probe.fifo_depth = depth;
    return complete(probe).outcome == Outcome::Pass;
  };
  int low = std::max(known.deadlocks_below, 1);  // every depth below `low` deadlocks
  int high = known.completes_at;
  if (high > 0 && low <= high) return bisect(low, high, completes);
  if (!completes(0)) return std::nullopt;
  // At a depth no connection ever fills, nothing blocks on sending: as good as unbounded.
  const std::size_t tiles = options.tile_elements == 0
                                ? 1
                                : detail::tile_count(options.chunk_elements, options.tile_elements);
  std::size_t most_messages = 0;
  for (const auto& connection : plan_->connections) {
    most_messages =
        std::max(most_messages, static_cast<std::size_t>(connection.sends_per_tile) * tiles);
  }
  const int limit = static_cast<int>(std::clamp<std::size_t>(most_messages, 1, 1u << 30));
  // Most algorithms need depth 1 or 2: probe 1, 2, 4, ... before bisecting what is left.
  low = 1;
  high = limit;
  for (int depth = 1; depth < limit; depth *= 2) {
    if (completes(depth)) {
      high = depth;
      break;
    }
    low = depth + 1;
  }
  return bisect(low, high, completes);
}

}  // namespace weft::cpu
