// `weftc synthesize -t TOPO [--nodes A] [--gpus-per-node B] -c COLLECTIVE -o DIR`: algorithms
// found for the machine (weft/synthesis/synthesize.h, docs/synthesis.md). Prints the bound
// first, then the chosen algorithm per size against it, and writes DIR as `weftc tune` does
// (the winners' XML with their bands, tuner.csv, bands.csv, report.md + report.svg), report.md
// with a section on the bound.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "../command_line.h"
#include "../commands.h"
#include "../compile/algorithms.h"
#include "../compile/candidates.h"
#include "../memory_cap.h"
#include "../predict_options.h"
#include "../progress_line.h"
#include "weft/ir/text_file.h"
#include "weft/ir/validate.h"
#include "weft/ir/xml.h"
#include "weft/synthesis/synthesize.h"
#include "weft/tuning/tune.h"

namespace weft::weftc {

namespace {

struct SynthesizeArgs {
  MachineArgs machine;
  SizeArgs sizes;
  std::string collective;
  std::string profile = "weft";
  bool in_place = false;
  bool library = false;
  bool no_nccl = false;
  bool force = false;
  bool all = false;
  bool bound_only = false;
  double gap_percent = synthesis::SynthesisRequest{}.gap * 100;  // --gap: synthesis's own default
  std::string max_memory;  // --max-memory: empty for nine tenths of what is available
  std::string output;
};

// An earlier run's `--all` left every sketch it proved in DIR/sketches: refused as the folder's own
// files are, and removed with --force, so that the sketches there are this run's or none.
std::optional<std::string> clear_sketches(const std::string& dir, bool force) {
  std::error_code ec;
  std::vector<std::filesystem::path> stale;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".xml") stale.push_back(entry.path());
  }
  if (stale.empty()) return std::nullopt;
  if (!force) {
    return fmt::format("{}: already holds {} sketch(es) from an earlier run; --force replaces them",
                       dir, stale.size());
  }
  for (const auto& p : stale) {
    if (!std::filesystem::remove(p, ec) && ec) {
      return fmt::format("{}: cannot be removed: {}", p.string(), ec.message());
    }
  }
  return std::nullopt;
}

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
               args.collective, cap.describe());
    return kFailed;
  }
}

