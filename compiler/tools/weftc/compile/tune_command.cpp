// `weftc tune --topology T --collective C (--ranks N | --nodes A --gpus-per-node B) -o DIR`:
// compiles the library's candidates for the collective (protocols × instances × channels) and
// the given files, predicts each on the topology over the size range, and writes DIR for
// WEFT_ALGO_DIR (the winners, each with its minBytes/maxBytes band), DIR/tuner.csv for
// WEFT_TUNER_CONFIG (where NCCL's own algorithms win), DIR/bands.csv (the choice per band, for
// scripts and tests) and DIR/report.md + report.svg (DESIGN.md §7).
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
#include "../nccl_contenders.h"
#include "../predict_options.h"
#include "algorithms.h"
#include "weft/compiler/compiler.h"
#include "weft/dsl/error.h"
#include "weft/runtime/predict/simulator.h"
#include "weft/runtime/predict/tuning.h"
#include "weft/runtime/text_file.h"
#include "weft/runtime/xml.h"

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
  bool no_nccl = false;
  bool force = false;
  bool in_place = false;
  std::string output;
};

struct Candidate {
  std::string name;
  ir::Algorithm algorithm;
};

// The library's algorithms of the collective in every variant the arguments ask for, compiled
// and proved (1 seed per case: race freedom, which the first seed decides, makes the result
// independent of the interleaving). Identical IRs from different knobs are kept once.
void library_candidates(const TuneArgs& args, const KnownAlgorithms& known, int nodes,
                        int gpus_per_node, std::vector<Candidate>& out,
                        std::vector<std::string>& rejected) {
  std::vector<std::string> seen;
  for (const dsl::AlgorithmInfo& info : known.registry.algorithms()) {
    if (info.collective != args.collective) continue;
    dsl::AlgorithmParams params;
    params.ranks = nodes * gpus_per_node;
    if (info.shape == dsl::Shape::NodesTimesGpus) {
      params.nodes = nodes;
      params.gpus_per_node = gpus_per_node;
    }
    params.limits = args.profile;
    params.in_place = args.in_place;
    if (const auto why = dsl::check_shape(info, params)) {
      rejected.push_back(fmt::format("{}: {}", info.name, *why));
      continue;
    }
    for (const std::string& proto_name : args.protocols) {
      for (int instances : args.instances) {
        for (int channels : args.channels) {
          params.protocol = *ir::parse_protocol(proto_name);
          params.instances = instances;
          params.channels = channels;
          const std::string name =
              fmt::format("{} {} i{} c{}", info.name, proto_name, instances, channels);
          try {
            const dsl::Program program = info.build(params);
            compiler::CompileOptions options;
            options.verify.seeds = 1;
            compiler::CompileResult result = compiler::compile(program, options);
            if (!result.ok()) {
              std::string why = result.error_text();
              if (const auto nl = why.find('\n'); nl != std::string::npos) why.resize(nl);
              rejected.push_back(fmt::format("{}: {}", name, why));
              continue;
            }
            ir::Algorithm algo = std::move(*result.algorithm);
            ir::Algorithm unnamed = algo;
            unnamed.name.clear();
            std::string text = ir::write_xml(unnamed);
            if (std::find(seen.begin(), seen.end(), text) != seen.end()) continue;
            seen.push_back(std::move(text));
            out.push_back({name, std::move(algo)});
          } catch (const std::exception& e) {
            rejected.push_back(fmt::format("{}: {}", name, e.what()));
          }
        }
      }
    }
  }
}

bool prepare_output(const TuneArgs& args) {
  std::error_code ec;
  const fs::path dir(args.output);
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) {
      fmt::print(stderr, "weftc tune: {}: exists and is not a folder\n", args.output);
      return false;
    }
    // Other files are left alone: the shim reads only *.xml.
    std::vector<fs::path> ours;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const fs::path& p = entry.path();
      const std::string file = p.filename().string();
      if (p.extension() == ".xml" || file == "tuner.csv" || file == "bands.csv" ||
          file == "report.md" || file == "report.svg") {
        ours.push_back(p);
      }
    }
    if (!ours.empty() && !args.force) {
      fmt::print(stderr,
                 "weftc tune: {}: already holds algorithm files or a tuning; --force replaces "
                 "them (a stale XML there would still be loaded by WEFT_ALGO_DIR)\n",
                 args.output);
      return false;
    }
    for (const fs::path& p : ours) fs::remove(p, ec);
  } else if (!fs::create_directories(dir, ec)) {
    fmt::print(stderr, "weftc tune: {}: cannot create the folder: {}\n", args.output, ec.message());
    return false;
  }
  return true;
}

bool write_text(const fs::path& path, const std::string& text) {
  std::string error;
  if (ir::write_text_file(path.string(), text, &error)) return true;
  fmt::print(stderr, "weftc tune: {}\n", error);
  return false;
}

