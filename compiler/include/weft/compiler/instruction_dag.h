// The per-rank instruction DAG the passes work on (docs/architecture.md §4): the chunk DAG lowered
// to steps, each with the rank that runs it, its buffers, its peers, the message it sends or
// receives and the same-rank instructions it must follow. Flat vectors and indices throughout.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "weft/dsl/program.h"
#include "weft/ir/ir.h"

namespace weft::compiler {

struct Instruction {
  ir::StepType type = ir::StepType::Nop;
  int rank = 0;
  ir::BufferKind srcbuf = ir::BufferKind::None;
  int srcoff = -1;
  ir::BufferKind dstbuf = ir::BufferKind::None;
  int dstoff = -1;
  int count = 1;
  int send_peer = -1;       // rank it sends to
  int recv_peer = -1;       // rank it receives from
  int send_to = -1;         // the instruction that receives what this one sends
  int recv_from = -1;       // the instruction whose message this one receives
  int operation = -1;       // trace operation it came from (its receive side, when fused)
  int send_operation = -1;  // a fused instruction: the operation whose send it absorbed
  // Hints from the trace; -1: none.
  int channel = -1;
  int sendtb = -1;
  int recvtb = -1;
};

// A chunk slot of one rank.
struct Slot {
  int rank = 0;
  ir::BufferKind buffer = ir::BufferKind::None;
  int index = 0;
};

struct InstructionDag {
  int ranks = 0;
  // Program order: every dependency and every message points from an earlier instruction to a
  // later one, so program order is a topological order.
  std::vector<Instruction> instructions;
  // dependencies(i): same-rank instructions i must follow (read-after-write, write-after-read,
  // write-after-write), sorted.
  std::vector<int> dep_begin;
  std::vector<int> deps;
  // Physical extents per rank, in chunks (scratch: all named scratch buffers laid out in order).
  std::vector<int> input_chunks;
  std::vector<int> output_chunks;
  std::vector<int> scratch_chunks;
  // The slots the postcondition reads: what they hold at the end must survive.
  std::vector<Slot> results;
  // The trace, for naming operations in errors. Not owned.
  const std::vector<dsl::Operation>* operations = nullptr;

  std::size_t size() const { return instructions.size(); }
  // A DAG over the same ranks, buffers, results and trace, with no instructions yet: what a pass
  // that rewrites the instruction list starts from.
  InstructionDag same_buffers() const;
  std::span<const int> dependencies(int i) const {
    const auto k = static_cast<std::size_t>(i);
    return {deps.data() + dep_begin[k], static_cast<std::size_t>(dep_begin[k + 1] - dep_begin[k])};
  }
  // "copy at ring.cpp:42": the operation instruction i came from.
  std::string describe(int i) const;
};

// (Re)computes dep_begin/deps from the instructions' reads and writes, in program order.
void compute_dependencies(InstructionDag& dag);

// Instructions joined by messages and fused steps form chains. For each instruction: its chain's
// root, the chain's first instruction.
std::vector<int> chain_roots(const InstructionDag& dag);

// Chains must share one channel. For
// each instruction: the channel its chain's operations ask for, or -1 when none does. Throws
// CompileError when two operations of one chain ask for different channels.
std::vector<int> chain_channel_hints(const InstructionDag& dag);

// Which slots an instruction reads and writes (its step type decides).
bool reads_source(const Instruction& instruction);
bool reads_destination(const Instruction& instruction);  // re: dst ← dst ⊕ src
bool writes_destination(const Instruction& instruction);

}  // namespace weft::compiler
