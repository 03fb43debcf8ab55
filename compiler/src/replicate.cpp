#include "weft/compiler/replicate.h"

#include <algorithm>

namespace weft::compiler {

int replicated_index(int chunk, int instance, int instances, dsl::Replication layout, int block) {
  if (instances == 1) return chunk;
  if (layout == dsl::Replication::Interleaved) return chunk * instances + instance;
  block = std::max(block, 1);
  return (chunk / block) * block * instances + instance * block + chunk % block;
}

dsl::Replication replication_layout(const dsl::Program& program) {
  const dsl::Replication asked = program.options().replication;
  if (asked != dsl::Replication::Auto) return asked;
  // Interleaved cuts every multi-chunk step into single chunks; Blocked cuts only what spans rank
  // blocks, and nothing at all where every operation moves one chunk. Interleaved is MSCCL's
  // layout, so it wins where the two cut the same (nothing).
  const auto& operations = program.operations();
  const bool all_single = std::all_of(operations.begin(), operations.end(),
                                      [](const dsl::Operation& op) { return op.size <= 1; });
  return all_single ? dsl::Replication::Interleaved : dsl::Replication::Blocked;
}

BlockSizes replication_blocks(const dsl::Collective& collective) {
  switch (collective.kind()) {
    case ir::Collective::AllGather:
    case ir::Collective::ReduceScatter:
    case ir::Collective::AllToAll:
      return BlockSizes{collective.chunk_factor(), collective.chunk_factor(), 0};
    default:
      return BlockSizes{};
  }
}

namespace {

// Where one instance's chunks go in the replicated buffers. `extent(rank, buffer)`: chunks of
// one instance's buffer, the block of buffers without rank blocks.
template <typename Extent>
struct Layout {
  Extent extent;
  int instances;
  dsl::Replication kind;
  BlockSizes blocks;

