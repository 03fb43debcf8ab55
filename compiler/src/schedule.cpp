#include "weft/compiler/schedule.h"

#include <algorithm>
#include <cstdint>
#include <queue>

#include <fmt/format.h>

#include "flat_map.h"

namespace weft::compiler {

std::string_view to_string(ScheduleOrder order) {
  switch (order) {
    case ScheduleOrder::CriticalPath:
      return "critical path";
    case ScheduleOrder::ProgramOrder:
      return "program order";
    case ScheduleOrder::Level:
      return "level";
  }
  return "?";
}

std::vector<int> instruction_levels(const InstructionDag& dag) {
  // One forward sweep: program order is topological, and a receive comes after its send.
  std::vector<int> level(dag.size(), 0);
  for (std::size_t k = 0; k < dag.size(); ++k) {
    int l = 0;
    for (const int d : dag.dependencies(static_cast<int>(k)))
      l = std::max(l, level[static_cast<std::size_t>(d)] + 1);
    const int from = dag.instructions[k].recv_from;
    if (from >= 0) l = std::max(l, level[static_cast<std::size_t>(from)] + 1);
    level[k] = l;
  }
  return level;
}

std::optional<Schedule> schedule(const InstructionDag& dag, const ScheduleOptions& options,
                                 std::string* why) {
  if (!why) return schedule(dag, options, static_cast<ScheduleFailure*>(nullptr));
  ScheduleFailure failure;
  std::optional<Schedule> result = schedule(dag, options, &failure);
  if (!result) *why = std::move(failure.why);
  return result;
}

namespace {

// Longest path (in instructions) from each instruction to a sink. Program order is topological,
// so one backward sweep suffices.
std::vector<int> paths_to_sink(const InstructionDag& dag) {
  const auto& ins = dag.instructions;
  std::vector<int> priority(dag.size(), 1);
  for (std::size_t k = dag.size(); k-- > 0;) {
    const int p = priority[k] + 1;
    for (const int d : dag.dependencies(static_cast<int>(k))) {
      auto& q = priority[static_cast<std::size_t>(d)];
      if (q < p) q = p;
    }
    if (ins[k].recv_from >= 0) {
      auto& q = priority[static_cast<std::size_t>(ins[k].recv_from)];
      if (q < p) q = p;
    }
  }
  return priority;
}

// The same-rank instructions that depend on each instruction (the dependencies turned around):
// successors of k are list[begin[k] .. begin[k + 1]).
struct Successors {
  std::vector<int> begin;
  std::vector<int> list;

  explicit Successors(const InstructionDag& dag) : begin(dag.size() + 1, 0) {
    const std::size_t n = dag.size();
    for (std::size_t k = 0; k < n; ++k) {
      for (const int d : dag.dependencies(static_cast<int>(k)))
        ++begin[static_cast<std::size_t>(d) + 1];
    }
    for (std::size_t k = 0; k < n; ++k) begin[k + 1] += begin[k];
    list.resize(static_cast<std::size_t>(begin[n]));
    std::vector<int> fill(begin.begin(), begin.end() - 1);
    for (std::size_t k = 0; k < n; ++k) {
      for (const int d : dag.dependencies(static_cast<int>(k))) {
        list[static_cast<std::size_t>(fill[static_cast<std::size_t>(d)]++)] = static_cast<int>(k);
      }
    }
  }
};

// Messages between two ranks that may end up on one connection form one FIFO here: receives
// leave it in the order the sends entered it, so any later split over channels keeps that order
// on every connection. Chains asking for other channels are certain to use other connections.
// Each pair also counts its messages in flight and queues the sends that found no room.
struct MessageFifos {
  std::vector<int> pair_of;  // per instruction: its receive's pair of ranks, -1 for none
  // Per pair: the receives whose messages were sent, oldest first (linked through next).
  std::vector<int> head;
  std::vector<int> tail;
  std::vector<int> next;
  std::vector<int> in_flight;  // messages sent and not yet received
  // Per pair, a FIFO (linked through waiting_next) of sends that found no room.
  std::vector<int> waiting_head;
  std::vector<int> waiting_tail;
  std::vector<int> waiting_next;

  explicit MessageFifos(const InstructionDag& dag) : pair_of(dag.size(), -1) {
    const std::size_t n = dag.size();
    const auto& ins = dag.instructions;
    const std::vector<int> hint = chain_channel_hints(dag);
    detail::FlatMap pair_ids(n / 4);
    for (std::size_t k = 0; k < n; ++k) {
      if (ins[k].recv_from < 0) continue;
      const auto key = (static_cast<std::uint64_t>(hint[k] + 1) << 40) |
                       (static_cast<std::uint64_t>(ins[k].recv_peer) << 20) |
                       static_cast<std::uint64_t>(ins[k].rank);
      pair_of[k] = pair_ids.at_or(key, static_cast<int>(pair_ids.size()));
    }
    const std::size_t pairs = pair_ids.size();
    head.assign(pairs, -1);
    tail.assign(pairs, -1);
    next.assign(n, -1);
    in_flight.assign(pairs, 0);
    waiting_head.assign(pairs, -1);
    waiting_tail.assign(pairs, -1);
    waiting_next.assign(n, -1);
  }

