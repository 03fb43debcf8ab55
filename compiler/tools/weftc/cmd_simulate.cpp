// `weftc simulate`: predicted time, algbw and busbw per size of an algorithm file on a topology,
// as nccl-tests prints measurements (DESIGN.md §7).
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "load.h"
#include "predict_options.h"
#include "weft/runtime/predict/simulator.h"
#include "weft/runtime/types.h"

namespace weft::weftc {
namespace {

struct SimulateArgs {
  std::string file;
  MachineArgs machine;
  SizeArgs sizes;
  std::string dtype = "float";
  bool in_place = false;
  std::string profile = "weft";
};

int simulate(const SimulateArgs& args) {
  const ir::LimitsProfile limits = profile_or_throw(args.profile);
  const std::vector<std::uint64_t> sizes = sizes_or_throw(args.sizes);
  const auto dtype = parse_data_type(args.dtype);
  if (!dtype) throw CLI::ValidationError("--dtype", fmt::format("unknown type '{}'", args.dtype));
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
  fmt::print("{:>12} {:>12} {:>8} {:>7} {:>11} {:>12} {:>12}\n", "size", "count", "type", "tiles",
             "time(us)", "algbw(GB/s)", "busbw(GB/s)");
  std::vector<std::string> skipped;
  for (const std::uint64_t bytes : sizes) {
    options.bytes = bytes;
    const predict::SimulationResult r = simulator.run(options);
    const std::uint64_t count = bytes / size_of(*dtype);
    if (!r.ok()) {
      fmt::print("{:>12} {:>12} {:>8} {:>7} {:>11}\n", bytes, count, to_string(*dtype), "-",
                 "n/a");
      skipped.push_back(fmt::format("{}: {}", size_label(bytes), r.error));
      continue;
    }
    fmt::print("{:>12} {:>12} {:>8} {:>7} {:>11.2f} {:>12.2f} {:>12.2f}\n", bytes, count,
               to_string(*dtype), r.tiles, r.time_us, r.algbw_gbs, r.busbw_gbs);
  }
  for (const std::string& why : skipped) fmt::print("# n/a {}\n", why);
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
  cmd->callback([args, &exit_code] { exit_code = simulate(*args); });
}

}  // namespace weft::weftc
