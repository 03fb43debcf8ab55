#include "plan_search.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "flat_map.h"
#include "weft/compiler/assign.h"
#include "weft/compiler/data_chains.h"
#include "weft/compiler/dependencies.h"
#include "weft/compiler/error.h"
#include "weft/compiler/schedule.h"

namespace weft::compiler::detail {

namespace {

// The first limit an algorithm's shape breaks. For the steps limit, `found` is the most steps any
// threadblock has, which tells the channel search how much further to spread.
struct Violation {
  enum class Kind { None, Channels, Threadblocks, Steps, Connections, Elements } kind = Kind::None;
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
  // MSCCL's XML reader keeps a bounded number of elements per rank (<algo>, <gpu>, <tb>s and
  // <step>s): a schedule of many short threadblocks can fit every other limit and still not load.
  for (std::size_t r = 0; limits.max_xml_nodes_per_rank > 0 && r < ranks.size(); ++r) {
    long long elements = 2;
    for (const ThreadblockShape& tb : ranks[r]) elements += (1LL + tb.steps) * copies;
    if (elements > limits.max_xml_nodes_per_rank) {
      return {Violation::Kind::Elements,
              static_cast<int>(std::min<long long>(elements, std::numeric_limits<int>::max())),
              fmt::format("rank {} needs {} XML elements (its gpu, threadblocks and steps, and the "
                          "algo), above {}",
                          r, elements, limits.max_xml_nodes_per_rank)};
    }
  }
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

int count_threadblocks(const ir::Algorithm& algo) {
  int threadblocks = 0;
  for (const ir::Gpu& gpu : algo.gpus) threadblocks += static_cast<int>(gpu.threadblocks.size());
  return threadblocks;
}

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
  std::vector<double> times;             // predicted at the judged sizes (judged_choice)
  std::string description;               // order, placement and plan, for JudgedCandidate
  // msccl-tools' own choices for a program that pinned nothing: its fusion, its placement and a
  // channel per data chain, as its automatic channels give.
  bool msccl_own = false;
  // The channel and threadblock of every instruction: kept only where the search explains itself
  // (the assign pass's dump), since every candidate placed is kept aside while time may judge.
  std::optional<Assignment> assignment;
};

std::string_view placement_name(dsl::Placement placement) {
  switch (placement) {
    case dsl::Placement::Paired:
      return "paired directions";
    case dsl::Placement::Separate:
      return "separate directions";
    case dsl::Placement::Msccl:
      return "msccl-tools' placement";
    case dsl::Placement::Auto:
      break;
  }
  return "automatic placement";
}

class PlanSearch {
 public:
  PlanSearch(const dsl::Options& options, const ir::LimitsProfile& limits, int instances,
             TimeJudge* judge, bool msccl_first, const Lap& lap, bool explain)
      : msccl_first_(msccl_first),
        explain_(explain),
        options_(options),
        limits_(limits),
        instances_(instances),
        widest_(limits.max_channels / instances),
        judge_(judge),
        lap_(lap),
        collecting_(judge != nullptr && judge->enabled()) {}

  bool judging() const { return collecting_; }

  // One line for the account of the search (ChosenPlan::tried), where it explains itself.
  template <typename Line>
  void note(Line&& line) {
    if (explain_) tried_.push_back(line());
  }
  std::vector<std::string> take_tried() { return std::move(tried_); }

  // Whether `challenger` replaces `kept` as the search goes: by the critical-path rule of the
  // call site (`by_path`). Where time judges, every candidate placed is also kept aside, and
  // judged_choice() chooses among them all at the end.
  static bool replaces(const Placed& challenger, const Placed& kept, bool by_path) {
    if (!challenger.algo) return false;
    if (!kept.algo) return true;
    return by_path;
  }

