#include "weft/dsl/program.h"

#include <algorithm>

#include <fmt/format.h>

#include "weft/dsl/error.h"
#include "weft/ir/validate.h"

namespace weft::dsl {

namespace {

// Scratch buffers grow on demand; this bounds a typo'd index before it allocates gigabytes.
constexpr int kMaxScratchChunks = 1 << 22;
constexpr int kMaxInstances = 64;
// Channels and threadblocks beyond any limits profile: a hint this large is a mistake.
constexpr int kMaxHint = 4095;

bool overlaps(const Location& a, int a_size, const Location& b, int b_size) {
  return a.rank == b.rank && a.buffer == b.buffer && a.index < b.index + b_size &&
         b.index < a.index + a_size;
}

}  // namespace

Program::Program(std::string name, Collective collective, Options options,
                 std::source_location where)
    : name_(std::move(name)), collective_(std::move(collective)), options_(std::move(options)) {
  constexpr std::string_view call = "Program";
  if (name_.empty()) throw DslError(where, call, "a program needs a name");
  if (options_.instances < 1 || options_.instances > kMaxInstances) {
    throw DslError(
        where, call,
        fmt::format("instances {} is not in [1, {}]", options_.instances, kMaxInstances));
  }
  if (options_.max_bytes != 0 && options_.min_bytes > options_.max_bytes) {
    throw DslError(
        where, call,
        fmt::format("min_bytes {} is above max_bytes {}", options_.min_bytes, options_.max_bytes));
  }
  if (!ir::limits_by_name(options_.limits)) {
    throw DslError(
        where, call,
        fmt::format("unknown limits profile '{}' (known: msccl, weft)", options_.limits));
  }
  const int n = collective_.ranks();
  input_offset_.resize(static_cast<std::size_t>(n) + 1);
  output_offset_.resize(static_cast<std::size_t>(n) + 1);
  for (int r = 0; r < n; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    input_offset_[ur + 1] =
        input_offset_[ur] + static_cast<std::size_t>(collective_.input_chunks(r));
    output_offset_[ur + 1] =
        output_offset_[ur] + static_cast<std::size_t>(collective_.output_chunks(r));
  }
  input_.assign(input_offset_.back(), kEmptySlot);
  output_.assign(output_offset_.back(), kEmptySlot);
  scratch_.resize(static_cast<std::size_t>(n));
  // Precondition: each input chunk that holds data holds itself, wherever in-place aliasing puts
  // it.
  for (int r = 0; r < n; ++r) {
    for (int k = 0; k < collective_.input_chunks(r); ++k) {
      if (!collective_.holds_data(r, k)) continue;
      const ir::Alias at = collective_.resolve(r, ir::BufferKind::Input, k);
      slot(Location{r, Buffer{at.buffer, -1}, at.chunk}) = ContentStore::leaf({r, k});
    }
  }
}

DslError Program::error(std::source_location where, std::string_view call,
                        std::string_view what) const {
  return DslError(where, call, what, origin_);
}

Buffer Program::scratch(std::string_view name) {
  const auto it = std::find(scratch_names_.begin(), scratch_names_.end(), name);
  if (it != scratch_names_.end()) {
    return Buffer{ir::BufferKind::Scratch, static_cast<int>(it - scratch_names_.begin())};
  }
  scratch_names_.emplace_back(name);
  return Buffer{ir::BufferKind::Scratch, static_cast<int>(scratch_names_.size() - 1)};
}

int Program::scratch_chunks(int rank, int scratch) const {
  if (rank < 0 || rank >= ranks()) return 0;
  const auto& per_rank = scratch_[static_cast<std::size_t>(rank)];
  if (scratch < 0 || static_cast<std::size_t>(scratch) >= per_rank.size()) return 0;
  return static_cast<int>(per_rank[static_cast<std::size_t>(scratch)].size());
}

ContentId& Program::slot(const Location& location) {
  const auto r = static_cast<std::size_t>(location.rank);
  const auto k = static_cast<std::size_t>(location.index);
  switch (location.buffer.kind) {
    case ir::BufferKind::Input:
      return input_[input_offset_[r] + k];
    case ir::BufferKind::Output:
      return output_[output_offset_[r] + k];
    default: {
      auto& per_rank = scratch_[r];
      const auto id = static_cast<std::size_t>(location.buffer.scratch);
      if (per_rank.size() <= id) per_rank.resize(id + 1);
      auto& chunks = per_rank[id];
      if (chunks.size() <= k) chunks.resize(k + 1, kEmptySlot);
      return chunks[k];
    }
  }
}

const ContentId* Program::find_slot(const Location& location) const {
  if (location.rank < 0 || location.rank >= ranks() || location.index < 0) return nullptr;
  const auto r = static_cast<std::size_t>(location.rank);
  const auto k = static_cast<std::size_t>(location.index);
  switch (location.buffer.kind) {
    case ir::BufferKind::Input:
      if (location.index >= collective_.input_chunks(location.rank)) return nullptr;
      return &input_[input_offset_[r] + k];
    case ir::BufferKind::Output:
      if (location.index >= collective_.output_chunks(location.rank)) return nullptr;
      return &output_[output_offset_[r] + k];
    case ir::BufferKind::Scratch: {
      const auto& per_rank = scratch_[r];
      const auto id = static_cast<std::size_t>(location.buffer.scratch);
      if (location.buffer.scratch < 0 || per_rank.size() <= id || per_rank[id].size() <= k) {
        return nullptr;
      }
      return &per_rank[id][k];
    }
    case ir::BufferKind::None:
      break;
  }
  return nullptr;
}

ContentId Program::content(const Location& location) const {
  const ContentId* found = find_slot(location);
  return found ? *found : kEmptySlot;
}

std::vector<Contribution> Program::contributions(const Location& location) const {
  return store_.expand(content(location));
}

namespace {

std::string buffer_name(const Program& program, Buffer buffer) {
  switch (buffer.kind) {
    case ir::BufferKind::Input:
      return "input";
    case ir::BufferKind::Output:
      return "output";
    case ir::BufferKind::Scratch:
      if (buffer.scratch >= 0 &&
          static_cast<std::size_t>(buffer.scratch) < program.scratch_names().size()) {
        return fmt::format("scratch '{}'",
                           program.scratch_names()[static_cast<std::size_t>(buffer.scratch)]);
      }
      return "scratch";
    case ir::BufferKind::None:
      break;
  }
  return "no buffer";
}

std::string describe_chunks(const Program& program, const Location& at, int size) {
  if (size == 1)
    return fmt::format("rank {} {}[{}]", at.rank, buffer_name(program, at.buffer), at.index);
  return fmt::format("rank {} {}[{}..{})", at.rank, buffer_name(program, at.buffer), at.index,
                     at.index + size);
}

}  // namespace

ChunkRef Program::make_ref(int rank, Buffer buffer, int index, int size, std::source_location where,
                           std::string_view call, bool for_write) {
  const int n = ranks();
  const char* role = for_write ? "destination " : "";
  if (rank < 0 || rank >= n) {
    throw error(where, call,
                fmt::format("{}rank {} is out of range (the program has {} ranks)", role, rank, n));
  }
  if (size < 1) throw error(where, call, fmt::format("size {} must be at least 1", size));
  switch (buffer.kind) {
    case ir::BufferKind::Input:
    case ir::BufferKind::Output: {
      const int extent = collective_.chunks(rank, buffer.kind);
      if (index < 0 || index + size > extent) {
        throw error(where, call,
                    fmt::format("{}index {} (size {}) is out of range: rank {}'s {} has {} "
                                "chunks",
                                role, index, size, rank, buffer_name(*this, buffer), extent));
      }
      const ir::Alias at = collective_.resolve(rank, buffer.kind, index);
      return ChunkRef(this, Location{rank, Buffer{at.buffer, -1}, at.chunk}, size);
    }
    case ir::BufferKind::Scratch:
      if (buffer.scratch < 0 || static_cast<std::size_t>(buffer.scratch) >= scratch_names_.size()) {
        throw error(
            where, call,
            fmt::format("scratch buffer {} does not belong to this program", buffer.scratch));
      }
      if (index < 0 || index + size > kMaxScratchChunks) {
        throw error(where, call,
                    fmt::format("{}index {} (size {}) is out of range for {} (at most {} "
                                "chunks)",
                                role, index, size, buffer_name(*this, buffer), kMaxScratchChunks));
      }
      return ChunkRef(this, Location{rank, buffer, index}, size);
    case ir::BufferKind::None:
      break;
  }
  throw error(where, call, "a chunk reference needs a buffer (input, output or a scratch)");
}

ChunkRef Program::chunk(int rank, Buffer buffer, int index, int size, std::source_location where) {
  return make_ref(rank, buffer, index, size, where, "chunk", false);
}

ChunkRef Program::chunk(int rank, std::string_view scratch_buffer, int index, int size,
                        std::source_location where) {
  return make_ref(rank, scratch(scratch_buffer), index, size, where, "chunk", false);
}

ChunkRef Program::record(OperationKind kind, const ChunkRef& src, const ChunkRef& dst,
                         const Hints& hints, std::source_location where, std::string_view call) {
  if (src.program_ != this || dst.program_ != this) {
    throw error(where, call, "the chunk references belong to different programs");
  }
  for (const auto& [value, what] :
       {std::pair{hints.channel, "channel"}, std::pair{hints.sendtb, "sendtb"},
        std::pair{hints.recvtb, "recvtb"}}) {
    if (value < -1 || value > kMaxHint) {
      throw error(where, call,
                  fmt::format("hint {} = {} must be -1 (none) or a number in [0, {}]", what, value,
                              kMaxHint));
    }
  }
  if (src.size_ != dst.size_) {
    throw error(where, call,
                fmt::format("sizes differ: {} is {} chunks, {} is {}",
                            describe_chunks(*this, src.location_, src.size_), src.size_,
                            describe_chunks(*this, dst.location_, dst.size_), dst.size_));
  }
  const int size = src.size_;
  if (overlaps(src.location_, size, dst.location_, size)) {
    const bool same = src.location_ == dst.location_;
    throw error(
        where, call,
        fmt::format("{} {} {}", describe_chunks(*this, dst.location_, size),
                    kind == OperationKind::Copy
                        ? (same ? "is copied onto itself" : "overlaps its own source")
                        : (same ? "is reduced with itself" : "overlaps the operand it reduces"),
                    collective_.in_place() ? "(input and output alias in an in-place call)" : ""));
  }
  auto check_holds = [&](const ChunkRef& ref, const char* role) {
    for (int j = 0; j < size; ++j) {
      const Location at{ref.location_.rank, ref.location_.buffer, ref.location_.index + j};
      const ContentId* held = find_slot(at);
      if (!held || *held == kEmptySlot) {
        throw error(where, call,
                    fmt::format("reads {} ({}), which holds no data at this point",
                                describe_chunks(*this, at, 1), role));
      }
    }
  };
  check_holds(src, "the source");
  if (kind == OperationKind::Reduce) check_holds(dst, "the destination, reduced into");
  for (int j = 0; j < size; ++j) {
    const ContentId from =
        content(Location{src.location_.rank, src.location_.buffer, src.location_.index + j});
    ContentId& into =
        slot(Location{dst.location_.rank, dst.location_.buffer, dst.location_.index + j});
    into = kind == OperationKind::Copy ? from : store_.combine(into, from);
  }
  operations_.push_back(Operation{kind, src.location_, dst.location_, size, hints, where, origin_});
  return dst;
}

ChunkRef ChunkRef::copy(int dst_rank, Buffer buffer, int index, const Hints& hints,
                        std::source_location where) const {
  const ChunkRef dst = program_->make_ref(dst_rank, buffer, index, size_, where, "copy", true);
  return program_->record(OperationKind::Copy, *this, dst, hints, where, "copy");
}

ChunkRef ChunkRef::copy(int dst_rank, std::string_view scratch_buffer, int index,
                        const Hints& hints, std::source_location where) const {
  const Buffer buffer = program_->scratch(scratch_buffer);
  return copy(dst_rank, buffer, index, hints, where);
}

ChunkRef ChunkRef::copy(const ChunkRef& dst, const Hints& hints, std::source_location where) const {
  return program_->record(OperationKind::Copy, *this, dst, hints, where, "copy");
}

ChunkRef ChunkRef::copy(int dst_rank, Buffer buffer, NextFree, const Hints& hints,
                        std::source_location where) const {
  if (buffer.kind != ir::BufferKind::Scratch) {
    throw DslError(where, "copy",
                   fmt::format("the next free place is for scratch buffers; {} has fixed places",
                               buffer_name(*program_, buffer)));
  }
  return copy(dst_rank, buffer, program_->scratch_chunks(dst_rank, buffer.scratch), hints, where);
}

ChunkRef ChunkRef::copy(int dst_rank, std::string_view scratch_buffer, NextFree next,
                        const Hints& hints, std::source_location where) const {
  return copy(dst_rank, program_->scratch(scratch_buffer), next, hints, where);
}

Place ChunkRef::destination(std::source_location where, std::string_view call) const {
  const std::vector<Contribution> held = program_->contributions(location_);
  if (held.empty()) {
    throw DslError(
        where, call,
        fmt::format("{} holds no data at this point", describe_chunks(*program_, location_, 1)));
  }
  // Every input in the data must end up in the same one place (a partial sum of a reduce-scatter
  // block, say): the places they share.
  const Collective& coll = program_->collective();
  std::vector<Place> common = coll.destinations(held.front().chunk.rank, held.front().chunk.chunk);
  for (const Contribution& c : held) {
    const std::vector<Place> mine = coll.destinations(c.chunk.rank, c.chunk.chunk);
    std::erase_if(common, [&](const Place& p) {
      return std::find(mine.begin(), mine.end(), p) == mine.end();
    });
  }
  if (common.size() != 1) {
    throw DslError(where, call,
                   fmt::format("{} holds {}, which the {} collective sends to {} places, not one",
                               describe_chunks(*program_, location_, 1), to_string(held),
                               coll.name(), common.size()));
  }
  return common.front();
}

int ChunkRef::dst_rank(std::source_location where) const {
  return destination(where, "dst_rank").rank;
}

int ChunkRef::dst_index(std::source_location where) const {
  return destination(where, "dst_index").index;
}

ChunkRef ChunkRef::reduce(const ChunkRef& src, const Hints& hints,
                          std::source_location where) const {
  return program_->record(OperationKind::Reduce, src, *this, hints, where, "reduce");
}

std::vector<ChunkRef> ChunkRef::split(int parts, std::source_location where) const {
  if (parts < 1 || size_ % parts != 0) {
    throw program_->error(
        where, "split", fmt::format("{} chunks cannot be split into {} equal parts", size_, parts));
  }
  std::vector<ChunkRef> result;
  const int each = size_ / parts;
  for (int p = 0; p < parts; ++p) {
    result.push_back(ChunkRef(
        program_, Location{location_.rank, location_.buffer, location_.index + p * each}, each));
  }
  return result;
}

ChunkRef ChunkRef::slice(int offset, int size, std::source_location where) const {
  if (offset < 0 || size < 1 || offset + size > size_) {
    throw program_->error(where, "slice",
                          fmt::format("[{}, {}) is not inside a reference of {} chunks", offset,
                                      offset + size, size_));
  }
  return ChunkRef(program_, Location{location_.rank, location_.buffer, location_.index + offset},
                  size);
}

ChunkRef group(std::span<const ChunkRef> refs, std::source_location where) {
  if (refs.empty()) throw DslError(where, "group", "nothing to group");
  const ChunkRef& first = refs.front();
  const Program& program = *first.program_;
  int size = first.size();
  for (std::size_t k = 1; k < refs.size(); ++k) {
    const ChunkRef& ref = refs[k];
    if (ref.rank() != first.rank() || !(ref.buffer() == first.buffer())) {
      throw program.error(
          where, "group",
          fmt::format("reference {} is on another rank or buffer than the first", k));
    }
    if (ref.index() != first.index() + size) {
      throw program.error(
          where, "group",
          fmt::format("reference {} starts at chunk {}, not right after the previous "
                      "one (chunk {})",
                      k, ref.index(), first.index() + size));
    }
    size += ref.size();
  }
  return ChunkRef(first.program_, first.location_, size);
}

}  // namespace weft::dsl
