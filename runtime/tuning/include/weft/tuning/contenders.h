// The contenders of a tuning: each candidate algorithm, and NCCL's own ring and tree with each
// protocol, with a predicted time per call size on one topology.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "weft/ir/ir.h"
#include "weft/predict/topology.h"
#include "weft/tuning/bands.h"

namespace weft::tuning {

// An algorithm that may serve some sizes: compiled and proved by whoever offers it.
struct Candidate {
  std::string name;  // "allreduce_ring LL i1 c4", or the file it came from
  ir::Algorithm algorithm;
};

// The threadblocks of the algorithm's busiest rank: the SMs it takes from the job's kernels while
// it runs, what a threadblock budget (TuneRequest::max_threadblocks) counts.
int busiest_threadblocks(const ir::Algorithm& algorithm);

// Where a candidate need not be predicted (both empty: everywhere it is). At size i, when the
// candidate cannot take less than `ceiling_us[i]` (a time already predicted for another): by
// the caller's `floor_us[i]`, or by the simulator's own floor (Simulator::floor_us).
struct Pruning {
  std::vector<double> floor_us;
  std::vector<double> ceiling_us;
  // The times of the candidate's twin, per size (empty: it has none): the same schedule on a
  // protocol that carries more payload per byte and per threadblock, so that what this one gains
  // by its lower latency shrinks as calls grow. From the first size where this one is slower than
  // its twin, it is not predicted at the larger sizes (the sizes ascend). A heuristic, not a
  // bound: in the cost model LL128 stays slower than Simple past that size (and LL than LL128),
  // or within a percent (docs/synthesis.md).
  std::vector<double> twin_us;
};

// What pruning left out: sizes a bound ruled out, and sizes past one where the twin was faster.
struct LeftOut {
  std::size_t by_bound = 0;
  std::size_t behind_twin = 0;
};

// The candidate simulated on the topology at every size (kNotApplicable where it does not
// apply or the simulation refuses it), but those `pruning` leaves out (kNotApplicable there too,
// counted in `left_out` when given). `on_size` (when set) hears each size before it is
// predicted, for a progress line.
Contender predict_candidate(const Candidate& candidate, const predict::Topology& topology,
                            const std::vector<std::uint64_t>& sizes, bool in_place,
                            const std::function<void(std::uint64_t bytes)>& on_size = {},
                            const Pruning& pruning = {}, LeftOut* left_out = nullptr);

// NCCL's own algorithms, timed by NCCL's cost model on the topology (weft/predict/nccl_model.h).
std::vector<Contender> nccl_contenders(const predict::Topology& topology, ir::Collective collective,
                                       const std::vector<std::uint64_t>& sizes);

}  // namespace weft::tuning
