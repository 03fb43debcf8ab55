// The values a checked run's inputs start from (Executor::make_inputs), one chunk at a time. They
// are a function of the rank and the element's index, so the result check makes the chunks it
// compares against when it needs them, instead of the run keeping a copy of every rank's inputs
// beside the buffers it runs on (at a thousand ranks, gigabytes).
#pragma once

#include <cstddef>

#include "element_ops.h"
#include "weft/ir/types.h"

namespace weft::cpu::detail {

// Writes the `elements` values of `rank`'s input chunk `chunk` (its index in the logical input
// buffer, whatever the call mode) to `out`. `ops` is the type's; `op` shapes the value range.
void store_input_chunk(const ElementOps& ops, ReduceOp op, int rank, int chunk,
                       std::size_t elements, std::byte* out);

}  // namespace weft::cpu::detail
