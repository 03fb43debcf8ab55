// The fuse pass: a receive followed by a send of the data it stored becomes `rcs`; a recv-reduce
// followed by a send of its result becomes `rrcs`, or `rrs` when the stored result is never read
// again (overwritten first, or not part of the postcondition). Any hop qualifies, whatever the
// indices on either side. Fusion keeps each rank's connections consistent: on one channel, a
// receive connection is fused with sends to one peer only.
#pragma once

#include <span>
#include <vector>

#include "weft/compiler/instruction_dag.h"

namespace weft::compiler {

struct FuseStats {
  int rcs = 0;
  int rrcs = 0;
  int rrs = 0;
};

// `keep_apart` (indexed by `dag`'s instructions, empty for none): sends that must stay alone,
// the fusions a schedule found to deadlock. `absorbed`, when given, gets for each instruction of
// the result the send of `dag` it absorbed, -1 where none.
InstructionDag fuse(const InstructionDag& dag, FuseStats* stats = nullptr,
                    std::span<const char> keep_apart = {}, std::vector<int>* absorbed = nullptr);

}  // namespace weft::compiler
