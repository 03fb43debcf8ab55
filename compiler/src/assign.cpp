#include "weft/compiler/assign.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>

#include "flat_map.h"
#include "weft/compiler/error.h"

namespace weft::compiler {

namespace {

using ir::StepType;

// Which threadblock drives each connection of one rank, reset between ranks by the entries it
// touched.
class ConnectionTable {
 public:
  ConnectionTable(int channels, int ranks)
      : ranks_(ranks),
        send_(static_cast<std::size_t>(channels) * static_cast<std::size_t>(ranks), -1),
        recv_(send_.size(), -1) {}
  int& send(int channel, int peer) { return at(send_, channel, peer); }
  int& recv(int channel, int peer) { return at(recv_, channel, peer); }
  void reset() {
    for (const std::size_t k : touched_) {
      send_[k] = -1;
      recv_[k] = -1;
    }
    touched_.clear();
  }

 private:
  int& at(std::vector<int>& table, int channel, int peer) {
    const std::size_t k = static_cast<std::size_t>(channel) * static_cast<std::size_t>(ranks_) +
                          static_cast<std::size_t>(peer);
    touched_.push_back(k);
    return table[k];
  }
  int ranks_;
  std::vector<int> send_;
  std::vector<int> recv_;
  std::vector<std::size_t> touched_;
};

std::vector<int> chain_channels(const InstructionDag& dag, const ChannelPlan& plan,
                                int* channel_count) {
  const std::size_t n = dag.size();
  const auto& ins = dag.instructions;
  const std::vector<int> root = chain_roots(dag);
  const std::vector<int> chain_hint = chain_channel_hints(dag);
  std::vector<int> hint(n, -1);
  int max_hint = -1;
  for (std::size_t k = 0; k < n; ++k) {
    hint[static_cast<std::size_t>(root[k])] =
        std::max(hint[static_cast<std::size_t>(root[k])], chain_hint[k]);
    max_hint = std::max(max_hint, chain_hint[k]);
  }

  // Unhinted chains use channels above the hinted ones, so they never meet a hinted chain on a
  // connection that fusion had to keep one-to-one.
  const int base = max_hint + 1;
  const int spread = std::max(1, plan.spread);
  std::vector<int> offset(n, -1);
  std::vector<int> ordinal(n, 0);
  if (spread > 1) {
    // A chain's peer distance, replaced by its rank among all distances in use: consecutive
    // distances then take turns over the channels whatever their values (a two-step alltoall's
    // remote peers all sit at multiples of 8, which a plain modulo would put on one channel).
    std::vector<char> used(static_cast<std::size_t>(dag.ranks), 0);
    for (std::size_t k = 0; k < n; ++k) {
      const auto r = static_cast<std::size_t>(root[k]);
      if (ins[k].send_to >= 0 && ins[k].recv_from < 0 && hint[r] < 0) {
        offset[r] = (ins[k].send_peer - ins[k].rank + dag.ranks) % dag.ranks;
        used[static_cast<std::size_t>(offset[r])] = 1;
      }
    }
    std::vector<int> position(static_cast<std::size_t>(dag.ranks), 0);
    int next = 0;
    for (std::size_t d = 0; d < used.size(); ++d) {
      if (used[d]) position[d] = next++;
    }
    for (std::size_t k = 0; k < n; ++k) {
      if (offset[k] >= 0) offset[k] = position[static_cast<std::size_t>(offset[k])];
    }
  }
  int volume = 1;
  if (spread > 1 && plan.by_volume) {
    // Chains in order of their first instruction; a chain's ordinal is how many earlier chains
    // use its busiest pair of ranks.
    detail::FlatMap pair_ids;
    std::vector<int> pair_of(n, -1);
    for (std::size_t k = 0; k < n; ++k) {
      if (ins[k].send_to < 0) continue;
      const auto key = (static_cast<std::uint64_t>(ins[k].rank) << 24) |
                       static_cast<std::uint64_t>(ins[k].send_peer);
      pair_of[k] = pair_ids.at_or(key, static_cast<int>(pair_ids.size()));
    }
    // Sending instructions grouped by chain, chains in order of their root.
    std::vector<int> chain_begin(n + 1, 0);
    for (std::size_t k = 0; k < n; ++k) {
      if (pair_of[k] >= 0) ++chain_begin[static_cast<std::size_t>(root[k]) + 1];
    }
    for (std::size_t k = 0; k < n; ++k) chain_begin[k + 1] += chain_begin[k];
    std::vector<int> members(static_cast<std::size_t>(chain_begin[n]));
    std::vector<int> fill(chain_begin.begin(), chain_begin.end() - 1);
    for (std::size_t k = 0; k < n; ++k) {
      if (pair_of[k] >= 0) {
        members[static_cast<std::size_t>(fill[static_cast<std::size_t>(root[k])]++)] =
            static_cast<int>(k);
      }
    }
    std::vector<int> used(pair_ids.size(), 0);
    std::vector<int> stamp(pair_ids.size(), -1);
    for (std::size_t r = 0; r < n; ++r) {
      if (chain_begin[r] == chain_begin[r + 1] || hint[r] >= 0) continue;
      int most = 0;
      for (int m = chain_begin[r]; m < chain_begin[r + 1]; ++m) {
        const auto p = static_cast<std::size_t>(
            pair_of[static_cast<std::size_t>(members[static_cast<std::size_t>(m)])]);
        most = std::max(most, used[p]);
      }
      ordinal[r] = most;
      for (int m = chain_begin[r]; m < chain_begin[r + 1]; ++m) {
        const auto p = static_cast<std::size_t>(
            pair_of[static_cast<std::size_t>(members[static_cast<std::size_t>(m)])]);
        if (stamp[p] != static_cast<int>(r)) {
          stamp[p] = static_cast<int>(r);
          ++used[p];
        }
      }
    }
    for (const int u : used) volume = std::max(volume, u);
  }
  const int per_channel = std::max((volume + spread - 1) / spread, plan.per_channel);

  std::vector<int> channel(n, -1);
  int highest = -1;
  for (std::size_t k = 0; k < n; ++k) {
    if (ins[k].send_to < 0 && ins[k].recv_from < 0) continue;  // local: its threadblock's channel
    const auto r = static_cast<std::size_t>(root[k]);
    if (hint[r] >= 0) {
      channel[k] = hint[r];
    } else if (spread == 1) {
      channel[k] = base;
    } else {
      const int o = std::max(offset[r], 0);
      channel[k] = base + (o + (plan.by_volume ? ordinal[r] / per_channel : 0)) % spread;
    }
    highest = std::max(highest, channel[k]);
  }
  *channel_count = std::max(1, highest + 1);
  return channel;
}

// Under the Manual policy, the operations of a rank that name no threadblock share one more
// threadblock, after the hinted ones, as msccl-tools places them (its threadblock -1).
constexpr int kExtraThreadblock = -2;

struct RankAssigner {
  const InstructionDag& dag;
  const Schedule& schedule;
  dsl::ThreadblockPolicy policy;
  dsl::Placement placement;
  std::vector<int>& channel;
  std::vector<int>& threadblock;
  ConnectionTable& connections;
  bool& paired_directions;

