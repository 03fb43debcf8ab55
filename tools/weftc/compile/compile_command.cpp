// `weftc compile NAME --ranks N | --nodes A --gpus-per-node B ... -o FILE.xml`: build a library
// (or --load'ed) algorithm, compile it, verify it on the CPU reference executor and write it.
// Nothing is written unless verification passes.
#include <algorithm>
#include <exception>
#include <filesystem>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "../command_line.h"
#include "../commands.h"
#include "../memory_cap.h"
#include "../progress_line.h"
#include "algorithms.h"
#include "weft/compiler/compiler.h"
#include "weft/dsl/error.h"
#include "weft/ir/host_memory.h"
#include "weft/ir/text_file.h"
#include "weft/predict/topology.h"

namespace weft::weftc {

namespace {

struct CompileArgs {
  std::string name;
  int ranks = 0;
  int nodes = 0;
  int gpus_per_node = 0;
  std::string proto = "Simple";
  int instances = 1;
  int channels = 1;
  int chunks = 0;
  std::uint64_t min_bytes = 0;
  std::uint64_t max_bytes = 0;
  int root = 0;
  bool in_place = false;
  bool out_of_place = false;
  std::string profile = "msccl";
  std::string placement = "auto";
  std::string channel_policy = "fewest";
  // The machine predicted time judges schedules on (weft/compiler/judge.h).
  std::string topology = "a100-nvswitch";
  int judge_nodes = 0;
  bool no_judge = false;
  bool candidates = false;  // --candidates: print every candidate time judged
  int seeds = 3;
  int threads = 0;  // --threads: the proof's threads, 0 for one per core
  std::string output;
  std::vector<std::string> load;
  std::string max_memory;  // --max-memory: empty for nine tenths of what is available
  // --dump-after: passes whose result is written as text (compiler::PassDumps), to stderr or,
  // with --dump-dir, a file per pass in that folder.
  std::vector<std::string> dump_after;
  std::string dump_dir;
};

// Bytes of weftc's peak per operation of the traced program, through every pass and the proof:
// measured on alltoall_direct (256 to 1,024 ranks: 1.0 to 1.3 KB) and rounded up.
constexpr std::uint64_t kBytesPerOperation = 1536;

int compile_within(const CompileArgs& args, const dsl::AlgorithmInfo& info_ref,
                   const dsl::AlgorithmParams& params, const MemoryCap& cap,
                   const std::string& ways);

// "64K", "4M", as nccl-tests and --minbytes write sizes.
std::string size_label(std::uint64_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return fmt::format("{}M", bytes >> 20);
  if (bytes >= (1u << 10) && bytes % (1u << 10) == 0) return fmt::format("{}K", bytes >> 10);
  return fmt::format("{}", bytes);
}

// The candidates time judged, one per line: predicted microseconds at each judged size, and the
// kept one marked.
void print_candidates(const compiler::CompileResult& result) {
  if (result.candidates.empty()) {
    fmt::print("  candidates: none judged by time{}\n",
               result.judged.empty() ? " (every candidate was the same schedule)" : "");
    return;
  }
  std::string header =
      fmt::format("  {:1} {:>6} {:>5} {:>4} {:>4}", "", "steps", "tbs", "ch", "path");
  for (const std::uint64_t bytes : result.judged_sizes)
    header += fmt::format(" {:>10}", size_label(bytes) + " us");
  fmt::print("{}  candidate\n", header);
  for (const compiler::JudgedCandidate& c : result.candidates) {
    std::string line = fmt::format("  {:1} {:>6} {:>5} {:>4} {:>4}", c.kept ? "*" : "", c.steps,
                                   c.threadblocks, c.channels, c.critical_path);
    for (const double t : c.times_us) line += fmt::format(" {:>10.2f}", t);
    fmt::print("{}  {}\n", line, c.description);
  }
  fmt::print(
      "  (*: kept; one instance's steps, threadblocks and channels; predicted, not measured)\n");
}

// Where --dump-after's text goes: stderr, each pass under a heading as LLVM's -print-after
// writes it, or with --dump-dir a file per pass, "05-fuse.txt" (the pass's place in the pipeline
// first, so that the folder lists them in order), holding the text alone (emit's is the XML
// written). The folder's earlier dumps (those names only) are removed first, so that what it holds
// is this compile's. A file that cannot be written is reported once; the compile goes on.
class PassDumpSink {
 public:
  PassDumpSink(const std::string& folder, ProgressLine& progress)
      : folder_(folder), progress_(progress) {}

