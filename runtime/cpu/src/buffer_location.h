// Where a chunk of a logical buffer (the IR's i, o, s) lives among the buffers a rank really has
// in a call: in an in-place call input and output share memory (docs/architecture.md §2.2).
#pragma once

#include <cstddef>
#include <vector>

#include "weft/cpu/cpu_executor.h"
#include "weft/ir/geometry.h"

namespace weft::cpu::detail {

struct ChunkLocation {
  ir::BufferKind buffer = ir::BufferKind::Input;  // Input or Output: the real buffer
  int chunk = 0;
};

inline ChunkLocation locate(const ir::Algorithm& algo, int rank, ir::BufferKind buffer, int chunk,
                            bool in_place) {
  if (!in_place) return {buffer, chunk};
  const ir::Alias alias = ir::resolve_in_place(algo, rank, buffer, chunk);
  return {alias.buffer, alias.chunk};
}

inline const std::vector<std::byte>& bytes_of(const RankBuffers& rank, ir::BufferKind buffer) {
  return buffer == ir::BufferKind::Output ? rank.output : rank.input;
}

inline std::vector<std::byte>& bytes_of(RankBuffers& rank, ir::BufferKind buffer) {
  return buffer == ir::BufferKind::Output ? rank.output : rank.input;
}

}  // namespace weft::cpu::detail
