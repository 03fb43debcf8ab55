// A program: a collective, options, and the operations recorded on chunk references. Nothing is
// global: several programs can be built at once, each owning its trace.
//
//   Program p("ring", Collective::allreduce(4, 4));
//   p.chunk(0, input, 0).copy(1, input, 0);          // rank 1's chunk 0 ← rank 0's
//   p.chunk(1, input, 0).reduce(p.chunk(2, input, 0)); // rank 1's chunk 0 ⊕= rank 2's
#pragma once

#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weft/dsl/buffer.h"
#include "weft/dsl/collective.h"
#include "weft/dsl/contents.h"
#include "weft/dsl/error.h"
#include "weft/dsl/options.h"
#include "weft/dsl/trace.h"

namespace weft::dsl {

class Program;
class ChunkRef;

// Consecutive references on one rank and buffer, as one reference.
ChunkRef group(std::span<const ChunkRef> refs,
               std::source_location where = std::source_location::current());

// `size` consecutive chunks of one buffer of one rank. A reference names a place, not a value:
// it reads whatever the place holds when an operation uses it.
class ChunkRef {
 public:
  int rank() const { return location_.rank; }
  Buffer buffer() const { return location_.buffer; }
  int index() const { return location_.index; }
  int size() const { return size_; }
  const Location& location() const { return location_; }

  // Copies these chunks to `index` of `buffer` on `dst_rank`; returns the destination.
  ChunkRef copy(int dst_rank, Buffer buffer, int index, const Hints& hints = {},
                std::source_location where = std::source_location::current()) const;
  ChunkRef copy(int dst_rank, std::string_view scratch_buffer, int index, const Hints& hints = {},
                std::source_location where = std::source_location::current()) const;
  ChunkRef copy(const ChunkRef& dst, const Hints& hints = {},
                std::source_location where = std::source_location::current()) const;
  // Copies these chunks to the next free place of scratch buffer `buffer` on `dst_rank`.
  ChunkRef copy(int dst_rank, Buffer buffer, NextFree, const Hints& hints = {},
                std::source_location where = std::source_location::current()) const;
  ChunkRef copy(int dst_rank, std::string_view scratch_buffer, NextFree, const Hints& hints = {},
                std::source_location where = std::source_location::current()) const;

  // Where the data these chunks hold must end up by the collective's definition: the rank and
  // output index of the first chunk's one destination (an alltoall's chunk wherever it travels,
  // a partial sum of a reduce-scatter). Throws DslError when the data has several destinations
  // (an allgather's chunk), none, or the chunk holds nothing.
  int dst_rank(std::source_location where = std::source_location::current()) const;
  int dst_index(std::source_location where = std::source_location::current()) const;

  // this ← this ⊕ src, on this reference's rank (src may live on another rank); returns this.
  ChunkRef reduce(const ChunkRef& src, const Hints& hints = {},
                  std::source_location where = std::source_location::current()) const;

  // `parts` references of size()/parts chunks each, in order.
  std::vector<ChunkRef> split(int parts,
                              std::source_location where = std::source_location::current()) const;
  // The sub-range [offset, offset + size) of this reference.
  ChunkRef slice(int offset, int size,
                 std::source_location where = std::source_location::current()) const;

 private:
  friend class Program;
  friend ChunkRef group(std::span<const ChunkRef> refs, std::source_location where);
  Place destination(std::source_location where, std::string_view call) const;
  ChunkRef(Program* program, Location location, int size)
      : program_(program), location_(location), size_(size) {}
  Program* program_;
  Location location_;
  int size_;
};

class Program {
 public:
  Program(std::string name, Collective collective, Options options = {},
          std::source_location where = std::source_location::current());
  Program(Program&&) noexcept = default;
  Program& operator=(Program&&) noexcept = default;
  // References point at their program: copying one would silently detach them.
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  const std::string& name() const { return name_; }
  const Collective& collective() const { return collective_; }
  const Options& options() const { return options_; }
  int ranks() const { return collective_.ranks(); }

  // Names what is recorded from now on (operations, and errors) with `origin` instead of the C++
  // caller's place: a front end in another language passes its user's "script.py:12" before
  // each call. Empty: the C++ caller again.
  void set_origin(std::string origin) { origin_ = std::move(origin); }
  const std::string& origin() const { return origin_; }
  // The error for a misuse at `where` in `call`, naming the origin when one is set.
  DslError error(std::source_location where, std::string_view call, std::string_view what) const;

  // The named scratch buffer, created on first use.
  Buffer scratch(std::string_view name);
  const std::vector<std::string>& scratch_names() const { return scratch_names_; }
  // Chunks of named scratch buffer `scratch` that `rank` uses (largest index written + 1).
  int scratch_chunks(int rank, int scratch) const;

  // A reference to chunks [index, index + size) of `buffer` on `rank`. In-place calls resolve
  // aliases here: in an in-place allreduce, output chunk k is input chunk k.
  ChunkRef chunk(int rank, Buffer buffer, int index, int size = 1,
                 std::source_location where = std::source_location::current());
  ChunkRef chunk(int rank, std::string_view scratch_buffer, int index, int size = 1,
                 std::source_location where = std::source_location::current());

  // The trace: operations in program order.
  const std::vector<Operation>& operations() const { return operations_; }

  // What a slot holds now (physical location, as in Operation). Empty when nothing.
  ContentId content(const Location& location) const;
  std::vector<Contribution> contributions(const Location& location) const;
  const ContentStore& content_store() const { return store_; }

  // Chunks of the input/output buffer of `rank` (the collective's extents).
  int extent(int rank, ir::BufferKind buffer) const { return collective_.chunks(rank, buffer); }

 private:
  friend class ChunkRef;
  ChunkRef record(OperationKind kind, const ChunkRef& src, const ChunkRef& dst, const Hints& hints,
                  std::source_location where, std::string_view call);
  ChunkRef make_ref(int rank, Buffer buffer, int index, int size, std::source_location where,
                    std::string_view call, bool for_write);
  ContentId& slot(const Location& location);
  const ContentId* find_slot(const Location& location) const;

  std::string name_;
  Collective collective_;
  Options options_;
  std::vector<std::string> scratch_names_;
  std::string origin_;
  std::vector<Operation> operations_;
  ContentStore store_;
  // Per-rank offsets into the flat input/output content arrays.
  std::vector<std::size_t> input_offset_;
  std::vector<std::size_t> output_offset_;
  std::vector<ContentId> input_;
  std::vector<ContentId> output_;
  // scratch_[rank][scratch id]: grows with the largest index written.
  std::vector<std::vector<std::vector<ContentId>>> scratch_;
};

}  // namespace weft::dsl