  // Creates the folder and clears its earlier dumps; false, having said why, when it cannot.
  bool prepare() {
    if (folder_.empty()) return true;
    std::error_code ec;
    std::filesystem::create_directories(folder_, ec);
    if (ec) {
      fmt::print(stderr, "weftc compile: --dump-dir {}: cannot create the folder: {}\n", folder_,
                 ec.message());
      return false;
    }
    for (const std::string_view pass : compiler::pass_names())
      std::filesystem::remove(path_of(pass), ec);
    return true;
  }

  void operator()(std::string_view pass, std::string_view text) {
    if (folder_.empty()) {
      // The progress line, drawn on a terminal, would cut into the text: it comes back with the
      // next pass.
      progress_.set("");
      progress_.clear();
      fmt::print(stderr, "// -----// weftc compile: after {} //----- //\n{}", pass, text);
      if (!text.ends_with('\n')) fmt::print(stderr, "\n");
      return;
    }
    std::string error;
    if (ir::write_text_file(path_of(pass), text, &error)) {
      written_.emplace_back(pass);
    } else if (failure_.empty()) {
      failure_ = error;
      fmt::print(stderr, "weftc compile: --dump-dir: {}\n", error);
    }
  }

  bool failed() const { return !failure_.empty(); }

  // "  dumped after lower, fuse into out/": what the folder now holds, said once the compile ends.
  void report() const {
    if (!written_.empty())
      fmt::print("  dumped after {} into {}\n", fmt::join(written_, ", "), folder_);
  }

 private:
  std::string path_of(std::string_view pass) const {
    const std::span<const std::string_view> passes = compiler::pass_names();
    const auto place = std::find(passes.begin(), passes.end(), pass) - passes.begin();
    return (std::filesystem::path(folder_) / fmt::format("{:02}-{}.txt", place + 1, pass)).string();
  }

