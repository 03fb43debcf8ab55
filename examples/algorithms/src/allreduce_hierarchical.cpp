// Hierarchical allreduce in BlueConnect's two levels, for nodes × GPUs per node: reduce-scatter
// inside each node (ring over its GPUs: local GPU g ends with the node's sum of block g), then
// reduce-scatter and allgather across nodes among the GPUs with the same local index (ring over
// nodes, one chunk of block g each), then allgather inside each node. Fast links carry blocks of
// `nodes` chunks; slow links single chunks.
#include "common.h"
#include "weft/algorithms/library.h"

namespace weft::algorithms {

Program allreduce_hierarchical(const AlgorithmParams& params) {
  const int nodes = params.nodes;
  const int gpus = params.gpus_per_node;
  const int n = nodes * gpus;
  const int chunks = gpus * nodes;  // block g (of `nodes` chunks) is local GPU g's
  const bool in_place = detail::in_place_or(params, true);
  Program p("allreduce_hierarchical", dsl::Collective::allreduce(n, chunks, in_place),
            params.options());
  if (!in_place) {
    for (int r = 0; r < n; ++r) p.chunk(r, dsl::input, 0, chunks).copy(r, dsl::output, 0);
  }
  auto rank = [&](int node, int gpu) { return node * gpus + gpu; };
  // Channel 0 for links inside a node, 1 for links between nodes (when both exist).
  dsl::Hints local;
  dsl::Hints remote;
  if (nodes > 1 && gpus > 1) {
    local.channel = 0;
    remote.channel = 1;
  }
  // 1. Reduce-scatter inside each node: block b travels from local GPU b+1 around to b.
  for (int step = 0; step < gpus - 1; ++step) {
    for (int node = 0; node < nodes; ++node) {
      for (int b = 0; b < gpus; ++b) {
        const int from = (b + 1 + step) % gpus;
        const int to = (from + 1) % gpus;
        p.chunk(rank(node, to), dsl::output, b * nodes, nodes)
            .reduce(p.chunk(rank(node, from), dsl::output, b * nodes, nodes), local);
      }
    }
  }
  // 2. Reduce-scatter across nodes: chunk m of block g ends reduced on node m.
  for (int step = 0; step < nodes - 1; ++step) {
    for (int g = 0; g < gpus; ++g) {
      for (int m = 0; m < nodes; ++m) {
        const int from = (m + 1 + step) % nodes;
        const int to = (from + 1) % nodes;
        const int k = g * nodes + m;
        p.chunk(rank(to, g), dsl::output, k).reduce(p.chunk(rank(from, g), dsl::output, k), remote);
      }
    }
  }
  // 3. Allgather across nodes.
  for (int step = 0; step < nodes - 1; ++step) {
    for (int g = 0; g < gpus; ++g) {
      for (int m = 0; m < nodes; ++m) {
        const int from = (m + step) % nodes;
        const int to = (from + 1) % nodes;
        const int k = g * nodes + m;
        p.chunk(rank(from, g), dsl::output, k).copy(rank(to, g), dsl::output, k, remote);
      }
    }
  }
  // 4. Allgather inside each node: block b from local GPU b to the others.
  for (int step = 0; step < gpus - 1; ++step) {
    for (int node = 0; node < nodes; ++node) {
      for (int b = 0; b < gpus; ++b) {
        const int from = (b + step) % gpus;
        const int to = (from + 1) % gpus;
        p.chunk(rank(node, from), dsl::output, b * nodes, nodes)
            .copy(rank(node, to), dsl::output, b * nodes, local);
      }
    }
  }
  return p;
}

}  // namespace weft::algorithms
