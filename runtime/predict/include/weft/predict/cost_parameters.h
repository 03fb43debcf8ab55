// The runtime's cost parameters as text a person reads and edits, and their defaults.
//
// Format: one `key = value` a line, `#` starts a comment, blank lines are ignored. Keys:
//   launch_latency_us
//   <proto>.call_latency_us  <proto>.payload_efficiency  <proto>.threadblock_bandwidth_gbs
//   <proto>.step_latency_us
//   <proto>.hop_latency_us.<link>          proto: simple, ll, ll128; link: memory, nvlink, pcie,
//   link.<link>.bandwidth_gbs  link.<link>.latency_us       network (case-insensitive)
//   link.<link>.achievable
// link.<link>.achievable is the share of a link's line rate SM copies get on that type (a cost
// parameter: CostParameters::achievable_share); bandwidth_gbs and latency_us override every link
// of that type in a topology, bandwidth_gbs as its line rate (apply_link_overrides). A key
// given twice keeps the last value. Values are finite decimal numbers, not negative (payload
// efficiency in (0, 1], bandwidths above 0).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "weft/ir/diagnostics.h"
#include "weft/predict/topology.h"

namespace weft::predict {

// Per link type, what a cost file says about the links (unset: keep the topology's).
struct LinkOverrides {
  std::array<std::optional<double>, kLinkTypes> bandwidth_gbs{};
  std::array<std::optional<double>, kLinkTypes> latency_us{};
  bool empty() const;
};

// Defaults for a topology, calibrated so that a simulator running NCCL's ring with
// nccl_ring_graph(topology).channels threadblocks reproduces NCCL's own prediction
// (nccl_model.h): launch latency = NCCL's smallest ring base latency (LL, 6.6 us) and each
// protocol's call latency the rest of its base latency; hop latencies NCCL's ring hwLat by
// hardware (Memory takes the NVLink row); a threadblock's bandwidth the per-channel payload rate
// NCCL credits the ring on this topology, divided by the payload efficiency; Weft's own step
// cost per protocol as measured on a GPU, the least any hop takes. For an emulated
// topology, those of one h100-nvswitch node. Each link type's achievable share of its line rate
// by the GPU's generation (NCCL's per-link figures, NVIDIA's measurements). Sources in
// cost_parameters.cpp.
CostParameters default_cost_parameters(const Topology& topology);

// Every parameter, with comments, in the format above; reading it back gives the same values.
std::string write_cost_parameters(const CostParameters& costs);
// Also writes the overrides that are set.
std::string write_cost_parameters(const CostParameters& costs, const LinkOverrides& links);

// Reads `text` (named `source` in diagnostics) into `into`, which keeps the values the text does
// not set. Errors name source:line and the key; on errors `into` is unchanged. Link overrides are
// refused unless `links` is given.
Diagnostics read_cost_parameters(std::string_view text, std::string source, CostParameters& into);
Diagnostics read_cost_parameters(std::string_view text, std::string source, CostParameters& into,
                                 LinkOverrides* links);

// Every link of an overridden type takes the given line rate and latency, then is rated at the
// topology's achievable share for its type.
void apply_link_overrides(Topology& topology, const LinkOverrides& links);

}  // namespace weft::predict