  // The candidate predicted time chooses among every one placed, or none where time cannot judge
  // (judging off, a candidate too large, no prediction). The first placed is the incumbent (the
  // first order's narrowest plan: for a program that pinned its threadblocks or channels, what
  // it pinned). Where the program pinned them, only candidates no slower than the incumbent at
  // any size and faster at one may replace it (where sizes are latency-bound, schedules that
  // differ only in placement often tie to the hundredth of a microsecond: a rule of faster at
  // every size kept a double binary tree 2.7 times slower at 256 MB for a tie at 64 KB). Where
  // msccl-tools' choices are the incumbent and the program pinned nothing, msccl-tools' own
  // schedule is (Placed::msccl_own), and only candidates no slower than it at any size may replace
  // it. Among those eligible, the one whose worst size is closest to the best any candidate reaches
  // at that size wins (its time over the best, the largest of these ratios), then the smaller mean
  // of those ratios (geometric), then the incumbent, then the first placed.
  std::optional<Placed> judged_choice(bool pinned) {
    if (!collecting_ || pool_.empty()) return std::nullopt;
    // Nothing to judge where every candidate is the same schedule (one placement, one plan).
    if (std::all_of(pool_.begin() + 1, pool_.end(),
                    [&](const Placed& p) { return same_steps(*p.algo, *pool_.front().algo); })) {
      return std::nullopt;
    }
    std::vector<const ir::Algorithm*> algos;
    for (const Placed& p : pool_) algos.push_back(&*p.algo);
    std::vector<std::vector<double>> times = judge_->times(algos);
    for (std::size_t k = 0; k < pool_.size(); ++k) {
      if (times[k].empty()) return std::nullopt;
      pool_[k].times = std::move(times[k]);
    }
    std::size_t incumbent = 0;
    bool guarded = pinned;
    if (!pinned && msccl_first_) {
      const auto own =
          std::find_if(pool_.begin(), pool_.end(), [](const Placed& p) { return p.msccl_own; });
      if (own != pool_.end()) {
        incumbent = static_cast<std::size_t>(own - pool_.begin());
        guarded = true;
      }
    }
    const auto eligible = [&](std::size_t k) {
      if (!guarded || k == incumbent) return true;
      return pinned ? dominates(pool_[k].times, pool_[incumbent].times)
                    : no_slower_anywhere(pool_[k].times, pool_[incumbent].times);
    };
    const std::size_t sizes = pool_.front().times.size();
    std::vector<double> best(sizes, std::numeric_limits<double>::infinity());
    for (const Placed& p : pool_) {
      for (std::size_t i = 0; i < sizes; ++i) best[i] = std::min(best[i], p.times[i]);
    }
    // (worst ratio, mean ratio), compared as printed (a ten-thousandth of the ratio).
    const auto score = [&](const Placed& p) {
      double worst = 0;
      double log_sum = 0;
      for (std::size_t i = 0; i < sizes; ++i) {
        const double ratio = p.times[i] / best[i];
        worst = std::max(worst, ratio);
        log_sum += std::log(ratio);
      }
      const double mean = std::exp(log_sum / static_cast<double>(sizes));
      return std::pair{std::llround(worst * 1e4), std::llround(mean * 1e4)};
    };
    std::size_t chosen = incumbent;
    auto chosen_score = score(pool_[incumbent]);
    for (std::size_t k = 0; k < pool_.size(); ++k) {
      if (k == incumbent || !eligible(k)) continue;
      const auto candidate = score(pool_[k]);
      if (candidate < chosen_score) {
        chosen = k;
        chosen_score = candidate;
      }
    }
    for (std::size_t k = 0; k < pool_.size(); ++k) {
      const Placed& p = pool_[k];
      judged_.push_back(JudgedCandidate{p.description, p.steps, count_threadblocks(*p.algo),
                                        p.algo->nchannels, p.critical_path, p.times, k == chosen});
    }
    return std::move(pool_[chosen]);
  }

  // Every candidate judged_choice() chose among; empty where time did not judge.
  std::vector<JudgedCandidate> take_judged() { return std::move(judged_); }

