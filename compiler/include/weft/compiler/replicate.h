// Instances, the cut-for-instances and replicate passes: `instances` copies of the algorithm, each
// handling its share of every chunk, each on channels and threadblocks of its own. Interleaved
// layout: instance i of chunk k is chunk k·n + i; Blocked: within each rank block of a buffer,
// instance i's chunks are contiguous; Auto picks Interleaved when every operation moves one chunk,
// and Blocked otherwise (it is the layout that keeps a multi-chunk step whole).
//
// The compiler compiles one instance (every pass, schedule and threadblocks included) and copies
// the result: instances share nothing, so k copies have exactly k times the steps and fused steps
// of one and the same critical path, and what was deadlock-free at FIFO depth 2 stays so.
// Before that, a multi-chunk instruction whose copies would not be contiguous (a step that spans
// several rank blocks of an alltoall, say) is cut into contiguous pieces, the same on both ends of
// its message, so that the scheduler sizes its FIFOs for the pieces. No layout keeps such a step
// whole in every copy (instance i's share of a rank block can touch its share of the next block
// for at most one i), so its copies are more than k steps: the pieces go on channels of their own
// where the limits allow, which keeps the critical path from growing.
#pragma once

#include "weft/compiler/instruction_dag.h"
#include "weft/dsl/options.h"
#include "weft/dsl/program.h"
#include "weft/ir/ir.h"

namespace weft::compiler {

// The rank blocks Blocked keeps together, per buffer, in chunks before replication; 0: the whole
// buffer (buffers without per-rank blocks).
struct BlockSizes {
  int input = 0;
  int output = 0;
  int scratch = 0;
};

// The layout `program` replicates with: its option, Auto resolved.
dsl::Replication replication_layout(const dsl::Program& program);
// The rank blocks of the program's collective.
BlockSizes replication_blocks(const dsl::Collective& collective);

// One instance's instructions with every multi-chunk instruction cut where its copy in some
// instance would not be contiguous. Offsets stay those of one instance. With `piece_channels` > 1,
// piece p of an instruction without a channel hint gets channel p mod piece_channels, so that the
// pieces of one message run side by side instead of one after another on one connection (the
// caller passes it only for programs without channel hints).
InstructionDag cut_for_instances(const InstructionDag& dag, int instances, dsl::Replication layout,
                                 const BlockSizes& blocks, int piece_channels = 1);

// `instances` copies of one compiled instance (cut by cut_for_instances): of n instances,
// instance i of threadblock t on channel c is threadblock t·n + i on channel i·C + c (C: one
// instance's channels), as msccl-tools replicates.
ir::Algorithm replicate(const ir::Algorithm& one, int instances, dsl::Replication layout,
                        const BlockSizes& blocks);

// Where chunk `chunk` goes for `instance` (blocks of `block` chunks). Auto is not a layout here.
int replicated_index(int chunk, int instance, int instances, dsl::Replication layout, int block);

}  // namespace weft::compiler