  std::vector<ThreadblockInfo> tbs;
  // The hint a threadblock was created for, -1 for automatic ones, kExtraThreadblock for the
  // Manual policy's one for operations without hints.
  std::vector<int> user_id;
  std::unordered_map<int, int> by_hint;

  int rank = 0;

  int create(int hint, int ch) {
    tbs.push_back(ThreadblockInfo{-1, -1, ch});
    user_id.push_back(hint);
    const int t = static_cast<int>(tbs.size() - 1);
    if (hint != -1) by_hint.emplace(hint, t);
    return t;
  }

  int for_hint(int hint, int ch) {
    const auto it = by_hint.find(hint);
    return it != by_hint.end() ? it->second : create(hint, ch);
  }

  std::string tb_name(int t) const {
    const int hint = user_id[static_cast<std::size_t>(t)];
    if (hint == kExtraThreadblock) {
      return fmt::format("the threadblock of rank {} for operations without threadblock hints",
                         rank);
    }
    return hint >= 0 ? fmt::format("threadblock {} of rank {}", hint, rank)
                     : fmt::format("an automatic threadblock of rank {}", rank);
  }

  void place_communication(int k) {
    const Instruction& i = dag.instructions[static_cast<std::size_t>(k)];
    const int ch = channel[static_cast<std::size_t>(k)];
    const bool sending = ir::sends(i.type);
    const bool receiving = ir::receives(i.type);
    int hint = sending && i.sendtb >= 0 ? i.sendtb : (receiving ? i.recvtb : -1);
    if (policy == dsl::ThreadblockPolicy::Manual && hint < 0) hint = kExtraThreadblock;
    const int ts = sending ? connections.send(ch, i.send_peer) : -1;
    const int tr = receiving ? connections.recv(ch, i.recv_peer) : -1;
    int t = -1;
    if (hint != -1) {
      t = for_hint(hint, ch);
    } else if (ts >= 0 && tr >= 0 && ts != tr) {
      throw CompileError(fmt::format(
          "{}: on rank {}, channel {}, the connection from rank {} and the one to rank {} are "
          "driven by different threadblocks, but a fused step needs both on one",
          dag.describe(k), i.rank, ch, i.recv_peer, i.send_peer));
    } else if (ts >= 0) {
      t = ts;
    } else if (tr >= 0) {
      t = tr;
    } else if (placement == dsl::Placement::Separate || placement == dsl::Placement::Msccl) {
      // Each direction gets a threadblock of its own.
    } else if (sending && !receiving) {
      // A send and a receive with the same peer share a threadblock, as NCCL's p2p does.
      const int same_peer = connections.recv(ch, i.send_peer);
      if (same_peer >= 0 && tbs[static_cast<std::size_t>(same_peer)].send < 0 &&
          user_id[static_cast<std::size_t>(same_peer)] < 0) {
        t = same_peer;
        paired_directions = true;
      }
    } else if (receiving && !sending) {
      const int same_peer = connections.send(ch, i.recv_peer);
      if (same_peer >= 0 && tbs[static_cast<std::size_t>(same_peer)].recv < 0 &&
          user_id[static_cast<std::size_t>(same_peer)] < 0) {
        t = same_peer;
        paired_directions = true;
      }
    }
    if (t < 0) t = create(-1, ch);

    ThreadblockInfo& tb = tbs[static_cast<std::size_t>(t)];
    if (tb.channel != ch) {
      throw CompileError(
          fmt::format("{}: {} works on channel {}, but this operation is on channel {}",
                      dag.describe(k), tb_name(t), tb.channel, ch));
    }
    if (sending) {
      if (tb.send >= 0 && tb.send != i.send_peer) {
        throw CompileError(fmt::format(
            "{}: {} already sends to rank {}; it cannot also send to rank {} (a threadblock has "
            "one send peer)",
            dag.describe(k), tb_name(t), tb.send, i.send_peer));
      }
      if (ts >= 0 && ts != t) {
        throw CompileError(fmt::format(
            "{}: sends from rank {} to rank {} on channel {} are already made by {}; one "
            "threadblock per connection",
            dag.describe(k), i.rank, i.send_peer, ch, tb_name(ts)));
      }
      tb.send = i.send_peer;
      connections.send(ch, i.send_peer) = t;
    }
    if (receiving) {
      if (tb.recv >= 0 && tb.recv != i.recv_peer) {
        throw CompileError(fmt::format(
            "{}: {} already receives from rank {}; it cannot also receive from rank {} (a "
            "threadblock has one receive peer)",
            dag.describe(k), tb_name(t), tb.recv, i.recv_peer));
      }
      if (tr >= 0 && tr != t) {
        throw CompileError(fmt::format(
            "{}: receives on rank {} from rank {} on channel {} are already made by {}; one "
            "threadblock per connection",
            dag.describe(k), i.rank, i.recv_peer, ch, tb_name(tr)));
      }
      tb.recv = i.recv_peer;
      connections.recv(ch, i.recv_peer) = t;
    }
    threadblock[static_cast<std::size_t>(k)] = t;
  }

