#include "contest_command.h"

#include <fmt/format.h>

#include "../command_line.h"
#include "../commands.h"
#include "../load.h"
#include "sources.h"
#include "weft/ir/validate.h"
#include "weft/tuning/threadblock_budget.h"
#include "weft/tuning/tune.h"

namespace weft::weftc {

void add_contest_options(CLI::App& cmd, ContestArgs& args, const char* collectives,
                         const char* verb) {
  add_machine_options(cmd, args.machine);
  cmd.add_option("--collective,-c", args.collective, collectives)->required();
  add_size_options(cmd, args.sizes);
  cmd.add_option("--xml", args.xml,
                 "Also let this MSCCL XML file contend (repeatable; it must be this collective "
                 "on this machine's ranks)");
  cmd.add_option("--candidates", args.candidates,
                 "Also let the *.xml files of this folder contend, e.g. your own algorithms "
                 "(repeatable; files of another collective or size are listed as left out)");
  cmd.add_flag("--in-place", args.in_place,
               fmt::format("{} for in-place calls (sendbuf == recvbuf, as PyTorch's allreduce); "
                           "default: out-of-place, as nccl-tests' first columns",
                           verb));
  cmd.add_flag("--no-nccl", args.no_nccl, "Leave NCCL's own algorithms out");
  cmd.add_option("--max-threadblocks", args.max_threadblocks,
                 "The most threadblocks per rank a chosen algorithm may run, each on an SM the "
                 "job's kernels lose while the call runs (default: NCCL's channel ceiling for the "
                 "GPUs, 32 before Blackwell, 16 on Blackwell); a faster candidate over it is "
                 "reported, not chosen")
      // No file has more than the weft profile's threadblocks per rank: a larger budget is none.
      ->check(whole_number(1, ir::weft_limits().max_threadblocks_per_rank,
                           "the threadblocks per rank"));
  cmd.add_flag("--force", args.force, "Replace what an earlier run wrote in the output folder");
}

int threadblock_budget_printed(const ContestArgs& args, const predict::Topology& machine) {
  const tuning::ThreadblockBudget budget =
      tuning::threadblock_budget(machine, args.max_threadblocks);
  fmt::print("threadblock budget: {} per rank ({})\n", budget.threadblocks, budget.source);
  return budget.threadblocks;
}

bool user_field(const ContestArgs& args, ir::Collective collective, int ranks, tuning::Field& out) {
  const ir::LimitsProfile limits = profile_or_throw(args.profile);
  return file_field(args.xml, args.candidates, collective, ranks, limits, out);
}

std::optional<tuning::Field> library_or_report(const std::vector<std::string>& load,
                                               LibraryVariants variants, const ContestArgs& args,
                                               const predict::Topology& machine,
                                               ProgressLine& progress) {
  KnownAlgorithms known;
  if (!collect_algorithms(load, known)) return std::nullopt;
  variants.collective = args.collective;
  variants.profile = args.profile;
  variants.in_place = args.in_place;
  return library_field(variants, known, machine,
                       [&progress](std::size_t k, std::size_t n, const std::string& name) {
                         progress.set(fmt::format("compiling candidate {} of {}: {}", k, n, name));
                       });
}

int run_or_report(const char* command, const ContestArgs& args, const predict::Topology& machine,
                  std::vector<tuning::Field> fields, tuning::ContestRequest request,
                  ProgressLine& progress, tuning::Contest& contest) {
  if (progress.enabled()) {
    request.on_predict = [&progress](std::size_t k, std::size_t n, const std::string& name,
                                     std::uint64_t bytes) {
      progress.set(fmt::format("predicting candidate {} of {} at {} bytes: {}", k, n, bytes, name));
    };
    request.on_prove = [&progress](const std::string& name) {
      progress.set(fmt::format("proving {}", name));
    };
  }
  try {
    contest = tuning::run_contest(std::move(fields), machine, request);
  } catch (const std::invalid_argument& e) {
    progress.clear();
    fmt::print(stderr, "{}: {}\n", command, e.what());
    return kFailed;
  }
  progress.clear();
  // No band: nothing contended, or nothing that did applies at any size (a file for in-place
  // calls in an out-of-place tuning): a folder without an algorithm would say nothing.
  if (contest.tuning.bands.empty()) {
    const std::vector<std::string> rejected = contest.all_rejected();
    const std::string none_applies =
        contest.candidates.empty()
            ? std::string()
            : fmt::format(": none of the {} that contended applies to {} calls at any size asked",
                          contest.candidates.size(), args.in_place ? "in-place" : "out-of-place");
    fmt::print(stderr, "{}: no candidate for {} on {} ranks{}{}\n", command, args.collective,
               machine.ranks(), none_applies, rejected.empty() ? "" : " (see the reasons below)");
    for (const std::string& why : rejected) fmt::print(stderr, "  {}\n", why);
    return kFailed;
  }
  return kOk;
}

int write_or_report(const char* command, const std::string& output, tuning::Tuning& tuning,
                    const std::vector<tuning::Candidate>& candidates,
                    const predict::Topology& machine) {
  if (const auto problem = tuning::write_folder(output, tuning, candidates, machine)) {
    fmt::print(stderr, "{}: {}\n", command, *problem);
    return kFailed;
  }
  return kOk;
}

}  // namespace weft::weftc
