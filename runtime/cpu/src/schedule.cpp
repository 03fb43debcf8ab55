#include "schedule.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "prng.h"
#include "race_detector.h"
#include "ready_set.h"
#include "weft/cpu/step_core.h"

namespace weft::cpu::detail {

namespace {

using Core = StepCore<std::vector<std::byte>>;

class Scheduler {
 public:
  Scheduler(const Plan& plan, const ModeLayout& layout, const ElementOps& ops,
            const ScheduleOptions& options, std::vector<RankBuffers>& buffers)
      : plan_(plan),
        layout_(layout),
        ops_(ops),
        options_(options),
        buffers_(buffers),
        tiles_(static_cast<int>(tile_count(options.chunk_elements, options.tile_elements))) {
    for (const auto& tb : plan_.threadblocks) {
      executions_ += static_cast<std::uint64_t>(tb.step_count) * static_cast<std::uint64_t>(tiles_);
    }
  }

  RunResult run();

 private:
  std::size_t tile_length(int tile) const {
    const std::size_t start = static_cast<std::size_t>(tile) * options_.tile_elements;
    return std::min(options_.tile_elements, options_.chunk_elements - start);
  }

  bool prepare();
  bool try_step(int g);
  void execute(int g, const PlanStep& step);
  void wake(int g);
  std::byte* piece(int rank, std::uint8_t slot, int chunk, int tile) const;
  void gather(int rank, std::uint8_t slot, int chunk, int count, int tile, std::byte* into) const;
  void scatter(int rank, std::uint8_t slot, int chunk, int count, int tile, const std::byte* from);
  std::vector<std::byte> acquire();
  void release(std::vector<std::byte>&& buffer);
  RunResult deadlock() const;
  void fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
  }

  const Plan& plan_;
  const ModeLayout& layout_;
  const ElementOps& ops_;
  const ScheduleOptions& options_;
  std::vector<RankBuffers>& buffers_;
  int tiles_;
  std::uint64_t executions_ = 0;  // step executions of a complete run