  // msccl-tools' automatic policy, in one sweep of the order: sends and receives as Separate
  // places them, a local step on the threadblock of its channel (its hint, else channel 0) whose
  // latest step has the lowest level, the first such on a tie, or a new one when the channel has
  // none. Fused steps are placed first, as run() does, so that the steps on either of their
  // connections join them.
  void run_msccl(std::span<const int> order, const std::vector<int>& level) {
    tbs.clear();
    user_id.clear();
    by_hint.clear();
    for (const int k : order) {
      const Instruction& i = dag.instructions[static_cast<std::size_t>(k)];
      if (i.send_to >= 0 && i.recv_from >= 0) place_communication(k);
    }
    std::vector<int> latest_level(tbs.size(), -1);
    for (const int k : order) {
      const auto uk = static_cast<std::size_t>(k);
      const Instruction& i = dag.instructions[uk];
      if (i.send_to >= 0 && i.recv_from >= 0) {
        // placed above
      } else if (i.send_to >= 0 || i.recv_from >= 0) {
        place_communication(k);
      } else if (i.sendtb >= 0) {
        threadblock[uk] = for_hint(i.sendtb, 0);
      } else {
        const int ch = std::max(i.channel, 0);
        int t = -1;
        for (std::size_t u = 0; u < tbs.size(); ++u) {
          if (tbs[u].channel != ch || user_id[u] != -1) continue;
          if (t < 0 || latest_level[u] < latest_level[static_cast<std::size_t>(t)])
            t = static_cast<int>(u);
        }
        if (t < 0) t = create(-1, ch);
        threadblock[uk] = t;
      }
      latest_level.resize(tbs.size(), -1);
      latest_level[static_cast<std::size_t>(threadblock[uk])] = level[uk];
    }
  }

