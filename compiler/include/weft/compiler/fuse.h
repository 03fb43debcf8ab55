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

// The sends msccl-tools' instruction DAG leaves alone (per instruction of `dag`, 1 for such a
// send), as `keep_apart` for fuse(). It joins a recv-reduce-copy to a send only when that send is
// the one operation that depends on it: a result also sent elsewhere, or read again, stays a
// recv-reduce-copy and its sends stay sends. And it joins any receive only to a send that delivers
// to the same buffer and index as the receive wrote. Weft fuses more (any hop qualifies); where
// a program comes from msccl-tools, its own fusion is a candidate beside Weft's.
std::vector<char> msccl_unfused_sends(const InstructionDag& dag);

}  // namespace weft::compiler
