#include "weft/compiler/compiler.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fuse_and_schedule.h"
#include "pass_dump.h"
#include "plan_search.h"
#include "time_judge.h"
#include "weft/compiler/emit.h"
#include "weft/compiler/error.h"
#include "weft/compiler/forward.h"
#include "weft/compiler/instruction_dag.h"
#include "weft/compiler/lower.h"
#include "weft/compiler/replicate.h"
#include "weft/dsl/postcondition.h"
#include "weft/ir/edit_distance.h"
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

// Renders the program for the passes CompileOptions::dump_after names, and only for those.
class PassDumper {
 public:
  explicit PassDumper(const PassDumps& dumps) : dumps_(dumps) {}
  bool wants(std::string_view pass) const { return dumps_.sink && dumps_.wants(pass); }
  template <typename Render>
  void operator()(std::string_view pass, Render&& render) const {
    if (wants(pass)) dumps_.sink(pass, render());
  }

 private:
  const PassDumps& dumps_;
};

// The passes from the trace to emitted IR, in order (docs/architecture.md §4), and the program as
// it stands between them: one instance until replicate. A pass that fails adds its error to the
// result and the rest do not run. The channel and placement search (plan_search.h) is the assign
// pass's: it assigns and resolves dependencies for every plan it tries, and the passes after it
// take the plan it kept.
class Pipeline {
 public:
  Pipeline(const dsl::Program& program, const ir::LimitsProfile& limits,
           const JudgeOptions& judge_options, CompileResult& result, const detail::Lap& lap,
           const PassDumps& dumps)
      : program_(program),
        options_(program.options()),
        limits_(limits),
        judge_options_(judge_options),
        result_(result),
        lap_(lap),
        dump_(dumps),
        instances_(options_.instances),
        layout_(replication_layout(program)),
        blocks_(replication_blocks(program.collective())) {}

  void run() {
    if (!postcondition()) return;
    lower();
    cut_for_instances();
    forward();
    if (!fuse_and_schedule()) return;
    if (!assign()) return;
    dependencies();
    replicate();
    emit();
  }

 private:
  // The postcondition, on the trace: a program that computes the wrong thing goes no further.
  bool postcondition() {
    const dsl::PostconditionReport post = dsl::check_postcondition(program_);
    lap_("postcondition");
    dump_("postcondition", [&] { return detail::dump_trace(program_, post); });
    if (post.ok()) return true;
    result_.errors.push_back(post.str());
    return false;
  }

  void lower() {
    lowered_ = compiler::lower(program_, LowerOptions{limits_.max_count});
    lap_("lower");
    dump_("lower", [&] { return detail::dump_dag(lowered_, "lowered"); });
  }

  // One instance is compiled and then copied (replicate.h); its multi-chunk steps are cut first
  // where a copy would not be contiguous.
  void cut_for_instances() {
    if (instances_ > 1) {
      const int piece_channels = channels_per_piece(lowered_, options_, limits_);
      lowered_ =
          compiler::cut_for_instances(lowered_, instances_, layout_, blocks_, piece_channels);
      lap_("cut");
    }
    dump_("cut", [&] {
      return instances_ > 1 ? detail::dump_dag(lowered_, "cut for instances")
                            : std::string("not run: one instance, nothing to cut\n");
    });
  }

  // Copies forwarded where the data can be read at its source; the copies kept as written only
  // when no schedule keeps the message order with forwarding (its reads of the source add
  // write-after-read orders).
  void forward() {
    forwarded_ = forward_copies(lowered_, &result_.stats.forwarded);
    lap_("forward");
    dump_("forward", [&] {
      if (!forwarded_) return std::string("nothing forwarded: no step reads differently\n");
      const ForwardStats& f = result_.stats.forwarded;
      return detail::dump_dag(
          *forwarded_, fmt::format("forwarded ({} reads from the source, {} copies removed, {} "
                                   "narrowed; the copies as written stay a fallback)",
                                   f.reads, f.copies_removed, f.copies_narrowed));
    });
  }

  const InstructionDag* forwarded() const { return forwarded_ ? &*forwarded_ : nullptr; }

  detail::Scheduled schedule_in(ScheduleOrder order, bool unbounded = false,
                                bool msccl_fusion = false) const {
    return detail::fuse_and_schedule(lowered_, forwarded(), result_.stats.forwarded,
                                     options_.fusion, order, lap_, unbounded, msccl_fusion);
  }