  void run(std::span<const int> order) {
    tbs.clear();
    user_id.clear();
    by_hint.clear();
    std::vector<int> deferred;
    // Fused steps first: they tie a receive connection to a send connection, and an unfused step
    // on either connection must then join that threadblock rather than pair it otherwise.
    for (const int k : order) {
      const Instruction& i = dag.instructions[static_cast<std::size_t>(k)];
      if (i.send_to >= 0 && i.recv_from >= 0) place_communication(k);
    }
    for (const int k : order) {
      const Instruction& i = dag.instructions[static_cast<std::size_t>(k)];
      if ((i.send_to >= 0) != (i.recv_from >= 0)) place_communication(k);
    }
    for (const int k : order) {
      const Instruction& i = dag.instructions[static_cast<std::size_t>(k)];
      if (i.send_to >= 0 || i.recv_from >= 0) continue;
      if (i.sendtb >= 0) {
        threadblock[static_cast<std::size_t>(k)] = for_hint(i.sendtb, 0);
        continue;
      }
      if (policy == dsl::ThreadblockPolicy::Manual) {
        threadblock[static_cast<std::size_t>(k)] = for_hint(kExtraThreadblock, 0);
        continue;
      }
      // Join what it depends on, preferring a receive (whose data it most likely uses) and then
      // the latest.
      int best = -1;
      std::pair<int, int> best_score{-1, -1};
      for (const int d : dag.dependencies(k)) {
        if (threadblock[static_cast<std::size_t>(d)] < 0) continue;
        const std::pair<int, int> score{
            ir::receives(dag.instructions[static_cast<std::size_t>(d)].type) ? 1 : 0,
            schedule.position[static_cast<std::size_t>(d)]};
        if (score > best_score) {
          best_score = score;
          best = d;
        }
      }
      if (best >= 0) {
        threadblock[static_cast<std::size_t>(k)] = threadblock[static_cast<std::size_t>(best)];
      } else {
        deferred.push_back(k);
      }
    }
    if (!deferred.empty()) {
      // Nothing to follow: join the first step that depends on it.
      std::unordered_map<int, int> first_dependent;
      for (const int k : deferred) first_dependent.emplace(k, -1);
      for (const int j : order) {
        for (const int d : dag.dependencies(j)) {
          const auto it = first_dependent.find(d);
          if (it != first_dependent.end() && it->second < 0) it->second = j;
        }
      }
      // ... unless another threadblock has less to move: a threadblock moves its chunks one
      // after another, so the busiest one bounds a large call (a two-step alltoall's gateway
      // copies would otherwise all land on the threadblock that sends to the other node).
      std::vector<long> load(tbs.size(), 0);
      for (const int j : order) {
        const int t = threadblock[static_cast<std::size_t>(j)];
        if (t >= 0)
          load[static_cast<std::size_t>(t)] += dag.instructions[static_cast<std::size_t>(j)].count;
      }
      for (auto it = deferred.rbegin(); it != deferred.rend(); ++it) {
        const int j = first_dependent[*it];
        int t = j >= 0 ? threadblock[static_cast<std::size_t>(j)] : -1;
        if (t < 0) t = tbs.empty() ? create(-1, 0) : 0;
        const int count = dag.instructions[static_cast<std::size_t>(*it)].count;
        for (std::size_t u = 0; u < load.size(); ++u) {
          if (load[u] + count <= load[static_cast<std::size_t>(t)]) t = static_cast<int>(u);
        }
        if (static_cast<std::size_t>(t) < load.size()) load[static_cast<std::size_t>(t)] += count;
        threadblock[static_cast<std::size_t>(*it)] = t;
      }
    }
  }
};

}  // namespace

Assignment assign(const InstructionDag& dag, const Schedule& schedule,
                  dsl::ThreadblockPolicy policy, const ChannelPlan& plan,
                  dsl::Placement placement) {
  const std::size_t n = dag.size();
  Assignment result;
  int channel_count = 1;
  result.channel = chain_channels(dag, plan, &channel_count);
  result.threadblock.assign(n, -1);
  result.threadblocks.resize(static_cast<std::size_t>(dag.ranks));

  // Each rank's instructions in schedule order.
  std::vector<int> rank_begin(static_cast<std::size_t>(dag.ranks) + 1, 0);
  for (const Instruction& i : dag.instructions) ++rank_begin[static_cast<std::size_t>(i.rank) + 1];
  for (std::size_t r = 0; r < static_cast<std::size_t>(dag.ranks); ++r)
    rank_begin[r + 1] += rank_begin[r];
  std::vector<int> by_rank(n);
  {
    std::vector<int> fill(rank_begin.begin(), rank_begin.end() - 1);
    for (const int k : schedule.order) {
      const auto r = static_cast<std::size_t>(dag.instructions[static_cast<std::size_t>(k)].rank);
      by_rank[static_cast<std::size_t>(fill[r]++)] = k;
    }
  }

  ConnectionTable connections(channel_count, dag.ranks);
  RankAssigner assigner{dag,
                        schedule,
                        policy,
                        placement,
                        result.channel,
                        result.threadblock,
                        connections,
                        result.paired_directions,
                        {},
                        {},
                        {},
                        0};
  const bool msccl = placement == dsl::Placement::Msccl && policy == dsl::ThreadblockPolicy::Auto;
  const std::vector<int> level = msccl ? instruction_levels(dag) : std::vector<int>{};
  int highest = 0;
  for (int r = 0; r < dag.ranks; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    assigner.rank = r;
    const std::span<const int> order(by_rank.data() + rank_begin[ur],
                                     static_cast<std::size_t>(rank_begin[ur + 1] - rank_begin[ur]));
    if (msccl) {
      assigner.run_msccl(order, level);
    } else {
      assigner.run(order);
    }
    connections.reset();
    // Threadblock ids: the hinted ones first, by hint, then the automatic ones as created (or
    // the Manual policy's one for operations without hints).
    const std::size_t count = assigner.tbs.size();
    std::vector<int> rank_order(count);
    std::iota(rank_order.begin(), rank_order.end(), 0);
    std::stable_sort(rank_order.begin(), rank_order.end(), [&](int a, int b) {
      const int ha = assigner.user_id[static_cast<std::size_t>(a)];
      const int hb = assigner.user_id[static_cast<std::size_t>(b)];
      if ((ha >= 0) != (hb >= 0)) return ha >= 0;
      return ha < hb;
    });
    std::vector<int> renumber(count);
    auto& tbs = result.threadblocks[ur];
    tbs.resize(count);
    for (std::size_t k = 0; k < count; ++k) {
      renumber[static_cast<std::size_t>(rank_order[k])] = static_cast<int>(k);
      tbs[k] = assigner.tbs[static_cast<std::size_t>(rank_order[k])];
      highest = std::max(highest, tbs[k].channel);
    }
    for (const int k : order) {
      auto& t = result.threadblock[static_cast<std::size_t>(k)];
      t = renumber[static_cast<std::size_t>(t)];
      const int ch = tbs[static_cast<std::size_t>(t)].channel;
      result.channel[static_cast<std::size_t>(k)] = ch;
    }
  }
  result.channels = highest + 1;
  return result;
}

int critical_path(const InstructionDag& dag, const Schedule& schedule,
                  const Assignment& assignment) {
  // The schedule orders every edge (threadblocks take their steps in its order), so one sweep
  // in schedule order sees each instruction after all its predecessors.
  const std::size_t n = dag.size();
  std::vector<int> length(n, 0);
  std::vector<std::vector<int>> last(assignment.threadblocks.size());
  for (std::size_t r = 0; r < last.size(); ++r)
    last[r].assign(assignment.threadblocks[r].size(), -1);
  int longest = 0;
  for (const int k : schedule.order) {
    const auto uk = static_cast<std::size_t>(k);
    const Instruction& i = dag.instructions[uk];
    int before = 0;
    for (const int d : dag.dependencies(k))
      before = std::max(before, length[static_cast<std::size_t>(d)]);
    if (i.recv_from >= 0) before = std::max(before, length[static_cast<std::size_t>(i.recv_from)]);
    int& previous = last[static_cast<std::size_t>(i.rank)]
                        [static_cast<std::size_t>(assignment.threadblock[uk])];
    if (previous >= 0) before = std::max(before, length[static_cast<std::size_t>(previous)]);
    previous = k;
    length[uk] = before + 1;
    longest = std::max(longest, length[uk]);
  }
  return longest;
}

}  // namespace weft::compiler
