#include "schedule.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <functional>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "prng.h"
#include "race_detector.h"
#include "ready_set.h"

namespace weft::cpu::detail {

namespace {

// One step's data for one tile on a connection.
struct Message {
  std::vector<std::byte> data;
  int count = 0;
  int tile = 0;
  int sender_step = 0;
};

struct ConnectionState {
  std::deque<Message> fifo;
  bool receiver_waiting = false;  // its receiver found it empty and waits for a message
  bool sender_waiting = false;    // its sender found it full and waits for room
};

// A threadblock waiting until another one's position (tile × steps + next step) reaches target.
struct DependencyWaiter {
  std::uint64_t target = 0;
  int threadblock = 0;
  bool operator>(const DependencyWaiter& other) const { return target > other.target; }
};

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
  bool finished(int g) const { return tile_[static_cast<std::size_t>(g)] >= tiles_; }
  const PlanThreadblock& threadblock(int g) const {
    return plan_.threadblocks[static_cast<std::size_t>(g)];
  }
  const PlanStep& current_step(int g) const {
    return layout_.steps[threadblock(g).first_step +
                         static_cast<std::size_t>(step_[static_cast<std::size_t>(g)])];
  }
  ConnectionState& connection(int index) { return connections_[static_cast<std::size_t>(index)]; }

