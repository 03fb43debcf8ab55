// Pass 3, fuse: a receive followed by a send of the data it stored becomes `rcs`; a recv-reduce
// followed by a send of its result becomes `rrcs`, or `rrs` when the stored result is never read
// again (overwritten first, or not part of the postcondition). Any hop qualifies, whatever the
// indices on either side. Fusion keeps each rank's connections consistent: on one channel, a
// receive connection is fused with sends to one peer only.
#pragma once

#include "weft/compiler/instruction_dag.h"

namespace weft::compiler {

struct FuseStats {
  int rcs = 0;
  int rrcs = 0;
  int rrs = 0;
};

InstructionDag fuse(const InstructionDag& dag, FuseStats* stats = nullptr);

}  // namespace weft::compiler
