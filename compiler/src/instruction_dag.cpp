#include "weft/compiler/instruction_dag.h"

#include <algorithm>

#include <fmt/format.h>

#include "slot_space.h"
#include "weft/compiler/error.h"

namespace weft::compiler {

bool reads_source(const Instruction& instruction) {
  return ir::reads_source(instruction.type);
}

bool reads_destination(const Instruction& instruction) {
  return instruction.type == ir::StepType::Reduce;
}

bool writes_destination(const Instruction& instruction) {
  return ir::writes_destination(instruction.type);
}

InstructionDag InstructionDag::same_buffers() const {
  InstructionDag out;
  out.ranks = ranks;
  out.input_chunks = input_chunks;
  out.output_chunks = output_chunks;
  out.scratch_chunks = scratch_chunks;
  out.results = results;
  out.operations = operations;
  return out;
}

std::string InstructionDag::describe(int i) const {
  const Instruction& ins = instructions[static_cast<std::size_t>(i)];
  std::string text;
  if (operations && ins.operation >= 0 &&
      static_cast<std::size_t>(ins.operation) < operations->size()) {
    text = dsl::describe((*operations)[static_cast<std::size_t>(ins.operation)]);
  } else {
    text = fmt::format("instruction {}", i);
  }
  if (operations && ins.send_operation >= 0 &&
      static_cast<std::size_t>(ins.send_operation) < operations->size()) {
    text += fmt::format(" fused with {}",
                        dsl::describe((*operations)[static_cast<std::size_t>(ins.send_operation)]));
  }
  return text;
}

std::vector<int> chain_roots(const InstructionDag& dag) {
  // Messages point forward, so a chain's root (its first instruction) is found by following
  // recv_from back; fused steps both receive and send, so the walk crosses them.
  std::vector<int> root(dag.size());
  for (std::size_t k = 0; k < dag.size(); ++k) {
    const int from = dag.instructions[k].recv_from;
    root[k] = from >= 0 ? root[static_cast<std::size_t>(from)] : static_cast<int>(k);
  }
  return root;
}

std::vector<int> chain_channel_hints(const InstructionDag& dag) {
  const std::size_t n = dag.size();
  const auto& ins = dag.instructions;
  const std::vector<int> root = chain_roots(dag);
  std::vector<int> hint(n, -1);
  std::vector<int> asked_by(n, -1);
  for (std::size_t k = 0; k < n; ++k) {
    const Instruction& i = ins[k];
    if (i.channel < 0 || (i.send_to < 0 && i.recv_from < 0)) continue;
    const auto r = static_cast<std::size_t>(root[k]);
    if (hint[r] >= 0 && hint[r] != i.channel) {
      throw CompileError(fmt::format(
          "{} asks for channel {}, but its data also passes through {} on channel {}; "
          "operations joined by fused steps share one channel",
          dag.describe(static_cast<int>(k)), i.channel, dag.describe(asked_by[r]), hint[r]));
    }
    hint[r] = i.channel;
    asked_by[r] = static_cast<int>(k);
  }
  std::vector<int> result(n, -1);
  for (std::size_t k = 0; k < n; ++k) {
    if (ins[k].send_to >= 0 || ins[k].recv_from >= 0)
      result[k] = hint[static_cast<std::size_t>(root[k])];
  }
  return result;
}

void compute_dependencies(InstructionDag& dag) {
  const detail::SlotSpace slots(dag);
  std::vector<int> last_writer(slots.size(), -1);
  std::vector<int> reader_head(slots.size(), -1);
  // Readers of each slot since its last write, as linked lists in one pool.
  std::vector<int> reader_instruction;
  std::vector<int> reader_next;
  reader_instruction.reserve(dag.size());
  reader_next.reserve(dag.size());

  dag.dep_begin.assign(dag.size() + 1, 0);
  dag.deps.clear();
  dag.deps.reserve(dag.size() * 2);
  std::vector<int> found;
  for (std::size_t k = 0; k < dag.size(); ++k) {
    const int i = static_cast<int>(k);
    const Instruction& ins = dag.instructions[k];
    found.clear();
    auto read = [&](ir::BufferKind buffer, int offset) {
      for (int j = 0; j < ins.count; ++j) {
        const std::size_t s = slots.slot(ins.rank, buffer, offset + j);
        if (last_writer[s] >= 0) found.push_back(last_writer[s]);
        reader_instruction.push_back(i);
        reader_next.push_back(reader_head[s]);
        reader_head[s] = static_cast<int>(reader_instruction.size() - 1);
      }
    };
    if (reads_source(ins)) read(ins.srcbuf, ins.srcoff);
    if (reads_destination(ins)) read(ins.dstbuf, ins.dstoff);
    if (writes_destination(ins)) {
      for (int j = 0; j < ins.count; ++j) {
        const std::size_t s = slots.slot(ins.rank, ins.dstbuf, ins.dstoff + j);
        for (int node = reader_head[s]; node >= 0;
             node = reader_next[static_cast<std::size_t>(node)]) {
          found.push_back(reader_instruction[static_cast<std::size_t>(node)]);
        }
        if (last_writer[s] >= 0) found.push_back(last_writer[s]);
        reader_head[s] = -1;
        last_writer[s] = i;
      }
    }
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    for (const int d : found) {
      if (d != i) dag.deps.push_back(d);
    }
    dag.dep_begin[k + 1] = static_cast<int>(dag.deps.size());
  }
}

}  // namespace weft::compiler