std::string file_stem(const std::string& name) {
  std::string out;
  for (char ch : name) {
    const bool plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                       (ch >= '0' && ch <= '9') || ch == '_' || ch == '-';
    out += plain ? ch : '_';
  }
  return out;
}

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
  const int nodes = topology->nodes();
  const int gpus_per_node = topology->gpus_per_node();
  const int ranks = topology->ranks();
  if (!prepare_output(args)) return kBadInput;

  std::vector<Candidate> candidates;
  std::vector<std::string> rejected;
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
    library_candidates(args, known, nodes, gpus_per_node, candidates, rejected);
  }
  const double compiled_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  std::vector<predict::Contender> contenders;
  for (const Candidate& candidate : candidates) {
    predict::Contender c;
    c.name = candidate.name;
    c.protocol = candidate.algorithm.protocol;
    const predict::Simulator simulator(candidate.algorithm, *topology);
    predict::SimulationOptions options;
    options.in_place = args.in_place;
    for (const std::uint64_t bytes : sizes) {
      options.bytes = bytes;
      const predict::SimulationResult r = simulator.run(options);
      c.time_us.push_back(r.ok() ? r.time_us : predict::kNotApplicable);
    }
    contenders.push_back(std::move(c));
  }
  if (!args.no_nccl) {
    for (predict::Contender& c : nccl_contenders(*topology, *collective, sizes)) {
      contenders.push_back(std::move(c));
    }
  }
  if (contenders.empty()) {
    fmt::print(stderr, "weftc tune: no candidate for {} on {} ranks{}\n", args.collective, ranks,
               rejected.empty() ? "" : " (see the reasons above)");
    for (const std::string& why : rejected) fmt::print(stderr, "  {}\n", why);
    return kFailed;
  }
  const std::vector<predict::Band> bands = predict::choose_bands(sizes, contenders);

  // The winners' files, each carrying its band.
  predict::ReportInfo info;
  info.title = fmt::format("{} ({}) on {} ranks of '{}'", args.collective,
                           args.in_place ? "in place" : "out of place", ranks, topology->name());
  info.topology = fmt::format("{} ({} node(s) × {} GPUs)", topology->name(), nodes, gpus_per_node);
  info.collective = *collective;
  info.ranks = ranks;
  info.files.assign(contenders.size(), "");
  info.rejected = rejected;
  info.notes = topology->assumptions();
  std::string bands_csv = "min_bytes,max_bytes,kind,winner,file,nccl_algorithm,protocol\n";
  const fs::path dir(args.output);
  for (std::size_t b = 0; b < bands.size(); ++b) {
    const predict::Band& band = bands[b];
    const predict::Contender& winner = contenders[static_cast<std::size_t>(band.contender)];
    std::string file;
    if (!winner.nccl) {
      ir::Algorithm algo = candidates[static_cast<std::size_t>(band.contender)].algorithm;
      algo.min_bytes = band.min_bytes;
      algo.max_bytes = band.max_bytes;
      algo.name = fmt::format("{} (tuned band {})", winner.name, b + 1);
      file = fmt::format("{:02}-{}.xml", b + 1, file_stem(winner.name));
      std::string error;
      if (!ir::write_xml_file(algo, (dir / file).string(), &error)) {
        fmt::print(stderr, "weftc tune: {}: {}\n", (dir / file).string(), error);
        return kFailed;
      }
      auto& listed = info.files[static_cast<std::size_t>(band.contender)];
      listed += (listed.empty() ? "" : ", ") + file;
    }
    bands_csv += fmt::format(
        "{},{},{},{},{},{},{}\n", band.min_bytes,
        band.max_bytes == 0 ? std::string("-1") : std::to_string(band.max_bytes),
        winner.nccl ? "nccl" : "weft", winner.name, file,
        winner.nccl ? winner.nccl_algorithm : std::string(), ir::to_string(winner.protocol));
  }
  if (!write_text(dir / "tuner.csv",
                  predict::tuner_csv(bands, contenders, *collective, nodes, ranks)) ||
      !write_text(dir / "bands.csv", bands_csv) ||
      !write_text(dir / "report.md", predict::report_markdown(sizes, contenders, bands, info)) ||
      !write_text(dir / "report.svg", predict::report_svg(sizes, contenders, bands, info))) {
    return kFailed;
  }

  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  fmt::print("{}: {} candidates compiled and proved ({} left out), {} sizes predicted\n",
             info.title, candidates.size(), rejected.size(), sizes.size());
  fmt::print("{:>12} {:>12}  {:<40} {}\n", "min_bytes", "max_bytes", "winner", "vs runner-up");
  for (const predict::Band& band : bands) {
    fmt::print("{:>12} {:>12}  {:<40} {}\n", band.min_bytes,
               band.max_bytes == 0 ? std::string("-") : std::to_string(band.max_bytes),
               contenders[static_cast<std::size_t>(band.contender)].name,
               std::isfinite(band.margin)
                   ? fmt::format("{:.2f}× faster than {}", band.margin,
                                 contenders[static_cast<std::size_t>(band.runner_up)].name)
                   : std::string("unopposed"));
  }
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
  cmd->add_flag("--no-nccl", args->no_nccl, "Leave NCCL's own algorithms out");
  cmd->add_flag("--in-place", args->in_place,
                "Tune for in-place calls (sendbuf == recvbuf, as PyTorch's allreduce); default: "
                "out-of-place, as nccl-tests' first columns");
  cmd->add_flag("--force", args->force, "Replace a tuning already in the output folder");
  cmd->add_option("-o,--output", args->output, "The folder to write")->required();
  cmd->callback([args, &exit_code] { exit_code = tune(*args); });
}

}  // namespace weft::weftc