  // Whether receive k is the next message of its pair (or receives nothing).
  bool is_head(std::size_t k) const {
    return pair_of[k] < 0 || head[static_cast<std::size_t>(pair_of[k])] == static_cast<int>(k);
  }

  // Receive j's message enters its FIFO.
  void enter(std::size_t j) {
    const auto p = static_cast<std::size_t>(pair_of[j]);
    if (tail[p] >= 0) {
      next[static_cast<std::size_t>(tail[p])] = static_cast<int>(j);
    } else {
      head[p] = static_cast<int>(j);
    }
    tail[p] = static_cast<int>(j);
    ++in_flight[p];
  }

  // Receive k leaves the head of its FIFO; returns the next message's receive, -1 for none.
  int leave(std::size_t k) {
    const auto p = static_cast<std::size_t>(pair_of[k]);
    head[p] = next[k];
    if (head[p] < 0) tail[p] = -1;
    --in_flight[p];
    return head[p];
  }

  // Send k waits on pair p until a receive between the same ranks makes room.
  void wait(std::size_t p, std::size_t k) {
    waiting_next[k] = -1;
    if (waiting_tail[p] >= 0) {
      waiting_next[static_cast<std::size_t>(waiting_tail[p])] = static_cast<int>(k);
    } else {
      waiting_head[p] = static_cast<int>(k);
    }
    waiting_tail[p] = static_cast<int>(k);
  }

  // The send that waited longest on pair p, now that there is room; -1 for none.
  int release(std::size_t p) {
    const int w = waiting_head[p];
    if (w < 0) return -1;
    waiting_head[p] = waiting_next[static_cast<std::size_t>(w)];
    if (waiting_head[p] < 0) waiting_tail[p] = -1;
    return w;
  }
};

// Ready instructions, taken in the order asked for. Critical path: one FIFO bucket per path
// length (a heap of millions of ready sends, as an alltoall has, costs more than the rest of the
// pass); program order: a heap on the index; level: a heap on (level, longest path to a sink,
// index), smallest level first.
class ReadyQueue {
 public:
  ReadyQueue(ScheduleOrder order, const std::vector<int>& priority, const std::vector<int>& level)
      : order_(order), priority_(priority), by_level_(LevelLater{&level, &priority}) {
    if (order_ == ScheduleOrder::CriticalPath) {
      int top_priority = 0;
      for (const int q : priority_) top_priority = std::max(top_priority, q);
      buckets_.resize(static_cast<std::size_t>(top_priority) + 1);
      bucket_head_.assign(buckets_.size(), 0);
    }
  }

  bool empty() const { return count_ == 0; }

  void push(std::size_t k) {
    ++count_;
    if (order_ == ScheduleOrder::ProgramOrder) {
      by_index_.push(static_cast<int>(k));
      return;
    }
    if (order_ == ScheduleOrder::Level) {
      by_level_.push(static_cast<int>(k));
      return;
    }
    const int q = priority_[k];
    buckets_[static_cast<std::size_t>(q)].push_back(static_cast<int>(k));
    highest_ = std::max(highest_, q);
  }

  std::size_t pop() {
    --count_;
    if (order_ == ScheduleOrder::ProgramOrder) {
      const int k = by_index_.top();
      by_index_.pop();
      return static_cast<std::size_t>(k);
    }
    if (order_ == ScheduleOrder::Level) {
      const int k = by_level_.top();
      by_level_.pop();
      return static_cast<std::size_t>(k);
    }
    auto highest = static_cast<std::size_t>(highest_);
    while (bucket_head_[highest] == buckets_[highest].size()) {
      buckets_[highest].clear();
      bucket_head_[highest] = 0;
      highest = static_cast<std::size_t>(--highest_);
    }
    return static_cast<std::size_t>(buckets_[highest][bucket_head_[highest]++]);
  }

 private:
  struct LevelLater {
    const std::vector<int>* level;
    const std::vector<int>* priority;
    bool operator()(int a, int b) const {
      const auto ua = static_cast<std::size_t>(a);
      const auto ub = static_cast<std::size_t>(b);
      if ((*level)[ua] != (*level)[ub]) return (*level)[ua] > (*level)[ub];
      if ((*priority)[ua] != (*priority)[ub]) return (*priority)[ua] < (*priority)[ub];
      return a > b;
    }
  };

