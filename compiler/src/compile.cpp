#include "weft/compiler/compiler.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "fuse_and_schedule.h"
#include "plan_search.h"
#include "time_judge.h"
#include "weft/compiler/emit.h"
#include "weft/compiler/error.h"
#include "weft/compiler/forward.h"
#include "weft/compiler/instruction_dag.h"
#include "weft/compiler/lower.h"
#include "weft/compiler/replicate.h"
#include "weft/dsl/postcondition.h"
#include "weft/ir/validate.h"
#include "weft/ir/xml.h"

namespace weft::compiler {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
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

// The channels the pieces cut for instances (cut_for_instances) may spread over.
int channels_per_piece(const InstructionDag& lowered, const dsl::Options& options,
                       const ir::LimitsProfile& limits) {
  // Pieces get channels of their own in programs without channel hints (the user's channels
  // stay as written), under the automatic threadblock policy: at most 4, each adding
  // threadblocks, and one channel per instance left for the rest of the traffic.
  bool hinted = options.threadblocks != dsl::ThreadblockPolicy::Auto;
  for (const Instruction& ins : lowered.instructions) hinted = hinted || ins.channel >= 0;
  return hinted ? 1 : std::min(4, limits.max_channels / options.instances - 1);
}

// The replicated algorithm's statistics, with fusion and forwarding, counted on one instance
// (`one_instance`), scaled to all of them: every copy has the same.
CompileStats replicated_statistics(const ir::Algorithm& replicated,
                                   const CompileStats& one_instance, int instances) {
  FuseStats fused = one_instance.fused;
  fused.rcs *= instances;
  fused.rrcs *= instances;
  fused.rrs *= instances;
  ForwardStats forward = one_instance.forwarded;
  forward.reads *= instances;
  forward.copies_removed *= instances;
  forward.copies_narrowed *= instances;
  CompileStats stats = statistics(replicated);
  stats.fused = fused;
  stats.forwarded = forward;
  return stats;
}

// The passes from the trace to emitted IR, in order. A pass that fails adds its error to
// `result` and the rest do not run.
void run_passes(const dsl::Program& program, const ir::LimitsProfile& limits,
                const JudgeOptions& judge_options, CompileResult& result, const detail::Lap& lap) {
  const dsl::Options& options = program.options();
  // The postcondition, on the trace: a program that computes the wrong thing goes no further.
  const dsl::PostconditionReport post = dsl::check_postcondition(program);
  lap("postcondition");
  if (!post.ok()) {
    result.errors.push_back(post.str());
    return;
  }

  InstructionDag lowered = lower(program, LowerOptions{limits.max_count});
  lap("lower");
  // One instance is compiled and then copied (replicate.h); its multi-chunk steps are cut first
  // where a copy would not be contiguous.
  const int instances = options.instances;
  const dsl::Replication layout = replication_layout(program);
  const BlockSizes blocks = replication_blocks(program.collective());
  if (instances > 1) {
    const int piece_channels = channels_per_piece(lowered, options, limits);
    lowered = cut_for_instances(lowered, instances, layout, blocks, piece_channels);
    lap("cut");
  }

  // Copies forwarded where the data can be read at its source; the copies kept as written only
  // when no schedule keeps the message order with forwarding (its reads of the source add
  // write-after-read orders).
  const std::optional<InstructionDag> forwarded = forward_copies(lowered, &result.stats.forwarded);
  lap("forward");

  // Two orders of the same steps (schedule.h): the incumbent's first. The second is only worth
  // building where time can judge between them.
  const ScheduleOrder first = judge_options.incumbent == Incumbent::Msccl
                                  ? ScheduleOrder::Level
                                  : ScheduleOrder::CriticalPath;
  const detail::Scheduled primary =
      detail::fuse_and_schedule(lowered, forwarded ? &*forwarded : nullptr, result.stats.forwarded,
                                options.fusion, first, lap);
  if (!primary.schedule) {
    result.notes = primary.notes;
    result.errors.push_back("no schedule keeps the order of messages between ranks: " +
                            result.notes.back());
    return;
  }
  detail::TimeJudge judge(program, judge_options, layout, blocks);
  std::vector<const detail::Scheduled*> primaries{&primary};
  std::optional<detail::Scheduled> second;
  const std::uint64_t steps =
      static_cast<std::uint64_t>(primary.dag.size()) * static_cast<std::uint64_t>(instances);
  std::optional<detail::Scheduled> unbounded;
  std::optional<detail::Scheduled> msccl_fused;
  if (judge_options.enabled && (judge_options.max_steps == 0 || steps <= judge_options.max_steps)) {
    second = detail::fuse_and_schedule(
        lowered, forwarded ? &*forwarded : nullptr, result.stats.forwarded, options.fusion,
        first == ScheduleOrder::Level ? ScheduleOrder::CriticalPath : ScheduleOrder::Level, lap);
    if (second->schedule && !detail::same_schedule(primary, *second)) primaries.push_back(&*second);
    // The level order without room kept for FIFO depth 2, as msccl-tools orders: its sends need
    // not wait for receives. First where msccl-tools' choices are the incumbent.
    unbounded = detail::fuse_and_schedule(lowered, forwarded ? &*forwarded : nullptr,
                                          result.stats.forwarded, options.fusion,
                                          ScheduleOrder::Level, lap, /*unbounded=*/true);
    const detail::Scheduled& level = first == ScheduleOrder::Level ? primary : *second;
    if (unbounded->schedule && !(level.schedule && detail::same_schedule(level, *unbounded))) {
      if (first == ScheduleOrder::Level) {
        primaries.insert(primaries.begin(), &*unbounded);
      } else {
        primaries.push_back(&*unbounded);
      }
    }
    // Where msccl-tools' choices are the incumbent, its fusion too (fuse.h), first: it fuses
    // less, and a result sent two ways then leaves on both at once, each on a channel of its own
    // where a channel per data chain is tried.
    if (judge_options.incumbent == Incumbent::Msccl && options.fusion) {
      msccl_fused = detail::fuse_and_schedule(
          lowered, forwarded ? &*forwarded : nullptr, result.stats.forwarded, options.fusion,
          ScheduleOrder::Level, lap, /*unbounded=*/false, /*msccl_fusion=*/true);
      if (msccl_fused->schedule && !(level.schedule && detail::same_schedule(level, *msccl_fused)))
        primaries.insert(primaries.begin(), &*msccl_fused);
    }
  }

  detail::ChosenPlan plan = detail::search_plan(
      primaries, lowered, forwarded ? &*forwarded : nullptr, result.stats.forwarded, options,
      limits, instances, &judge, judge_options.incumbent, lap);
  result.notes = std::move(plan.notes);
  for (const std::string& line : judge.notes())
    result.judged += (result.judged.empty() ? "" : "; ") + line;
  result.candidates_predicted = judge.predictions();
  result.candidates = std::move(plan.candidates);
  if (!result.candidates.empty()) result.judged_sizes = judge.sizes();
  result.stats.fused = plan.fused;
  result.stats.forwarded = plan.forwarded;
  if (!plan.algorithm) {
    result.errors.push_back(
        fmt::format("cannot meet the '{}' limits profile: {}{}", limits.name, plan.violation,
                    limits.name == "msccl" ? " (the 'weft' profile allows more)" : ""));
    return;
  }

  ir::Algorithm replicated = replicate(*plan.algorithm, instances, layout, blocks);
  if (instances > 1) lap("replicate");
  emit_header(program, replicated);
  const Diagnostics diagnostics = validate_output(replicated, limits);
  lap("emit");
  if (diagnostics.has_errors()) {
    result.errors.push_back("the emitted IR does not validate (a compiler bug):\n" +
                            diagnostics.str());
    return;
  }
  result.stats = replicated_statistics(replicated, result.stats, instances);
  result.algorithm = std::move(replicated);
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

CompileResult compile_unverified(const dsl::Program& program, const CompileOptions& options) {
  const auto& on_pass = options.on_pass;
  const auto start = Clock::now();
  CompileResult result;
  auto pass_start = start;
  const detail::Lap lap = [&](const char* pass) {
    const auto now = Clock::now();
    result.pass_seconds.emplace_back(pass, std::chrono::duration<double>(now - pass_start).count());
    pass_start = now;
    if (on_pass) on_pass(pass);
  };
  const std::optional<ir::LimitsProfile> limits = ir::limits_by_name(program.options().limits);
  if (!limits) {
    result.errors.push_back(fmt::format("unknown limits profile '{}'", program.options().limits));
    return result;
  }
  try {
    run_passes(program, *limits, options.judge, result, lap);
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
  CompileResult result = compile_unverified(program, options);
  if (options.on_pass && result.algorithm && result.errors.empty()) options.on_pass("verify");
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