  // The narrowest channel plan that meets the limits profile: all unhinted traffic on one
  // channel first (or `plan`); then spread, by peer and by volume, as far as the violations ask.
  // `spreadable`: a schedule with unhinted traffic (the data-chain schedules hint every chain).
  Placed place(const Scheduled& s, dsl::Placement placement, bool spreadable,
               ChannelPlan plan = {1, false, 1}) {
    const InstructionDag& dag = s.dag;
    const Schedule& sched = *s.schedule;
    Placed placed;
    placed.placement = placement;
    placed.scheduled = &s;
    const auto describe = [&](const ChannelPlan& used) {
      return fmt::format("{} order{}{}, {}, {}", to_string(s.order),
                         s.unbounded ? " (unbounded FIFOs)" : "",
                         s.msccl_fusion ? ", msccl-tools' fusion" : "", placement_name(placement),
                         !spreadable        ? std::string("a channel per data chain")
                         : used.spread <= 1 ? std::string("unhinted traffic on one channel")
                                            : fmt::format("spread over {} channels", used.spread));
    };
    // A pair's chains share a threadblock with the receives from the same peer and a few local
    // steps: about half the steps limit each.
    int per_channel = plan.spread > 1 ? plan.per_channel
                                      : std::max(1, (limits_.max_steps_per_threadblock - 4) / 2);
    for (int attempt = 0; attempt < 16; ++attempt) {
      Assignment assignment;
      try {
        assignment = assign(dag, sched, options_.threadblocks, plan, placement);
      } catch (const CompileError& e) {
        // msccl-tools' placement can need one threadblock for two connections that another step
        // already split: not a candidate. The others report their errors.
        if (placement != dsl::Placement::Msccl) throw;
        note([&] { return fmt::format("{}: cannot be placed so: {}", describe(plan), e.what()); });
        return placed;
      }
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
          placed.description = describe(plan);
          placed.msccl_own = s.msccl_fusion && placement == dsl::Placement::Msccl && !spreadable;
          note([&] {
            return fmt::format("{}: {} steps, {} threadblocks, {} channel{}, critical path {}",
                               placed.description, placed.steps, count_threadblocks(*placed.algo),
                               placed.algo->nchannels, placed.algo->nchannels == 1 ? "" : "s",
                               placed.critical_path);
          });
          if (explain_) placed.assignment = std::move(assignment);
          offer(placed);
          break;
        }
      }
      note(
          [&] { return fmt::format("{}: breaks the limits: {}", describe(plan), violation.text); });
      if (!placed.first_violation) placed.first_violation = violation;
      if (!spreadable) break;        // every chain hinted: nothing to spread
      if (!traffic(s).any()) break;  // hinted traffic: nothing to spread
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
      spread = std::max({spread, 2, traffic(s).channels_needed(limits_, per_channel)});
      if (spread > widest_) break;
      plan = ChannelPlan{spread, true, per_channel};
    }
    return placed;
  }

  // Auto weighs a shorter path against fewer threadblocks: the paired placement unless separate
  // directions make the critical path shorter (and meet the limits). Where time judges, every
  // placement is tried (msccl-tools' first when it is the incumbent) and judged_choice() decides.
  Placed place_both_ways(const Scheduled& s, bool spreadable) {
    const dsl::Placement asked = options_.placement;
    const bool automatic =
        asked == dsl::Placement::Auto && options_.threadblocks == dsl::ThreadblockPolicy::Auto;
    const dsl::Placement first =
        !automatic     ? (asked == dsl::Placement::Auto ? dsl::Placement::Paired : asked)
        : msccl_first_ ? dsl::Placement::Msccl
                       : dsl::Placement::Paired;
    Placed placed = place(s, first, spreadable);
    if (!automatic) return placed;
    for (const dsl::Placement other :
         {dsl::Placement::Paired, dsl::Placement::Separate, dsl::Placement::Msccl}) {
      if (other == first) continue;
      // Unjudged, as before time judged: separate directions only where pairing happened.
      if (!collecting_ &&
          (other == dsl::Placement::Msccl ||
           (first == dsl::Placement::Paired && placed.algo && !placed.paired_directions))) {
        continue;
      }
      Placed candidate = place(s, other, spreadable);
      if (replaces(candidate, placed, candidate.critical_path < placed.critical_path)) {
        placed = std::move(candidate);
      }
    }
    return placed;
  }

