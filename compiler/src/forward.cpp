#include "weft/compiler/forward.h"

#include <algorithm>
#include <optional>

#include "slot_space.h"

namespace weft::compiler {

namespace {

using ir::StepType;

// Where a slot's current content came from when a copy wrote it: the copied source chunk and
// how many times that source had been written then (its version). The content is still the
// source's while the source's version is unchanged.
struct Origin {
  int piece = -1;  // the copy's chunk (index into the pieces), -1: not written by a copy
  ir::BufferKind buffer = ir::BufferKind::None;
  int index = 0;
  int version = 0;
};

bool ranges_overlap(ir::BufferKind a, int a_off, ir::BufferKind b, int b_off, int count) {
  return a == b && a_off < b_off + count && b_off < a_off + count;
}

}  // namespace

std::optional<InstructionDag> forward_copies(const InstructionDag& dag, ForwardStats* stats) {
  const detail::SlotSpace slots(dag);
  const std::size_t n = dag.size();
  ForwardStats counted;

  // Every chunk of every copy is a piece, decided on its own: a copy may be kept for some of its
  // chunks only.
  std::vector<int> piece_base(n + 1, 0);
  for (std::size_t k = 0; k < n; ++k) {
    const Instruction& ins = dag.instructions[k];
    piece_base[k + 1] = piece_base[k] + (ins.type == StepType::Copy ? ins.count : 0);
  }
  const auto pieces = static_cast<std::size_t>(piece_base[n]);
  if (stats) *stats = {};
  if (pieces == 0) return std::nullopt;
  std::vector<char> read_unforwarded(pieces, 0);  // some step still reads what it wrote
  std::vector<char> overwritten(pieces, 0);       // its destination is written again later

  std::vector<int> version(slots.size(), 0);
  std::vector<Origin> origin(slots.size());
  // Where each step reads its source after forwarding (the same as before for most): kept apart
  // from the instructions so that they are copied once, into the result.
  std::vector<ir::BufferKind> source_buffer(n);
  std::vector<int> source_offset(n);

  auto note_kept_reads = [&](const Instruction& ins, ir::BufferKind buffer, int offset) {
    for (int j = 0; j < ins.count; ++j) {
      const int piece = origin[slots.slot(ins.rank, buffer, offset + j)].piece;
      if (piece >= 0) read_unforwarded[static_cast<std::size_t>(piece)] = 1;
    }
  };
  // The source range a step can read instead of its own, or none: every chunk it reads must
  // still hold a copy of consecutive chunks of one buffer, none written since.
  auto forwarded_source = [&](const Instruction& ins) -> std::optional<Origin> {
    const Origin& first = origin[slots.slot(ins.rank, ins.srcbuf, ins.srcoff)];
    if (first.piece < 0) return std::nullopt;
    for (int j = 0; j < ins.count; ++j) {
      const Origin& o = origin[slots.slot(ins.rank, ins.srcbuf, ins.srcoff + j)];
      if (o.piece < 0 || o.buffer != first.buffer || o.index != first.index + j ||
          version[slots.slot(ins.rank, o.buffer, o.index)] != o.version) {
        return std::nullopt;
      }
    }
    // A step that reads and writes overlapping but different chunks would depend on the order
    // it walks them in; the same chunks (element by element) are fine.
    if (writes_destination(ins) && first.index != ins.dstoff &&
        ranges_overlap(first.buffer, first.index, ins.dstbuf, ins.dstoff, ins.count)) {
      return std::nullopt;
    }
    return first;
  };

  for (std::size_t k = 0; k < n; ++k) {
    Instruction ins = dag.instructions[k];
    if (reads_source(ins)) {
      if (const std::optional<Origin> from = forwarded_source(ins)) {
        ins.srcbuf = from->buffer;
        ins.srcoff = from->index;
        ++counted.reads;
      } else {
        note_kept_reads(ins, ins.srcbuf, ins.srcoff);
      }
    }
    source_buffer[k] = ins.srcbuf;
    source_offset[k] = ins.srcoff;
    if (reads_destination(ins)) note_kept_reads(ins, ins.dstbuf, ins.dstoff);
    if (!writes_destination(ins)) continue;
    for (int j = 0; j < ins.count; ++j) {
      const std::size_t s = slots.slot(ins.rank, ins.dstbuf, ins.dstoff + j);
      if (origin[s].piece >= 0) overwritten[static_cast<std::size_t>(origin[s].piece)] = 1;
      origin[s] = Origin{};
      ++version[s];
    }
    // A copy onto (part of) its own source is a plain write: nothing to forward from.
    if (ins.type == StepType::Copy &&
        !ranges_overlap(ins.srcbuf, ins.srcoff, ins.dstbuf, ins.dstoff, ins.count)) {
      for (int j = 0; j < ins.count; ++j) {
        origin[slots.slot(ins.rank, ins.dstbuf, ins.dstoff + j)] =
            Origin{piece_base[k] + j, ins.srcbuf, ins.srcoff + j,
                   version[slots.slot(ins.rank, ins.srcbuf, ins.srcoff + j)]};
      }
    }
  }

  // A piece stays when a step still reads what it wrote, or when what it wrote is the final
  // content of a chunk the postcondition reads.
  std::vector<char> result_slot(slots.size(), 0);
  for (const Slot& result : dag.results)
    result_slot[slots.slot(result.rank, result.buffer, result.index)] = 1;
  auto kept = [&](std::size_t k, int j) {
    const auto piece = static_cast<std::size_t>(piece_base[k] + j);
    const Instruction& copy = dag.instructions[k];
    return read_unforwarded[piece] ||
           (!overwritten[piece] &&
            result_slot[slots.slot(copy.rank, copy.dstbuf, copy.dstoff + j)]);
  };
  bool all_kept = true;
  for (std::size_t k = 0; k < n && all_kept; ++k) {
    const Instruction& ins = dag.instructions[k];
    for (int j = 0; j < (ins.type == StepType::Copy ? ins.count : 0); ++j)
      all_kept = all_kept && kept(k, j);
  }

  if (all_kept && counted.reads == 0) return std::nullopt;

  InstructionDag out = dag.same_buffers();
  // Each copy becomes its runs of kept pieces; messages follow their instructions' new places
  // (copies carry none, so only the shift matters).
  auto runs_of = [&](std::size_t k) {
    const Instruction& ins = dag.instructions[k];
    if (ins.type != StepType::Copy) return 1;
    int runs = 0;
    for (int j = 0; j < ins.count; ++j) {
      if (kept(k, j) && (j == 0 || !kept(k, j - 1))) ++runs;
    }
    return runs;
  };
  std::vector<int> new_index;
  int next = static_cast<int>(n);
  if (!all_kept) {
    new_index.resize(n);
    next = 0;
    for (std::size_t k = 0; k < n; ++k) {
      new_index[k] = next;
      next += runs_of(k);
    }
  }
  out.instructions.reserve(static_cast<std::size_t>(next));
  for (std::size_t k = 0; k < n; ++k) {
    Instruction ins = dag.instructions[k];
    ins.srcbuf = source_buffer[k];
    ins.srcoff = source_offset[k];
    if (!all_kept) {
      if (ins.send_to >= 0) ins.send_to = new_index[static_cast<std::size_t>(ins.send_to)];
      if (ins.recv_from >= 0) ins.recv_from = new_index[static_cast<std::size_t>(ins.recv_from)];
    }
    if (ins.type != StepType::Copy || all_kept) {
      out.instructions.push_back(ins);
      continue;
    }
    int runs = 0;
    for (int j = 0; j < ins.count;) {
      if (!kept(k, j)) {
        ++j;
        continue;
      }
      int end = j;
      while (end < ins.count && kept(k, end)) ++end;
      Instruction run = ins;
      run.srcoff = ins.srcoff + j;
      run.dstoff = ins.dstoff + j;
      run.count = end - j;
      out.instructions.push_back(run);
      ++runs;
      j = end;
    }
    if (runs == 0) {
      ++counted.copies_removed;
    } else if (runs > 1 || out.instructions.back().count != ins.count) {
      ++counted.copies_narrowed;
    }
  }
  compute_dependencies(out);
  if (stats) *stats = counted;
  return out;
}

}  // namespace weft::compiler
