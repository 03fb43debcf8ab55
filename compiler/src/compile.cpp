#include "weft/compiler/compiler.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>

#include <fmt/format.h>

#include "flat_map.h"
#include "weft/compiler/assign.h"
#include "weft/compiler/data_chains.h"
#include "weft/compiler/dependencies.h"
#include "weft/compiler/emit.h"
#include "weft/compiler/error.h"
#include "weft/compiler/forward.h"
#include "weft/compiler/lower.h"
#include "weft/compiler/replicate.h"
#include "weft/compiler/schedule.h"
#include "weft/dsl/postcondition.h"
#include "weft/ir/validate.h"
#include "weft/ir/xml.h"

namespace weft::compiler {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

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

// A fused DAG (as far as a schedule allows) and one global order of it, from the lowered DAG and
// its forwarded copies (null: nothing forwarded).
struct Scheduled {
  InstructionDag dag;
  std::optional<Schedule> schedule;  // none: no order of messages between ranks holds
  FuseStats fused;
  ForwardStats forwarded;
  std::vector<std::string> notes;  // each fallback taken, and why
};

using Lap = std::function<void(const char*)>;

// Fused and critical-path first; program order and no fusion are the fallbacks when the messages
// between two ranks cannot keep one order.
Scheduled fuse_and_schedule(const InstructionDag& lowered, const InstructionDag* forwarded,
                            const ForwardStats& forward_stats, bool fusion, const Lap& lap) {
  Scheduled out;
  out.forwarded = forward_stats;
  // Depth 2 first: what every runtime guarantees (docs/architecture.md §2.4); unbounded leaves
  // deadlock freedom to the executor's verdict.
  struct Attempt {
    bool forwarded;
    bool fused;
    ScheduleOrder order;
    int depth;
  };
  std::vector<Attempt> attempts;
  for (const bool forward : {true, false}) {
    if (!forward && !forwarded) break;
    for (const int depth : {2, 0}) {
      if (fusion) {
        attempts.push_back({forward, true, ScheduleOrder::CriticalPath, depth});
        attempts.push_back({forward, true, ScheduleOrder::ProgramOrder, depth});
      }
      attempts.push_back({forward, false, ScheduleOrder::CriticalPath, depth});
      attempts.push_back({forward, false, ScheduleOrder::ProgramOrder, depth});
    }
  }
  // The DAG `out.dag` holds now: (forwarded, fused).
  std::optional<std::pair<bool, bool>> built;
  const InstructionDag* base = nullptr;
  std::vector<char> keep_apart;  // per instruction of `base`: a send kept out of fusion
  std::vector<int> absorbed;     // per instruction of `out.dag`: the send of `base` it absorbed
  for (const Attempt& attempt : attempts) {
    const std::pair<bool, bool> wanted{attempt.forwarded, attempt.fused};
    if (built != wanted) {
      base = attempt.forwarded && forwarded ? forwarded : &lowered;
      if (attempt.fused) {
        keep_apart.assign(base->size(), 0);
        out.dag = fuse(*base, &out.fused, {}, &absorbed);
        lap("fuse");
      } else {
        out.dag = *base;
        out.fused = {};
      }
      if (!attempt.forwarded) out.forwarded = {};
      built = wanted;
    }
    const std::string label = fmt::format(
        "schedule ({}{}, {}, FIFO depth {})", attempt.fused ? "fused" : "unfused",
        attempt.forwarded || !forwarded ? "" : ", copies not forwarded",
        attempt.order == ScheduleOrder::CriticalPath ? "critical path" : "program order",
        attempt.depth > 0 ? std::to_string(attempt.depth) : std::string("unbounded"));
    ScheduleFailure failure;
    out.schedule = schedule(out.dag, ScheduleOptions{attempt.order, attempt.depth}, &failure);
    lap("schedule");
    // A fused step that waits for room towards its send peer holds the message it received,
    // and with it every later message from that peer: where the order stuck on such steps,
    // those fusions alone are undone and the same order is tried again.
    constexpr int kUndoRounds = 16;
    for (int round = 0; !out.schedule && attempt.fused && attempt.depth > 0 && round < kUndoRounds;
         ++round) {
      std::vector<int> undone;
      for (const int k : failure.waiting_sends) {
        if (absorbed[static_cast<std::size_t>(k)] >= 0) undone.push_back(k);
      }
      if (undone.empty()) break;
      std::string names;
      for (std::size_t u = 0; u < undone.size() && u < 3; ++u) {
        const Instruction& step = out.dag.instructions[static_cast<std::size_t>(undone[u])];
        names +=
            fmt::format("{}{} (rank {}: from rank {} to rank {})", u == 0 ? "" : "; ",
                        out.dag.describe(undone[u]), step.rank, step.recv_peer, step.send_peer);
      }
      if (undone.size() > 3) names += fmt::format("; and {} more", undone.size() - 3);
      out.notes.push_back(fmt::format(
          "{}: fusion undone, the rest kept: {}: fused, it waits for room towards its send peer "
          "holding the message it received, on which later messages wait",
          label, names));
      for (const int k : undone)
        keep_apart[static_cast<std::size_t>(absorbed[static_cast<std::size_t>(k)])] = 1;
      out.dag = fuse(*base, &out.fused, keep_apart, &absorbed);
      lap("fuse");
      failure = ScheduleFailure{};
      out.schedule = schedule(out.dag, ScheduleOptions{attempt.order, attempt.depth}, &failure);
      lap("schedule");
    }
    if (out.schedule) break;
    out.notes.push_back(fmt::format("{}: {}", label, failure.why));
    // The next attempt starts again from every fusion.
    built.reset();
  }
  return out;
}

CompileStats statistics(const ir::Algorithm& algo) {
  CompileStats stats;
  stats.ranks = algo.ngpus;
  stats.channels = algo.nchannels;
  for (const ir::Gpu& gpu : algo.gpus) {
    const auto tbs = static_cast<int>(gpu.threadblocks.size());
    stats.threadblocks += tbs;
    stats.max_threadblocks_per_rank = std::max(stats.max_threadblocks_per_rank, tbs);
    for (const ir::Threadblock& tb : gpu.threadblocks) {
      const auto steps = static_cast<int>(tb.steps.size());
      stats.steps += steps;
      stats.max_steps_per_threadblock = std::max(stats.max_steps_per_threadblock, steps);
      for (const ir::Step& step : tb.steps) stats.nops += step.type == ir::StepType::Nop ? 1 : 0;
    }
  }
  return stats;
}

}  // namespace

