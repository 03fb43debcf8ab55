// The forward pass (copy forwarding), after the cut for instances and before the fuse pass: a
// step that reads a chunk still holding exactly what a local copy X → Y wrote there (Y not
// written since, X not written since the copy) reads X instead; a copied chunk that no step reads
// any more and that is overwritten later (or that the postcondition does not read) is then not
// copied at all. Out-of-place algorithms that begin with `cpy i → o` so send straight from the
// input and reduce the input into the output, as in-place ones do, with no copy.
//
// Values are those of program order (the order the dependencies are computed in), so a step that
// now reads X follows X's last writer and precedes X's next one once the dependencies are
// recomputed. Slots are physical (in-place aliasing is resolved when the program is traced), so
// forwarding is the same under either call mode. A copy into a result chunk that is never written
// again stays: its value is the chunk's final content.
#pragma once

#include <optional>

#include "weft/compiler/instruction_dag.h"

namespace weft::compiler {

struct ForwardStats {
  int reads = 0;            // steps that now read a copy's source
  int copies_removed = 0;   // copy instructions no longer needed at all
  int copies_narrowed = 0;  // copy instructions of which only some chunks remain

  bool changed() const { return reads + copies_removed + copies_narrowed > 0; }
};

// The forwarded DAG, or none when no step reads differently and no copy goes (the input stands,
// and is not copied: passes can hold millions of instructions).
std::optional<InstructionDag> forward_copies(const InstructionDag& dag,
                                             ForwardStats* stats = nullptr);

}  // namespace weft::compiler
