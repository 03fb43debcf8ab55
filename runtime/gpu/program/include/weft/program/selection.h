// Whether an algorithm can run a given call: the checks the runtime makes before every launch
// and the NCCL shim makes when it picks among loaded algorithms (docs/architecture.md §6).
// Host-only.
#pragma once

#include <cstddef>
#include <string>

#include "weft/ir/ir.h"
#include "weft/ir/types.h"

namespace weft::gpu {

struct CallShape {
  ir::Collective collective = ir::Collective::AllReduce;
  int nranks = 0;         // ranks of the calling communicator
  std::size_t count = 0;  // NCCL's count (docs/architecture.md §2.2)
  DataType dtype = DataType::Float;
  ReduceOp op = ReduceOp::Sum;
  bool in_place = false;
  int root = -1;  // broadcast/reduce; −1 for the others
};

struct Applicability {
  bool applies = false;
  std::string reason;  // why not, when it does not: "count 1000 × 1 is not divisible by 48 ..."
  explicit operator bool() const { return applies; }
};

// Collective and rank count, in-place/out-of-place flags, divisibility into chunks, the
// [minBytes, maxBytes] band, the root the file names, and the runtime's type/operator support
// (avg only for floating types). A custom collective applies only to a Custom call.
Applicability check_applicable(const ir::Algorithm& algo, const CallShape& call);

// Whether the runtime's kernel supports this pair at all.
bool supports(DataType dtype, ReduceOp op);

}  // namespace weft::gpu
