// The topology's links as a flow network for LEMON's max-flow (bound.cpp): one arc per link that
// some route between two GPUs uses, at its bandwidth. A switch through which routes do not turn
// every way (a PCIe switch that carries GPU↔NIC traffic but never GPU↔GPU, because NVLink is
// preferred) is split into one port per link, joined only along the turns routes take, so that no
// flow takes a path the machine would never route. A switch of more than kMaxExpandedPorts links
// per side (the network switch of a large cluster) stays one vertex: it may then pass flow more
// ways than routes do, which only lowers the bound, never makes it wrong.
#pragma once

#include <memory>
#include <vector>

#include "weft/predict/topology.h"

namespace weft::synthesis::detail {

inline constexpr int kMaxExpandedPorts = 64;

class FlowGraph {
 public:
  // reversed: every arc points the other way (what leaves a set instead of what enters it).
  FlowGraph(const predict::Topology& topology, bool reversed);
  ~FlowGraph();
  FlowGraph(const FlowGraph&) = delete;
  FlowGraph& operator=(const FlowGraph&) = delete;

  int ranks() const;
  // Capacity of the arc from the source to a rank's GPU and from it to the sink, GB/s (0: none).
  void set_source(int rank, double capacity);
  void set_sink(int rank, double capacity);
  // The maximum flow from the source to the sink, GB/s; `sink_side` (when given) gets, per rank,
  // whether its GPU lies on the sink's side of a minimum cut.
  double max_flow(std::vector<bool>* sink_side = nullptr) const;
  // Capacity of the links into a rank's GPU (out of it when reversed), GB/s.
  double ingress(int rank) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// An effectively unbounded capacity (GB/s): above any cut, and, summed over a thousand GPUs'
// arcs, still within the integer capacities the flows are computed in.
inline constexpr double kUnbounded = 1e9;

}  // namespace weft::synthesis::detail
