// `weftc synthesize -t TOPO [--nodes A] [--gpus-per-node B] -c COLLECTIVE -o DIR`: algorithms
// found for the machine (weft/synthesis/synthesize.h, docs/synthesis.md). Prints the bound
// first, then the contest (contest_command.h) of the sketches — with the library's candidates
// (--library) and the user's files (--xml, --candidates) where asked — against it, and writes
// DIR as `weftc tune` does, report.md with a section on the bound.
#include <algorithm>
#include <chrono>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "../command_line.h"
#include "../commands.h"
#include "../memory_cap.h"
#include "contest_command.h"
#include "synthesis_folder.h"
#include "weft/synthesis/synthesize.h"
#include "weft/tuning/tune.h"

namespace weft::weftc {

namespace {

struct SynthesizeArgs {
  ContestArgs contest;
  bool library = false;
  bool all = false;
  bool bound_only = false;
  double gap_percent = synthesis::SynthesisRequest{}.gap * 100;  // --gap: synthesis's own default
  std::string max_memory;  // --max-memory: empty for nine tenths of what is available
};

int synthesize_within(const SynthesizeArgs& args);

int synthesize(const SynthesizeArgs& args) {
  std::optional<std::uint64_t> max_memory;
  if (!args.max_memory.empty()) {
    max_memory = parse_memory_size(args.max_memory);
    if (!max_memory) {
      throw CLI::ValidationError(
          "--max-memory", fmt::format("'{}' is not a size (e.g. 8G, 512M)", args.max_memory));
    }
  }
  // From here on the process grows by at most the limit: a sketch that would grow past it is
  // left out and named (synthesize.h), and what else would fails as std::bad_alloc, reported
  // here in the user's words, not by the kernel killing weftc.
  const MemoryCap cap(max_memory);
  try {
    return synthesize_within(args);
  } catch (const std::bad_alloc&) {
    fmt::print(stderr,
               "weftc synthesize: {} on this machine needs more than {}: synthesize for fewer "
               "GPUs, or give --max-memory SIZE to allow more (no algorithm was written)\n",
               args.contest.collective, cap.describe());
    return kFailed;
  }
}

int synthesize_within(const SynthesizeArgs& args) {
  const auto started = std::chrono::steady_clock::now();
  const ContestArgs& common = args.contest;
  const auto collective = ir::parse_collective(common.collective);
  if (!collective ||
      (*collective != ir::Collective::AllGather && *collective != ir::Collective::ReduceScatter &&
       *collective != ir::Collective::AllReduce && *collective != ir::Collective::AllToAll)) {
    throw CLI::ValidationError(
        "--collective",
        fmt::format("'{}': synthesis covers allgather, reducescatter, allreduce and alltoall",
                    common.collective));
  }
  synthesis::SynthesisRequest request;
  request.collective = *collective;
  request.sizes = sizes_or_throw(common.sizes);
  request.in_place = common.in_place;
  request.profile = common.profile;
  request.with_nccl = !common.no_nccl;
  request.prove_all = args.all;  // --all writes every sketch, so every one is proved
  request.gap = args.gap_percent / 100;
  auto machine = load_machine_or_report(common.machine);
  if (!machine) return kBadInput;
  if (common.output.empty() && !args.bound_only) {
    throw CLI::ValidationError("--output", "the folder to write is required (or --bound-only)");
  }
  if (!args.bound_only) {
    auto problem = tuning::prepare_folder(common.output, common.force);
    if (!problem) problem = clear_sketches(common.output + "/sketches", common.force);
    if (problem) {
      fmt::print(stderr, "weftc synthesize: {}\n", *problem);
      return kBadInput;
    }
  }
  request.bound = bound_or_report(*machine, *collective);
  if (!request.bound) return kFailed;
  if (args.bound_only) return kOk;
  request.max_threadblocks = threadblock_budget_printed(common, *machine);

  // The other fields after the sketches: the library's variants (--library), the user's files.
  ProgressLine progress("weftc synthesize");
  std::vector<tuning::Field> others(1);
  if (!user_field(common, *collective, machine->ranks(), others[0])) return kBadInput;
  if (args.library) {
    LibraryVariants variants;
    variants.instances = {1};
    auto library = library_or_report({}, variants, common, *machine, progress);
    if (!library) return kBadInput;
    others.insert(others.begin(), std::move(*library));
  }
  synthesis::Synthesis result;
  progress.set("the bound, the sketches, their proofs and predictions");
  try {
    result = synthesis::synthesize(*machine, request, std::move(others));
    progress.clear();
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "weftc synthesize: {}\n", e.what());
    return kFailed;
  }
  const auto short_of_memory =
      std::count_if(result.rejected.begin(), result.rejected.end(), [](const std::string& why) {
        return why.find(synthesis::kLeftOutForMemory) != std::string::npos;
      });
  if (short_of_memory > 0) {
    fmt::print(stderr,
               "weftc synthesize: {} sketch(es) left out: they need more memory than weftc may "
               "take (--max-memory); report.md names them\n",
               short_of_memory);
  }
  if (result.synthesized == 0) {
    fmt::print(stderr, "weftc synthesize: no sketch compiled and proved:\n");
    for (const std::string& why : result.rejected) fmt::print(stderr, "  {}\n", why);
    return kFailed;
  }
  if (const int code = write_or_report("weftc synthesize", common.output, result.tuning,
                                       result.candidates, *machine)) {
    return code;
  }
  if (args.all) {
    if (const int code = write_sketches(common.output + "/sketches", result)) return code;
  }
  if (const int code = append_bound_report(common.output + "/report.md", result)) return code;
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const auto over_budget =
      std::count_if(result.tuning.contenders.begin(), result.tuning.contenders.end(),
                    [](const tuning::Contender& c) { return c.over_budget; });
  fmt::print(
      "{} sketches compiled ({} left out; {} over the threadblock budget, predicted for what they "
      "would gain), {} candidates in all; {} proved (every sketch written)\n",
      result.synthesized, result.rejected.size(), over_budget, result.candidates.size(),
      result.proved);
  fmt::print("{}", synthesis::bound_table(result));
  fmt::print(
      "wrote {} (WEFT_ALGO_DIR={} WEFT_TUNER_CONFIG={}/tuner.csv); bound {:.2f} s, compile "
      "{:.2f} s, predict {:.2f} s, prove {:.2f} s, total {:.1f} s\n",
      common.output, common.output, common.output, result.bound_seconds, result.compile_seconds,
      result.predict_seconds, result.prove_seconds, total_s);
  return kOk;
}

}  // namespace