  // Wider plans of a schedule, each chain of a pair of ranks on the next channel: kept when
  // faster (unjudged: a shorter path), the narrower plan on a tie.
  void try_wider_plans(const Scheduled& s, Placed& placed) {
    for (int spread = 2; traffic(s).any() && spread <= std::min(widest_, 32); spread *= 2) {
      Placed wider = place(s, placed.placement, true, ChannelPlan{spread, true, 1});
      if (replaces(wider, placed, wider.critical_path < placed.critical_path)) {
        placed = std::move(wider);
      }
    }
  }

  // Each data chain on a channel of its own, from before fusion (data_chains.h), scheduled
  // afresh in `order`: kept when faster (unjudged: a shorter path, or the same path in fewer
  // steps, more fusions kept). With msccl-tools' fusion (`msccl_fusion`), its chains: the sends
  // it leaves alone start chains of their own.
  void try_channel_per_data_chain(Placed& placed, const InstructionDag& lowered,
                                  const InstructionDag* forwarded,
                                  const ForwardStats& forward_stats, ScheduleOrder order,
                                  bool msccl_fusion = false) {
    Chained& chains = chained_[msccl_fusion ? 1 : 0];
    if (!chains.dag) {
      const InstructionDag& base = forwarded ? *forwarded : lowered;
      chains.dag = channel_per_data_chain(
          base, widest_, msccl_fusion ? msccl_unfused_sends(base) : std::vector<char>{});
      if (!*chains.dag) {
        note([] {
          return std::string(
              "a channel per data chain: not tried: it would put all unhinted traffic on one "
              "channel again, nothing is unhinted, or a chain carries two channel hints");
        });
        return;
      }
      if (forwarded) {
        chains.lowered = channel_per_data_chain(
            lowered, widest_, msccl_fusion ? msccl_unfused_sends(lowered) : std::vector<char>{});
      }
      lap_("data chains");
    }
    if (!*chains.dag) return;
    const Scheduled& by_chain = by_chain_.emplace_back(
        forwarded ? fuse_and_schedule(chains.lowered ? *chains.lowered : lowered, &**chains.dag,
                                      forward_stats, options_.fusion, order, lap_,
                                      /*unbounded=*/false, msccl_fusion)
                  : fuse_and_schedule(**chains.dag, nullptr, forward_stats, options_.fusion, order,
                                      lap_, /*unbounded=*/false, msccl_fusion));
    if (!by_chain.schedule) {
      note([&] {
        return fmt::format("{} order, a channel per data chain: no schedule: {}", to_string(order),
                           by_chain.notes.empty() ? std::string("?") : by_chain.notes.back());
      });
      return;
    }
    for (auto it = by_chain_.begin(); &*it != &by_chain; ++it) {
      if (same_schedule(*it, by_chain)) {  // the other order made the same
        note([&] {
          return fmt::format(
              "{} order, a channel per data chain: the same schedule as another "
              "order's, placed once",
              to_string(order));
        });
        return;
      }
    }
    Placed chain_placed = place_both_ways(by_chain, false);
    if (replaces(chain_placed, placed,
                 chain_placed.critical_path < placed.critical_path ||
                     (chain_placed.critical_path == placed.critical_path &&
                      chain_placed.steps < placed.steps))) {
      placed = std::move(chain_placed);
    }
  }

 private:
  // A copy of a placed candidate for judged_choice(), while every candidate so far can be
  // predicted: one above the judge's steps limit ends the collection (the critical path then
  // decides alone, and large programs keep no copies).
  void offer(const Placed& p) {
    if (!collecting_) return;
    if (p.scheduled->unbounded && !judge_->completes_at_depth_two(*p.algo)) {
      note([&] {
        return fmt::format(
            "{}: not a candidate: the CPU executor does not show it completes at "
            "FIFO depth 2",
            p.description);
      });
      return;
    }
    if (!judge_->within_limit(*p.algo)) {
      note([&] {
        return fmt::format("{}: too large to predict: the critical path decides from here",
                           p.description);
      });
      collecting_ = false;
      pool_.clear();
      return;
    }
    pool_.push_back(p);
  }

