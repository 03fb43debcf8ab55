// Which receive a send could join in one fused step, by the data it carries and the hints it
// bears: shared by fusion (fuse.cpp) and by the data-chain channel plan (data_chains.cpp), which
// must see the same chains that fusion will make.
#pragma once

#include <cstddef>
#include <vector>

#include "slot_space.h"
#include "weft/compiler/instruction_dag.h"

namespace weft::compiler::detail {

// Hints agree when either is absent (-1) or both are the same.
inline bool hints_compatible(int a, int b) {
  return a < 0 || b < 0 || a == b;
}

// The receive (recv or rrc) whose written chunks `send` reads, all of them and nothing else, with
// compatible channel and threadblock hints, and not yet joined to another send (`joined[w] < 0`);
// -1 when there is none. `last_writer` maps each slot to the instruction that wrote it last,
// before `send` in program order.
inline int joinable_receive(const InstructionDag& dag, const SlotSpace& slots,
                            const std::vector<int>& last_writer, const std::vector<int>& joined,
                            const Instruction& send) {
  const std::size_t first = slots.slot(send.rank, send.srcbuf, send.srcoff);
  const int w = last_writer[first];
  if (w < 0) return -1;
  const Instruction& recv = dag.instructions[static_cast<std::size_t>(w)];
  const bool ok = (recv.type == ir::StepType::Recv || recv.type == ir::StepType::RecvReduceCopy) &&
                  joined[static_cast<std::size_t>(w)] < 0 && recv.dstbuf == send.srcbuf &&
                  recv.dstoff == send.srcoff && recv.count == send.count &&
                  hints_compatible(recv.channel, send.channel) &&
                  hints_compatible(recv.recvtb, send.sendtb);
  if (!ok) return -1;
  for (int j = 1; j < send.count; ++j) {
    if (last_writer[first + static_cast<std::size_t>(j)] != w) return -1;
  }
  return w;
}

}  // namespace weft::compiler::detail