int synthesize_within(const SynthesizeArgs& args) {
  const auto started = std::chrono::steady_clock::now();
  const auto collective = ir::parse_collective(args.collective);
  if (!collective ||
      (*collective != ir::Collective::AllGather && *collective != ir::Collective::ReduceScatter &&
       *collective != ir::Collective::AllReduce && *collective != ir::Collective::AllToAll)) {
    throw CLI::ValidationError(
        "--collective",
        fmt::format("'{}': synthesis covers allgather, reducescatter, allreduce and alltoall",
                    args.collective));
  }
  synthesis::SynthesisRequest request;
  request.collective = *collective;
  request.sizes = sizes_or_throw(args.sizes);
  request.in_place = args.in_place;
  request.profile = args.profile;
  request.with_nccl = !args.no_nccl;
  request.prove_all = args.all;  // --all writes every sketch, so every one is proved
  request.gap = args.gap_percent / 100;
  auto topology = load_machine_or_report(args.machine);
  if (!topology) return kBadInput;
  if (args.output.empty() && !args.bound_only) {
    throw CLI::ValidationError("--output", "the folder to write is required (or --bound-only)");
  }
  if (!args.bound_only) {
    if (const auto problem = tuning::prepare_folder(args.output, args.force)) {
      fmt::print(stderr, "weftc synthesize: {}\n", *problem);
      return kBadInput;
    }
    if (const auto problem = clear_sketches(args.output + "/sketches", args.force)) {
      fmt::print(stderr, "weftc synthesize: {}\n", *problem);
      return kBadInput;
    }
  }

  // The bound comes first, so that what cannot be synthesized says why before any work.
  try {
    const synthesis::Bound bound = synthesis::bandwidth_bound(*topology, *collective);
    request.bound = bound;
    fmt::print(
        "bound: {} on {} ranks of '{}' moves at most {:.1f} GB/s algbw ({}), after {:.1f} us "
        "that every call pays (launch, call latency, one hop across that cut)\n",
        args.collective, topology->ranks(), topology->name(), bound.algbw_gbs, bound.cut,
        bound.min_latency_us());
    // The node's cut, where its hop is the slower: it binds mid sizes.
    if (const synthesis::Cut* node = bound.slower_hop_cut()) {
      fmt::print(
          "  and {:.1f} GB/s ({}), after {:.1f} us (one hop across the network): every call "
          "takes the longer of the two\n",
          node->algbw_gbs, node->cut, node->min_latency_us());
    }
    std::fflush(stdout);  // before the minutes a large machine's predictions may take
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "weftc synthesize: {}\n", e.what());
    return kFailed;
  }
  if (args.bound_only) return kOk;

  ProgressLine progress("weftc synthesize");
  std::vector<tuning::Candidate> library;
  std::vector<std::string> library_rejected;
  if (args.library) {
    KnownAlgorithms known;
    if (!collect_algorithms({}, known)) return kBadInput;
    LibraryVariants variants;
    variants.collective = args.collective;
    variants.protocols = {"Simple", "LL", "LL128"};
    variants.instances = {1};
    variants.channels = {1, 4};
    variants.profile = args.profile;
    variants.in_place = args.in_place;
    library_candidates(variants, known, *topology, library, library_rejected,
                       [&progress](std::size_t k, std::size_t n, const std::string& name) {
                         progress.set(
                             fmt::format("compiling and proving library candidate {} of "
                                         "{}: {}",
                                         k, n, name));
                       });
  }

  synthesis::Synthesis result;
  progress.set("the bound, the sketches, their proofs and predictions");
  try {
    result = synthesis::synthesize(*topology, request, std::move(library));
    progress.clear();
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "weftc synthesize: {}\n", e.what());
    return kFailed;
  }
  for (const std::string& why : library_rejected) result.tuning.info.rejected.push_back(why);
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
  if (const auto problem =
          tuning::write_folder(args.output, result.tuning, result.candidates, *topology)) {
    fmt::print(stderr, "weftc synthesize: {}\n", *problem);
    return kFailed;
  }
  if (args.all) {
    // Every sketch, winner or not (each proved: prove_all), for `weftc simulate` and `weftc draw`.
    const std::string dir = args.output + "/sketches";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    for (std::size_t i = 0; i < result.synthesized; ++i) {
      const tuning::Candidate& c = result.candidates[i];
      std::string file;
      for (char ch : c.name)
        file += std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' ? ch : '_';
      std::string error;
      if (!ir::write_text_file(fmt::format("{}/{}.xml", dir, file), ir::write_xml(c.algorithm),
                               &error)) {
        fmt::print(stderr, "weftc synthesize: {}\n", error);
        return kFailed;
      }
    }
  }
  {
    const std::string report = args.output + "/report.md";
    std::ofstream out(report, std::ios::app);
    out << synthesis::bound_report(result);
    if (!out) {
      fmt::print(stderr, "weftc synthesize: {}: could not be written\n", report);
      return kFailed;
    }
  }
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  fmt::print(
      "{} sketches compiled ({} left out), {} candidates in all; {} proved (every sketch "
      "written)\n",
      result.synthesized, result.rejected.size(), result.candidates.size(), result.proved);
  fmt::print("{}", synthesis::bound_table(result));
  fmt::print(
      "wrote {} (WEFT_ALGO_DIR={} WEFT_TUNER_CONFIG={}/tuner.csv); bound {:.2f} s, compile "
      "{:.2f} s, predict {:.2f} s, prove {:.2f} s, total {:.1f} s\n",
      args.output, args.output, args.output, result.bound_seconds, result.compile_seconds,
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
  add_machine_options(*cmd, args->machine);
  cmd->add_option("--collective,-c", args->collective,
                  "allgather, reducescatter, allreduce or alltoall")
      ->required();
  add_size_options(*cmd, args->sizes);
  cmd->add_option("--profile", args->profile,
                  "Limits profile every file fits: weft (default) or msccl (also loads in MSCCL's "
                  "executor, frozen on NCCL 2.23)")
      ->check(CLI::IsMember({"msccl", "weft"}));
  cmd->add_flag("--in-place", args->in_place,
                "Synthesize for in-place calls (default: out of place)");
  cmd->add_flag("--library", args->library,
                "Let the library's algorithms contend too (slower: each is compiled and proved)");
  cmd->add_flag("--no-nccl", args->no_nccl, "Leave NCCL's own algorithms out");
  cmd->add_flag("--all", args->all,
                "Also write every sketch, chosen or not, to DIR/sketches/ (slower: each is proved "
                "then, not only the chosen)");
  cmd->add_flag("--force", args->force, "Replace what an earlier run wrote in the folder");
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
  cmd->add_option("-o,--output", args->output, "The folder to write");
  cmd->callback([args, &exit_code] { exit_code = synthesize(*args); });
}

}  // namespace weft::weftc
