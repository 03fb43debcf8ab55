// Hierarchical allreduce in BlueConnect's two levels, for nodes × GPUs per node: reduce-scatter
// inside each node (ring over its GPUs: local GPU g ends with the node's sum of block g), then
// reduce-scatter and allgather across nodes among the GPUs with the same local index (ring over
// nodes), then allgather inside each node. Block g has one chunk per node, and each chunk is a
// chain of its own from the first reduction to the last copy: its rings inside the node feed the
// ring across nodes directly, so the hop between levels fuses (receive, reduce, send onward).
#include <algorithm>

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
  // Channels: `--channels` when given; else twice the chains where all instances still fit
  // MSCCL's 32 (each chain's reduce-scatter and allgather on channels of their own: on 2 × 8
  // A100s as fast as msccl-tools' hierarchical program up to 4 MB and 2.3 times faster from
  // 64 MB), else 8, so that 4 instances still fit. A chain on a channel of its own runs without
  // waiting for other chains' steps on shared threadblocks.
  // - Twice the chains or more: the allgather inside the node gets channels of its own, so that
  //   one tile's allgather overlaps the next tile's reduce-scatter (one hop more on the critical
  //   path, where the chain's hop from the other node to the ring inside the node splits).
  // - As many as the chains: each chain whole on its own channel, every hop fused.
  // - Fewer: chains share channels, the allgather on the other half.
  const int chains = gpus * nodes;
  const int instances = std::max(1, params.instances);
  const int channels = params.channels > 1            ? params.channels
                       : 2 * chains * instances <= 32 ? 2 * chains
                                                      : 8;
  const bool split = channels < chains || channels >= 2 * chains;
  const int first_half = split ? std::max(1, channels / 2) : channels;
  auto on_channel = [&](int chain, bool allgather_inside) {
    dsl::Hints hints;
    if (nodes == 1 || gpus == 1) return hints;  // one level: one ring, the compiler places it
    if (split && allgather_inside) {
      hints.channel = first_half + chain % std::max(1, channels - first_half);
    } else {
      hints.channel = chain % first_half;
    }
    return hints;
  };
  // 1. Reduce-scatter inside each node: chunk m of block b travels from local GPU b+1 around to b.
  for (int step = 0; step < gpus - 1; ++step) {
    for (int node = 0; node < nodes; ++node) {
      for (int m = 0; m < nodes; ++m) {
        for (int b = 0; b < gpus; ++b) {
          const int from = (b + 1 + step) % gpus;
          const int to = (from + 1) % gpus;
          const int k = b * nodes + m;
          p.chunk(rank(node, to), dsl::output, k)
              .reduce(p.chunk(rank(node, from), dsl::output, k), on_channel(k, false));
        }
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
        p.chunk(rank(to, g), dsl::output, k)
            .reduce(p.chunk(rank(from, g), dsl::output, k), on_channel(k, false));
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
        p.chunk(rank(from, g), dsl::output, k)
            .copy(rank(to, g), dsl::output, k, on_channel(k, false));
      }
    }
  }
  // 4. Allgather inside each node: chunk m of block b from local GPU b to the others.
  for (int step = 0; step < gpus - 1; ++step) {
    for (int node = 0; node < nodes; ++node) {
      for (int m = 0; m < nodes; ++m) {
        for (int b = 0; b < gpus; ++b) {
          const int from = (b + step) % gpus;
          const int to = (from + 1) % gpus;
          const int k = b * nodes + m;
          p.chunk(rank(node, from), dsl::output, k)
              .copy(rank(node, to), dsl::output, k, on_channel(k, true));
        }
      }
    }
  }
  return p;
}

}  // namespace weft::algorithms
