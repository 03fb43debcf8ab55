// What a chunk reference points into, and the hints a copy or reduce may carry.
#pragma once

#include "weft/ir/ir.h"

namespace weft::dsl {

// The call's input or output buffer, or one of the program's named scratch buffers
// (Program::scratch). Scratch buffers grow to the largest index written; the compiler lays them
// out one after another in the IR's single scratch buffer.
struct Buffer {
  ir::BufferKind kind = ir::BufferKind::Input;
  int scratch = -1;  // the named scratch buffer's id when kind == Scratch
  friend bool operator==(const Buffer&, const Buffer&) = default;
};

inline constexpr Buffer input{ir::BufferKind::Input, -1};
inline constexpr Buffer output{ir::BufferKind::Output, -1};

// In place of an index: the next free place of a scratch buffer on the destination rank (one past
// the largest index written there so far), so that chunks gathered one after another line up
// without the program computing where: `ref.copy(gateway, "to_node_1", dsl::next_free)`.
struct NextFree {};
inline constexpr NextFree next_free{};

// Placement hints for one operation; -1 leaves the choice to the compiler. A cross-rank operation
// uses `sendtb` on the sending rank and `recvtb` on the receiving one; a local one uses `sendtb`
// (or `recvtb` when only that is given).
struct Hints {
  int channel = -1;
  int sendtb = -1;
  int recvtb = -1;
};

}  // namespace weft::dsl
