// The lower pass: the chunk DAG to per-rank instructions. A cross-rank copy becomes `s` + `r`, a
// cross-rank reduce `s` + `rrc` whose local operand (src) is the destination, a local copy `cpy`,
// a local reduce `re`. Operations larger than the limits profile's count are cut into pieces.
// Named scratch buffers are laid out one after another in the IR's scratch buffer.
#pragma once

#include "weft/compiler/instruction_dag.h"
#include "weft/dsl/program.h"

namespace weft::compiler {

struct LowerOptions {
  int max_count = 72;  // a step's cnt must stay below this
};

InstructionDag lower(const dsl::Program& program, const LowerOptions& options);

}  // namespace weft::compiler
