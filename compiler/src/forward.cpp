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

// Every chunk of every copy is a piece, decided on its own: a copy may be kept for some of its
// chunks only. Per instruction, its first piece (copies have one per chunk, others none), and the
// number of pieces last.
std::vector<int> copy_pieces(const InstructionDag& dag) {
  const std::size_t n = dag.size();
  std::vector<int> piece_base(n + 1, 0);
  for (std::size_t k = 0; k < n; ++k) {
    const Instruction& ins = dag.instructions[k];
    piece_base[k + 1] = piece_base[k] + (ins.type == StepType::Copy ? ins.count : 0);
  }
  return piece_base;
}

// One walk in program order: where each step reads its source after forwarding (the same as
// before for most: kept apart from the instructions so that they are copied once, into the
// result), and which copied pieces some step still reads or a later write overwrites.
class ProgramOrderWalk {
 public:
  ProgramOrderWalk(const InstructionDag& dag, const detail::SlotSpace& slots,
                   const std::vector<int>& piece_base)
      : read_unforwarded(static_cast<std::size_t>(piece_base.back()), 0),
        overwritten(static_cast<std::size_t>(piece_base.back()), 0),
        source_buffer(dag.size()),
        source_offset(dag.size()),
        slots_(slots),
        piece_base_(piece_base),
        version_(slots.size(), 0),
        origin_(slots.size()) {
    for (std::size_t k = 0; k < dag.size(); ++k) visit(k, dag.instructions[k]);
  }

  std::vector<char> read_unforwarded;         // per piece: some step still reads what it wrote
  std::vector<char> overwritten;              // per piece: its destination is written again later
  std::vector<ir::BufferKind> source_buffer;  // per instruction
  std::vector<int> source_offset;
  int reads = 0;  // steps that now read a copy's source

 private:
  void visit(std::size_t k, Instruction ins) {
    if (reads_source(ins)) {
      if (const std::optional<Origin> from = forwarded_source(ins)) {
        ins.srcbuf = from->buffer;
        ins.srcoff = from->index;
        ++reads;
      } else {
        note_kept_reads(ins, ins.srcbuf, ins.srcoff);
      }
    }
    source_buffer[k] = ins.srcbuf;
    source_offset[k] = ins.srcoff;
    if (reads_destination(ins)) note_kept_reads(ins, ins.dstbuf, ins.dstoff);
    if (!writes_destination(ins)) return;
    for (int j = 0; j < ins.count; ++j) {
      const std::size_t s = slots_.slot(ins.rank, ins.dstbuf, ins.dstoff + j);
      if (origin_[s].piece >= 0) overwritten[static_cast<std::size_t>(origin_[s].piece)] = 1;
      origin_[s] = Origin{};
      ++version_[s];
    }
    // A copy onto (part of) its own source is a plain write: nothing to forward from.
    if (ins.type == StepType::Copy &&
        !ranges_overlap(ins.srcbuf, ins.srcoff, ins.dstbuf, ins.dstoff, ins.count)) {
      for (int j = 0; j < ins.count; ++j) {
        origin_[slots_.slot(ins.rank, ins.dstbuf, ins.dstoff + j)] =
            Origin{piece_base_[k] + j, ins.srcbuf, ins.srcoff + j,
                   version_[slots_.slot(ins.rank, ins.srcbuf, ins.srcoff + j)]};
      }
    }
  }

  void note_kept_reads(const Instruction& ins, ir::BufferKind buffer, int offset) {
    for (int j = 0; j < ins.count; ++j) {
      const int piece = origin_[slots_.slot(ins.rank, buffer, offset + j)].piece;
      if (piece >= 0) read_unforwarded[static_cast<std::size_t>(piece)] = 1;
    }
  }