  int block(int rank, ir::BufferKind buffer) const {
    switch (buffer) {
      case ir::BufferKind::Input:
        return blocks.input > 0 ? blocks.input : extent(rank, buffer);
      case ir::BufferKind::Output:
        return blocks.output > 0 ? blocks.output : extent(rank, buffer);
      case ir::BufferKind::Scratch:
        return blocks.scratch > 0 ? blocks.scratch : extent(rank, buffer);
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
  // Both layouts place every instance's chunks alike, so instance 0 speaks for all.
  void cuts(int rank, ir::BufferKind buffer, int offset, int count, std::vector<int>& into) const {
    if (buffer == ir::BufferKind::None) return;
    for (int j = 1; j < count; ++j) {
      if (index(rank, buffer, offset + j, 0) != index(rank, buffer, offset + j - 1, 0) + 1) {
        into.push_back(j);
      }
    }
  }
};

template <typename Extent>
Layout<Extent> make_layout(Extent extent, int instances, dsl::Replication kind,
                           const BlockSizes& blocks) {
  return Layout<Extent>{extent, instances, kind, blocks};
}

}  // namespace

InstructionDag cut_for_instances(const InstructionDag& dag, int instances, dsl::Replication layout,
                                 const BlockSizes& blocks, int piece_channels) {
  if (instances <= 1) return dag;
  const auto lay = make_layout(
      [&dag](int rank, ir::BufferKind buffer) {
        const auto r = static_cast<std::size_t>(rank);
        return buffer == ir::BufferKind::Input    ? dag.input_chunks[r]
               : buffer == ir::BufferKind::Output ? dag.output_chunks[r]
                                                  : dag.scratch_chunks[r];
      },
      instances, layout, blocks);
  const std::size_t n = dag.size();
  const auto& in = dag.instructions;

  // Cut points, decided by the sender of a message for both of its ends.
  std::vector<std::vector<int>> cuts(n);
  bool any = false;
  for (std::size_t k = 0; k < n; ++k) {
    const Instruction& ins = in[k];
    if (ins.recv_from >= 0) continue;
    std::vector<int>& cut = cuts[k];
    if (ir::reads_source(ins.type)) lay.cuts(ins.rank, ins.srcbuf, ins.srcoff, ins.count, cut);
    if (ir::writes_destination(ins.type))
      lay.cuts(ins.rank, ins.dstbuf, ins.dstoff, ins.count, cut);
    if (ins.send_to >= 0) {
      const Instruction& peer = in[static_cast<std::size_t>(ins.send_to)];
      if (ir::reads_source(peer.type))
        lay.cuts(peer.rank, peer.srcbuf, peer.srcoff, peer.count, cut);
      if (ir::writes_destination(peer.type))
        lay.cuts(peer.rank, peer.dstbuf, peer.dstoff, peer.count, cut);
    }
    std::sort(cut.begin(), cut.end());
    cut.erase(std::unique(cut.begin(), cut.end()), cut.end());
    if (ins.send_to >= 0) cuts[static_cast<std::size_t>(ins.send_to)] = cut;
    any = any || !cut.empty();
  }
  if (!any) return dag;

  InstructionDag out = dag.same_buffers();
  std::vector<int> first(n, 0);  // index of the first piece of instruction k
  out.instructions.reserve(n);
  for (std::size_t k = 0; k < n; ++k) {
    const Instruction& ins = in[k];
    const std::vector<int>& cut = cuts[k];
    first[k] = static_cast<int>(out.instructions.size());
    const int pieces = static_cast<int>(cut.size()) + 1;
    for (int p = 0; p < pieces; ++p) {
      const int start = p == 0 ? 0 : cut[static_cast<std::size_t>(p - 1)];
      const int end = p + 1 < pieces ? cut[static_cast<std::size_t>(p)] : ins.count;
      Instruction piece = ins;
      piece.count = end - start;
      piece.srcoff = ins.srcoff < 0 ? -1 : ins.srcoff + start;
      piece.dstoff = ins.dstoff < 0 ? -1 : ins.dstoff + start;
      // Pieces on one connection would run one after another: each on a channel of its own
      // keeps them as parallel as the uncut step was.
      if (pieces > 1 && piece_channels > 1 && piece.channel < 0) piece.channel = p % piece_channels;
      out.instructions.push_back(piece);
    }
  }
  // Messages: piece p pairs with the same piece on the other end.
  for (std::size_t k = 0; k < n; ++k) {
    const int pieces = static_cast<int>(cuts[k].size()) + 1;
    for (int p = 0; p < pieces; ++p) {
      Instruction& piece = out.instructions[static_cast<std::size_t>(first[k] + p)];
      if (in[k].send_to >= 0) piece.send_to = first[static_cast<std::size_t>(in[k].send_to)] + p;
      if (in[k].recv_from >= 0)
        piece.recv_from = first[static_cast<std::size_t>(in[k].recv_from)] + p;
    }
  }
  compute_dependencies(out);
  return out;
}

ir::Algorithm replicate(const ir::Algorithm& one, int instances, dsl::Replication layout,
                        const BlockSizes& blocks) {
  if (instances <= 1) return one;
  const auto lay = make_layout(
      [&one](int rank, ir::BufferKind buffer) {
        const ir::Gpu& gpu = one.gpus[static_cast<std::size_t>(rank)];
        return buffer == ir::BufferKind::Input    ? gpu.input_chunks
               : buffer == ir::BufferKind::Output ? gpu.output_chunks
                                                  : gpu.scratch_chunks;
      },
      instances, layout, blocks);
  int channels = 0;
  for (const ir::Gpu& gpu : one.gpus) {
    for (const ir::Threadblock& tb : gpu.threadblocks)
      channels = std::max(channels, tb.channel + 1);
  }
  ir::Algorithm out = one;
  out.nchannels = channels * instances;
  for (std::size_t r = 0; r < one.gpus.size(); ++r) {
    const ir::Gpu& source = one.gpus[r];
    ir::Gpu& gpu = out.gpus[r];
    const int rank = source.id;
    gpu.input_chunks = source.input_chunks * instances;
    gpu.output_chunks = source.output_chunks * instances;
    gpu.scratch_chunks = source.scratch_chunks * instances;
    gpu.threadblocks.clear();
    gpu.threadblocks.reserve(source.threadblocks.size() * static_cast<std::size_t>(instances));
    // Threadblock t of instance i becomes t·n + i, as msccl-tools numbers them, so that a
    // program's threadblock hints keep their order across instances (the source's threadblocks
    // are in id order, and so are the copies).
    for (const ir::Threadblock& tb : source.threadblocks) {
      for (int i = 0; i < instances; ++i) {
        ir::Threadblock copy = tb;
        copy.id = tb.id * instances + i;
        copy.channel = tb.channel + i * channels;
        for (ir::Step& step : copy.steps) {
          // Steps were cut so that every copy is contiguous: its first chunk places the rest.
          step.srcoff = lay.index(rank, step.srcbuf, step.srcoff, i);
          step.dstoff = lay.index(rank, step.dstbuf, step.dstoff, i);
          if (step.depid >= 0) step.depid = step.depid * instances + i;
        }
        gpu.threadblocks.push_back(std::move(copy));
      }
    }
  }
  return out;
}

}  // namespace weft::compiler