  std::vector<std::vector<std::byte>> scratch_;
  std::vector<std::array<std::byte*, 3>> base_;  // per rank, per slot
  std::optional<Core> core_;
  std::optional<ReadySet> ready_;
  std::optional<RaceDetector> races_;
  std::vector<std::vector<std::byte>> spare_buffers_;
  std::vector<std::byte> operand_;
  std::string error_;
  RunResult result_;
};

bool Scheduler::prepare() {
  std::string problem = check_call_size(plan_, layout_, options_.chunk_elements, ops_.size);
  if (problem.empty() && options_.move_data) {  // a run that moves no data touches no buffer
    problem = check_buffer_sizes(plan_, layout_, options_.chunk_elements, ops_.size, buffers_);
  }
  if (!problem.empty()) {
    fail(std::move(problem));
    return false;
  }
  if (options_.check_races) {
    problem = RaceDetector::cannot_check(plan_, tiles_);
    if (!problem.empty()) {
      fail(std::move(problem));
      return false;
    }
    races_.emplace(plan_, layout_, tiles_, options_.fifo_depth);
  }
  const std::size_t ranks = static_cast<std::size_t>(plan_.ngpus);
  const std::size_t chunk_bytes = options_.chunk_elements * ops_.size;
  scratch_.resize(ranks);
  base_.resize(ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    const auto& extents = layout_.extents[r];
    if (options_.move_data) {  // a run that moves no data reads no scratch either
      scratch_[r].resize(static_cast<std::size_t>(extents[kScratchSlot]) * chunk_bytes);
      fill_poison(ops_.type, scratch_[r]);
    }
    base_[r] = {buffers_[r].input.data(), buffers_[r].output.data(), scratch_[r].data()};
  }
  core_.emplace(plan_, layout_, tiles_, options_.fifo_depth);
  // The whole call shapes the draw, so that a sweep over tile sizes and depths with the same
  // seeds tries different priorities each time; equal options still give equal schedules.
  const std::uint64_t stream =
      mix64(mix64(mix64(options_.chunk_elements) ^ options_.tile_elements) ^
            static_cast<std::uint64_t>(options_.fifo_depth));
  const std::size_t count = plan_.threadblocks.size();
  // Race-checked where the detector asks, one component after another (RaceDetector::groups).
  ready_.emplace(count, options_.seed ^ stream, executions_, races_ ? races_->groups() : nullptr);
  for (std::size_t g = 0; g < count; ++g) wake(static_cast<int>(g));
  return true;
}

std::byte* Scheduler::piece(int rank, std::uint8_t slot, int chunk, int tile) const {
  const std::size_t element = static_cast<std::size_t>(chunk) * options_.chunk_elements +
                              static_cast<std::size_t>(tile) * options_.tile_elements;
  return base_[static_cast<std::size_t>(rank)][slot] + element * ops_.size;
}

void Scheduler::gather(int rank, std::uint8_t slot, int chunk, int count, int tile,
                       std::byte* into) const {
  const std::size_t bytes = tile_length(tile) * ops_.size;
  for (int j = 0; j < count; ++j) {
    std::memcpy(into + static_cast<std::size_t>(j) * bytes, piece(rank, slot, chunk + j, tile),
                bytes);
  }
}

void Scheduler::scatter(int rank, std::uint8_t slot, int chunk, int count, int tile,
                        const std::byte* from) {
  const std::size_t bytes = tile_length(tile) * ops_.size;
  for (int j = 0; j < count; ++j) {
    std::memcpy(piece(rank, slot, chunk + j, tile), from + static_cast<std::size_t>(j) * bytes,
                bytes);
  }
}

std::vector<std::byte> Scheduler::acquire() {
  if (spare_buffers_.empty()) return {};
  std::vector<std::byte> buffer = std::move(spare_buffers_.back());
  spare_buffers_.pop_back();
  return buffer;
}

void Scheduler::release(std::vector<std::byte>&& buffer) {
  buffer.clear();
  spare_buffers_.push_back(std::move(buffer));
}

void Scheduler::wake(int g) {
  if (!core_->finished(g)) ready_->add(g);
}

bool Scheduler::try_step(int g) {
  switch (core_->check(g)) {
    case Readiness::Blocked:
      return false;
    case Readiness::Mismatch:
      fail(core_->mismatch(g));
      return false;
    case Readiness::Runnable:
      break;
  }
  execute(g, core_->current_step(g));
  core_->advance(g, [this](int h) { wake(h); });
  return true;
}

void Scheduler::execute(int g, const PlanStep& step) {
  const PlanThreadblock& tb = core_->threadblock(g);
  const int tile = core_->tile(g);
  const int index = core_->step(g);
  const int rank = tb.rank;
  const std::size_t elements = static_cast<std::size_t>(step.count) * tile_length(tile);
  const std::size_t bytes = elements * ops_.size;
  const auto wake_one = [this](int h) { wake(h); };

  ++result_.steps_executed;
  result_.schedule_fingerprint =
      mix64(result_.schedule_fingerprint ^
            mix64((static_cast<std::uint64_t>(g) << 40) ^ (static_cast<std::uint64_t>(tile) << 20) ^
                  static_cast<std::uint64_t>(index)));
  if (options_.record_trace) result_.trace.push_back({rank, tb.id, tile, index});
  if (races_) races_->on_step(g, tile, index);
  if (step.type == ir::StepType::Nop) return;
  if (!options_.move_data) {
    // Completion only: messages carry nothing, and nothing is read or written. A taken message
    // is dropped, not kept for reuse: no send here takes one back, so kept ones would pile up,
    // one per message of the run.
    if (ir::receives(step.type)) core_->take(g, wake_one);
    if (ir::sends(step.type)) {
      core_->put(g, {}, wake_one);
      ++result_.messages;
    }
    return;
  }

  // `value` is what the step computes: the message, the source, or a reduction of the two.
  std::vector<std::byte> value;
  if (ir::receives(step.type)) {
    value = core_->take(g, wake_one);
  } else {
    value = acquire();
    value.resize(bytes);
  }
  switch (step.type) {
    case ir::StepType::Send:
    case ir::StepType::Copy:
      gather(rank, step.src_slot, step.src_chunk, step.count, tile, value.data());
      break;
    case ir::StepType::Reduce:
      gather(rank, step.dst_slot, step.dst_chunk, step.count, tile, value.data());
      [[fallthrough]];
    case ir::StepType::RecvReduceSend:
    case ir::StepType::RecvReduceCopy:
    case ir::StepType::RecvReduceCopySend:
      operand_.resize(bytes);
      gather(rank, step.src_slot, step.src_chunk, step.count, tile, operand_.data());
      ops_.combine(value.data(), value.data(), operand_.data(), elements);
      break;
    default:
      break;
  }
  if (ir::writes_destination(step.type)) {
    scatter(rank, step.dst_slot, step.dst_chunk, step.count, tile, value.data());
  }
  if (ir::sends(step.type)) {
    core_->put(g, std::move(value), wake_one);
    ++result_.messages;
  } else {
    release(std::move(value));
  }
}

RunResult Scheduler::deadlock() const {
  RunResult result = result_;
  result.outcome = Outcome::Deadlock;
  for (std::size_t g = 0; g < plan_.threadblocks.size(); ++g) {
    const int gi = static_cast<int>(g);
    if (core_->finished(gi)) continue;
    const PlanThreadblock& tb = plan_.threadblocks[g];
    result.blocked.push_back({tb.rank, tb.id, core_->tile(gi), core_->step(gi),
                              std::string(ir::to_string(core_->current_step(gi).type)),
                              core_->waiting_for(gi)});
  }
  const std::string depth =
      options_.fifo_depth > 0 ? fmt::format("{}", options_.fifo_depth) : std::string("unbounded");
  result.message = fmt::format(
      "deadlock: {} of {} threadblocks blocked (FIFO depth {}, {} elements per chunk, tiles of "
      "{})",
      result.blocked.size(), plan_.threadblocks.size(), depth, options_.chunk_elements,
      options_.tile_elements);
  return result;
}

RunResult Scheduler::run() {
  if (!prepare()) {
    result_.outcome = Outcome::Error;
    result_.message = error_;
    return result_;
  }
  // Every pick either runs a step or parks a threadblock that only a later step can wake, so
  // picks are bounded by a few per step execution; more means the scheduler itself is broken.
  const std::uint64_t pick_limit = 8 * executions_ + 4 * plan_.threadblocks.size() + 64;
  std::uint64_t picks = 0;
  while (!ready_->empty() && error_.empty()) {
    if (++picks > pick_limit) {
      fail(
          fmt::format("the scheduler made {} picks for {} step executions without finishing "
                      "(an executor bug)",
                      picks, executions_));
      break;
    }
    const int g = ready_->pick();
    if (try_step(g)) {
      ready_->ran(g);
      wake(g);
    }
  }
  if (!error_.empty()) {
    result_.outcome = Outcome::Error;
    result_.message = error_;
    return result_;
  }
  if (races_) {
    result_.races = races_->races();
    result_.race_count = races_->race_count();
  }
  if (!core_->all_finished()) return deadlock();
  for (std::size_t c = 0; c < plan_.connections.size(); ++c) {
    const std::size_t left = core_->queued(static_cast<int>(c));
    if (left == 0) continue;
    const PlanConnection& pc = plan_.connections[c];
    result_.outcome = Outcome::Error;
    result_.message = fmt::format(
        "rank {} sent {} message(s) to rank {} on channel {} that no step received (the send "
        "and receive steps on this connection do not match)",
        pc.key.sender, left, pc.key.receiver, pc.key.channel);
    return result_;
  }
  if (result_.race_count > 0) {
    result_.outcome = Outcome::Race;
    const std::string depth =
        options_.fifo_depth > 0 ? fmt::format("{}", options_.fifo_depth) : std::string("unbounded");
    result_.message = fmt::format(
        "data race: {} pair(s) of accesses by threadblocks of one rank that no dependency, "
        "message or FIFO back-pressure orders (FIFO depth {}, {} elements per chunk, tiles of "
        "{}); the first: {}",
        result_.race_count, depth, options_.chunk_elements, options_.tile_elements,
        result_.races.front().str());
    return result_;
  }
  result_.outcome = Outcome::Pass;
  return result_;
}

}  // namespace

