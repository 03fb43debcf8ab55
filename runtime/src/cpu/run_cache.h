// What a RunCache (cpu_executor.h) holds between runs of one executor.
#pragma once

#include <cstddef>
#include <unordered_map>
#include <vector>

#include "weft/runtime/cpu_executor.h"

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

struct RunCacheState {
  const Executor* owner = nullptr;  // list ids and inputs belong to one executor

  bool has_inputs = false;
  DataType inputs_dtype = DataType::Float;
  ReduceOp inputs_op = ReduceOp::Sum;
  std::size_t inputs_chunk_elements = 0;
  bool inputs_in_place = false;
  std::vector<RankBuffers> inputs;

  bool has_expected = false;
  DataType expected_dtype = DataType::Float;
  ReduceOp expected_op = ReduceOp::Sum;
  std::size_t expected_chunk_elements = 0;
  ExpectedByList expected;
};

}  // namespace weft::cpu::detail
