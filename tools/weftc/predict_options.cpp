#include "predict_options.h"

#include <charconv>
#include <cstdio>

#include <fmt/format.h>

#include "command_line.h"
#include "weft/ir/xml.h"
#include "weft/predict/cost_parameters.h"

namespace weft::weftc {

void add_machine_options(CLI::App& cmd, MachineArgs& args) {
  cmd.add_option("--topology,-t", args.topology,
                 "A preset (h100-nvswitch, a100-nvswitch, pcie-gen4, emulated) or an NCCL "
                 "topology XML (NCCL_TOPO_DUMP_FILE's output, or an NCCL_TOPO_FILE)")
      ->required();
  cmd.add_option("--nodes", args.nodes, "Copies of the machine, joined by their NICs")
      ->check(CLI::Range(1, 4096));
  cmd.add_option("--gpus-per-node", args.gpus_per_node,
                 "GPUs used per node (default: all of them; required for 'emulated')")
      ->check(CLI::Range(1, 1024));
  cmd.add_option("--parameters", args.parameters,
                 "Cost parameters that override the topology's (key = value lines; "
                 "`weftc topology -t T --write-parameters FILE` writes a file to start from)");
  cmd.add_option("--link", args.links,
                 "A-B=GBPS: the links between local GPUs A and B carry GBPS per direction, 0 "
                 "removes them (a degraded machine; repeatable)")
      ->each([](const std::string& text) { (void)parse_link_edit(text); });
}

void add_ranks_option(CLI::App& cmd, MachineArgs& args) {
  cmd.add_option("--ranks", args.ranks, "Ranks (one node unless --nodes)")
      ->check(CLI::Range(2, 1 << 16));
}

predict::GpuLinkEdit parse_link_edit(const std::string& text) {
  predict::GpuLinkEdit edit;
  const char* p = text.data();
  const char* end = p + text.size();
  auto number = [&](int& out) {
    const auto [next, ec] = std::from_chars(p, end, out);
    const bool ok = ec == std::errc{} && next != p;
    p = next;
    return ok;
  };
  bool ok =
      number(edit.gpu_a) && p < end && *p++ == '-' && number(edit.gpu_b) && p < end && *p++ == '=';
  if (ok) {
    const auto [next, ec] = std::from_chars(p, end, edit.bandwidth_gbs);
    ok = ec == std::errc{} && next == end && edit.bandwidth_gbs >= 0;
  }
  if (!ok) {
    throw CLI::ValidationError(
        "--link", fmt::format("'{}' is not A-B=GBPS (two local GPU indices and a bandwidth, "
                              "0 to remove the link: --link 0-1=0)",
                              text));
  }
  return edit;
}

void add_size_options(CLI::App& cmd, SizeArgs& args) {
  cmd.add_option("-b,--minbytes", args.min, "Smallest size, as nccl-tests (default 1K)");
  cmd.add_option("-e,--maxbytes", args.max, "Largest size (default 1G)");
  cmd.add_option("-f,--stepfactor", args.factor, "Multiply the size by this (default 2)");
}

namespace {

std::optional<predict::Topology> load_exactly(const MachineArgs& args);

// --ranks as GPUs per node: checked against --nodes, --gpus-per-node and the machine's own
// nodes. Nothing when the machine could not be loaded to count its GPUs (the reason printed).
std::optional<MachineArgs> with_ranks(MachineArgs machine) {
  const int ranks = machine.ranks;
  if (machine.gpus_per_node == 0 && machine.topology != "emulated") {
    // --ranks alone means one node's GPUs; more ranks than a node has need --nodes, which the
    // user may not know to give: say so in those words, not as a --gpus-per-node never typed.
    const auto whole = load_exactly(machine);
    if (!whole) return std::nullopt;
    const int per_node = whole->gpus_per_node();
    if (ranks > machine.nodes * per_node) {
      const std::string way =
          ranks % per_node == 0
              ? fmt::format("give --nodes {} ({} nodes × {} GPUs)", ranks / per_node,
                            ranks / per_node, per_node)
              : fmt::format("give --nodes A --gpus-per-node B with A × B = {} and B at most {}",
                            ranks, per_node);
      throw CLI::ValidationError(
          "--ranks",
          fmt::format("{} ranks are more than the {} GPUs of {} node(s) of '{}': {}", ranks,
                      machine.nodes * per_node, machine.nodes, machine.topology, way));
    }
  }
  if (machine.nodes > 1 && machine.gpus_per_node > 0 &&
      machine.nodes * machine.gpus_per_node != ranks) {
    throw CLI::ValidationError("--ranks",
                               fmt::format("{} is not --nodes × --gpus-per-node ({})", ranks,
                                           machine.nodes * machine.gpus_per_node));
  }
  if (ranks % machine.nodes != 0) {
    throw CLI::ValidationError(
        "--ranks", fmt::format("{} ranks do not split evenly over {} nodes", ranks, machine.nodes));
  }
  machine.gpus_per_node = ranks / machine.nodes;
  return machine;
}

}  // namespace

std::optional<predict::Topology> load_machine_or_report(const MachineArgs& args) {
  if (args.ranks <= 0) return load_exactly(args);
  const std::optional<MachineArgs> machine = with_ranks(args);
  if (!machine) return std::nullopt;
  return load_exactly(*machine);
}

namespace {

std::optional<predict::Topology> load_exactly(const MachineArgs& args) {
  predict::TopologyRequest request;
  request.source = args.topology;
  request.nodes = args.nodes;
  request.gpus_per_node = args.gpus_per_node;
  for (const std::string& link : args.links) request.link_edits.push_back(parse_link_edit(link));
  predict::TopologyResult loaded = predict::load_topology(request);
  for (const Diagnostic& d : loaded.diagnostics.items) fmt::print(stderr, "{}\n", d.str());
  if (!loaded.topology) {
    if (!loaded.diagnostics.has_errors()) {
      fmt::print(stderr, "weftc: error: topology '{}' could not be loaded\n", args.topology);
    }
    return std::nullopt;
  }
  if (!args.parameters.empty()) {
    const ir::TextFile file = ir::read_text_file(args.parameters, ir::kCommandLineFile);
    if (!file.ok()) {
      fmt::print(stderr, "{}: error: {}\n", args.parameters, file.error);
      return std::nullopt;
    }
    predict::CostParameters costs = loaded.topology->costs();
    predict::LinkOverrides links;
    const Diagnostics found =
        predict::read_cost_parameters(file.text, args.parameters, costs, &links);
    for (const Diagnostic& d : found.items) fmt::print(stderr, "{}\n", d.str());
    if (found.has_errors()) return std::nullopt;
    loaded.topology->set_costs(costs);
    predict::apply_link_overrides(*loaded.topology, links);
  }
  for (const std::string& assumption : loaded.topology->assumptions()) {
    fmt::print(stderr, "weftc: note: topology '{}': {}\n", loaded.topology->name(), assumption);
  }
  return std::move(loaded.topology);
}

}  // namespace

std::vector<std::uint64_t> sizes_or_throw(const SizeArgs& args) {
  const auto parse = [](const std::string& text, const char* option) {
    const std::optional<std::uint64_t> bytes = size_in_bytes(text, false);
    if (!bytes) {
      throw CLI::ValidationError(
          option, fmt::format("'{}' is not a size from 1 byte to 1024G (digits with an "
                              "optional K, M or G, powers of 1024)",
                              text));
    }
    return *bytes;
  };
  const std::uint64_t min = parse(args.min, "--minbytes");
  const std::uint64_t max = parse(args.max, "--maxbytes");
  if (max < min) {
    throw CLI::ValidationError("--maxbytes",
                               fmt::format("{} is smaller than --minbytes {}", args.max, args.min));
  }
  std::uint64_t factor = 0;
  const char* end = args.factor.data() + args.factor.size();
  if (auto [p, ec] = std::from_chars(args.factor.data(), end, factor);
      ec != std::errc() || p != end || factor < 2 || factor > 1024) {
    throw CLI::ValidationError(
        "--stepfactor", fmt::format("'{}' is not a whole number from 2 to 1024", args.factor));
  }
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t size = min; size <= max; size *= factor) {
    sizes.push_back(size);
    if (size > max / factor) break;
  }
  return sizes;
}

std::string size_label(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"", "K", "M", "G", "T"};
  int unit = 0;
  while (unit < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return fmt::format("{}{}", bytes, kUnits[unit]);
}

}  // namespace weft::weftc
