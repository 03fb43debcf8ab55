// Alltoall: direct (every rank sends block q straight to rank q) and hierarchical two-step for
// nodes × GPUs: blocks bound for another node are first gathered, over the fast links, on the
// local GPU with the destination's local index, which then sends them to their destination in
// one transfer per peer over the slow link.
#include "common.h"
#include "weft/algorithms/library.h"
#include "weft/dsl/error.h"

namespace weft::algorithms {

Program alltoall_direct(const AlgorithmParams& params) {
  const int n = params.ranks;
  const int c = detail::chunks_or(params, 1);
  const bool in_place = detail::in_place_or(params, false);
  Program p("alltoall_direct", dsl::Collective::alltoall(n, c, in_place), params.options());
  if (!in_place) {
    for (int r = 0; r < n; ++r) {
      p.chunk(r, dsl::input, r * c, c).copy(r, dsl::output, r * c);
      for (int d = 1; d < n; ++d) {
        const int q = (r + d) % n;
        p.chunk(r, dsl::input, q * c, c)
            .copy(q, dsl::output, r * c, detail::on_channel(q, params.channels));
      }
    }
    return p;
  }
  // In place, block q of rank r is still to be sent when rank q's block arrives for the same
  // place: receive into scratch, then move it in once everything has left.
  const dsl::Buffer scratch = p.scratch("arrived");
  for (int r = 0; r < n; ++r) {
    for (int d = 1; d < n; ++d) {
      const int q = (r + d) % n;
      p.chunk(r, dsl::input, q * c, c)
          .copy(q, scratch, r * c, detail::on_channel(q, params.channels));
    }
  }
  for (int q = 0; q < n; ++q) {
    for (int d = 1; d < n; ++d) {
      const int r = (q + d) % n;
      p.chunk(q, scratch, r * c, c).copy(q, dsl::output, r * c);
    }
  }
  return p;
}

Program alltoall_two_step(const AlgorithmParams& params) {
  const int nodes = params.nodes;
  const int gpus = params.gpus_per_node;
  const int n = nodes * gpus;
  const int c = detail::chunks_or(params, 1);
  const bool in_place = detail::in_place_or(params, false);
  Program p("alltoall_two_step", dsl::Collective::alltoall(n, c, in_place), params.options());
  const dsl::Buffer gathered = p.scratch("gathered");
  // In place, a block from a GPU of the same node lands where the gateway's own block for that
  // GPU may not have left yet: it waits in scratch and moves in after step 1. Blocks from other
  // nodes arrive in step 2, after everything they overwrite has gone out in step 1.
  const dsl::Buffer arrived = in_place ? p.scratch("arrived") : gathered;
  auto rank = [&](int node, int gpu) { return node * gpus + gpu; };
  // On the gateway (node, g2), blocks for remote node m sit together, ordered by source GPU.
  auto slot = [&](int node, int m, int g1) {
    return (((m - node - 1 + nodes) % nodes) * gpus + g1) * c;
  };
  dsl::Hints local;
  dsl::Hints remote;
  if (params.channels > 1) {
    local.channel = 0;
    remote.channel = 1;
  }
  // Step 1, over the fast links: blocks for this node go straight to their destination, blocks
  // for node m to the gateway.
  for (int node = 0; node < nodes; ++node) {
    for (int g1 = 0; g1 < gpus; ++g1) {
      const int src = rank(node, g1);
      for (int d = 0; d < gpus; ++d) {
        const int g2 = (g1 + d) % gpus;
        const int gateway = rank(node, g2);
        if (!in_place) {
          p.chunk(src, dsl::input, gateway * c, c).copy(gateway, dsl::output, src * c, local);
        } else if (gateway != src) {
          p.chunk(src, dsl::input, gateway * c, c).copy(gateway, arrived, g1 * c, local);
        }
        for (int m = 0; m < nodes; ++m) {
          if (m == node) continue;
          p.chunk(src, dsl::input, rank(m, g2) * c, c)
              .copy(gateway, gathered, slot(node, m, g1), local);
        }
      }
    }
  }
  if (in_place) {
    for (int node = 0; node < nodes; ++node) {
      for (int g = 0; g < gpus; ++g) {
        for (int g1 = 0; g1 < gpus; ++g1) {
          if (g1 == g) continue;
          p.chunk(rank(node, g), arrived, g1 * c, c)
              .copy(rank(node, g), dsl::output, rank(node, g1) * c);
        }
      }
    }
  }
  // Step 2, over the slow links: one transfer per peer with every block of this node for it.
  for (int node = 0; node < nodes; ++node) {
    for (int g = 0; g < gpus; ++g) {
      for (int e = 1; e < nodes; ++e) {
        const int m = (node + e) % nodes;
        p.chunk(rank(node, g), gathered, slot(node, m, 0), gpus * c)
            .copy(rank(m, g), dsl::output, rank(node, 0) * c, remote);
      }
    }
  }
  return p;
}

}  // namespace weft::algorithms