  // Fused and in one global order, the schedules the channel search places: the incumbent's order
  // first. The others are only worth building where time can judge between them.
  bool fuse_and_schedule() {
    const ScheduleOrder first = judge_options_.incumbent == Incumbent::Msccl
                                    ? ScheduleOrder::Level
                                    : ScheduleOrder::CriticalPath;
    primary_ = schedule_in(first);
    if (!primary_->schedule) {
      result_.notes = primary_->notes;
      result_.errors.push_back("no schedule keeps the order of messages between ranks: " +
                               result_.notes.back());
      dump_schedules();
      return false;
    }
    judge_.emplace(program_, judge_options_, layout_, blocks_);
    primaries_ = {&*primary_};
    const std::uint64_t steps =
        static_cast<std::uint64_t>(primary_->dag.size()) * static_cast<std::uint64_t>(instances_);
    if (judge_options_.enabled &&
        (judge_options_.max_steps == 0 || steps <= judge_options_.max_steps)) {
      schedule_challengers(first);
    }
    dump_schedules();
    return true;
  }

  // The other order, the level order without room kept for FIFO depth 2 (as msccl-tools orders:
  // its sends need not wait for receives), and msccl-tools' fusion where its choices are the
  // incumbent: each placed where it differs from the schedule of its order.
  void schedule_challengers(ScheduleOrder first) {
    second_ = schedule_in(first == ScheduleOrder::Level ? ScheduleOrder::CriticalPath
                                                        : ScheduleOrder::Level);
    if (second_->schedule && !detail::same_schedule(*primary_, *second_))
      primaries_.push_back(&*second_);
    // First where msccl-tools' choices are the incumbent.
    unbounded_ = schedule_in(ScheduleOrder::Level, /*unbounded=*/true);
    const detail::Scheduled& level = first == ScheduleOrder::Level ? *primary_ : *second_;
    if (unbounded_->schedule && !(level.schedule && detail::same_schedule(level, *unbounded_))) {
      if (first == ScheduleOrder::Level) {
        primaries_.insert(primaries_.begin(), &*unbounded_);
      } else {
        primaries_.push_back(&*unbounded_);
      }
    }
    // Where msccl-tools' choices are the incumbent, its fusion too (fuse.h), first: it fuses
    // less, and a result sent two ways then leaves on both at once, each on a channel of its own
    // where a channel per data chain is tried.
    if (judge_options_.incumbent == Incumbent::Msccl && options_.fusion) {
      msccl_fused_ = schedule_in(ScheduleOrder::Level, /*unbounded=*/false, /*msccl_fusion=*/true);
      if (msccl_fused_->schedule &&
          !(level.schedule && detail::same_schedule(level, *msccl_fused_)))
        primaries_.insert(primaries_.begin(), &*msccl_fused_);
    }
  }

  // The fuse and schedule passes' dumps: every schedule built, and which the search places.
  void dump_schedules() const {
    if (!dump_.wants("fuse") && !dump_.wants("schedule")) return;
    std::vector<detail::NamedSchedule> named;
    for (const std::optional<detail::Scheduled>* built :
         {&primary_, &second_, &unbounded_, &msccl_fused_}) {
      if (!*built) continue;
      const detail::Scheduled& s = **built;
      const std::string name = fmt::format("schedule {}", named.size() + 1);
      const auto placed = std::find(primaries_.begin(), primaries_.end(), &s);
      if (placed != primaries_.end()) {
        named.push_back(
            {&s, name,
             fmt::format("placed {} of {}", placed - primaries_.begin() + 1, primaries_.size())});
        continue;
      }
      const auto same = std::find_if(named.begin(), named.end(), [&](const auto& before) {
        return before.scheduled->schedule && detail::same_schedule(*before.scheduled, s);
      });
      named.push_back({&s, name,
                       !s.schedule           ? std::string("not placed: no order held")
                       : same != named.end() ? "not placed: the same as " + same->name
                                             : std::string("not placed")});
    }
    dump_("fuse", [&] { return detail::dump_fused(named); });
    dump_("schedule", [&] { return detail::dump_schedules(named); });
  }

  // The channel plan and threadblocks, by the channel and placement search: it assigns and
  // resolves dependencies for each plan it tries, and predicted time chooses (§4.1).
  bool assign() {
    plan_ = detail::search_plan(primaries_, lowered_, forwarded(), result_.stats.forwarded,
                                options_, limits_, instances_, &*judge_, judge_options_.incumbent,
                                lap_, dump_.wants("assign"));
    result_.notes = std::move(plan_.notes);
    for (const std::string& line : judge_->notes())
      result_.judged += (result_.judged.empty() ? "" : "; ") + line;
    result_.candidates_predicted = judge_->predictions();
    if (!plan_.candidates.empty()) result_.judged_sizes = judge_->sizes();
    dump_("assign",
          [&] { return detail::dump_channel_plan(plan_, result_.judged_sizes, result_.judged); });
    result_.candidates = std::move(plan_.candidates);
    result_.stats.fused = plan_.fused;
    result_.stats.forwarded = plan_.forwarded;
    if (plan_.algorithm) return true;
    result_.errors.push_back(
        fmt::format("cannot meet the '{}' limits profile: {}{}", limits_.name, plan_.violation,
                    limits_.name == "msccl" ? " (the 'weft' profile allows more)" : ""));
    return false;
  }

