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

std::optional<Schedule> schedule(const InstructionDag& dag, const ScheduleOptions& options,
                                 ScheduleFailure* failure) {
  const ScheduleOrder order = options.order;
  const std::size_t n = dag.size();
  const auto& ins = dag.instructions;
  Schedule result;

  // Longest path to a sink. Program order is topological, so one backward sweep suffices.
  result.priority.assign(n, 1);
  for (std::size_t k = n; k-- > 0;) {
    const int p = result.priority[k] + 1;
    for (const int d : dag.dependencies(static_cast<int>(k))) {
      auto& q = result.priority[static_cast<std::size_t>(d)];
      if (q < p) q = p;
    }
    if (ins[k].recv_from >= 0) {
      auto& q = result.priority[static_cast<std::size_t>(ins[k].recv_from)];
      if (q < p) q = p;
    }
  }

  const std::vector<int> level =
      order == ScheduleOrder::Level ? instruction_levels(dag) : std::vector<int>{};

  // Successors and the number of predecessors still to be scheduled.
  std::vector<int> succ_begin(n + 1, 0);
  for (std::size_t k = 0; k < n; ++k) {
    for (const int d : dag.dependencies(static_cast<int>(k)))
      ++succ_begin[static_cast<std::size_t>(d) + 1];
  }
  for (std::size_t k = 0; k < n; ++k) succ_begin[k + 1] += succ_begin[k];
  std::vector<int> succ(static_cast<std::size_t>(succ_begin[n]));
  {
    std::vector<int> fill(succ_begin.begin(), succ_begin.end() - 1);
    for (std::size_t k = 0; k < n; ++k) {
      for (const int d : dag.dependencies(static_cast<int>(k))) {
        succ[static_cast<std::size_t>(fill[static_cast<std::size_t>(d)]++)] = static_cast<int>(k);
      }
    }
  }
  std::vector<int> pending(n, 0);
  for (std::size_t k = 0; k < n; ++k) {
    pending[k] = static_cast<int>(dag.dependencies(static_cast<int>(k)).size()) +
                 (ins[k].recv_from >= 0 ? 1 : 0);
  }

  // Messages between two ranks that may end up on one connection form one FIFO here: receives
  // leave it in the order the sends entered it, so any later split over channels keeps that
  // order on every connection. Chains asking for other channels are certain to use other
  // connections.
  const std::vector<int> hint = chain_channel_hints(dag);
  detail::FlatMap pair_ids(n / 4);
  std::vector<int> pair_of(n, -1);
  for (std::size_t k = 0; k < n; ++k) {
    if (ins[k].recv_from < 0) continue;
    const auto key = (static_cast<std::uint64_t>(hint[k] + 1) << 40) |
                     (static_cast<std::uint64_t>(ins[k].recv_peer) << 20) |
                     static_cast<std::uint64_t>(ins[k].rank);
    pair_of[k] = pair_ids.at_or(key, static_cast<int>(pair_ids.size()));
  }
  std::vector<int> queue_head(pair_ids.size(), -1);
  std::vector<int> queue_tail(pair_ids.size(), -1);
  std::vector<int> queue_next(n, -1);
  // Messages in flight per pair, and sends waiting for room.
  std::vector<int> in_flight(pair_ids.size(), 0);
  // Per pair, a FIFO (linked through waiting_next) of sends that found no room.
  std::vector<int> waiting_head(pair_ids.size(), -1);
  std::vector<int> waiting_tail(pair_ids.size(), -1);
  std::vector<int> waiting_next(n, -1);
  auto send_pair = [&](std::size_t k) {
    return ins[k].send_to >= 0 ? pair_of[static_cast<std::size_t>(ins[k].send_to)] : -1;
  };
  auto has_room = [&](std::size_t k) {
    const int p = send_pair(k);
    return options.fifo_depth <= 0 || p < 0 ||
           in_flight[static_cast<std::size_t>(p)] < options.fifo_depth;
  };

  // Ready instructions by priority. Critical path: one FIFO bucket per path length (a heap of
  // millions of ready sends, as an alltoall has, costs more than the rest of the pass); program
  // order: a heap on the index.
  int top_priority = 0;
  for (const int q : result.priority) top_priority = std::max(top_priority, q);
  std::vector<std::vector<int>> buckets;
  std::vector<std::size_t> bucket_head;
  if (order == ScheduleOrder::CriticalPath) {
    buckets.resize(static_cast<std::size_t>(top_priority) + 1);
    bucket_head.assign(buckets.size(), 0);
  }
  int highest = 0;
  std::priority_queue<int, std::vector<int>, std::greater<>> by_index;
  // Level order: (level, longest path to a sink, index), smallest level first.
  auto level_later = [&](int a, int b) {
    const auto ua = static_cast<std::size_t>(a);
    const auto ub = static_cast<std::size_t>(b);
    if (level[ua] != level[ub]) return level[ua] > level[ub];
    if (result.priority[ua] != result.priority[ub])
      return result.priority[ua] < result.priority[ub];
    return a > b;
  };
  std::priority_queue<int, std::vector<int>, decltype(level_later)> by_level(level_later);
  std::size_t ready_count = 0;
  auto push = [&](std::size_t k) {
    ++ready_count;
    if (order == ScheduleOrder::ProgramOrder) {
      by_index.push(static_cast<int>(k));
      return;
    }
    if (order == ScheduleOrder::Level) {
      by_level.push(static_cast<int>(k));
      return;
    }
    const int q = result.priority[k];
    buckets[static_cast<std::size_t>(q)].push_back(static_cast<int>(k));
    highest = std::max(highest, q);
  };
  auto pop = [&]() -> std::size_t {
    --ready_count;
    if (order == ScheduleOrder::ProgramOrder) {
      const int k = by_index.top();
      by_index.pop();
      return static_cast<std::size_t>(k);
    }
    if (order == ScheduleOrder::Level) {
      const int k = by_level.top();
      by_level.pop();
      return static_cast<std::size_t>(k);
    }
    while (bucket_head[static_cast<std::size_t>(highest)] ==
           buckets[static_cast<std::size_t>(highest)].size()) {
      buckets[static_cast<std::size_t>(highest)].clear();
      bucket_head[static_cast<std::size_t>(highest)] = 0;
      --highest;
    }
    auto& bucket = buckets[static_cast<std::size_t>(highest)];
    return static_cast<std::size_t>(bucket[bucket_head[static_cast<std::size_t>(highest)]++]);
  };
  auto is_head = [&](std::size_t k) {
    return pair_of[k] < 0 ||
           queue_head[static_cast<std::size_t>(pair_of[k])] == static_cast<int>(k);
  };
  auto maybe_ready = [&](std::size_t k) {
    if (pending[k] == 0 && is_head(k)) push(k);
  };
  for (std::size_t k = 0; k < n; ++k) {
    if (pending[k] == 0 && pair_of[k] < 0) push(k);
  }

  result.order.reserve(n);
  result.position.assign(n, -1);
  while (ready_count > 0) {
    const std::size_t k = pop();
    if (!has_room(k)) {
      // Waits until a receive between the same ranks makes room.
      const auto p = static_cast<std::size_t>(send_pair(k));
      waiting_next[k] = -1;
      if (waiting_tail[p] >= 0) {
        waiting_next[static_cast<std::size_t>(waiting_tail[p])] = static_cast<int>(k);
      } else {
        waiting_head[p] = static_cast<int>(k);
      }
      waiting_tail[p] = static_cast<int>(k);
      continue;
    }
    result.position[k] = static_cast<int>(result.order.size());
    result.order.push_back(static_cast<int>(k));
    if (pair_of[k] >= 0) {
      // Leaves the head of its FIFO; the next message may now be received, and a send between
      // the same ranks may now find room.
      const auto p = static_cast<std::size_t>(pair_of[k]);
      queue_head[p] = queue_next[k];
      if (queue_head[p] < 0) queue_tail[p] = -1;
      if (queue_head[p] >= 0) maybe_ready(static_cast<std::size_t>(queue_head[p]));
      --in_flight[p];
      // One message left, so one waiting send (the first to have waited) may go.
      if (waiting_head[p] >= 0) {
        const int w = waiting_head[p];
        waiting_head[p] = waiting_next[static_cast<std::size_t>(w)];
        if (waiting_head[p] < 0) waiting_tail[p] = -1;
        push(static_cast<std::size_t>(w));
      }
    }
    for (int s = succ_begin[k]; s < succ_begin[k + 1]; ++s) {
      const auto j = static_cast<std::size_t>(succ[static_cast<std::size_t>(s)]);
      if (--pending[j] == 0) maybe_ready(j);
    }
    if (ins[k].send_to >= 0) {
      const auto j = static_cast<std::size_t>(ins[k].send_to);
      const auto p = static_cast<std::size_t>(pair_of[j]);
      if (queue_tail[p] >= 0) {
        queue_next[static_cast<std::size_t>(queue_tail[p])] = static_cast<int>(j);
      } else {
        queue_head[p] = static_cast<int>(j);
      }
      queue_tail[p] = static_cast<int>(j);
      ++in_flight[p];
      if (--pending[j] == 0) maybe_ready(j);
    }
  }
  if (result.order.size() != n) {
    if (failure) {
      for (int w : waiting_head) {
        for (; w >= 0; w = waiting_next[static_cast<std::size_t>(w)])
          failure->waiting_sends.push_back(w);
      }
      for (const int head : queue_head) {
        if (head >= 0) failure->stuck_receives.push_back(head);
      }
      std::string& why = failure->why;
      if (!failure->waiting_sends.empty()) {
        const int waiting = failure->waiting_sends.front();
        const auto& w = ins[static_cast<std::size_t>(waiting)];
        why = fmt::format(
            "{} sends from rank {} to rank {} while {} earlier messages between them wait for "
            "receives that depend on it",
            dag.describe(waiting), w.rank, w.send_peer, options.fifo_depth);
      } else if (!failure->stuck_receives.empty()) {
        // Name one receive that waits behind another message between the same ranks.
        const int head = failure->stuck_receives.front();
        const auto& h = ins[static_cast<std::size_t>(head)];
        why = fmt::format(
            "messages from rank {} to rank {} cannot be received in the order they are sent: "
            "{} waits for an instruction that depends on a later message",
            h.recv_peer, h.rank, dag.describe(head));
      } else {
        why = "the instruction graph has a cycle";
      }
    }
    return std::nullopt;
  }
  return result;
}

}  // namespace weft::compiler
