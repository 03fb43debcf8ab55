// Options `weftc simulate` and `weftc tune` share: the machine (--topology, --nodes,
// --gpus-per-node, --parameters, --link) and the sizes (-b/-e/-f, as nccl-tests).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "weft/predict/topology.h"

namespace weft::weftc {

struct MachineArgs {
  std::string topology;
  int nodes = 1;
  int gpus_per_node = 0;           // 0: every GPU of the topology
  std::string parameters;          // a cost-parameter file that overrides the topology's
  std::vector<std::string> links;  // --link A-B=GBPS, a degraded machine
  int ranks = 0;                   // --ranks (where a command offers it): 0, or the GPUs in all
};

struct SizeArgs {
  std::string min = "1K";
  std::string max = "1G";
  std::string factor = "2";
};

void add_machine_options(CLI::App& cmd, MachineArgs& args);
// `--ranks N`: one node's first N GPUs, or with --nodes A, N / A GPUs on each.
void add_ranks_option(CLI::App& cmd, MachineArgs& args);
// "A-B=GBPS" as a link edit; throws CLI::ValidationError naming --link when malformed.
predict::GpuLinkEdit parse_link_edit(const std::string& text);
void add_size_options(CLI::App& cmd, SizeArgs& args);

// Loads the topology the arguments name — the one way weftc's commands turn options into a
// machine; prints every finding (assumptions as notes) to stderr. Nothing when it could not be
// loaded (the reason printed). Throws CLI::ValidationError naming --ranks where it does not fit
// the machine.
std::optional<predict::Topology> load_machine_or_report(const MachineArgs& args);

// The sizes from min to max multiplying by factor; throws CLI::ValidationError naming the option
// when a size is malformed, zero, above 1 TiB, or the range is empty or does not grow.
std::vector<std::uint64_t> sizes_or_throw(const SizeArgs& args);

// "1K", "4M", "1G" when exact, else bytes.
std::string size_label(std::uint64_t bytes);

}  // namespace weft::weftc
