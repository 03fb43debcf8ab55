#include "plan_search.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include <fmt/format.h>

#include "flat_map.h"
#include "weft/compiler/assign.h"
#include "weft/compiler/data_chains.h"
#include "weft/compiler/dependencies.h"
#include "weft/compiler/schedule.h"

namespace weft::compiler::detail {

namespace {

// The first limit an algorithm's shape breaks. For the steps limit, `found` is the most steps any
// threadblock has, which tells the channel search how much further to spread.
struct Violation {
  enum class Kind { None, Channels, Threadblocks, Steps, Connections } kind = Kind::None;
  int found = 0;
  std::string text;
  explicit operator bool() const { return kind != Kind::None; }
};

struct ThreadblockShape {
  int send;
  int recv;
  int channel;
  int steps;
};

// `copies`: instances the shape is one of; they add channels and threadblocks, each on channels of
// its own.
Violation check_limits(int channels, const std::vector<std::vector<ThreadblockShape>>& ranks,
                       const ir::LimitsProfile& limits, int copies) {
  Violation v;
  channels *= copies;
  if (channels > limits.max_channels) {
    return {Violation::Kind::Channels, channels,
            fmt::format("{} channels exceed {}", channels, limits.max_channels)};
  }
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const auto count = static_cast<int>(ranks[r].size()) * copies;
    if (count > limits.max_threadblocks_per_rank) {
      return {Violation::Kind::Threadblocks, count,
              fmt::format("rank {} needs {} threadblocks, above {}", r, count,
                          limits.max_threadblocks_per_rank)};
    }
    for (std::size_t t = 0; t < ranks[r].size(); ++t) {
      const int steps = ranks[r][t].steps;
      if (steps > limits.max_steps_per_threadblock && steps > v.found) {
        v = {Violation::Kind::Steps, steps,
             fmt::format("rank {} threadblock {} has {} steps, above {}", r, t, steps,
                         limits.max_steps_per_threadblock)};
      }
    }
  }
  if (v) return v;
  std::vector<int> sending(static_cast<std::size_t>(channels));
  std::vector<int> receiving(static_cast<std::size_t>(channels));
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    std::fill(sending.begin(), sending.end(), 0);
    std::fill(receiving.begin(), receiving.end(), 0);
    for (const ThreadblockShape& tb : ranks[r]) {
      const auto ch = static_cast<std::size_t>(tb.channel);
      if (tb.send >= 0 && ++sending[ch] > limits.max_send_threadblocks_per_channel) {
        return {Violation::Kind::Connections, sending[ch],
                fmt::format("rank {} has more than {} sending threadblocks on channel {}", r,
                            limits.max_send_threadblocks_per_channel, tb.channel)};
      }
      if (tb.recv >= 0 && ++receiving[ch] > limits.max_recv_threadblocks_per_channel) {
        return {Violation::Kind::Connections, receiving[ch],
                fmt::format("rank {} has more than {} receiving threadblocks on channel {}", r,
                            limits.max_recv_threadblocks_per_channel, tb.channel)};
      }
    }
  }
  return v;
}

// An assignment's shape before dependencies add nops: cheap, no IR built.
std::vector<std::vector<ThreadblockShape>> shape_of(const InstructionDag& dag,
                                                    const Assignment& a) {
  std::vector<std::vector<ThreadblockShape>> ranks(a.threadblocks.size());
  for (std::size_t r = 0; r < a.threadblocks.size(); ++r) {
    for (const ThreadblockInfo& tb : a.threadblocks[r])
      ranks[r].push_back({tb.send, tb.recv, tb.channel, 0});
  }
  for (std::size_t k = 0; k < dag.size(); ++k) {
    ++ranks[static_cast<std::size_t>(dag.instructions[k].rank)]
           [static_cast<std::size_t>(a.threadblock[k])]
               .steps;
  }
  return ranks;
}

std::vector<std::vector<ThreadblockShape>> shape_of(const ir::Algorithm& algo) {
  std::vector<std::vector<ThreadblockShape>> ranks(algo.gpus.size());
  for (std::size_t r = 0; r < algo.gpus.size(); ++r) {
    for (const ir::Threadblock& tb : algo.gpus[r].threadblocks) {
      ranks[r].push_back({tb.send, tb.recv, tb.channel, static_cast<int>(tb.steps.size())});
    }
  }
  return ranks;
}