  // The source range a step can read instead of its own, or none: every chunk it reads must
  // still hold a copy of consecutive chunks of one buffer, none written since.
  std::optional<Origin> forwarded_source(const Instruction& ins) const {
    const Origin& first = origin_[slots_.slot(ins.rank, ins.srcbuf, ins.srcoff)];
    if (first.piece < 0) return std::nullopt;
    for (int j = 0; j < ins.count; ++j) {
      const Origin& o = origin_[slots_.slot(ins.rank, ins.srcbuf, ins.srcoff + j)];
      if (o.piece < 0 || o.buffer != first.buffer || o.index != first.index + j ||
          version_[slots_.slot(ins.rank, o.buffer, o.index)] != o.version) {
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
  }

  const detail::SlotSpace& slots_;
  const std::vector<int>& piece_base_;
  std::vector<int> version_;    // per slot: times written
  std::vector<Origin> origin_;  // per slot: the copy its content came from
};

// A piece stays when a step still reads what it wrote, or when what it wrote is the final
// content of a chunk the postcondition reads.
class KeptPieces {
 public:
  KeptPieces(const InstructionDag& dag, const detail::SlotSpace& slots,
             const std::vector<int>& piece_base, const ProgramOrderWalk& walk)
      : dag_(dag), slots_(slots), piece_base_(piece_base), walk_(walk), result_slot_(slots.size()) {
    for (const Slot& result : dag.results)
      result_slot_[slots.slot(result.rank, result.buffer, result.index)] = 1;
  }

  bool kept(std::size_t k, int j) const {
    const auto piece = static_cast<std::size_t>(piece_base_[k] + j);
    const Instruction& copy = dag_.instructions[k];
    return walk_.read_unforwarded[piece] ||
           (!walk_.overwritten[piece] &&
            result_slot_[slots_.slot(copy.rank, copy.dstbuf, copy.dstoff + j)]);
  }

  bool all_kept() const {
    for (std::size_t k = 0; k < dag_.size(); ++k) {
      const Instruction& ins = dag_.instructions[k];
      for (int j = 0; j < (ins.type == StepType::Copy ? ins.count : 0); ++j) {
        if (!kept(k, j)) return false;
      }
    }
    return true;
  }

  // The runs of kept pieces instruction k becomes: 1 for anything but a copy.
  int runs(std::size_t k) const {
    const Instruction& ins = dag_.instructions[k];
    if (ins.type != StepType::Copy) return 1;
    int count = 0;
    for (int j = 0; j < ins.count; ++j) {
      if (kept(k, j) && (j == 0 || !kept(k, j - 1))) ++count;
    }
    return count;
  }

 private:
  const InstructionDag& dag_;
  const detail::SlotSpace& slots_;
  const std::vector<int>& piece_base_;
  const ProgramOrderWalk& walk_;
  std::vector<char> result_slot_;
};

// The instructions with their forwarded sources, each copy cut to its runs of kept pieces (all of
// them when `all_kept`); messages follow their instructions' new places (copies carry none, so
// only the shift matters). Counts the copies removed and narrowed.
InstructionDag rewrite(const InstructionDag& dag, const ProgramOrderWalk& walk,
                       const KeptPieces& pieces, bool all_kept, ForwardStats& counted) {
  const std::size_t n = dag.size();
  InstructionDag out = dag.same_buffers();
  std::vector<int> new_index;
  int next = static_cast<int>(n);
  if (!all_kept) {
    new_index.resize(n);
    next = 0;
    for (std::size_t k = 0; k < n; ++k) {
      new_index[k] = next;
      next += pieces.runs(k);
    }
  }
  out.instructions.reserve(static_cast<std::size_t>(next));
  for (std::size_t k = 0; k < n; ++k) {
    Instruction ins = dag.instructions[k];
    ins.srcbuf = walk.source_buffer[k];
    ins.srcoff = walk.source_offset[k];
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
      if (!pieces.kept(k, j)) {
        ++j;
        continue;
      }
      int end = j;
      while (end < ins.count && pieces.kept(k, end)) ++end;
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
  return out;
}

}  // namespace

std::optional<InstructionDag> forward_copies(const InstructionDag& dag, ForwardStats* stats) {
  const detail::SlotSpace slots(dag);
  const std::vector<int> piece_base = copy_pieces(dag);
  if (stats) *stats = {};
  if (piece_base.back() == 0) return std::nullopt;
  const ProgramOrderWalk walk(dag, slots, piece_base);
  const KeptPieces pieces(dag, slots, piece_base, walk);
  const bool all_kept = pieces.all_kept();
  if (all_kept && walk.reads == 0) return std::nullopt;
  ForwardStats counted;
  counted.reads = walk.reads;
  InstructionDag out = rewrite(dag, walk, pieces, all_kept, counted);
  if (stats) *stats = counted;
  return out;
}

}  // namespace weft::compiler