  bool prepare();
  bool try_step(int g);
  void execute(int g, const PlanStep& step, ConnectionState* in, ConnectionState* out);
  void advance(int g);
  void wake(int g);
  std::byte* piece(int rank, std::uint8_t slot, int chunk, int tile) const;
  void gather(int rank, std::uint8_t slot, int chunk, int count, int tile, std::byte* into) const;
  void scatter(int rank, std::uint8_t slot, int chunk, int count, int tile, const std::byte* from);
  std::vector<std::byte> acquire();
  void release(std::vector<std::byte>&& buffer);
  std::string waiting_for(int g) const;
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
  std::vector<int> tile_;
  std::vector<int> step_;
  std::vector<std::uint64_t> position_;                            // tile × step_count + step
  std::vector<std::vector<DependencyWaiter>> dependency_waiters_;  // min-heaps by target
  std::vector<ConnectionState> connections_;
  std::optional<ReadySet> ready_;
  std::optional<RaceDetector> races_;
  std::vector<std::vector<std::byte>> spare_buffers_;
  std::vector<std::byte> operand_;
  std::size_t finished_count_ = 0;
  std::string error_;
  RunResult result_;
};

bool Scheduler::prepare() {
  std::string problem = check_call_size(plan_, layout_, options_.chunk_elements, ops_.size);
  if (problem.empty()) {
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
    scratch_[r].resize(static_cast<std::size_t>(extents[kScratchSlot]) * chunk_bytes);
    fill_poison(ops_.type, scratch_[r]);
    base_[r] = {buffers_[r].input.data(), buffers_[r].output.data(), scratch_[r].data()};
  }
  const std::size_t count = plan_.threadblocks.size();
  tile_.assign(count, 0);
  step_.assign(count, 0);
  position_.assign(count, 0);
  dependency_waiters_.assign(count, {});
  connections_.assign(plan_.connections.size(), {});
  // The whole call shapes the draw, so that a sweep over tile sizes and depths with the same
  // seeds tries different priorities each time; equal options still give equal schedules.
  const std::uint64_t stream =
      mix64(mix64(mix64(options_.chunk_elements) ^ options_.tile_elements) ^
            static_cast<std::uint64_t>(options_.fifo_depth));
  ready_.emplace(count, options_.seed ^ stream, executions_);
  for (std::size_t g = 0; g < count; ++g) {
    if (plan_.threadblocks[g].step_count == 0) {
      tile_[g] = tiles_;  // nothing to do
      ++finished_count_;
    } else {
      ready_->add(static_cast<int>(g));
    }
  }
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
  if (!finished(g)) ready_->add(g);
}

bool Scheduler::try_step(int g) {
  const PlanThreadblock& tb = threadblock(g);
  const PlanStep& step = current_step(g);
  const int tile = tile_[static_cast<std::size_t>(g)];
  if (step.dep_threadblock >= 0) {
    const int d = step.dep_threadblock;
    const auto target =
        static_cast<std::uint64_t>(tile) * static_cast<std::uint64_t>(threadblock(d).step_count) +
        static_cast<std::uint64_t>(step.dep_step) + 1;
    if (position_[static_cast<std::size_t>(d)] < target) {
      auto& heap = dependency_waiters_[static_cast<std::size_t>(d)];
      heap.push_back({target, g});
      std::push_heap(heap.begin(), heap.end(), std::greater<>());
      return false;
    }
  }
  ConnectionState* in = nullptr;
  ConnectionState* out = nullptr;
  if (ir::receives(step.type)) {
    in = &connection(tb.recv_connection);
    if (in->fifo.empty()) {
      in->receiver_waiting = true;
      return false;
    }
    const Message& m = in->fifo.front();
    if (m.count != step.count || m.tile != tile) {
      const auto& sender = threadblock(
          plan_.connections[static_cast<std::size_t>(tb.recv_connection)].sender_threadblock);
      fail(fmt::format(
          "{} ('{}', cnt {}, tile {}) received the message that {} sent with cnt {} in tile {}: "
          "the send and receive steps on this connection do not match",
          ir::element_path(tb.rank, tb.id, step_[static_cast<std::size_t>(g)]),
          ir::to_string(step.type), step.count, tile,
          ir::element_path(sender.rank, sender.id, m.sender_step), m.count, m.tile));
      return false;
    }
  }
  if (ir::sends(step.type)) {
    out = &connection(tb.send_connection);
    if (options_.fifo_depth > 0 &&
        out->fifo.size() >= static_cast<std::size_t>(options_.fifo_depth)) {
      out->sender_waiting = true;
      return false;
    }
  }
  execute(g, step, in, out);
  advance(g);
  return true;
}

void Scheduler::execute(int g, const PlanStep& step, ConnectionState* in, ConnectionState* out) {
  const PlanThreadblock& tb = threadblock(g);
  const int tile = tile_[static_cast<std::size_t>(g)];
  const int rank = tb.rank;
  const std::size_t elements = static_cast<std::size_t>(step.count) * tile_length(tile);
  const std::size_t bytes = elements * ops_.size;

  ++result_.steps_executed;
  result_.schedule_fingerprint =
      mix64(result_.schedule_fingerprint ^
            mix64((static_cast<std::uint64_t>(g) << 40) ^ (static_cast<std::uint64_t>(tile) << 20) ^
                  static_cast<std::uint64_t>(step_[static_cast<std::size_t>(g)])));
  if (options_.record_trace) {
    result_.trace.push_back({rank, tb.id, tile, step_[static_cast<std::size_t>(g)]});
  }
  if (races_) races_->on_step(g, tile, step_[static_cast<std::size_t>(g)]);
  if (step.type == ir::StepType::Nop) return;

  // `value` is what the step computes: the message, the source, or a reduction of the two.
  std::vector<std::byte> value;
  if (in != nullptr) {
    value = std::move(in->fifo.front().data);
    in->fifo.pop_front();
    const int sender =
        plan_.connections[static_cast<std::size_t>(tb.recv_connection)].sender_threadblock;
    if (in->sender_waiting) {
      in->sender_waiting = false;
      wake(sender);
    }
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
  if (out != nullptr) {
    out->fifo.push_back({std::move(value), step.count, tile, step_[static_cast<std::size_t>(g)]});
    ++result_.messages;
    if (out->receiver_waiting) {
      out->receiver_waiting = false;
      wake(plan_.connections[static_cast<std::size_t>(tb.send_connection)].receiver_threadblock);
    }
  } else {
    release(std::move(value));
  }
}

void Scheduler::advance(int g) {
  const auto ug = static_cast<std::size_t>(g);
  ++position_[ug];
  if (++step_[ug] == threadblock(g).step_count) {
    step_[ug] = 0;
    if (++tile_[ug] == tiles_) ++finished_count_;
  }
  auto& heap = dependency_waiters_[ug];
  while (!heap.empty() && heap.front().target <= position_[ug]) {
    const int waiter = heap.front().threadblock;
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    heap.pop_back();
    wake(waiter);
  }
}

std::string Scheduler::waiting_for(int g) const {
  const PlanThreadblock& tb = threadblock(g);
  const PlanStep& step = current_step(g);
  const int tile = tile_[static_cast<std::size_t>(g)];
  if (step.dep_threadblock >= 0) {
    const int d = step.dep_threadblock;
    const auto steps = static_cast<std::uint64_t>(threadblock(d).step_count);
    const std::uint64_t position = position_[static_cast<std::size_t>(d)];
    if (position <
        static_cast<std::uint64_t>(tile) * steps + static_cast<std::uint64_t>(step.dep_step) + 1) {
      return fmt::format("dependency on tb {} step {} (it is at tile {} step {})",
                         threadblock(d).id, step.dep_step, position / steps, position % steps);
    }
  }
  if (ir::receives(step.type)) {
    const PlanConnection& c = plan_.connections[static_cast<std::size_t>(tb.recv_connection)];
    if (connections_[static_cast<std::size_t>(tb.recv_connection)].fifo.empty()) {
      return fmt::format(
          "receive from rank {} on channel {}: FIFO empty{}", tb.recv_peer, tb.channel,
          c.sender_threadblock < 0 ? " (no threadblock of that rank sends on it)" : "");
    }
  }
  if (ir::sends(step.type) && options_.fifo_depth > 0 &&
      connections_[static_cast<std::size_t>(tb.send_connection)].fifo.size() >=
          static_cast<std::size_t>(options_.fifo_depth)) {
    return fmt::format("send to rank {} on channel {}: FIFO full (depth {})", tb.send_peer,
                       tb.channel, options_.fifo_depth);
  }
  return "nothing (runnable: an executor bug)";
}

RunResult Scheduler::deadlock() const {
  RunResult result = result_;
  result.outcome = Outcome::Deadlock;
  for (std::size_t g = 0; g < plan_.threadblocks.size(); ++g) {
    const int gi = static_cast<int>(g);
    if (finished(gi)) continue;
    const PlanThreadblock& tb = plan_.threadblocks[g];
    result.blocked.push_back({tb.rank, tb.id, tile_[g], step_[g],
                              std::string(ir::to_string(current_step(gi).type)), waiting_for(gi)});
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
  if (finished_count_ < plan_.threadblocks.size()) return deadlock();
  for (std::size_t c = 0; c < connections_.size(); ++c) {
    if (connections_[c].fifo.empty()) continue;
    const PlanConnection& pc = plan_.connections[c];
    result_.outcome = Outcome::Error;
    result_.message = fmt::format(
        "rank {} sent {} message(s) to rank {} on channel {} that no step received (the send "
        "and receive steps on this connection do not match)",
        pc.key.sender, connections_[c].fifo.size(), pc.key.receiver, pc.key.channel);
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
