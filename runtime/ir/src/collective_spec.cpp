#include "weft/ir/collective_spec.h"

#include <string>

#include "weft/ir/geometry.h"

namespace weft {

namespace {

// Input chunk `chunk` of every rank: what a reducing collective combines into one output chunk.
std::vector<ChunkId> from_every_rank(int ngpus, int chunk) {
  std::vector<ChunkId> list;
  list.reserve(static_cast<std::size_t>(ngpus));
  for (int q = 0; q < ngpus; ++q) list.push_back({q, chunk});
  return list;
}

bool has_per_rank_blocks(ir::Collective coll) {
  return coll == ir::Collective::AllGather || coll == ir::Collective::ReduceScatter ||
         coll == ir::Collective::AllToAll;
}

}  // namespace

CollectiveSpec standard_spec(const ir::Algorithm& algo, int root) {
  CollectiveSpec spec;
  spec.name = std::string(ir::to_string(algo.collective));
  const int n = algo.ngpus;
  const int chunks = algo.nchunksperloop;
  const bool rooted =
      algo.collective == ir::Collective::Broadcast || algo.collective == ir::Collective::Reduce;
  if (algo.collective == ir::Collective::Custom || n <= 0 || chunks <= 0) return spec;
  if (has_per_rank_blocks(algo.collective) && chunks % n != 0) return spec;
  if (rooted && (root < 0 || root >= n)) return spec;

  // Chunks per rank block for the collectives that cut the buffer into one block per rank.
  const int block = chunks / n;
  spec.ngpus = n;
  spec.root = rooted ? root : -1;
  spec.input_chunks.resize(static_cast<std::size_t>(n));
  spec.output_chunks.resize(static_cast<std::size_t>(n));
  ExpectedOutputs& expected = spec.expected;
  expected.set_ranks(n);
  // Lists every rank expects alike, by output chunk: made once, shared by the ranks.
  std::vector<int> shared;
  auto shared_list = [&](int c, auto make) {
    if (shared.size() <= static_cast<std::size_t>(c)) {
      shared.resize(static_cast<std::size_t>(c) + 1, ExpectedOutputs::kUnspecified);
    }
    int& list = shared[static_cast<std::size_t>(c)];
    if (list == ExpectedOutputs::kUnspecified) list = expected.add_list(make());
    return list;
  };
  for (int r = 0; r < n; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    spec.input_chunks[ur] = ir::input_extent_chunks(algo, r);
    spec.output_chunks[ur] = ir::output_extent_chunks(algo, r);
    expected.set_chunks(r, spec.output_chunks[ur]);
    for (int c = 0; c < spec.output_chunks[ur]; ++c) {
      switch (algo.collective) {
        case ir::Collective::AllReduce:
          expected.set_list(r, c, shared_list(c, [&] { return from_every_rank(n, c); }));
          break;
        case ir::Collective::AllGather:
          // Output block q is rank q's whole input.
          expected.set_list(r, c, shared_list(c, [&] {
                              return std::vector<ChunkId>{{c / block, c % block}};
                            }));
          break;
        case ir::Collective::ReduceScatter:
          // Rank r's output is block r of everyone's input, reduced.
          expected.set(r, c, from_every_rank(n, r * block + c));
          break;
        case ir::Collective::AllToAll:
          // Output block q of rank r is input block r of rank q.
          expected.set(r, c, {{c / block, r * block + c % block}});
          break;
        case ir::Collective::Broadcast:
          expected.set_list(r, c, shared_list(c, [&] { return std::vector<ChunkId>{{root, c}}; }));
          break;
        case ir::Collective::Reduce:
          if (r == root) expected.set(r, c, from_every_rank(n, c));
          break;
        case ir::Collective::Custom:
          break;
      }
    }
  }
  return spec;
}

}  // namespace weft