  const ScheduleOrder order_;
  const std::vector<int>& priority_;
  std::size_t count_ = 0;
  std::vector<std::vector<int>> buckets_;
  std::vector<std::size_t> bucket_head_;
  int highest_ = 0;
  std::priority_queue<int, std::vector<int>, std::greater<>> by_index_;
  std::priority_queue<int, std::vector<int>, LevelLater> by_level_;
};

// Where an incomplete schedule got stuck: the sends left waiting for room and the receives left
// at the head of their FIFOs, and one of them named.
void describe_failure(const InstructionDag& dag, const ScheduleOptions& options,
                      const MessageFifos& fifos, ScheduleFailure& failure) {
  const auto& ins = dag.instructions;
  for (int w : fifos.waiting_head) {
    for (; w >= 0; w = fifos.waiting_next[static_cast<std::size_t>(w)])
      failure.waiting_sends.push_back(w);
  }
  for (const int head : fifos.head) {
    if (head >= 0) failure.stuck_receives.push_back(head);
  }
  std::string& why = failure.why;
  if (!failure.waiting_sends.empty()) {
    const int waiting = failure.waiting_sends.front();
    const auto& w = ins[static_cast<std::size_t>(waiting)];
    why = fmt::format(
        "{} sends from rank {} to rank {} while {} earlier messages between them wait for "
        "receives that depend on it",
        dag.describe(waiting), w.rank, w.send_peer, options.fifo_depth);
  } else if (!failure.stuck_receives.empty()) {
    // Name one receive that waits behind another message between the same ranks.
    const int head = failure.stuck_receives.front();
    const auto& h = ins[static_cast<std::size_t>(head)];
    why = fmt::format(
        "messages from rank {} to rank {} cannot be received in the order they are sent: "
        "{} waits for an instruction that depends on a later message",
        h.recv_peer, h.rank, dag.describe(head));
  } else {
    why = "the instruction graph has a cycle";
  }
}

}  // namespace

std::optional<Schedule> schedule(const InstructionDag& dag, const ScheduleOptions& options,
                                 ScheduleFailure* failure) {
  const std::size_t n = dag.size();
  const auto& ins = dag.instructions;
  Schedule result;
  result.priority = paths_to_sink(dag);
  const std::vector<int> level =
      options.order == ScheduleOrder::Level ? instruction_levels(dag) : std::vector<int>{};
  const Successors successors(dag);
  // Per instruction, its predecessors still to be scheduled.
  std::vector<int> pending(n, 0);
  for (std::size_t k = 0; k < n; ++k) {
    pending[k] = static_cast<int>(dag.dependencies(static_cast<int>(k)).size()) +
                 (ins[k].recv_from >= 0 ? 1 : 0);
  }
  MessageFifos fifos(dag);
  ReadyQueue ready(options.order, result.priority, level);
  // The pair of ranks a send's message goes between, -1 for none; and whether it has room there.
  auto send_pair = [&](std::size_t k) {
    return ins[k].send_to >= 0 ? fifos.pair_of[static_cast<std::size_t>(ins[k].send_to)] : -1;
  };
  auto has_room = [&](std::size_t k) {
    const int p = send_pair(k);
    return options.fifo_depth <= 0 || p < 0 ||
           fifos.in_flight[static_cast<std::size_t>(p)] < options.fifo_depth;
  };
  auto maybe_ready = [&](std::size_t k) {
    if (pending[k] == 0 && fifos.is_head(k)) ready.push(k);
  };
  for (std::size_t k = 0; k < n; ++k) {
    if (pending[k] == 0 && fifos.pair_of[k] < 0) ready.push(k);
  }

  result.order.reserve(n);
  result.position.assign(n, -1);
  while (!ready.empty()) {
    const std::size_t k = ready.pop();
    if (!has_room(k)) {
      // Waits until a receive between the same ranks makes room.
      fifos.wait(static_cast<std::size_t>(send_pair(k)), k);
      continue;
    }
    result.position[k] = static_cast<int>(result.order.size());
    result.order.push_back(static_cast<int>(k));
    if (fifos.pair_of[k] >= 0) {
      // Leaves the head of its FIFO; the next message may now be received, and a send between
      // the same ranks may now find room: one message left, so the first send to have waited.
      if (const int next = fifos.leave(k); next >= 0) maybe_ready(static_cast<std::size_t>(next));
      if (const int w = fifos.release(static_cast<std::size_t>(fifos.pair_of[k])); w >= 0)
        ready.push(static_cast<std::size_t>(w));
    }
    for (int s = successors.begin[k]; s < successors.begin[k + 1]; ++s) {
      const auto j = static_cast<std::size_t>(successors.list[static_cast<std::size_t>(s)]);
      if (--pending[j] == 0) maybe_ready(j);
    }
    if (ins[k].send_to >= 0) {
      const auto j = static_cast<std::size_t>(ins[k].send_to);
      fifos.enter(j);
      if (--pending[j] == 0) maybe_ready(j);
    }
  }
  if (result.order.size() != n) {
    if (failure) describe_failure(dag, options, fifos, *failure);
    return std::nullopt;
  }
  return result;
}

}  // namespace weft::compiler
