// What a RunCache (cpu_executor.h) holds between runs of one executor.
#pragma once

#include <cstddef>
#include <optional>
#include <unordered_map>
#include <vector>

#include "weft/cpu/cpu_executor.h"

namespace weft::cpu::detail {

// What one output chunk must hold, element by element. Integer types: the exact bytes (wrapping
// arithmetic is associative, so any order gives them). Floating types: the exact value and the
// error any reduction order may add.
struct ExpectedChunk {
  std::vector<std::byte> exact;
  std::vector<long double> value;
  std::vector<long double> tolerance;
};

// Expected chunks of the spec's lists with several contributors, by list id (single ones are
// compared with their input directly). They depend on the inputs' values, which depend on the
// type, the operator and S, and not on the call mode.
using ExpectedByList = std::unordered_map<int, ExpectedChunk>;

// What the expected values depend on: the type, the operator (it shapes the inputs' value range)
// and S.
struct InputShape {
  DataType dtype = DataType::Float;
  ReduceOp op = ReduceOp::Sum;
  std::size_t chunk_elements = 0;
  bool operator==(const InputShape&) const = default;
  static InputShape of(const RunOptions& o) { return {o.dtype, o.op, o.chunk_elements}; }
};

struct RunCacheState {
  const Executor* owner = nullptr;  // list ids and buffer sizes belong to one executor

  std::optional<InputShape> expected_shape;
  ExpectedByList expected;

  // The buffers of the latest run, filled again for the next: kept so that their memory is
  // reused. No copy of the inputs is kept: the check makes their values again (input_values.h).
  std::vector<RankBuffers> results;
};

}  // namespace weft::cpu::detail