  // Resolved by the search for every plan it placed: the kept plan's threadblocks and steps.
  void dependencies() {
    dump_("dependencies", [&] {
      return detail::dump_threadblocks(*plan_.algorithm, "one instance, with its dependencies");
    });
  }

  void replicate() {
    replicated_ = compiler::replicate(*plan_.algorithm, instances_, layout_, blocks_);
    if (instances_ > 1) lap_("replicate");
    dump_("replicate", [&] {
      return instances_ > 1
                 ? detail::dump_threadblocks(replicated_, fmt::format("{} instances", instances_))
                 : std::string("not run: one instance, nothing to copy\n");
    });
  }

  void emit() {
    emit_header(program_, replicated_);
    const Diagnostics diagnostics = validate_output(replicated_, limits_);
    lap_("emit");
    dump_("emit", [&] { return ir::write_xml(replicated_); });
    if (diagnostics.has_errors()) {
      result_.errors.push_back("the emitted IR does not validate (a compiler bug):\n" +
                               diagnostics.str());
      return;
    }
    result_.stats = replicated_statistics(replicated_, result_.stats, instances_);
    result_.algorithm = std::move(replicated_);
  }

  const dsl::Program& program_;
  const dsl::Options& options_;
  const ir::LimitsProfile& limits_;
  const JudgeOptions& judge_options_;
  CompileResult& result_;
  const detail::Lap& lap_;
  const PassDumper dump_;
  const int instances_;
  const dsl::Replication layout_;
  const BlockSizes blocks_;

  InstructionDag lowered_;
  std::optional<InstructionDag> forwarded_;
  // The schedules built, and those the search places, in the order the incumbent is chosen.
  std::optional<detail::Scheduled> primary_;
  std::optional<detail::Scheduled> second_;
  std::optional<detail::Scheduled> unbounded_;
  std::optional<detail::Scheduled> msccl_fused_;
  std::vector<const detail::Scheduled*> primaries_;
  std::optional<detail::TimeJudge> judge_;
  detail::ChosenPlan plan_;
  ir::Algorithm replicated_;
};

// The pass nearest to `word`: within two edits, one it starts ("sched"), or one it shares three
// letters or more with at the start ("fusion", "dependency"). Empty when none is near.
std::string_view nearest_pass(std::string_view word) {
  std::string_view best;
  std::size_t best_distance = 3;
  for (const std::string_view candidate : pass_names()) {
    std::size_t d = ir::edit_distance(word, candidate);
    if (word.size() >= 3 && candidate.starts_with(word)) d = std::min<std::size_t>(d, 1);
    const auto common = static_cast<std::size_t>(
        std::mismatch(word.begin(), word.end(), candidate.begin(), candidate.end()).first -
        word.begin());
    if (common >= 3) d = std::min<std::size_t>(d, 2);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

}  // namespace

std::span<const std::string_view> pass_names() {
  static constexpr std::array<std::string_view, 11> kPasses{
      "postcondition", "lower",        "cut",       "forward", "fuse",  "schedule",
      "assign",        "dependencies", "replicate", "emit",    "verify"};
  return kPasses;
}

std::optional<std::string> unknown_pass(std::string_view name) {
  const std::span<const std::string_view> passes = pass_names();
  if (name == "all" || std::find(passes.begin(), passes.end(), name) != passes.end())
    return std::nullopt;
  const std::string_view near = nearest_pass(name);
  if (near.empty())
    return fmt::format("'{}' is not a pass; the passes: {}, or all", name, fmt::join(passes, ", "));
  return fmt::format("'{}' is not a pass; did you mean '{}'? The passes: {}, or all", name, near,
                     fmt::join(passes, ", "));
}

bool PassDumps::wants(std::string_view pass) const {
  return std::any_of(passes.begin(), passes.end(),
                     [&](const std::string& name) { return name == "all" || name == pass; });
}

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
  for (const std::string& pass : options.dump_after.passes) {
    if (const std::optional<std::string> why = unknown_pass(pass)) {
      result.errors.push_back("dump_after: " + *why);
      return result;
    }
  }
  if (!options.dump_after.passes.empty() && !options.dump_after.sink) {
    result.errors.push_back("dump_after names passes but has no sink to give their text to");
    return result;
  }
  try {
    Pipeline(program, *limits, options.judge, result, lap, options.dump_after).run();
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
  const PassDumper dump(options.dump_after);
  if (result.algorithm && result.errors.empty())
    dump("verify", [&] { return detail::dump_verification(result.verification); });
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
