// NCCL's own algorithms written as Weft algorithms (issue 60): its ring, one per NCCL channel,
// and for allreduce its tree, as DSL programs compiled and proved like every Weft algorithm, so
// that Weft's own model can predict them. "vs NCCL" then has two meanings, and every table says
// which: against NCCL's model (tuning.cc's formula, weft/predict/nccl_model.h), and against
// NCCL's algorithms on Weft's model (these). The second compares two schedules on one model, so
// a difference in it is the schedule's, not the models'. In `weftc synthesize` they also contend
// as Weft files (a ring per channel, each on its own NIC, fits NCCL's channel ceiling where the
// synthesized trees across many nodes need more threadblocks); the second comparison is then
// never below 1.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "weft/dsl/program.h"
#include "weft/ir/ir.h"
#include "weft/predict/topology.h"
#include "weft/tuning/contenders.h"

namespace weft::synthesis {

// The rings NCCL runs, one per channel, each as the ranks in the order it visits them: within a
// node the local GPUs in order from local GPU c mod gpus_per_node, node after node, so that the
// last GPU of node n sends to the first of node n + 1 and each channel leaves and enters a node
// through a different GPU, hence a different NIC (each GPU's nearest, as Weft's routes take it).
std::vector<std::vector<int>> nccl_rings(const predict::Topology& topology, int channels);

// NCCL's ring for allgather, reducescatter or allreduce on the topology, with NCCL's channels
// (predict::nccl_ring_graph), a threadblock per channel, the data split evenly over channels.
// Nothing for other collectives (NCCL's model has none for alltoall).
std::optional<dsl::Program> nccl_ring_program(const predict::Topology& topology,
                                              ir::Collective collective, ir::Protocol protocol,
                                              bool in_place);

// NCCL's tree for allreduce: a chain within each node and NCCL's double binary tree across
// nodes (nccl_algorithms.cpp says what differs from NCCL). Nothing for other collectives.
std::optional<dsl::Program> nccl_tree_program(const predict::Topology& topology,
                                              ir::Collective collective, ir::Protocol protocol,
                                              bool in_place);

struct NcclAlgorithms {
  // Compiled and proved on the CPU executor (one seed per case, as tune's winners): "NCCL ring
  // as Weft LL128", "NCCL tree as Weft Simple", ...
  std::vector<tuning::Candidate> candidates;
  std::vector<std::string> rejected;  // those that did not compile or prove, with why
};

// Every NCCL algorithm for the collective on Simple, LL and LL128, compiled and proved. Empty for
// one rank and for collectives NCCL's model does not cover.
NcclAlgorithms nccl_algorithms(const predict::Topology& topology, ir::Collective collective,
                               bool in_place);

// Per size, the fastest of the algorithms predicted by Weft's simulator on the topology, as
// predict::best_nccl takes the fastest of NCCL's model (tuning::kNotApplicable where none
// applies). A size their chunks do not divide is predicted at the largest that they divide
// below it (at most one float per chunk less), or at their smallest where it is below that.
std::vector<double> nccl_as_weft_times(std::span<const tuning::Candidate> algorithms,
                                       const predict::Topology& topology,
                                       const std::vector<std::uint64_t>& sizes, bool in_place);
inline std::vector<double> nccl_as_weft_times(const NcclAlgorithms& algorithms,
                                              const predict::Topology& topology,
                                              const std::vector<std::uint64_t>& sizes,
                                              bool in_place) {
  return nccl_as_weft_times(std::span<const tuning::Candidate>(algorithms.candidates), topology,
                            sizes, in_place);
}

// Above this many ranks they are not predicted: their programs grow with the ranks times the
// channels (the allreduce ring's chunks), and proving and predicting them would cost the largest
// syntheses minutes for a comparison. The suite's rows up to 64 GPUs have them.
inline constexpr int kNcclAsWeftMaxRanks = 64;

// The second comparison at a tuning's sizes: per size the fastest of NCCL's algorithms for the
// collective on Weft's model (for ReportInfo::nccl_as_weft_us; empty where they were not
// predicted), the notes to add where they were not or some did not prove, and the seconds it took.
struct NcclAsWeft {
  std::vector<double> times_us;
  std::vector<std::string> notes;
  double seconds = 0;
  // The algorithms themselves, compiled and proved: synthesize lets them contend as a source of
  // their own (a Weft file with NCCL's schedule is a candidate like any other).
  std::vector<tuning::Candidate> candidates;
};
NcclAsWeft nccl_as_weft(const predict::Topology& topology, ir::Collective collective,
                        const std::vector<std::uint64_t>& sizes, bool in_place);
// The same without predicting (times_us empty): for a caller whose contest predicts them.
NcclAsWeft nccl_as_weft_compiled(const predict::Topology& topology, ir::Collective collective,
                                 bool in_place);

}  // namespace weft::synthesis
