// The IR's step semantics without data (docs/architecture.md §2.3–2.5), shared by the CPU reference
// executor (schedule.cpp) and the simulator (runtime/predict/src/simulator.cpp), so that both
// agree on when a step may run: each threadblock replays its step list tile after tile; a step
// waits for its dependency's execution in the same tile, a receive for a message, a send for
// room in a FIFO of bounded depth, and a step that does both for both at once. The core keeps
// positions, FIFOs and waiters; the caller decides which runnable threadblock goes next (seeded
// priorities, or simulated time) and what a step does to data or to the clock (`Payload`, the
// message's contents for the executor, its arrival time for the simulator).
//
// Blocked threadblocks are never polled: check() parks one on what it waits for (the
// connection, or a min-heap of waiters on the threadblock it depends on) and the core hands it
// back through `wake` when that changes, so a step costs O(log n) for n threadblocks.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "weft/cpu/light_queue.h"
#include "weft/cpu/plan.h"

namespace weft::cpu::detail {

enum class Readiness {
  Runnable,  // the current step can run now
  Blocked,   // it cannot; the threadblock is handed to `wake` when what it waits for changes
  Mismatch,  // the message at the head of its receive FIFO is not this step's (mismatch())
};

template <class Payload>
class StepCore {
 public:
  struct Message {
    Payload payload{};
    int count = 0;
    int tile = 0;
    int sender_step = 0;
  };

  // `fifo_depth` 0: unbounded.
  StepCore(const Plan& plan, const ModeLayout& layout, int tiles, int fifo_depth)
      : plan_(plan), layout_(layout), tiles_(tiles), fifo_depth_(fifo_depth) {
    const std::size_t count = plan_.threadblocks.size();
    tile_.assign(count, 0);
    step_.assign(count, 0);
    position_.assign(count, 0);
    dependency_waiters_.assign(count, {});
    connections_.assign(plan_.connections.size(), {});
    for (std::size_t g = 0; g < count; ++g) {
      if (plan_.threadblocks[g].step_count == 0) {
        tile_[g] = tiles_;  // nothing to do
        ++finished_count_;
      }
    }
  }

  int tiles() const { return tiles_; }
  int fifo_depth() const { return fifo_depth_; }
  std::size_t threadblock_count() const { return tile_.size(); }
  std::size_t finished_count() const { return finished_count_; }
  bool all_finished() const { return finished_count_ == tile_.size(); }
  bool finished(int g) const { return tile_[static_cast<std::size_t>(g)] >= tiles_; }
  int tile(int g) const { return tile_[static_cast<std::size_t>(g)]; }
  int step(int g) const { return step_[static_cast<std::size_t>(g)]; }
  const PlanThreadblock& threadblock(int g) const {
    return plan_.threadblocks[static_cast<std::size_t>(g)];
  }
  const PlanStep& current_step(int g) const {
    return layout_.steps[threadblock(g).first_step + static_cast<std::size_t>(step(g))];
  }
  // The message g's current step would receive (Runnable or Mismatch, and it receives).
  const Message& incoming(int g) const { return fifo(threadblock(g).recv_connection).front(); }

  Readiness check(int g) {
    const PlanThreadblock& tb = threadblock(g);
    const PlanStep& step = current_step(g);
    if (step.dep_threadblock >= 0) {
      const int d = step.dep_threadblock;
      const std::uint64_t target = dependency_target(g, step);
      if (position_[static_cast<std::size_t>(d)] < target) {
        auto& heap = dependency_waiters_[static_cast<std::size_t>(d)];
        heap.push_back({target, g});
        std::push_heap(heap.begin(), heap.end(), std::greater<>());
        return Readiness::Blocked;
      }
    }
    if (ir::receives(step.type)) {
      ConnectionState& in = connection(tb.recv_connection);
      if (in.fifo.empty()) {
        in.receiver_waiting = true;
        return Readiness::Blocked;
      }
      const Message& m = in.fifo.front();
      if (m.count != step.count || m.tile != tile(g)) return Readiness::Mismatch;
    }
    if (ir::sends(step.type) && full(tb.send_connection)) {
      connection(tb.send_connection).sender_waiting = true;
      return Readiness::Blocked;
    }
    return Readiness::Runnable;
  }

  // Why check() said Mismatch, naming both steps.
  std::string mismatch(int g) const {
    const PlanThreadblock& tb = threadblock(g);
    const PlanStep& step = current_step(g);
    const Message& m = incoming(g);
    const auto& sender = threadblock(
        plan_.connections[static_cast<std::size_t>(tb.recv_connection)].sender_threadblock);
    return fmt::format(
        "{} ('{}', cnt {}, tile {}) received the message that {} sent with cnt {} in tile {}: "
        "the send and receive steps on this connection do not match",
        ir::element_path(tb.rank, tb.id, this->step(g)), ir::to_string(step.type), step.count,
        tile(g), ir::element_path(sender.rank, sender.id, m.sender_step), m.count, m.tile);
  }

