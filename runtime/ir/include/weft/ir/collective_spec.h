// What a collective must compute, in chunks: for every rank and output chunk, the input chunks
// whose reduction it must hold afterwards. The standard collectives derive it from the IR; a
// custom collective (from the DSL's pre/postcondition) supplies its own.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "weft/ir/ir.h"

namespace weft {

struct ChunkId {
  int rank = 0;
  int chunk = 0;  // index into that rank's input buffer
  auto operator<=>(const ChunkId&) const = default;
};

// Every rank's expected output chunks, each a list of input chunks (one for a plain copy, all
// the reduced ones for a reduction; none when the collective leaves that chunk unspecified). A
// list is stored once and shared by the chunks that expect it: an allreduce's ranks all expect the
// same list for a chunk, which held per rank and chunk costs ranks² × chunks ids (134 MB at 256
// ranks). Equal list ids mean equal lists, which lets a checker compute each list's values once.
class ExpectedOutputs {
 public:
  static constexpr int kUnspecified = -1;

  ExpectedOutputs() = default;
  // From explicit lists, [rank][output chunk] (an empty list: unspecified), as tests write them.
  ExpectedOutputs(std::initializer_list<std::vector<std::vector<ChunkId>>> ranks);
  explicit ExpectedOutputs(const std::vector<std::vector<std::vector<ChunkId>>>& ranks);

  int ranks() const { return static_cast<int>(chunk_lists_.size()); }
  // Sets the number of ranks; ranks added have no output chunks.
  void set_ranks(int ranks);
  // Appends a rank with `chunks` unspecified output chunks.
  void add_rank(int chunks);
  // Output chunks the spec covers on `rank` (those past it are unspecified).
  int chunks(int rank) const {
    return static_cast<int>(chunk_lists_[static_cast<std::size_t>(rank)].size());
  }
  // Sets the number of output chunks of `rank`; chunks added are unspecified.
  void set_chunks(int rank, int chunks);

  // Stores a list and returns its id, to be shared by set_list(rank, chunk, id).
  int add_list(const ChunkId* ids, std::size_t count);
  int add_list(const std::vector<ChunkId>& ids) { return add_list(ids.data(), ids.size()); }
  void set_list(int rank, int chunk, int list) {
    chunk_lists_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(chunk)] = list;
  }
  // Sets one chunk's own list (an empty one: unspecified).
  void set(int rank, int chunk, const std::vector<ChunkId>& ids);

  // The list id `rank`'s output chunk expects, or kUnspecified.
  int list(int rank, int chunk) const {
    return chunk_lists_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(chunk)];
  }
  // The input chunks of a list; of `rank`'s output chunk (empty when unspecified).
  std::span<const ChunkId> items(int list) const;
  std::span<const ChunkId> at(int rank, int chunk) const;
  int lists() const { return static_cast<int>(list_begin_.size()) - 1; }

  // The same expectation chunk by chunk, however the lists are shared.
  bool operator==(const ExpectedOutputs& other) const;

 private:
  std::vector<ChunkId> ids_;                            // every list's ids, one after another
  std::vector<std::size_t> list_begin_{0};              // list k is ids_[begin[k], begin[k + 1])
  std::vector<std::vector<std::int32_t>> chunk_lists_;  // [rank][output chunk]: a list id
};

struct CollectiveSpec {
  std::string name;  // "allreduce", or the custom collective's name
  int ngpus = 0;
  std::vector<int> input_chunks;   // per rank
  std::vector<int> output_chunks;  // per rank
  // What each rank's output chunks must hold; unspecified ones (e.g. non-root ranks of reduce)
  // are not checked.
  ExpectedOutputs expected;
  // broadcast/reduce: the root this spec was derived for; the executor re-derives it for the
  // root a run names. -1 for every other spec.
  int root = -1;
};

// The spec of a standard collective for `algo` (its coll, ngpus and nchunksperloop). `root` is
// used by broadcast and reduce. Returns an empty spec (ngpus == 0) for custom collectives, which
// must come with their own, and where the geometry makes no sense (a root that is not a rank,
// nchunksperloop not a multiple of ngpus for allgather, reducescatter and alltoall).
CollectiveSpec standard_spec(const ir::Algorithm& algo, int root);

}  // namespace weft