// Unhinted traffic, counted once for the channel search.
class UnhintedTraffic {
 public:
  explicit UnhintedTraffic(const InstructionDag& dag) : ranks_(dag.ranks) {
    detail::FlatMap steps;   // sends a→b plus receives a←b: one threadblock
    detail::FlatMap chains;  // chains starting with a send a→b
    auto key = [](int a, int b) {
      return (static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint32_t>(b);
    };
    for (const Instruction& i : dag.instructions) {
      if (i.channel >= 0) continue;
      if (i.send_to >= 0) {
        busiest_ = std::max(busiest_, ++steps.at_or(key(i.rank, i.send_peer), 0));
        if (i.recv_from < 0) ++chains.at_or(key(i.rank, i.send_peer), 0);
      }
      if (i.recv_from >= 0)
        busiest_ = std::max(busiest_, ++steps.at_or(key(i.rank, i.recv_peer), 0));
    }
    chains.for_each([&](std::uint64_t k, int count) {
      pair_chains_.emplace_back(static_cast<int>(k >> 32), count);
    });
  }
  bool any() const { return busiest_ > 0; }

  // The fewest channels that can meet the limits when each pair's chains move to the next
  // channel every `per_channel` chains: the busiest pair must fit the steps limit, and every
  // rank's connections the threadblocks-per-channel limit.
  int channels_needed(const ir::LimitsProfile& limits, int per_channel) const {
    std::vector<int> connections(static_cast<std::size_t>(ranks_), 0);
    for (const auto& [rank, count] : pair_chains_) {
      connections[static_cast<std::size_t>(rank)] += (count + per_channel - 1) / per_channel;
    }
    const int most = *std::max_element(connections.begin(), connections.end());
    auto ceil_div = [](int a, int b) { return (a + b - 1) / std::max(b, 1); };
    return std::max({1, ceil_div(busiest_, limits.max_steps_per_threadblock),
                     ceil_div(most, limits.max_send_threadblocks_per_channel)});
  }

 private:
  int ranks_;
  int busiest_ = 0;
  std::vector<std::pair<int, int>> pair_chains_;
};

// The steps of all threadblocks of a shape.
int total_steps(const std::vector<std::vector<ThreadblockShape>>& ranks) {
  int steps = 0;
  for (const std::vector<ThreadblockShape>& tbs : ranks) {
    for (const ThreadblockShape& tb : tbs) steps += tb.steps;
  }
  return steps;
}

// One schedule placed under one channel plan: the algorithm when it meets the limits profile, and
// what the search compares candidates by.
struct Placed {
  std::optional<ir::Algorithm> algo;
  Violation first_violation;
  int critical_path = 0;
  int steps = 0;
  bool paired_directions = false;
  dsl::Placement placement = dsl::Placement::Paired;
  const Scheduled* scheduled = nullptr;  // what was placed
};

class PlanSearch {
 public:
  PlanSearch(const Scheduled& primary, const dsl::Options& options, const ir::LimitsProfile& limits,
             int instances, const Lap& lap)
      : primary_(primary),
        options_(options),
        limits_(limits),
        instances_(instances),
        widest_(limits.max_channels / instances),
        lap_(lap) {}

  // The narrowest channel plan that meets the limits profile: all unhinted traffic on one
  // channel first (or `plan`); then spread, by peer and by volume, as far as the violations ask.
  Placed place(const Scheduled& s, dsl::Placement placement, ChannelPlan plan = {1, false, 1}) {
    const InstructionDag& dag = s.dag;
    const Schedule& sched = *s.schedule;
    Placed placed;
    placed.placement = placement;
    placed.scheduled = &s;
    // A pair's chains share a threadblock with the receives from the same peer and a few local
    // steps: about half the steps limit each.
    int per_channel = plan.spread > 1 ? plan.per_channel
                                      : std::max(1, (limits_.max_steps_per_threadblock - 4) / 2);
    for (int attempt = 0; attempt < 16; ++attempt) {
      const Assignment assignment = assign(dag, sched, options_.threadblocks, plan, placement);
      Violation violation =
          check_limits(assignment.channels, shape_of(dag, assignment), limits_, instances_);
      lap_("assign");
      if (!violation) {
        ir::Algorithm candidate = resolve_dependencies(dag, sched, assignment);
        const std::vector<std::vector<ThreadblockShape>> shape = shape_of(candidate);
        violation = check_limits(candidate.nchannels, shape, limits_, instances_);
        lap_("dependencies");
        if (!violation) {
          placed.steps = total_steps(shape);
          placed.algo = std::move(candidate);
          placed.critical_path = critical_path(dag, sched, assignment);
          placed.paired_directions = assignment.paired_directions;
          break;
        }
      }
      if (!placed.first_violation) placed.first_violation = violation;
      if (&s != &primary_) break;   // every chain hinted: nothing to spread
      if (!traffic().any()) break;  // hinted traffic: nothing to spread
      int spread = plan.spread;
      if (violation.kind == Violation::Kind::Steps && plan.spread > 1) {
        // Fewer chains of a pair per threadblock, in proportion to the excess.
        per_channel =
            std::max(1, per_channel * limits_.max_steps_per_threadblock / violation.found - 1);
      } else if (violation.kind == Violation::Kind::Connections && plan.spread > 1) {
        ++spread;
      } else if (violation.kind != Violation::Kind::Steps &&
                 violation.kind != Violation::Kind::Connections) {
        break;  // more channels only make more threadblocks
      }
      spread = std::max({spread, 2, traffic().channels_needed(limits_, per_channel)});
      if (spread > widest_) break;
      plan = ChannelPlan{spread, true, per_channel};
    }
    return placed;
  }

