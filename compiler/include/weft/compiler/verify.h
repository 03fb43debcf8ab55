// The verify pass: the CPU reference executor on the emitted IR over several tile sizes, FIFO
// depths 2 and 8 and a few seeds. (The program's postcondition on its trace, with rank, buffer,
// index, expected and found contributions, is the first pass: weft/dsl/postcondition.h.)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "weft/cpu/verify.h"
#include "weft/dsl/program.h"
#include "weft/ir/collective_spec.h"
#include "weft/ir/ir.h"

namespace weft::compiler {

// The spec the executor checks: the runtime's own for standard collectives; the program's
// postcondition, replicated like the chunks, for custom ones.
CollectiveSpec executor_spec(const dsl::Program& program, const ir::Algorithm& algorithm);

struct VerificationResult {
  bool passed = false;
  std::size_t cases = 0;
  std::size_t failures = 0;
  std::optional<int> min_fifo_depth;
  std::string report;  // the first failing case, for humans; empty when passed
  // One line per case run, in the sweep's order: "in place, S=37 T=8 D=2 seed 1: pass".
  std::vector<std::string> case_lines;
};

// The sweep `weftc compile` proves with, and compile()'s by default: cpu::VerifyOptions' cases
// (S = 37, T ∈ {8, 64}, D ∈ {2, 8}), with what a run proves carried to the cases it decides
// (skip_proven_seeds, derive_race_freedom, derive_results). `seeds`: interleavings per case,
// run only where the first does not pass.
cpu::VerifyOptions compile_proof(int seeds = 3);

// Runs `options` (cpu::VerifyOptions' defaults: S = 37, T ∈ {8, 64}, D ∈ {2, 8}, 3 seeds).
VerificationResult verify_with_executor(const dsl::Program& program, const ir::Algorithm& algorithm,
                                        const cpu::VerifyOptions& options);

}  // namespace weft::compiler
