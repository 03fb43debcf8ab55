#include "weft/compiler/replicate.h"

#include <algorithm>

namespace weft::compiler {

int replicated_index(int chunk, int instance, int instances, dsl::Replication layout, int block) {
  if (instances == 1) return chunk;
  if (layout == dsl::Replication::Interleaved) return chunk * instances + instance;
  block = std::max(block, 1);
  return (chunk / block) * block * instances + instance * block + chunk % block;
}

namespace {

struct Layout {
  const InstructionDag& dag;
  int instances;
  dsl::Replication kind;
  BlockSizes blocks;

  int block(int rank, ir::BufferKind buffer) const {
    const auto r = static_cast<std::size_t>(rank);
    switch (buffer) {
      case ir::BufferKind::Input:
        return blocks.input > 0 ? blocks.input : dag.input_chunks[r];
      case ir::BufferKind::Output:
        return blocks.output > 0 ? blocks.output : dag.output_chunks[r];
      case ir::BufferKind::Scratch:
        return blocks.scratch > 0 ? blocks.scratch : dag.scratch_chunks[r];
      case ir::BufferKind::None:
        break;
    }
    return 1;
  }
  int index(int rank, ir::BufferKind buffer, int chunk, int instance) const {
    if (buffer == ir::BufferKind::None || chunk < 0) return chunk;
    return replicated_index(chunk, instance, instances, kind, block(rank, buffer));
  }
  // Positions j in (0, count) where the copy of [offset, offset + count) stops being contiguous.
  void cuts(int rank, ir::BufferKind buffer, int offset, int count, std::vector<int>& into) const {
    if (buffer == ir::BufferKind::None) return;
    for (int j = 1; j < count; ++j) {
      if (index(rank, buffer, offset + j, 0) != index(rank, buffer, offset + j - 1, 0) + 1) {
        into.push_back(j);
      }
    }
  }
};

}  // namespace

InstructionDag replicate(const InstructionDag& dag, int instances, dsl::Replication layout,
                         const BlockSizes& blocks) {
  if (instances <= 1) return dag;
  const Layout lay{dag, instances, layout, blocks};
  const std::size_t n = dag.size();
  const auto& in = dag.instructions;
  InstructionDag out;
  out.ranks = dag.ranks;
  out.operations = dag.operations;
  out.input_chunks = dag.input_chunks;
  out.output_chunks = dag.output_chunks;
  out.scratch_chunks = dag.scratch_chunks;
  for (auto* extents : {&out.input_chunks, &out.output_chunks, &out.scratch_chunks}) {
    for (int& e : *extents) e *= instances;
  }

  out.results.reserve(dag.results.size() * static_cast<std::size_t>(instances));
  for (const Slot& slot : dag.results) {
    for (int i = 0; i < instances; ++i) {
      out.results.push_back(
          Slot{slot.rank, slot.buffer, lay.index(slot.rank, slot.buffer, slot.index, i)});
    }
  }

  // Cut points, decided by the sender of a message for both of its ends.
  std::vector<std::vector<int>> cuts(n);
  std::vector<int> first(n, 0);   // index of the first copy of instruction k
  std::vector<int> pieces(n, 1);  // pieces per instance
  out.instructions.reserve(n * static_cast<std::size_t>(instances));
  for (std::size_t k = 0; k < n; ++k) {
    const Instruction& ins = in[k];
    std::vector<int>& cut = cuts[k];
    if (ins.recv_from < 0) {
      if (ir::reads_source(ins.type)) lay.cuts(ins.rank, ins.srcbuf, ins.srcoff, ins.count, cut);
      if (ir::writes_destination(ins.type))
        lay.cuts(ins.rank, ins.dstbuf, ins.dstoff, ins.count, cut);
      if (ins.send_to >= 0) {
        const Instruction& peer = in[static_cast<std::size_t>(ins.send_to)];
        if (ir::reads_source(peer.type))
          lay.cuts(peer.rank, peer.srcbuf, peer.srcoff, peer.count, cut);
        if (ir::writes_destination(peer.type))
          lay.cuts(peer.rank, peer.dstbuf, peer.dstoff, peer.count, cut);
        std::sort(cut.begin(), cut.end());
        cut.erase(std::unique(cut.begin(), cut.end()), cut.end());
        cuts[static_cast<std::size_t>(ins.send_to)] = cut;
      } else {
        std::sort(cut.begin(), cut.end());
        cut.erase(std::unique(cut.begin(), cut.end()), cut.end());
      }
    }
    first[k] = static_cast<int>(out.instructions.size());
    pieces[k] = static_cast<int>(cut.size()) + 1;
    for (int i = 0; i < instances; ++i) {
      for (int p = 0; p < pieces[k]; ++p) {
        const int start = p == 0 ? 0 : cut[static_cast<std::size_t>(p - 1)];
        const int end = p + 1 < pieces[k] ? cut[static_cast<std::size_t>(p)] : ins.count;
        Instruction copy = ins;
        copy.instance = i;
        copy.count = end - start;
        copy.srcoff = ins.srcoff < 0 ? -1 : lay.index(ins.rank, ins.srcbuf, ins.srcoff + start, i);
        copy.dstoff = ins.dstoff < 0 ? -1 : lay.index(ins.rank, ins.dstbuf, ins.dstoff + start, i);
        out.instructions.push_back(copy);
      }
    }
  }
  // Messages: piece p of instance i pairs with the same piece of the same instance.
  for (std::size_t k = 0; k < n; ++k) {
    for (int i = 0; i < instances; ++i) {
      for (int p = 0; p < pieces[k]; ++p) {
        Instruction& copy =
            out.instructions[static_cast<std::size_t>(first[k] + i * pieces[k] + p)];
        if (in[k].send_to >= 0) {
          const auto j = static_cast<std::size_t>(in[k].send_to);
          copy.send_to = first[j] + i * pieces[j] + p;
        }
        if (in[k].recv_from >= 0) {
          const auto j = static_cast<std::size_t>(in[k].recv_from);
          copy.recv_from = first[j] + i * pieces[j] + p;
        }
      }
    }
  }
  compute_dependencies(out);
  return out;
}

}  // namespace weft::compiler
