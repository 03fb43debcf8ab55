// Pass 7, replicate: `instances` copies of the algorithm, each handling its share of every chunk,
// later placed on channels and threadblocks of their own. Interleaved layout: instance i of chunk
// k is chunk k·n + i; Blocked: within each rank block of a buffer, instance i's chunks are
// contiguous. A multi-chunk instruction whose chunks are no longer contiguous is cut into
// contiguous pieces, the same on both ends of its message.
//
// It runs on the instruction DAG, before fusion and scheduling (DESIGN.md §4 lists it after
// dependencies): cutting a message into several after the schedule was fixed could overfill a
// FIFO the schedule had sized, and here the scheduler sees every instance and every piece.
#pragma once

#include "weft/compiler/instruction_dag.h"
#include "weft/dsl/options.h"

namespace weft::compiler {

// The rank blocks Blocked keeps together, per buffer, in chunks before replication; 0: the whole
// buffer (buffers without per-rank blocks).
struct BlockSizes {
  int input = 0;
  int output = 0;
  int scratch = 0;
};

InstructionDag replicate(const InstructionDag& dag, int instances, dsl::Replication layout,
                         const BlockSizes& blocks);

// Where chunk `chunk` goes for `instance` (blocks of `block` chunks).
int replicated_index(int chunk, int instance, int instances, dsl::Replication layout, int block);

}  // namespace weft::compiler