  // The three parts of running g's current step (Runnable), in this order: take the received
  // message (a receiving step), put the outgoing one (a sending step), advance. Each hands the
  // threadblocks it unblocks to `wake`.
  template <class Wake>
  Payload take(int g, Wake&& wake) {
    const PlanThreadblock& tb = threadblock(g);
    ConnectionState& in = connection(tb.recv_connection);
    Payload payload = std::move(in.fifo.front().payload);
    in.fifo.pop_front();
    if (in.sender_waiting) {
      in.sender_waiting = false;
      wake(plan_.connections[static_cast<std::size_t>(tb.recv_connection)].sender_threadblock);
    }
    return payload;
  }

  template <class Wake>
  void put(int g, Payload&& payload, Wake&& wake) {
    const PlanThreadblock& tb = threadblock(g);
    ConnectionState& out = connection(tb.send_connection);
    out.fifo.push_back({std::move(payload), current_step(g).count, tile(g), step(g)});
    if (out.receiver_waiting) {
      out.receiver_waiting = false;
      wake(plan_.connections[static_cast<std::size_t>(tb.send_connection)].receiver_threadblock);
    }
  }

  template <class Wake>
  void advance(int g, Wake&& wake) {
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

  // What blocked (not finished) g waits for, in words, for deadlock reports.
  std::string waiting_for(int g) const {
    const PlanThreadblock& tb = threadblock(g);
    const PlanStep& step = current_step(g);
    if (step.dep_threadblock >= 0) {
      const int d = step.dep_threadblock;
      const auto steps = static_cast<std::uint64_t>(threadblock(d).step_count);
      const std::uint64_t position = position_[static_cast<std::size_t>(d)];
      if (position < dependency_target(g, step)) {
        return fmt::format("dependency on tb {} step {} (it is at tile {} step {})",
                           threadblock(d).id, step.dep_step, position / steps, position % steps);
      }
    }
    if (ir::receives(step.type)) {
      const PlanConnection& c = plan_.connections[static_cast<std::size_t>(tb.recv_connection)];
      if (fifo(tb.recv_connection).empty()) {
        return fmt::format(
            "receive from rank {} on channel {}: FIFO empty{}", tb.recv_peer, tb.channel,
            c.sender_threadblock < 0 ? " (no threadblock of that rank sends on it)" : "");
      }
    }
    if (ir::sends(step.type) && full(tb.send_connection)) {
      return fmt::format("send to rank {} on channel {}: FIFO full (depth {})", tb.send_peer,
                         tb.channel, fifo_depth_);
    }
    return "nothing (runnable: an executor bug)";
  }

  // Messages left on connection `c` (after a run: sent, never received).
  std::size_t queued(int c) const { return fifo(c).size(); }

 private:
  struct ConnectionState {
    LightQueue<Message> fifo;
    bool receiver_waiting = false;  // its receiver found it empty and waits for a message
    bool sender_waiting = false;    // its sender found it full and waits for room
  };
  // A threadblock waiting until another one's position (tile × steps + next step) reaches
  // target.
  struct DependencyWaiter {
    std::uint64_t target = 0;
    int threadblock = 0;
    bool operator>(const DependencyWaiter& other) const { return target > other.target; }
  };

  std::uint64_t dependency_target(int g, const PlanStep& step) const {
    return static_cast<std::uint64_t>(tile(g)) *
               static_cast<std::uint64_t>(threadblock(step.dep_threadblock).step_count) +
           static_cast<std::uint64_t>(step.dep_step) + 1;
  }
  ConnectionState& connection(int c) { return connections_[static_cast<std::size_t>(c)]; }
  const LightQueue<Message>& fifo(int c) const {
    return connections_[static_cast<std::size_t>(c)].fifo;
  }
  bool full(int c) const {
    return fifo_depth_ > 0 && fifo(c).size() >= static_cast<std::size_t>(fifo_depth_);
  }

  const Plan& plan_;
  const ModeLayout& layout_;
  int tiles_;
  int fifo_depth_;
  std::vector<int> tile_;
  std::vector<int> step_;
  std::vector<std::uint64_t> position_;                            // tile × step_count + step
  std::vector<std::vector<DependencyWaiter>> dependency_waiters_;  // min-heaps by target
  std::vector<ConnectionState> connections_;
  std::size_t finished_count_ = 0;
};

}  // namespace weft::cpu::detail
