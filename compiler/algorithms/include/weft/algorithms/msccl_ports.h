// msccl-tools' two- and three-step alltoall (examples/mscclang/alltoall_a100_two_step.py and
// alltoall_a100_three_step.py) written in the DSL, as a user porting them would: chunks gathered
// into the next free place of a scratch buffer, and sent on to where the collective's definition
// puts them (dst_rank / dst_index), with no index arithmetic of their own. Not registered in the
// library (alltoall_two_step is its own version of the first); tests compile and prove them.
#pragma once

#include "weft/dsl/program.h"

namespace weft::algorithms {

// Each GPU gathers, from every GPU of its node, the chunks for the GPU with its local index on
// each other node, and sends them there in one transfer; chunks within the node go directly.
dsl::Program msccl_alltoall_two_step(int nodes, int gpus_per_node, dsl::Options options = {});

// For each pair of nodes one GPU on each side (msccl-tools' CrossNodeGpus): every GPU sends all
// its chunks for the other node to this node's GPU of the pair, which sends them in one transfer
// to the other node's GPU of the pair, which scatters them to their destinations.
dsl::Program msccl_alltoall_three_step(int nodes, int gpus_per_node, dsl::Options options = {});

}  // namespace weft::algorithms
