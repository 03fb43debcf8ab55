// What a collective must compute, in chunks: for every rank and output chunk, the input chunks
// whose reduction it must hold afterwards. The standard collectives derive it from the IR; a
// custom collective (from the DSL's pre/postcondition) supplies its own.
#pragma once

#include <compare>
#include <string>
#include <vector>

#include "weft/runtime/ir.h"

namespace weft {

struct ChunkId {
  int rank = 0;
  int chunk = 0;  // index into that rank's input buffer
  auto operator<=>(const ChunkId&) const = default;
};

struct CollectiveSpec {
  std::string name;  // "allreduce", or the custom collective's name
  int ngpus = 0;
  std::vector<int> input_chunks;   // per rank
  std::vector<int> output_chunks;  // per rank
  // expected[rank][output chunk]: input chunks reduced into it (one for a plain copy);
  // empty: the collective leaves that chunk unspecified (e.g. non-root ranks of reduce).
  std::vector<std::vector<std::vector<ChunkId>>> expected;
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
