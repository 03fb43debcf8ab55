// The emit pass: the algorithm-level attributes (name, collective, protocol, nchunksperloop,
// in-place flags, size band, extents as MSCCL writes them) and validation against the limits
// profile.
#pragma once

#include "weft/dsl/program.h"
#include "weft/ir/diagnostics.h"
#include "weft/ir/ir.h"
#include "weft/ir/validate.h"

namespace weft::compiler {

// Sets the header of `algorithm` (already replicated) from the program.
void emit_header(const dsl::Program& program, ir::Algorithm& algorithm);

Diagnostics validate_output(const ir::Algorithm& algorithm, const ir::LimitsProfile& limits);

}  // namespace weft::compiler