  // Counted once per schedule, the first time a plan of it is to be widened.
  const UnhintedTraffic& traffic(const Scheduled& s) {
    for (const auto& [of, counted] : traffic_) {
      if (of == &s) return counted;
    }
    return traffic_.emplace_back(&s, UnhintedTraffic(s.dag)).second;
  }

  const bool msccl_first_;  // msccl-tools' choices are the incumbent's (Incumbent::Msccl)
  const bool explain_;      // keep an account of every plan placed (ChosenPlan::tried)
  std::vector<std::string> tried_;
  const dsl::Options& options_;
  const ir::LimitsProfile& limits_;
  const int instances_;
  const int widest_;  // channels one instance may use
  TimeJudge* judge_;
  const Lap& lap_;
  bool collecting_;
  std::vector<Placed> pool_;  // every candidate placed, in order, while time may judge
  std::vector<JudgedCandidate> judged_;
  std::deque<std::pair<const Scheduled*, UnhintedTraffic>> traffic_;
  // The DAGs with one channel per data chain (made once per fusion rule: Weft's, msccl-tools'),
  // and their schedules, one per order.
  struct Chained {
    std::optional<std::optional<InstructionDag>> dag;
    std::optional<InstructionDag> lowered;
  };
  Chained chained_[2];
  std::deque<Scheduled> by_chain_;
};

}  // namespace

ChosenPlan search_plan(const std::vector<const Scheduled*>& primaries,
                       const InstructionDag& lowered, const InstructionDag* forwarded,
                       const ForwardStats& forward_stats, const dsl::Options& options,
                       const ir::LimitsProfile& limits, int instances, TimeJudge* judge,
                       Incumbent incumbent, const Lap& lap, bool explain) {
  PlanSearch search(options, limits, instances, judge, incumbent == Incumbent::Msccl, lap, explain);
  // What the program pinned (its threadblocks, or channels) is the incumbent's; another
  // candidate replaces it only when no slower at any size and faster at one.
  bool pinned = options.threadblocks == dsl::ThreadblockPolicy::Manual;
  for (const Instruction& ins : lowered.instructions) pinned = pinned || ins.channel >= 0;
  std::optional<Placed> kept;
  for (const Scheduled* primary : primaries) {
    // A schedule made without room for FIFO depth 2 is judged only with the executor's word that
    // it completes there (offer()); the critical path alone never keeps it.
    if (primary->unbounded && !search.judging()) {
      search.note([&] {
        return fmt::format("{} order (unbounded FIFOs): not placed: only time may keep it",
                           to_string(primary->order));
      });
      continue;
    }
    Placed placed = search.place_both_ways(*primary, true);
    // Under the manual threadblock policy the user placed the threadblocks, and their channels
    // with them: nothing wider to try.
    if (options.channel_policy == dsl::ChannelPolicy::ShortestPath &&
        options.threadblocks == dsl::ThreadblockPolicy::Auto) {
      if (placed.algo) search.try_wider_plans(*primary, placed);
      search.try_channel_per_data_chain(placed, lowered, forwarded, forward_stats, primary->order,
                                        primary->msccl_fusion);
    }
    if (primary->unbounded) continue;
    if (!kept || PlanSearch::replaces(placed, *kept, placed.critical_path < kept->critical_path))
      kept = std::move(placed);
  }
  if (std::optional<Placed> judged = search.judged_choice(pinned)) kept = std::move(judged);
  ChosenPlan chosen;
  // Copied out before `search` (which may hold the placed schedule) goes.
  chosen.notes = kept->scheduled->notes;
  chosen.fused = kept->scheduled->fused;
  chosen.forwarded = kept->scheduled->forwarded;
  chosen.candidates = search.take_judged();
  if (explain) {
    chosen.tried = search.take_tried();
    chosen.description = kept->description;
    if (kept->algo) chosen.scheduled = *kept->scheduled;
    chosen.assignment = std::move(kept->assignment);
  }
  chosen.algorithm = std::move(kept->algo);
  if (!chosen.algorithm) chosen.violation = kept->first_violation.text;
  return chosen;
}

}  // namespace weft::compiler::detail
