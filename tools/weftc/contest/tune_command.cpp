// `weftc tune --topology T --collective C (--ranks N | --nodes A --gpus-per-node B) -o DIR`: the
// contest (contest_command.h) among the given files, the library's candidates (protocols ×
// instances × channels) and the algorithms synthesized for the machine, beside NCCL's own;
// writes DIR for WEFT_ALGO_DIR (the winners, each with its minBytes/maxBytes band, proved),
// DIR/tuner.csv for WEFT_TUNER_CONFIG (where NCCL's own algorithms win), DIR/bands.csv and
// DIR/report.md + report.svg (docs/architecture.md §7).
#include <chrono>
#include <memory>

#include <fmt/format.h>

#include "../command_line.h"
#include "../commands.h"
#include "contest_command.h"
#include "sources.h"
#include "weft/tuning/tune.h"
#ifdef WEFT_HAVE_SYNTHESIS
#include "weft/synthesis/nccl_algorithms.h"
#endif

namespace weft::weftc {

namespace {

struct TuneArgs {
  ContestArgs contest;
  std::vector<std::string> load;
  LibraryVariants library;
  bool no_library = false;
  bool no_synthesis = false;
  double gap_percent = 0;  // exact by default: every sketch that could win is predicted
};

int tune(TuneArgs args) {
  const auto started = std::chrono::steady_clock::now();
  const ContestArgs& common = args.contest;
  const auto collective = ir::parse_collective(common.collective);
  if (!collective || *collective == ir::Collective::Custom) {
    throw CLI::ValidationError(
        "--collective", fmt::format("'{}' is not allreduce, allgather, reducescatter, alltoall, "
                                    "broadcast or reduce",
                                    common.collective));
  }
  for (const std::string& p : args.library.protocols) {
    if (!ir::parse_protocol(p)) {
      throw CLI::ValidationError("--protocols", fmt::format("'{}' is not Simple, LL or LL128", p));
    }
  }
  tuning::ContestRequest request;
  request.collective = *collective;
  request.sizes = sizes_or_throw(common.sizes);
  request.in_place = common.in_place;
  request.with_nccl = !common.no_nccl;
  request.gap = args.gap_percent / 100;
  auto machine = load_machine_or_report(common.machine);
  if (!machine) return kBadInput;
  if (const auto problem = tuning::prepare_folder(common.output, common.force)) {
    fmt::print(stderr, "weftc tune: {}\n", *problem);
    return kBadInput;
  }
  request.max_threadblocks = threadblock_budget_printed(common, *machine);

  std::vector<tuning::Field> fields(1);
  if (!user_field(common, *collective, machine->ranks(), fields[0])) return kBadInput;
  ProgressLine progress("weftc tune");
  if (!args.no_library) {
    auto library = library_or_report(args.load, args.library, common, *machine, progress);
    if (!library) return kBadInput;
    fields.push_back(std::move(*library));
  }
#ifdef WEFT_HAVE_SYNTHESIS
  if (!args.no_synthesis &&
      (*collective == ir::Collective::AllGather || *collective == ir::Collective::ReduceScatter ||
       *collective == ir::Collective::AllReduce || *collective == ir::Collective::AllToAll)) {
    progress.set("synthesizing algorithms for the machine");
    fields.push_back(sketch_field(*machine, *collective, common.profile, common.in_place,
                                  request.max_threadblocks));
  }
#endif
  const double compiled_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  tuning::Contest contest;
  if (const int code = run_or_report("weftc tune", common, *machine, std::move(fields), request,
                                     progress, contest)) {
    return code;
  }
#ifdef WEFT_HAVE_SYNTHESIS
  // The second "vs NCCL": NCCL's algorithms written as Weft algorithms on Weft's model, for the
  // report and the table; they contend for no band (weft/synthesis/nccl_algorithms.h).
  if (request.with_nccl) {
    progress.set("predicting NCCL's algorithms written as Weft algorithms");
    synthesis::NcclAsWeft as_weft =
        synthesis::nccl_as_weft(*machine, *collective, contest.tuning.sizes, common.in_place);
    contest.tuning.info.nccl_as_weft_us = std::move(as_weft.times_us);
    contest.tuning.info.notes.insert(contest.tuning.info.notes.end(), as_weft.notes.begin(),
                                     as_weft.notes.end());
    progress.clear();
  }
#endif
  if (const int code = write_or_report("weftc tune", common.output, contest.tuning,
                                       contest.candidates, *machine)) {
    return code;
  }
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  fmt::print(
      "{}: {} candidates compiled ({} left out), {} proved (every band's winner), {} sizes "
      "predicted\n",
      contest.tuning.info.title, contest.candidates.size(), contest.all_rejected().size(),
      contest.proved_count(), request.sizes.size());
  fmt::print("{}", tuning::bands_table(contest.tuning));
  fmt::print(
      "wrote {} (WEFT_ALGO_DIR={} WEFT_TUNER_CONFIG={}/tuner.csv); compile {:.1f} s, "
      "total {:.1f} s\n",
      common.output, common.output, common.output, compiled_s, total_s);
  return kOk;
}

}  // namespace

void add_tune_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* cmd = app.add_subcommand(
      "tune",
      "Pick the fastest algorithm for every size on a topology and write a folder for "
      "WEFT_ALGO_DIR and WEFT_TUNER_CONFIG");
  add_contest_options(*cmd, args->contest,
                      "allreduce, allgather, reducescatter, alltoall, broadcast or reduce", "Tune");
  add_ranks_option(*cmd, args->contest.machine);
  add_load_option(*cmd, args->load);
  cmd->add_option("--protocols", args->library.protocols,
                  "Protocols to try (default Simple LL LL128)")
      ->delimiter(',');
  cmd->add_option("--instances", args->library.instances, "Instance counts to try (default 1,2,4)")
      ->delimiter(',')
      ->check(CLI::Range(1, 64));
  cmd->add_option("--channels", args->library.channels, "Channel counts to try (default 1,4)")
      ->delimiter(',')
      ->check(CLI::Range(1, 64));
  cmd->add_option("--profile", args->contest.profile,
                  "Limits profile of the candidates (default weft)")
      ->check(CLI::IsMember({"msccl", "weft"}));
  cmd->add_flag("--no-library", args->no_library, "Only the --xml and --candidates files");
#ifdef WEFT_HAVE_SYNTHESIS
  cmd->add_flag("--no-synthesis", args->no_synthesis,
                "Leave out the algorithms synthesized for the machine (weftc synthesize)");
  cmd->add_option("--gap", args->gap_percent,
                  "Optimality gap in percent among the synthesized algorithms, as `weftc "
                  "synthesize --gap` (default 0: every one that could win is predicted)")
      ->capture_default_str()
      ->check(percent(0, 50, "the optimality gap"));
#endif
  cmd->add_option("-o,--output", args->contest.output, "The folder to write")->required();
  cmd->callback([args, &exit_code] { exit_code = tune(*args); });
}

}  // namespace weft::weftc
