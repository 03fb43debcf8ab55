// `weftc tune --topology T --collective C (--ranks N | --nodes A --gpus-per-node B) -o DIR`:
// compiles and proves the library's candidates for the collective (protocols × instances ×
// channels) and the algorithms synthesized for the machine, and takes the given files; the
// tuning library (weft/tuning/tune.h) predicts each on the topology over the size range and
// writes DIR for WEFT_ALGO_DIR (the winners, each with its
// minBytes/maxBytes band), DIR/tuner.csv for WEFT_TUNER_CONFIG (where NCCL's own algorithms
// win), DIR/bands.csv (the choice per band, for scripts and tests) and DIR/report.md +
// report.svg (docs/architecture.md §7).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "../commands.h"
#include "../load.h"
#include "../predict_options.h"
#include "../progress_line.h"
#include "algorithms.h"
#include "candidates.h"
#include "weft/compiler/compiler.h"
#include "weft/dsl/error.h"
#include "weft/ir/xml.h"
#include "weft/tuning/tune.h"
#ifdef WEFT_HAVE_SYNTHESIS
#include "weft/synthesis/synthesize.h"
#endif

namespace weft::weftc {

namespace {

namespace fs = std::filesystem;

struct TuneArgs {
  MachineArgs machine;
  SizeArgs sizes;
  std::string collective;
  int ranks = 0;
  std::vector<std::string> xml;
  std::vector<std::string> load;
  std::vector<std::string> protocols{"Simple", "LL", "LL128"};
  std::vector<int> instances{1, 2, 4};
  std::vector<int> channels{1, 4};
  std::string profile = "weft";
  bool no_library = false;
  bool no_synthesis = false;
  bool no_nccl = false;
  bool force = false;
  bool in_place = false;
  std::string output;
};

using tuning::Candidate;

int tune(const TuneArgs& args) {
  const auto started = std::chrono::steady_clock::now();
  const auto collective = ir::parse_collective(args.collective);
  if (!collective || *collective == ir::Collective::Custom) {
    throw CLI::ValidationError(
        "--collective", fmt::format("'{}' is not allreduce, allgather, reducescatter, alltoall, "
                                    "broadcast or reduce",
                                    args.collective));
  }
  for (const std::string& p : args.protocols) {
    if (!ir::parse_protocol(p)) {
      throw CLI::ValidationError("--protocols", fmt::format("'{}' is not Simple, LL or LL128", p));
    }
  }
  const ir::LimitsProfile limits = profile_or_throw(args.profile);
  const std::vector<std::uint64_t> sizes = sizes_or_throw(args.sizes);
  MachineArgs machine = args.machine;
  if (args.ranks > 0 && machine.gpus_per_node == 0 && machine.topology != "emulated") {
    // --ranks alone means one node's GPUs; more ranks than a node has need --nodes, which the
    // user may not know to give: say so in those words, not as a --gpus-per-node never typed.
    const auto whole = load_machine_or_report(machine);
    if (!whole) return kBadInput;
    const int per_node = whole->gpus_per_node();
    if (args.ranks > machine.nodes * per_node) {
      const std::string way =
          args.ranks % per_node == 0
              ? fmt::format("give --nodes {} ({} nodes × {} GPUs)", args.ranks / per_node,
                            args.ranks / per_node, per_node)
              : fmt::format("give --nodes A --gpus-per-node B with A × B = {} and B at most {}",
                            args.ranks, per_node);
      throw CLI::ValidationError(
          "--ranks",
          fmt::format("{} ranks are more than the {} GPUs of {} node(s) of '{}': {}", args.ranks,
                      machine.nodes * per_node, machine.nodes, args.machine.topology, way));
    }
  }
  if (args.ranks > 0) {
    if (machine.nodes > 1 && machine.gpus_per_node > 0 &&
        machine.nodes * machine.gpus_per_node != args.ranks) {
      throw CLI::ValidationError("--ranks",
                                 fmt::format("{} is not --nodes × --gpus-per-node ({})", args.ranks,
                                             machine.nodes * machine.gpus_per_node));
    }
    if (args.ranks % machine.nodes != 0) {
      throw CLI::ValidationError(
          "--ranks",
          fmt::format("{} ranks do not split evenly over {} nodes", args.ranks, machine.nodes));
    }
    machine.gpus_per_node = args.ranks / machine.nodes;
  }
  auto topology = load_machine_or_report(machine);
  if (!topology) return kBadInput;
  const int ranks = topology->ranks();
  if (const auto problem = tuning::prepare_folder(args.output, args.force)) {
    fmt::print(stderr, "weftc tune: {}\n", *problem);
    return kBadInput;
  }

  std::vector<Candidate> candidates;
  std::vector<std::string> rejected;
  ProgressLine progress("weftc tune");
  for (const std::string& file : args.xml) {
    auto algo = load_or_report(file, limits);
    if (!algo) return kBadInput;
    if (algo->collective != *collective || algo->ngpus != ranks) {
      fmt::print(stderr, "weftc tune: {}: a {} on {} ranks, not a {} on {} ranks\n", file,
                 ir::to_string(algo->collective), algo->ngpus, ir::to_string(*collective), ranks);
      return kBadInput;
    }
    candidates.push_back({fs::path(file).filename().string(), std::move(*algo)});
  }
  if (!args.no_library) {
    KnownAlgorithms known;
    if (!collect_algorithms(args.load, known)) return kBadInput;
    LibraryVariants variants;
    variants.collective = args.collective;
    variants.protocols = args.protocols;
    variants.instances = args.instances;
    variants.channels = args.channels;
    variants.profile = args.profile;
    variants.in_place = args.in_place;
    library_candidates(
        variants, known, *topology, candidates, rejected,
        [&progress](std::size_t k, std::size_t n, const std::string& name) {
          progress.set(fmt::format("compiling and proving candidate {} of {}: {}", k, n, name));
        });
  }
#ifdef WEFT_HAVE_SYNTHESIS
  // Algorithms found for this machine contend beside the library's (docs/synthesis.md).
  if (!args.no_synthesis &&
      (*collective == ir::Collective::AllGather || *collective == ir::Collective::ReduceScatter ||
       *collective == ir::Collective::AllReduce || *collective == ir::Collective::AllToAll)) {
    synthesis::SynthesisRequest request;
    request.collective = *collective;
    request.in_place = args.in_place;
    request.profile = args.profile;
    progress.set("synthesizing algorithms for the machine");
    try {
      for (Candidate& c : synthesis::synthesized_candidates(*topology, request, rejected)) {
        candidates.push_back(std::move(c));
      }
    } catch (const std::invalid_argument& e) {
      rejected.push_back(fmt::format("synthesis: {}", e.what()));
    }
  }
#endif
  const double compiled_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  tuning::TuneRequest request;
  request.collective = *collective;
  request.sizes = sizes;
  request.in_place = args.in_place;
  request.with_nccl = !args.no_nccl;
  request.rejected = rejected;
  if (progress.enabled()) {
    request.on_predict = [&progress](std::size_t k, std::size_t n, const std::string& name,
                                     std::uint64_t bytes) {
      progress.set(fmt::format("predicting candidate {} of {} at {} bytes: {}", k, n, bytes, name));
    };
  }
  tuning::Tuning result = tuning::tune(candidates, *topology, request);
  progress.clear();
  if (result.contenders.empty()) {
    fmt::print(stderr, "weftc tune: no candidate for {} on {} ranks{}\n", args.collective, ranks,
               rejected.empty() ? "" : " (see the reasons above)");
    for (const std::string& why : rejected) fmt::print(stderr, "  {}\n", why);
    return kFailed;
  }
  if (const auto problem = tuning::write_folder(args.output, result, candidates, *topology)) {
    fmt::print(stderr, "weftc tune: {}\n", *problem);
    return kFailed;
  }

  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  fmt::print("{}: {} candidates compiled and proved ({} left out), {} sizes predicted\n",
             result.info.title, candidates.size(), rejected.size(), sizes.size());
  fmt::print("{}", tuning::bands_table(result));
  fmt::print(
      "wrote {} (WEFT_ALGO_DIR={} WEFT_TUNER_CONFIG={}/tuner.csv); compile {:.1f} s, "
      "total {:.1f} s\n",
      args.output, args.output, args.output, compiled_s, total_s);
  return kOk;
}

}  // namespace

void add_tune_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* cmd = app.add_subcommand(
      "tune",
      "Pick the fastest algorithm for every size on a topology and write a folder for "
      "WEFT_ALGO_DIR and WEFT_TUNER_CONFIG");
  add_machine_options(*cmd, args->machine);
  cmd->add_option("--collective,-c", args->collective,
                  "allreduce, allgather, reducescatter, alltoall, broadcast or reduce")
      ->required();
  cmd->add_option("--ranks", args->ranks, "Ranks (one node unless --nodes)")
      ->check(CLI::Range(2, 1 << 16));
  add_size_options(*cmd, args->sizes);
  cmd->add_option("--xml", args->xml, "Also consider these MSCCL XML files (repeatable)");
  add_load_option(*cmd, args->load);
  cmd->add_option("--protocols", args->protocols, "Protocols to try (default Simple LL LL128)")
      ->delimiter(',');
  cmd->add_option("--instances", args->instances, "Instance counts to try (default 1,2,4)")
      ->delimiter(',')
      ->check(CLI::Range(1, 64));
  cmd->add_option("--channels", args->channels, "Channel counts to try (default 1,4)")
      ->delimiter(',')
      ->check(CLI::Range(1, 64));
  cmd->add_option("--profile", args->profile, "Limits profile of the candidates (default weft)")
      ->check(CLI::IsMember({"msccl", "weft"}));
  cmd->add_flag("--no-library", args->no_library, "Only the --xml files");
#ifdef WEFT_HAVE_SYNTHESIS
  cmd->add_flag("--no-synthesis", args->no_synthesis,
                "Leave out the algorithms synthesized for the machine (weftc synthesize)");
#endif
  cmd->add_flag("--no-nccl", args->no_nccl, "Leave NCCL's own algorithms out");
  cmd->add_flag("--in-place", args->in_place,
                "Tune for in-place calls (sendbuf == recvbuf, as PyTorch's allreduce); default: "
                "out-of-place, as nccl-tests' first columns");
  cmd->add_flag("--force", args->force, "Replace a tuning already in the output folder");
  cmd->add_option("-o,--output", args->output, "The folder to write")->required();
  cmd->callback([args, &exit_code] { exit_code = tune(*args); });
}

}  // namespace weft::weftc
