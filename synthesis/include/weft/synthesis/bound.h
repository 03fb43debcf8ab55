// The bound (docs/synthesis.md): the least time any schedule of a collective can take on a
// topology's links, whatever algorithm runs it. It is a cut argument: data that must cross into
// a set of GPUs crosses the links into that set, at their bandwidth at most. Every algorithm the
// synthesizer writes is measured against it, in % of the bound.
//
// The links are the topology's own, with its routing: a switch (NVSwitch, PCIe switch, CPU, NIC,
// the network) forwards a message only the way some route between two GPUs turns at it, and a
// GPU relays anything (it stores and forwards). Per collective, with M the call's bytes as
// nccl-tests counts them and N ranks:
//   allgather      every set S of GPUs short of some must receive, through the links into S, the
//                  (N - |S|) blocks of M / N it lacks: time ≥ max over S of that over the
//                  bandwidth into S, found exactly by max-flow (the condition of Edmonds'
//                  arborescence packing, as ForestColl uses it);
//   reducescatter  the same on the reversed links (what leaves S);
//   allreduce      with the GPUs in k groups (single GPUs; nodes; a set of a node's GPUs,
//                  and the rest; on one node of up to 10 GPUs, every partition of them),
//                  the groups together take
//                  in 2 (k - 1) M bytes at least (Patarasuk and Yuan: every element's k partial
//                  values cross k - 1 times to be reduced, its sum k - 1 times to be spread),
//                  over the sum of their capacities in (and out); and any one set takes in and
//                  sends out M. Reductions are done by GPUs, as Weft's executor does them. On a
//                  symmetric machine it equals reduce-scatter's bound plus allgather's; on an
//                  uneven one it is lower, as a weak GPU may be a leaf of every tree;
//   alltoall       every set S sends |S|(N - |S|) M / N² · N bytes out and takes as many in:
//                  the worst of the single GPUs, every set of a node's GPUs (on nodes of up to
//                  10 GPUs and machines of up to 128 ranks; else the sets one link of a node
//                  separates: below a PCIe switch, behind a socket link), the nodes and half of
//                  the nodes (a lower bound: relaying may cost capacity no cut charges).
//
// Besides moving its bytes, every call pays what Weft's cost model charges whatever the
// schedule: the launch, the protocol's call latency, and one hop latency for the last message
// across the binding cut (its last bytes arrive that long after they leave). A protocol whose lines
// carry flags (LL, LL128) moves its bytes at its payload efficiency. The bound's time is the least
// over the protocols of those latencies plus the transfer; the algbw figure is the transfer's
// alone, what large calls approach.
//
// Across nodes, the cut around a node counts as well where it is not the binding one: its bytes
// move no slower than the binding cut's, but its last ones cross the network, whose hop costs
// more (14 us against NVLink's 3.4 for Simple). A call takes at least the later of the two, in
// the same protocol: on four H100 nodes, an allgather of 64 MB pays 125.8 us over the nodes' NICs
// and a network hop, 6.4 us more than its 130.2 us over a GPU's NVLink and NIC and an NVLink hop.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "weft/ir/ir.h"
#include "weft/predict/topology.h"

namespace weft::synthesis {

// What one protocol pays on the binding cut besides the transfer.
struct ProtocolFloor {
  ir::Protocol protocol = ir::Protocol::Simple;
  double latency_us = 0;  // launch + the protocol's call latency + one hop across the cut
  double efficiency = 1;  // payload bytes per byte on the links
};

// A cut: M bytes cross it no faster than M / algbw, and pay its floors besides.
struct Cut {
  double algbw_gbs = 0;
  std::string cut;                    // in words ("the links into node 0")
  std::vector<ProtocolFloor> floors;  // one per protocol

  // The least latency of any protocol over this cut.
  double min_latency_us() const;
};

struct Bound {
  ir::Collective collective = ir::Collective::AllGather;
  double algbw_gbs = 0;               // no schedule moves M bytes faster than M / algbw
  std::string cut;                    // the binding cut, in words ("the links into node 0 gpu 3")
  std::vector<ProtocolFloor> floors;  // one per protocol; none: the transfer alone
  // Across nodes, where the binding cut is not a node's: the cut around node 0, whose last bytes
  // cross the network. Its transfer is no slower than the binding cut's, its hop slower.
  std::optional<Cut> node;
  // The same bound with every link at its line rate (predict::Topology::at_line_rate), the
  // figure a datasheet gives: 0 until line_rate_bound fills it.
  double line_rate_algbw_gbs = 0;
  // Across nodes, what the machine has that no route uses, and why, one sentence each: a NIC
  // that no GPU's route to another node leaves through (every GPU takes the NIC it reaches at
  // the least cost; a NIC on a CPU's root port, say, behind its GPUs' own). No schedule can use
  // it, so the bound does not count it.
  std::vector<std::string> left_out;

  // The bytes' transfer over the binding cut, at full payload efficiency.
  double transfer_us(std::uint64_t bytes) const {
    return static_cast<double>(bytes) / (algbw_gbs * 1e3);
  }
  // The least time a call of `bytes` can take: the best protocol's latencies and transfer.
  double time_us(std::uint64_t bytes) const;
  // The least time a call of `bytes` can take in `protocol`: its latencies, and the transfer at
  // its payload efficiency, over the binding cut or the node's, whichever takes longer.
  double time_us(std::uint64_t bytes, ir::Protocol protocol) const;
  // What time_us(bytes) adds to the binding cut's transfer at its protocol's payload efficiency:
  // that protocol's latencies, or more where the node's cut takes longer.
  double latency_us(std::uint64_t bytes) const;
  // The least latency of any protocol: what even the smallest call pays.
  double min_latency_us() const;
  // The node's cut where it may take longer than the binding cut (another cut, a slower hop),
  // else null: what a report names besides the binding cut.
  const Cut* slower_hop_cut() const;
};

// Throws std::invalid_argument for a collective other than allgather, reducescatter, allreduce
// and alltoall, for fewer than two ranks, for ranks emulated on one GPU (no links to bound), and
// for a GPU that no route reaches.
Bound bandwidth_bound(const predict::Topology& topology, ir::Collective collective);
// Fills bound.line_rate_algbw_gbs (a second bound, on the topology at line rate) where it is 0.
void line_rate_bound(Bound& bound, const predict::Topology& topology);

}  // namespace weft::synthesis