  std::string folder_;
  ProgressLine& progress_;
  std::string failure_;
  std::vector<std::string> written_;
};

int run_compile(const CompileArgs& args) {
  KnownAlgorithms known;
  if (!collect_algorithms(args.load, known)) return kBadInput;
  const dsl::AlgorithmInfo* info = known.registry.find(args.name);
  if (!info) {
    fmt::print(stderr, "weftc compile: unknown algorithm '{}' (weftc list shows the known ones)\n",
               args.name);
    return kUsage;
  }

  dsl::AlgorithmParams params;
  if (args.nodes > 0 || args.gpus_per_node > 0) {
    if (args.nodes < 1 || args.gpus_per_node < 1) {
      fmt::print(stderr, "weftc compile: --nodes and --gpus-per-node go together\n");
      return kUsage;
    }
    params.nodes = args.nodes;
    params.gpus_per_node = args.gpus_per_node;
    params.ranks = args.nodes * args.gpus_per_node;
    if (args.ranks > 0 && args.ranks != params.ranks) {
      fmt::print(stderr, "weftc compile: --ranks {} is not --nodes × --gpus-per-node ({})\n",
                 args.ranks, params.ranks);
      return kUsage;
    }
  } else {
    params.ranks = args.ranks;
  }
  if (params.ranks < 1) {
    fmt::print(stderr, "weftc compile: give --ranks N, or --nodes A --gpus-per-node B\n");
    return kUsage;
  }
  const std::optional<ir::Protocol> proto = ir::parse_protocol(args.proto);
  if (!proto) {
    fmt::print(stderr, "weftc compile: unknown protocol '{}' (Simple, LL or LL128)\n", args.proto);
    return kUsage;
  }
  params.protocol = *proto;
  params.instances = args.instances;
  params.channels = args.channels;
  params.chunks = args.chunks;
  params.min_bytes = args.min_bytes;
  params.max_bytes = args.max_bytes;
  params.root = args.root;
  if (args.in_place) params.in_place = true;
  if (args.out_of_place) params.in_place = false;
  params.limits = args.profile;
  params.placement = args.placement == "paired"     ? dsl::Placement::Paired
                     : args.placement == "separate" ? dsl::Placement::Separate
                     : args.placement == "msccl"    ? dsl::Placement::Msccl
                                                    : dsl::Placement::Auto;
  params.channel_policy = args.channel_policy == "shortest-path" ? dsl::ChannelPolicy::ShortestPath
                                                                 : dsl::ChannelPolicy::Fewest;
  if (const std::optional<std::string> why = dsl::check_shape(*info, params)) {
    fmt::print(stderr, "weftc compile: {}\n", *why);
    return kUsage;
  }

  std::optional<std::uint64_t> max_memory;
  if (!args.max_memory.empty()) {
    max_memory = parse_memory_size(args.max_memory);
    if (!max_memory) {
      fmt::print(stderr, "weftc compile: --max-memory: '{}' is not a size (e.g. 8G, 512M)\n",
                 args.max_memory);
      return kUsage;
    }
  }
  // From here on the process grows by at most the limit: what would grow past it fails as
  // std::bad_alloc, reported below in the user's words.
  const MemoryCap cap(max_memory);
  const std::string ways = fmt::format(
      "compile it for fewer ranks, or give --max-memory SIZE to allow more (nothing was written)");
  try {
    return compile_within(args, *info, params, cap, ways);
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "weftc compile: {} on {} ranks needs more than {}: {}\n", args.name,
               params.ranks, cap.describe(), ways);
    return kFailed;
  }
}

int compile_within(const CompileArgs& args, const dsl::AlgorithmInfo& info_ref,
                   const dsl::AlgorithmParams& params, const MemoryCap& cap,
                   const std::string& ways) {
  const dsl::AlgorithmInfo* info = &info_ref;
  std::optional<dsl::Program> program;
  ProgressLine progress(fmt::format("weftc compile {}", args.name));
  progress.set("building the program");
  try {
    program.emplace(info->build(params));
  } catch (const std::bad_alloc&) {
    throw;  // past the memory limit: run_compile says so
  } catch (const dsl::DslError& e) {
    fmt::print(stderr, "weftc compile: {}: error: {}\n", args.name, e.what());
    return kFailed;
  } catch (const std::exception& e) {
    // A builder of a loaded library may fail in its own ways.
    fmt::print(stderr, "weftc compile: {}: error while building the program: {}\n", args.name,
               e.what());
    return kFailed;
  }
  // The traced program's size says what compiling and proving it will take: refused now, with the
  // figure, rather than after minutes of passes.
  const std::uint64_t operations = program->operations().size();
  const std::uint64_t needed = operations * kBytesPerOperation;
  if (cap.limit() && needed > *cap.limit()) {
    progress.clear();
    fmt::print(stderr,
               "weftc compile: {} on {} ranks traces {} operations, which need about {} to "
               "compile and prove ({} each), more than {}: {}\n",
               args.name, params.ranks, operations, ir::human_bytes(needed),
               ir::human_bytes(kBytesPerOperation), cap.describe(), ways);
    return kFailed;
  }
  if (!args.no_judge) {
    // A machine that does not load is the user's mistake, not a reason to judge otherwise.
    const predict::TopologyResult machine = predict::load_topology({args.topology, 1, 0});
    if (!machine.topology) {
      fmt::print(stderr, "weftc compile: --topology {}: {}", args.topology,
                 machine.diagnostics.str());
      return kBadInput;
    }
  }
  compiler::CompileOptions options;
  // The proof: the first, race-checked run of a case decides it, and what it shows carries to
  // smaller FIFO depths and other tile counts (compiler::compile_proof).
  options.verify = compiler::compile_proof(args.seeds);
  // The smaller depths' completion-only runs go beside the deepest one's (default: every core).
  options.verify.threads = args.threads;
  options.judge.enabled = !args.no_judge;
  options.judge.topology = args.topology;
  // A hierarchical shape is the machine's: its nodes of that many GPUs.
  options.judge.nodes = args.judge_nodes > 0 ? args.judge_nodes : params.nodes;
  options.judge.gpus_per_node =
      params.nodes > 0 && args.judge_nodes == 0 ? params.gpus_per_node : 0;
  PassDumpSink dumps(args.dump_dir, progress);
  if (!args.dump_after.empty()) {
    if (!dumps.prepare()) return kFailed;
    options.dump_after.passes = args.dump_after;
    options.dump_after.sink = [&dumps](std::string_view pass, std::string_view text) {
      dumps(pass, text);
    };
  }
  if (progress.enabled()) {
    progress.set("the first pass");
    options.on_pass = [&progress](std::string_view pass) {
      progress.set(pass == "verify" ? std::string("proving it on the CPU reference executor")
                                    : fmt::format("'{}' done, on to the next pass", pass));
    };
  }
  const compiler::CompileResult result = compiler::compile(*program, options);
  progress.clear();
  for (const std::string& note : result.notes)
    fmt::print(stderr, "weftc compile: note: {}\n", note);
  const dsl::Options& o = program->options();
  fmt::print("{}: {}, {} ranks, {}, {} instance{}, {}\n", args.name, program->collective().name(),
             program->ranks(), ir::to_string(o.protocol), o.instances, o.instances == 1 ? "" : "s",
             program->collective().in_place() ? "in place" : "out of place");
  dumps.report();
  if (result.algorithm) {
    const compiler::CompileStats& s = result.stats;
    fmt::print(
        "  threadblocks {} (at most {} per rank), steps {} (at most {} per threadblock, {} nops), "
        "channels {}\n",
        s.threadblocks, s.max_threadblocks_per_rank, s.steps, s.max_steps_per_threadblock, s.nops,
        s.channels);
    if (s.forwarded.changed()) {
      fmt::print("  copies forwarded: {} reads from the source, {} copies removed, {} narrowed\n",
                 s.forwarded.reads, s.forwarded.copies_removed, s.forwarded.copies_narrowed);
    }
    fmt::print("  fused: {} rcs, {} rrcs, {} rrs; compiled in {:.3f} s\n", s.fused.rcs,
               s.fused.rrcs, s.fused.rrs, result.compile_seconds);
    if (!result.judged.empty()) {
      fmt::print("  {}{}\n", result.judged,
                 result.candidates_predicted > 1
                     ? fmt::format(": the fastest of {} candidates", result.candidates_predicted)
                     : std::string());
    }
    if (args.candidates) print_candidates(result);
  }
  if (!result.ok()) {
    fmt::print(stderr, "weftc compile: {}: error: {}", args.name, result.error_text());
    fmt::print(stderr, "weftc compile: nothing written\n");
    return kFailed;
  }
  fmt::print("  verified in {:.3f} s: {} cases passed ({} profile){}\n", result.verify_seconds,
             result.verification.cases, o.limits,
             result.verification.min_fifo_depth ? fmt::format(", completes from FIFO depth {}",
                                                              *result.verification.min_fifo_depth)
                                                : std::string());
  std::string error;
  if (!compiler::write_xml_file(result, args.output, &error)) {
    fmt::print(stderr, "weftc compile: {}: {}\n", args.output, error);
    return kFailed;
  }
  fmt::print("  wrote {}\n", args.output);
  return dumps.failed() ? kFailed : kOk;
}

}  // namespace

