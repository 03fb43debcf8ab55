// NCCL's own prediction of a collective's time on a topology: the baseline `weftc simulate`
// prints next to Weft's algorithms and `weftc tune` must beat. It follows NCCL's
// src/graph/tuning.cc (latency = base + per-step hardware latencies; bandwidth = channels x
// per-channel speed, with each protocol's factors and ceilings; time = latency + bytes /
// bandwidth) with the channel count and per-channel speed an approximation of NCCL's graph
// search (src/graph/search.cc), described at nccl_ring_graph. Ring for every collective, tree
// for allreduce; NVLS, CollNet and PAT are not modelled.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "weft/ir/ir.h"
#include "weft/predict/topology.h"

namespace weft::predict {

// What NCCL's search settles on for the ring (init.cc gives the tree the ring's channel count).
struct NcclGraph {
  int channels = 0;
  double speed_gbs = 0;  // per channel: NCCL's bwIntra (= bwInter for a ring)
  // NVLink when every hop of the ring within a node is NVLink only, else PCIe: which row of
  // NCCL's hardware latencies applies within a node.
  LinkType intra_type = LinkType::NVLink;
  bool ll128 = false;   // LL128 enabled by NCCL's default rule
  double max_bw = 0;    // the search's inputs, NCCL's figures: fastest single path ...
  double total_bw = 0;  // ... and a GPU's total bandwidth
};

// The approximation of search.cc. Every link counts at NCCL's figure (NVLink links x
// SM{70,80,90}_NVLINK_BW, PCIe 24 GB/s for Gen4 x16, a NIC its speed). The ring visits a node's
// GPUs in rank order, each channel crossing each link as often as the ring's hops use it; across
// nodes every channel enters and leaves a node through one NIC, each GPU's nearest. For a speed
// s, the channels that fit are the fewest, over links, of floor(figure / (s x uses)), at most 32.
// Like search.cc, speeds are tried fastest first from the first not above the fastest path,
// keeping the largest channels x speed (earlier wins ties), stopping once that reaches a GPU's
// total bandwidth or the next speed is below half of the best; then channels are doubled at half
// the speed when the speed is at least 25 (Hopper: not when below 50 with more than 4 channels),
// and the speed is raised while the same channel count still fits.
NcclGraph nccl_ring_graph(const Topology& topology);

struct NcclPrediction {
  std::string algorithm;  // "Ring", "Tree"
  ir::Protocol protocol = ir::Protocol::Simple;
  int channels = 0;
  double latency_us = 0;  // NCCL's latency for the call
  double algbw_gbs = 0;   // NCCL's bandwidth for the call (algorithm bandwidth, GB/s)
  double time_us = 0;     // latency + bytes / bandwidth
};

// Every algorithm and protocol NCCL would consider for `collective` on `bytes` (nccl-tests' size:
// the whole buffer, for allgather the whole output), each with its predicted time. Empty for
// one rank, for collectives NCCL's model does not cover (alltoall, custom) and for an emulated
// topology.
std::vector<NcclPrediction> predict_nccl(const Topology& topology, ir::Collective collective,
                                         std::uint64_t bytes);
// The fastest of predict_nccl's, which is what NCCL picks.
std::optional<NcclPrediction> best_nccl(const Topology& topology, ir::Collective collective,
                                        std::uint64_t bytes);

// nccl-tests' bus bandwidth factor: busbw = algbw x factor (allreduce 2(n-1)/n, allgather and
// reducescatter (n-1)/n, broadcast and reduce 1).
double bus_bandwidth_factor(ir::Collective collective, int ranks);

}  // namespace weft::predict