void add_synthesize_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<SynthesizeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "synthesize",
      "Find algorithms for a machine: the bound, then proved algorithms per size band against "
      "it, written as a folder for WEFT_ALGO_DIR and WEFT_TUNER_CONFIG");
  add_contest_options(*cmd, args->contest, "allgather, reducescatter, allreduce or alltoall",
                      "Synthesize");
  cmd->add_option("--profile", args->contest.profile,
                  "Limits profile every file fits: weft (default) or msccl (also loads in MSCCL's "
                  "executor, frozen on NCCL 2.23)")
      ->check(CLI::IsMember({"msccl", "weft"}));
  cmd->add_flag("--library", args->library,
                "Let the library's algorithms contend too (slower: each is compiled)");
  cmd->add_flag("--all", args->all,
                "Also write every sketch within the threadblock budget, chosen or not, to "
                "DIR/sketches/ (slower: each is proved then, not only the chosen)");
  cmd->add_flag("--bound-only", args->bound_only,
                "Print the bound and stop (seconds even for a thousand GPUs)");
  cmd->add_option("--gap", args->gap_percent,
                  "Optimality gap in percent: at a size, sketches that could be at most this "
                  "much faster than one predicted there are not predicted (0: every sketch that "
                  "could be faster is)")
      ->capture_default_str()
      ->check(percent(0, 50, "the optimality gap"));
  cmd->add_option("--max-memory", args->max_memory,
                  "Memory weftc may take, e.g. 8G (default: nine tenths of what the machine has "
                  "available); a sketch that needs more is left out and named, and a synthesis "
                  "that needs more is refused with the figure");
  cmd->add_option("-o,--output", args->contest.output, "The folder to write");
  cmd->callback([args, &exit_code] { exit_code = synthesize(*args); });
}

}  // namespace weft::weftc
