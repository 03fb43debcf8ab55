// What a program must compute: one of NCCL's collectives (with rank count, chunk factor, in-place
// flag and root) or a custom one given by its precondition and postcondition.
#pragma once

#include <functional>
#include <source_location>
#include <string>
#include <vector>

#include "weft/ir/collective_spec.h"
#include "weft/ir/geometry.h"
#include "weft/ir/ir.h"

namespace weft::dsl {

// A collective of the user's own. Chunk k of rank r's input starts out holding the chunk (r, k).
struct CustomCollective {
  std::string name;
  int ranks = 0;
  std::vector<int> input_chunks;   // per rank
  std::vector<int> output_chunks;  // per rank
  // Precondition: which input chunks hold data when the call starts (absent: all of them).
  std::function<bool(int rank, int index)> precondition;
  // Postcondition: the input chunks whose reduction output chunk `index` of `rank` must hold
  // afterwards (one for a plain copy); empty leaves that chunk unspecified.
  std::function<std::vector<ChunkId>(int rank, int index)> postcondition;
  // In place: the call's output is its input (NCCL's send == recv), so output chunk k of a rank
  // is its input chunk k, and both buffers have the same number of chunks. The algorithm is then
  // for in-place calls only.
  bool in_place = false;
};

// A chunk of one rank's output buffer.
struct Place {
  int rank = 0;
  int index = 0;
  friend bool operator==(const Place&, const Place&) = default;
};

class Collective {
 public:
  // Chunk factor c: allreduce, broadcast and reduce cut each rank's buffer into c chunks;
  // allgather's input (reducescatter's output) has c chunks and the other buffer ranks·c;
  // alltoall has ranks·c chunks in both, c per peer.
  static Collective allreduce(int ranks, int chunk_factor = 1, bool in_place = true,
                              std::source_location where = std::source_location::current());
  static Collective allgather(int ranks, int chunk_factor = 1, bool in_place = true,
                              std::source_location where = std::source_location::current());
  static Collective reducescatter(int ranks, int chunk_factor = 1, bool in_place = true,
                                  std::source_location where = std::source_location::current());
  static Collective alltoall(int ranks, int chunk_factor = 1, bool in_place = false,
                             std::source_location where = std::source_location::current());
  static Collective broadcast(int ranks, int root, int chunk_factor = 1, bool in_place = true,
                              std::source_location where = std::source_location::current());
  static Collective reduce(int ranks, int root, int chunk_factor = 1, bool in_place = true,
                           std::source_location where = std::source_location::current());
  static Collective custom(CustomCollective definition,
                           std::source_location where = std::source_location::current());

  ir::Collective kind() const { return kind_; }
  const std::string& name() const { return name_; }
  int ranks() const { return ranks_; }
  int chunk_factor() const { return chunk_factor_; }
  bool in_place() const { return in_place_; }
  int root() const { return root_; }  // -1 unless broadcast or reduce

  int input_chunks(int rank) const;
  int output_chunks(int rank) const;
  int chunks(int rank, ir::BufferKind buffer) const;  // input or output
  // nchunksperloop of the IR for one instance.
  int chunks_per_loop() const;

  // Precondition: does input chunk `index` of `rank` hold data (the chunk (rank, index)) at the
  // start of the call?
  bool holds_data(int rank, int index) const;
  // Postcondition: the input chunks output chunk `index` of `rank` must hold, sorted; empty when
  // unspecified.
  std::vector<ChunkId> expected(int rank, int index) const;
  bool specified(int rank, int index) const;
  // The output chunks whose postcondition holds input chunk `index` of `rank`, by rank then index:
  // one for an alltoall or a reduce-scatter, one per rank for an allgather or an allreduce.
  std::vector<Place> destinations(int rank, int index) const;

  // In an in-place call input and output share memory (docs/architecture.md §2.2): where chunk
  // `index` of `buffer` of `rank` really lives. Out-of-place calls and scratch map to themselves.
  ir::Alias resolve(int rank, ir::BufferKind buffer, int index) const;

  // The spec the CPU reference executor checks against. Standard collectives use the runtime's
  // own derivation (independent of the DSL); custom ones are materialised from the postcondition.
  CollectiveSpec custom_spec() const;

  // An IR header with the collective's shape (coll, ngpus, nchunksperloop, in-place flags, root).
  ir::Algorithm ir_header() const;

 private:
  Collective() = default;
  ir::Collective kind_ = ir::Collective::AllReduce;
  std::string name_;
  int ranks_ = 0;
  int chunk_factor_ = 1;
  bool in_place_ = false;
  int root_ = -1;
  std::vector<int> custom_inputs_;
  std::vector<int> custom_outputs_;
  std::function<bool(int, int)> precondition_;
  std::function<std::vector<ChunkId>(int, int)> postcondition_;
};

}  // namespace weft::dsl
