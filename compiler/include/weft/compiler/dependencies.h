// The dependencies pass: each threadblock's steps in schedule order, with the cross-threadblock
// waits the DAG needs. A wait already implied (by program order, by an earlier wait on the same
// threadblock, or by what the waited-on step itself had waited for) is dropped; a step needing
// more than one keeps the last and gets `nop`s carrying the others just before it; every step
// waited on gets hasdep. The result is the IR of one instance.
#pragma once

#include "weft/compiler/assign.h"
#include "weft/compiler/instruction_dag.h"
#include "weft/compiler/schedule.h"
#include "weft/ir/ir.h"

namespace weft::compiler {

// Fills gpus (ids, extents, threadblocks and steps) and nchannels; the caller sets the rest of
// the header.
ir::Algorithm resolve_dependencies(const InstructionDag& dag, const Schedule& schedule,
                                   const Assignment& assignment);

}  // namespace weft::compiler
