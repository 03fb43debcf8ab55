// `weftc simulate`: predicted time, algbw and busbw per size of an algorithm file on a topology,
// as nccl-tests prints measurements (docs/architecture.md §7).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "load.h"
#include "predict_options.h"
#include "weft/ir/text_file.h"
#include "weft/ir/types.h"
#include "weft/predict/nccl_model.h"
#include "weft/predict/pictures.h"
#include "weft/predict/simulator.h"
#include "weft/program/options.h"

namespace weft::weftc {
namespace {

struct SimulateArgs {
  std::string file;
  MachineArgs machine;
  SizeArgs sizes;
  std::string dtype = "float";
  bool in_place = false;
  std::string profile = "weft";
  std::string baseline;
  std::string timeline;  // SVG
  std::string trace;     // Chrome trace events (JSON)
  std::string at;        // the size the pictures show
};

// NCCL's fastest protocol for one of its algorithms at this size: "123.4 LL".
struct NcclColumn {
  double time_us = 0;
  std::string label;
};

std::optional<NcclColumn> nccl_best(const std::vector<predict::NcclPrediction>& all,
                                    const std::string& algorithm) {
  std::optional<NcclColumn> best;
  for (const predict::NcclPrediction& p : all) {
    if (p.algorithm != algorithm) continue;
    if (!best || p.time_us < best->time_us) {
      best = NcclColumn{p.time_us, fmt::format("{}/{}", ir::to_string(p.protocol), p.channels)};
    }
  }
  return best;
}

bool write_file(const std::string& path, const std::string& text) {
  std::string error;
  if (ir::write_text_file(path, text, &error)) return true;
  fmt::print(stderr, "weftc simulate: {}\n", error);
  return false;
}

// The timeline and the trace of one size, recorded.
int draw(const SimulateArgs& args, const predict::Simulator& simulator,
         predict::SimulationOptions options, const ir::Algorithm& algo) {
  options.record = true;
  const predict::SimulationResult r = simulator.run(options);
  if (!r.ok()) {
    fmt::print(stderr, "weftc simulate: no picture at {} bytes: {}\n", options.bytes, r.error);
    return kFailed;
  }
  const std::string name = algo.name.empty() ? args.file : algo.name;
  if (!args.timeline.empty()) {
    predict::TimelineOptions timeline;
    timeline.algorithm = name;
    if (!write_file(args.timeline, predict::timeline_svg(r, timeline))) return kFailed;
    fmt::print("# timeline of {} bytes ({} step executions, {} on the critical path): {}\n",
               options.bytes, r.step_executions, r.critical_path.size(), args.timeline);
  }
  if (!args.trace.empty()) {
    predict::TraceOptions trace;
    trace.algorithm = name;
    if (!write_file(args.trace, predict::chrome_trace_json(r, trace))) return kFailed;
    fmt::print("# trace events of {} bytes (open in ui.perfetto.dev): {}\n", options.bytes,
               args.trace);
  }
  return kOk;
}

int simulate(const SimulateArgs& args) {
  const ir::LimitsProfile limits = profile_or_throw(args.profile);
  const std::vector<std::uint64_t> sizes = sizes_or_throw(args.sizes);
  const auto dtype = parse_data_type(args.dtype);
  if (!dtype) throw CLI::ValidationError("--dtype", fmt::format("unknown type '{}'", args.dtype));
  std::optional<std::uint64_t> at;
  if (!args.at.empty()) {
    at = gpu::parse_byte_size(args.at);
    if (!at || *at == 0) {
      throw CLI::ValidationError(
          "--at",
          fmt::format("'{}' is not a size in bytes of at least 1 (e.g. 4096, 1M)", args.at));
    }
    if (args.timeline.empty() && args.trace.empty()) {
      throw CLI::ValidationError(
          "--at",
          "it picks the one size that --timeline or --trace draws; give one of them (the "
          "table covers every size from -b to -e)");
    }
  }
  auto algo = load_or_report(args.file, limits);
  if (!algo) return kBadInput;
  auto topology = load_machine_or_report(args.machine);
  if (!topology) return kBadInput;
  const predict::Simulator simulator(*algo, *topology);
  if (!simulator.error().empty()) {
    fmt::print(stderr, "weftc: error: {}\n", simulator.error());
    return kBadInput;
  }
  predict::SimulationOptions options;
  options.dtype = *dtype;
  if (args.in_place) options.in_place = true;

  fmt::print("# {}: {} on {} ranks, {}, predicted on '{}' ({} node(s) × {} GPUs)\n", args.file,
             algo->collective == ir::Collective::Custom
                 ? algo->collective_name
                 : std::string(ir::to_string(algo->collective)),
             algo->ngpus, ir::to_string(algo->protocol), topology->name(), topology->nodes(),
             topology->gpus_per_node());
  fmt::print("# predicted by simulation, not measured; launch latency {:.1f} us included\n#\n",
             topology->costs().launch_latency_us);
  const bool baseline = args.baseline == "nccl";
  if (baseline && predict::predict_nccl(*topology, algo->collective, sizes.back()).empty()) {
    fmt::print(stderr,
               "weftc simulate: note: NCCL's model has no {} on this topology (it covers ring "
               "and tree on real GPUs); no baseline\n",
               ir::to_string(algo->collective));
  }
  fmt::print("{:>12} {:>12} {:>8} {:>7} {:>11} {:>12} {:>12}", "size", "count", "type", "tiles",
             "time(us)", "algbw(GB/s)", "busbw(GB/s)");
  if (baseline) {
    fmt::print(" {:>11} {:>10} {:>11} {:>10} {:>8}", "ring(us)", "proto/ch", "tree(us)", "proto/ch",
               "vs NCCL");
  }
  fmt::print("\n");
  std::vector<std::string> skipped;
  for (const std::uint64_t bytes : sizes) {
    options.bytes = bytes;
    const predict::SimulationResult r = simulator.run(options);
    const std::uint64_t count = bytes / size_of(*dtype);
    if (!r.ok()) {
      fmt::print("{:>12} {:>12} {:>8} {:>7} {:>11}\n", bytes, count, to_string(*dtype), "-", "n/a");
      skipped.push_back(fmt::format("{}: {}", size_label(bytes), r.error));
      continue;
    }
    fmt::print("{:>12} {:>12} {:>8} {:>7} {:>11.2f} {:>12.2f} {:>12.2f}", bytes, count,
               to_string(*dtype), r.tiles, r.time_us, r.algbw_gbs, r.busbw_gbs);
    if (baseline) {
      const auto all = predict::predict_nccl(*topology, algo->collective, bytes);
      const auto ring = nccl_best(all, "Ring");
      const auto tree = nccl_best(all, "Tree");
      const auto column = [](const std::optional<NcclColumn>& c) {
        return c ? fmt::format(" {:>11.2f} {:>10}", c->time_us, c->label)
                 : fmt::format(" {:>11} {:>10}", "-", "-");
      };
      fmt::print("{}{}", column(ring), column(tree));
      double best = 0;
      if (ring) best = ring->time_us;
      if (tree && (best == 0 || tree->time_us < best)) best = tree->time_us;
      if (best > 0) fmt::print(" {:>7.2f}x", best / r.time_us);
    }
    fmt::print("\n");
  }
  for (const std::string& why : skipped) fmt::print("# n/a {}\n", why);
  if (baseline) {
    fmt::print(
        "# ring/tree: NCCL's own model (src/graph/tuning.cc) on this topology, its fastest "
        "protocol and channel count; vs NCCL: NCCL's best time / this algorithm's (> 1: "
        "faster than NCCL)\n");
  }
  if (!args.timeline.empty() || !args.trace.empty()) {
    options.bytes = at.value_or(sizes.front());
    return draw(args, simulator, options, *algo);
  }
  return kOk;
}

}  // namespace

void add_simulate_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<SimulateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "simulate", "Predict an algorithm's time, algbw and busbw per size on a topology");
  cmd->add_option("file", args->file, "MSCCL XML file")->required();
  add_machine_options(*cmd, args->machine);
  add_size_options(*cmd, args->sizes);
  cmd->add_option("--dtype", args->dtype, "Element type (default float)");
  cmd->add_flag("--in-place", args->in_place, "Predict in-place calls");
  add_profile_option(*cmd, args->profile);
  cmd->add_option("--baseline", args->baseline,
                  "'nccl': also NCCL's ring and tree, by NCCL's own model on this topology")
      ->check(CLI::IsMember({"nccl"}));
  cmd->add_option("--timeline", args->timeline,
                  "Draw the schedule of one size as SVG (lanes per rank and threadblock, "
                  "messages, critical path)");
  cmd->add_option("--trace", args->trace,
                  "Write the schedule of one size as Chrome trace events (Perfetto)");
  cmd->add_option("--at", args->at, "The size --timeline and --trace show (default: -b)");
  cmd->callback([args, &exit_code] { exit_code = simulate(*args); });
}

}  // namespace weft::weftc
