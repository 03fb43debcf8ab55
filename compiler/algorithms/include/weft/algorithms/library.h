// The algorithm library: collective algorithms written in the DSL, each a function from
// parameters (rank count or nodes × GPUs, protocol, instances, channels, ...) to a Program.
#pragma once

#include "weft/dsl/program.h"
#include "weft/dsl/registry.h"

namespace weft::algorithms {

using dsl::AlgorithmParams;
using dsl::Program;

// allreduce
Program allreduce_ring(const AlgorithmParams& params);
Program allreduce_allpairs(const AlgorithmParams& params);
Program allreduce_recursive_halving_doubling(const AlgorithmParams& params);
Program allreduce_double_binary_tree(const AlgorithmParams& params);
Program allreduce_hierarchical(const AlgorithmParams& params);
// allgather
Program allgather_ring(const AlgorithmParams& params);
Program allgather_direct(const AlgorithmParams& params);
Program allgather_recursive_doubling(const AlgorithmParams& params);
// reducescatter
Program reducescatter_ring(const AlgorithmParams& params);
Program reducescatter_allpairs(const AlgorithmParams& params);
// alltoall
Program alltoall_direct(const AlgorithmParams& params);
Program alltoall_two_step(const AlgorithmParams& params);
// broadcast and reduce
Program broadcast_chain(const AlgorithmParams& params);
Program broadcast_binomial_tree(const AlgorithmParams& params);
Program reduce_chain(const AlgorithmParams& params);
Program reduce_binomial_tree(const AlgorithmParams& params);
// a custom collective: rank i's input goes to rank i + 1's output
Program all_to_next(const AlgorithmParams& params);

// Adds every algorithm above to `registry` under its name ("allreduce_ring", ...).
void register_library(dsl::Registry& registry);

}  // namespace weft::algorithms