std::string CompileResult::error_text() const {
  std::string text;
  for (const std::string& e : errors) text += e + "\n";
  if (errors.empty() && algorithm && !verified) {
    text += "verification failed: " + verification.report + "\n";
  }
  return text;
}

std::string CompileResult::summary() const {
  std::string text =
      fmt::format("{} ranks, {} threadblocks, {} steps, {} channel{}", stats.ranks,
                  stats.threadblocks, stats.steps, stats.channels, stats.channels == 1 ? "" : "s");
  if (verified) {
    text += fmt::format("; verified: {} cases passed", verification.cases);
    if (verification.min_fifo_depth) {
      text += fmt::format(" (min FIFO depth {})", *verification.min_fifo_depth);
    }
  } else if (algorithm && verification.cases > 0) {
    text += fmt::format("; verification FAILED ({} of {} cases)", verification.failures,
                        verification.cases);
  } else {
    text += "; not verified";
  }
  return text;
}

CompileResult compile_unverified(const dsl::Program& program) {
  const auto start = Clock::now();
  CompileResult result;
  auto pass_start = start;
  auto lap = [&](const char* pass) {
    const auto now = Clock::now();
    result.pass_seconds.emplace_back(pass, std::chrono::duration<double>(now - pass_start).count());
    pass_start = now;
  };
  const dsl::Options& options = program.options();
  const std::optional<ir::LimitsProfile> limits = ir::limits_by_name(options.limits);
  if (!limits) {
    result.errors.push_back(fmt::format("unknown limits profile '{}'", options.limits));
    return result;
  }
  // The postcondition, on the trace: a program that computes the wrong thing goes no further.
  const dsl::PostconditionReport post = dsl::check_postcondition(program);
  lap("postcondition");
  if (!post.ok()) {
    result.errors.push_back(post.str());
    result.compile_seconds = seconds_since(start);
    return result;
  }
  try {
    InstructionDag lowered = lower(program, LowerOptions{limits->max_count});
    lap("lower");
    // One instance is compiled and then copied (replicate.h); its multi-chunk steps are cut first
    // where a copy would not be contiguous.
    const int instances = options.instances;
    const dsl::Replication layout = replication_layout(program);
    const BlockSizes blocks = replication_blocks(program.collective());
    if (instances > 1) {
      // Pieces get channels of their own in programs without channel hints (the user's channels
      // stay as written), under the automatic threadblock policy: at most 4, each adding
      // threadblocks, and one channel per instance left for the rest of the traffic.
      bool hinted = options.threadblocks != dsl::ThreadblockPolicy::Auto;
      for (const Instruction& ins : lowered.instructions) hinted = hinted || ins.channel >= 0;
      const int piece_channels = hinted ? 1 : std::min(4, limits->max_channels / instances - 1);
      lowered = cut_for_instances(lowered, instances, layout, blocks, piece_channels);
      lap("cut");
    }

    // Copies forwarded where the data can be read at its source; the copies kept as written only
    // when no schedule keeps the message order with forwarding (its reads of the source add
    // write-after-read orders).
    std::optional<InstructionDag> forwarded = forward_copies(lowered, &result.stats.forwarded);
    lap("forward");

    const Scheduled primary = fuse_and_schedule(lowered, forwarded ? &*forwarded : nullptr,
                                                result.stats.forwarded, options.fusion, lap);
    if (!primary.schedule) {
      result.notes = primary.notes;
      result.errors.push_back("no schedule keeps the order of messages between ranks: " +
                              result.notes.back());
      result.compile_seconds = seconds_since(start);
      return result;
    }

    // The narrowest channel plan that meets the limits profile: all unhinted traffic on one
    // channel first; then spread, by peer and by volume, as far as the violations ask.
    struct Placed {
      std::optional<ir::Algorithm> algo;
      Violation first_violation;
      int critical_path = 0;
      int steps = 0;
      bool paired_directions = false;
      dsl::Placement placement = dsl::Placement::Paired;
      const Scheduled* scheduled = nullptr;  // what was placed
    };
    const int widest = limits->max_channels / instances;
    std::optional<UnhintedTraffic> traffic;  // of `primary`; the other plan has none
    // From `plan` (the narrowest by default), widened as far as the violations ask.
    auto place = [&](const Scheduled& s, dsl::Placement placement,
                     ChannelPlan plan = {1, false, 1}) {
      const InstructionDag& dag = s.dag;
      const Schedule& sched = *s.schedule;
      Placed placed;
      placed.placement = placement;
      placed.scheduled = &s;
      // A pair's chains share a threadblock with the receives from the same peer and a few local
      // steps: about half the steps limit each.
      int per_channel = plan.spread > 1 ? plan.per_channel
                                        : std::max(1, (limits->max_steps_per_threadblock - 4) / 2);
      for (int attempt = 0; attempt < 16; ++attempt) {
        const Assignment assignment = assign(dag, sched, options.threadblocks, plan, placement);
        Violation violation =
            check_limits(assignment.channels, shape_of(dag, assignment), *limits, instances);
        lap("assign");
        if (!violation) {
          ir::Algorithm candidate = resolve_dependencies(dag, sched, assignment);
          violation = check_limits(candidate.nchannels, shape_of(candidate), *limits, instances);
          lap("dependencies");
          if (!violation) {
            placed.steps = statistics(candidate).steps;
            placed.algo = std::move(candidate);
            placed.critical_path = critical_path(dag, sched, assignment);
            placed.paired_directions = assignment.paired_directions;
            break;
          }
        }
        if (!placed.first_violation) placed.first_violation = violation;
        if (&s != &primary) break;  // every chain hinted: nothing to spread
        if (!traffic) traffic.emplace(dag);
        if (!traffic->any()) break;  // hinted traffic: nothing to spread
        int spread = plan.spread;
        if (violation.kind == Violation::Kind::Steps && plan.spread > 1) {
          // Fewer chains of a pair per threadblock, in proportion to the excess.
          per_channel =
              std::max(1, per_channel * limits->max_steps_per_threadblock / violation.found - 1);
        } else if (violation.kind == Violation::Kind::Connections && plan.spread > 1) {
          ++spread;
        } else if (violation.kind != Violation::Kind::Steps &&
                   violation.kind != Violation::Kind::Connections) {
          break;  // more channels only make more threadblocks
        }
        spread = std::max({spread, 2, traffic->channels_needed(*limits, per_channel)});
        if (spread > widest) break;
        plan = ChannelPlan{spread, true, per_channel};
      }
      return placed;
    };
    // Auto weighs a shorter critical path against fewer threadblocks: the paired placement
    // unless separate directions make the path shorter (and meet the limits).
    const dsl::Placement asked = options.placement;
    auto place_both_ways = [&](const Scheduled& s) {
      Placed placed = place(
          s, asked == dsl::Placement::Separate ? dsl::Placement::Separate : dsl::Placement::Paired);
      if (asked == dsl::Placement::Auto && options.threadblocks == dsl::ThreadblockPolicy::Auto &&
          (placed.paired_directions || !placed.algo)) {
        Placed separate = place(s, dsl::Placement::Separate);
        if (separate.algo && (!placed.algo || separate.critical_path < placed.critical_path)) {
          placed = std::move(separate);
        }
      }
      return placed;
    };
    Placed placed = place_both_ways(primary);
    std::optional<Scheduled> by_chain;
    if (options.channel_policy == dsl::ChannelPolicy::ShortestPath &&
        options.threadblocks == dsl::ThreadblockPolicy::Auto) {
      // Wider plans, each chain of a pair of ranks on the next channel: the shortest path wins,
      // the narrower plan on a tie. (Under the manual policy the user placed the threadblocks,
      // and their channels with them.)
      if (placed.algo) {
        if (!traffic) traffic.emplace(primary.dag);
        for (int spread = 2; traffic->any() && spread <= std::min(widest, 32); spread *= 2) {
          Placed wider = place(primary, placed.placement, ChannelPlan{spread, true, 1});
          if (wider.algo && wider.critical_path < placed.critical_path) placed = std::move(wider);
        }
      }
      // Then each data chain on a channel of its own, from before fusion (data_chains.h): it
      // wins with a shorter path, or the same path in fewer steps (more fusions kept).
      std::optional<InstructionDag> chained =
          channel_per_data_chain(forwarded ? *forwarded : lowered, widest);
      if (chained) {
        std::optional<InstructionDag> chained_lowered;
        if (forwarded) chained_lowered = channel_per_data_chain(lowered, widest);
        lap("data chains");
        by_chain =
            forwarded
                ? fuse_and_schedule(chained_lowered ? *chained_lowered : lowered, &*chained,
                                    result.stats.forwarded, options.fusion, lap)
                : fuse_and_schedule(*chained, nullptr, result.stats.forwarded, options.fusion, lap);
        if (by_chain->schedule) {
          Placed chain_placed = place_both_ways(*by_chain);
          if (chain_placed.algo &&
              (!placed.algo || chain_placed.critical_path < placed.critical_path ||
               (chain_placed.critical_path == placed.critical_path &&
                chain_placed.steps < placed.steps))) {
            placed = std::move(chain_placed);
          }
        }
      }
    }
    result.notes = placed.scheduled->notes;
    result.stats.fused = placed.scheduled->fused;
    result.stats.forwarded = placed.scheduled->forwarded;
    if (!placed.algo) {
      result.errors.push_back(fmt::format(
          "cannot meet the '{}' limits profile: {}{}", limits->name, placed.first_violation.text,
          limits->name == "msccl" ? " (the 'weft' profile allows more)" : ""));
      result.compile_seconds = seconds_since(start);
      return result;
    }
    const std::optional<ir::Algorithm>& algo = placed.algo;

    ir::Algorithm replicated = replicate(*algo, instances, layout, blocks);
    if (instances > 1) lap("replicate");
    emit_header(program, replicated);
    const Diagnostics diagnostics = validate_output(replicated, *limits);
    lap("emit");
    if (diagnostics.has_errors()) {
      result.errors.push_back("the emitted IR does not validate (a compiler bug):\n" +
                              diagnostics.str());
      result.compile_seconds = seconds_since(start);
      return result;
    }
    // Counted on one instance; every copy has the same.
    FuseStats fused = result.stats.fused;
    fused.rcs *= instances;
    fused.rrcs *= instances;
    fused.rrs *= instances;
    ForwardStats forward = result.stats.forwarded;
    forward.reads *= instances;
    forward.copies_removed *= instances;
    forward.copies_narrowed *= instances;
    result.stats = statistics(replicated);
    result.stats.fused = fused;
    result.stats.forwarded = forward;
    result.algorithm = std::move(replicated);
  } catch (const CompileError& e) {
    result.errors.push_back(e.what());
  }
  result.compile_seconds = seconds_since(start);
  return result;
}

void verify(const dsl::Program& program, CompileResult& result, const cpu::VerifyOptions& options) {
  if (!result.algorithm || !result.errors.empty()) return;
  const auto start = Clock::now();
  result.verification = verify_with_executor(program, *result.algorithm, options);
  result.verified = result.verification.passed;
  result.verify_seconds = seconds_since(start);
}

CompileResult compile(const dsl::Program& program, const CompileOptions& options) {
  CompileResult result = compile_unverified(program);
  verify(program, result, options.verify);
  return result;
}

bool write_xml_file(const CompileResult& result, const std::string& path, std::string* error) {
  if (!result.ok()) {
    if (error) *error = "not written: the algorithm did not compile and verify";
    return false;
  }
  return ir::write_xml_file(*result.algorithm, path, error);
}

}  // namespace weft::compiler
