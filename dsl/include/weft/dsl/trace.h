// The chunk DAG a program records: its operations in program order, each with the slots it reads
// and writes. Locations are physical: in-place aliases are already resolved, so two operations
// touch the same memory exactly when their locations overlap.
#pragma once

#include <cstdint>
#include <source_location>
#include <string>

#include "weft/dsl/buffer.h"

namespace weft::dsl {

struct Location {
  int rank = 0;
  Buffer buffer;
  int index = 0;
  friend bool operator==(const Location&, const Location&) = default;
};

enum class OperationKind : std::uint8_t {
  Copy,    // dst ← src
  Reduce,  // dst ← dst ⊕ src
};

struct Operation {
  OperationKind kind = OperationKind::Copy;
  Location src;
  Location dst;
  int size = 1;  // chunks
  Hints hints;
  std::source_location where;
  // Where the user wrote it when that is not this C++ call (the Python face's "script.py:12");
  // empty: `where`. Errors and reports name this instead.
  std::string origin;

  bool cross_rank() const { return src.rank != dst.rank; }
};

// "copy at ring.cpp:42" / "reduce at ring.cpp:50": how passes name an operation in errors.
std::string describe(const Operation& operation);

}  // namespace weft::dsl