  // Auto weighs a shorter critical path against fewer threadblocks: the paired placement
  // unless separate directions make the path shorter (and meet the limits).
  Placed place_both_ways(const Scheduled& s) {
    const dsl::Placement asked = options_.placement;
    Placed placed = place(
        s, asked == dsl::Placement::Separate ? dsl::Placement::Separate : dsl::Placement::Paired);
    if (asked == dsl::Placement::Auto && options_.threadblocks == dsl::ThreadblockPolicy::Auto &&
        (placed.paired_directions || !placed.algo)) {
      Placed separate = place(s, dsl::Placement::Separate);
      if (separate.algo && (!placed.algo || separate.critical_path < placed.critical_path)) {
        placed = std::move(separate);
      }
    }
    return placed;
  }

  // Wider plans of the primary schedule, each chain of a pair of ranks on the next channel: the
  // shortest path wins, the narrower plan on a tie.
  void try_wider_plans(Placed& placed) {
    for (int spread = 2; traffic().any() && spread <= std::min(widest_, 32); spread *= 2) {
      Placed wider = place(primary_, placed.placement, ChannelPlan{spread, true, 1});
      if (wider.algo && wider.critical_path < placed.critical_path) placed = std::move(wider);
    }
  }

  // Each data chain on a channel of its own, from before fusion (data_chains.h), scheduled
  // afresh: it wins with a shorter path, or the same path in fewer steps (more fusions kept).
  void try_channel_per_data_chain(Placed& placed, const InstructionDag& lowered,
                                  const InstructionDag* forwarded,
                                  const ForwardStats& forward_stats) {
    std::optional<InstructionDag> chained =
        channel_per_data_chain(forwarded ? *forwarded : lowered, widest_);
    if (!chained) return;
    std::optional<InstructionDag> chained_lowered;
    if (forwarded) chained_lowered = channel_per_data_chain(lowered, widest_);
    lap_("data chains");
    by_chain_ = forwarded
                    ? fuse_and_schedule(chained_lowered ? *chained_lowered : lowered, &*chained,
                                        forward_stats, options_.fusion, lap_)
                    : fuse_and_schedule(*chained, nullptr, forward_stats, options_.fusion, lap_);
    if (!by_chain_->schedule) return;
    Placed chain_placed = place_both_ways(*by_chain_);
    if (chain_placed.algo && (!placed.algo || chain_placed.critical_path < placed.critical_path ||
                              (chain_placed.critical_path == placed.critical_path &&
                               chain_placed.steps < placed.steps))) {
      placed = std::move(chain_placed);
    }
  }

 private:
  // Counted once, on the primary schedule, the first time a plan is to be widened: the other
  // schedule has every chain hinted, so none of it is spread.
  const UnhintedTraffic& traffic() {
    if (!traffic_) traffic_.emplace(primary_.dag);
    return *traffic_;
  }

  const Scheduled& primary_;
  const dsl::Options& options_;
  const ir::LimitsProfile& limits_;
  const int instances_;
  const int widest_;  // channels one instance may use
  const Lap& lap_;
  std::optional<UnhintedTraffic> traffic_;
  std::optional<Scheduled> by_chain_;  // the data-chain schedule, once made
};

}  // namespace

ChosenPlan search_plan(const Scheduled& primary, const InstructionDag& lowered,
                       const InstructionDag* forwarded, const ForwardStats& forward_stats,
                       const dsl::Options& options, const ir::LimitsProfile& limits, int instances,
                       const Lap& lap) {
  PlanSearch search(primary, options, limits, instances, lap);
  Placed placed = search.place_both_ways(primary);
  // Under the manual threadblock policy the user placed the threadblocks, and their channels
  // with them: nothing wider to try.
  if (options.channel_policy == dsl::ChannelPolicy::ShortestPath &&
      options.threadblocks == dsl::ThreadblockPolicy::Auto) {
    if (placed.algo) search.try_wider_plans(placed);
    search.try_channel_per_data_chain(placed, lowered, forwarded, forward_stats);
  }
  ChosenPlan chosen;
  // Copied out before `search` (which may hold the placed schedule) goes.
  chosen.notes = placed.scheduled->notes;
  chosen.fused = placed.scheduled->fused;
  chosen.forwarded = placed.scheduled->forwarded;
  chosen.algorithm = std::move(placed.algo);
  if (!chosen.algorithm) chosen.violation = placed.first_violation.text;
  return chosen;
}

}  // namespace weft::compiler::detail