void add_compile_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compile", "compile an algorithm of the library (or a --load'ed one) to verified MSCCL XML");
  cmd->add_option("name", args->name, "algorithm name (see weftc list)")->required();
  cmd->add_option("--ranks", args->ranks, "rank count")->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--nodes", args->nodes, "nodes (hierarchical algorithms)")
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--gpus-per-node", args->gpus_per_node, "GPUs per node (hierarchical algorithms)")
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--proto", args->proto, "protocol: Simple, LL or LL128")->capture_default_str();
  cmd->add_option("--instances", args->instances, "copies of the algorithm on more channels")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--channels", args->channels, "channels the algorithm spreads over (e.g. rings)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--chunks", args->chunks,
                  "pipeline depth / chunk factor (0: the algorithm's default)")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--min-bytes", args->min_bytes,
                  "smallest call the algorithm is used for (bytes, or with K, M, G: 64K)")
      ->transform(byte_size("a call's smallest size", true));
  cmd->add_option("--max-bytes", args->max_bytes, "largest call (as --min-bytes); 0: no limit")
      ->transform(byte_size("a call's largest size", true));
  cmd->add_option("--root", args->root, "root rank of broadcast and reduce")->capture_default_str();
  auto* in_place = cmd->add_flag("--in-place", args->in_place, "for in-place calls");
  auto* out_of_place =
      cmd->add_flag("--out-of-place", args->out_of_place, "for out-of-place calls");
  in_place->excludes(out_of_place);
  cmd->add_option("--profile", args->profile, "limits profile the output obeys: msccl or weft")
      ->check(CLI::IsMember({"msccl", "weft"}))
      ->capture_default_str();
  cmd->add_option("--placement", args->placement,
                  "threadblocks for sends and receives with the same peer: paired (fewer "
                  "threadblocks), separate (one per direction), msccl (as msccl-tools places them) "
                  "or auto (the fastest predicted; unjudged, separate only where it shortens the "
                  "critical path)")
      ->check(CLI::IsMember({"auto", "paired", "separate", "msccl"}))
      ->capture_default_str();
  cmd->add_option("--channel-policy", args->channel_policy,
                  "how far unhinted traffic spreads over channels: fewest (as far as the limits "
                  "profile needs) or shortest-path (further, where that shortens the critical "
                  "path, as msccl-tools' automatic channels do)")
      ->check(CLI::IsMember({"fewest", "shortest-path"}))
      ->capture_default_str();
  cmd->add_option("-t,--topology", args->topology,
                  "the machine whose predicted times choose among legal schedules: a preset or "
                  "an NCCL topology XML, as weftc simulate reads it")
      ->capture_default_str();
  cmd->add_option("--judge-nodes", args->judge_nodes,
                  "copies of that machine (default: the algorithm's --nodes, else the ranks over "
                  "the machine's GPUs)")
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_flag("--no-judge", args->no_judge,
                "choose schedules by critical path in steps, without predicting them");
  cmd->add_flag("--candidates", args->candidates,
                "print every candidate schedule time judged, with its predicted times");
  cmd->add_option("--max-memory", args->max_memory,
                  "memory weftc may take, e.g. 8G (default: nine tenths of what the machine has "
                  "available); a program that needs more is refused with the figure");
  cmd->add_option("--seeds", args->seeds,
                  "interleavings per verification case; only the first runs when its race check "
                  "passes, since that proves the others")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--threads", args->threads,
                  "threads the proof runs its cases on (default 0: one per core)")
      ->check(whole_number(0, 1024, "the proof's threads (0: one per core)"));
  cmd->add_option("-o,--output", args->output, "the XML file to write")->required();
  CLI::Option* dump_after =
      cmd->add_option("--dump-after", args->dump_after,
                      "write the program as it stands after PASS, to stderr (or --dump-dir): "
                      "postcondition, lower, cut, forward, fuse, schedule, assign, dependencies, "
                      "replicate, emit, verify, or all; repeat it or separate names with commas")
          ->delimiter(',')
          ->type_name("PASS")
          ->check(CLI::Validator(
              [](std::string& name) -> std::string {
                return compiler::unknown_pass(name).value_or(std::string());
              },
              ""));
  cmd->add_option("--dump-dir", args->dump_dir,
                  "folder for --dump-after's text instead of stderr: a file per pass, "
                  "NN-PASS.txt (NN its place in the pipeline)")
      ->type_name("DIR")
      ->needs(dump_after);
  add_load_option(*cmd, args->load);
  cmd->callback([args, &exit_code] { exit_code = run_compile(*args); });
}

}  // namespace weft::weftc