std::string check_call_size(const Plan& plan, const ModeLayout& layout, std::size_t chunk_elements,
                            std::size_t element_size) {
  // 16 TiB per buffer: far beyond any host, and small enough that no byte offset overflows.
  constexpr std::size_t kMaxBufferBytes = std::size_t{1} << 44;
  for (int r = 0; r < plan.ngpus; ++r) {
    for (int chunks : layout.extents[static_cast<std::size_t>(r)]) {
      if (chunks > 0 &&
          chunk_elements > kMaxBufferBytes / element_size / static_cast<std::size_t>(chunks)) {
        return fmt::format(
            "{} elements per chunk are too many: a buffer of rank {} would hold "
            "{} chunks of them, over 16 TiB",
            chunk_elements, r, chunks);
      }
    }
  }
  return {};
}

std::string check_buffer_sizes(const Plan& plan, const ModeLayout& layout,
                               std::size_t chunk_elements, std::size_t element_size,
                               const std::vector<RankBuffers>& buffers) {
  const std::size_t ranks = static_cast<std::size_t>(plan.ngpus);
  if (buffers.size() != ranks) {
    return fmt::format("{} rank buffers given for {} ranks", buffers.size(), ranks);
  }
  for (std::size_t r = 0; r < ranks; ++r) {
    const std::array<std::size_t, 2> given{buffers[r].input.size(), buffers[r].output.size()};
    for (std::size_t k = 0; k < given.size(); ++k) {
      const auto chunks = static_cast<std::size_t>(layout.extents[r][k]);
      const std::size_t wanted = chunks * chunk_elements * element_size;
      if (given[k] != wanted) {
        return fmt::format("rank {} {} buffer has {} bytes; {} chunks of {} elements need {}", r,
                           k == kInputSlot ? "input" : "output", given[k], chunks, chunk_elements,
                           wanted);
      }
    }
  }
  return {};
}

RunResult run_schedule(const Plan& plan, const ModeLayout& layout, const ElementOps& ops,
                       const ScheduleOptions& options, std::vector<RankBuffers>& buffers) {
  // Tiles are counted in int, like the step positions built from them.
  constexpr std::size_t kMaxTiles = std::size_t{1} << 30;
  if (options.chunk_elements == 0 || options.tile_elements == 0 ||
      options.chunk_elements / options.tile_elements >= kMaxTiles) {
    RunResult result;
    result.outcome = Outcome::Error;
    result.message = fmt::format(
        "{} elements per chunk in tiles of {} cannot run: both must be positive and make fewer "
        "than 2^30 tiles",
        options.chunk_elements, options.tile_elements);
    return result;
  }
  Scheduler scheduler(plan, layout, ops, options, buffers);
  return scheduler.run();
}

}  // namespace weft::cpu::detail
