#include "weft/algorithms/msccl_ports.h"

#include <string>

namespace weft::algorithms {

dsl::Program msccl_alltoall_two_step(int nodes, int gpus_per_node, dsl::Options options) {
  const int g = gpus_per_node;
  dsl::Program p("msccl_alltoall_two_step", dsl::Collective::alltoall(nodes * g), options);
  auto rank = [g](int node, int gpu) { return node * g + gpu; };
  for (int n1 = 0; n1 < nodes; ++n1) {
    for (int n2 = 0; n2 < nodes; ++n2) {
      if (n2 == n1) continue;
      const std::string gathered = "to_node_" + std::to_string(n2);
      for (int g1 = 0; g1 < g; ++g1) {
        for (int g2 = 0; g2 < g; ++g2)
          p.chunk(rank(n1, g1), dsl::input, rank(n2, g2))
              .copy(rank(n1, g2), gathered, dsl::next_free);
      }
      for (int g2 = 0; g2 < g; ++g2) {
        const dsl::ChunkRef all = p.chunk(rank(n1, g2), gathered, 0, g);
        all.copy(all.dst_rank(), dsl::output, all.dst_index());
      }
    }
    for (int g1 = 0; g1 < g; ++g1) {
      for (int g2 = 0; g2 < g; ++g2) {
        const dsl::ChunkRef local = p.chunk(rank(n1, g1), dsl::input, rank(n1, g2));
        local.copy(local.dst_rank(), dsl::output, local.dst_index());
      }
    }
  }
  return p;
}

dsl::Program msccl_alltoall_three_step(int nodes, int gpus_per_node, dsl::Options options) {
  const int g = gpus_per_node;
  dsl::Program p("msccl_alltoall_three_step", dsl::Collective::alltoall(nodes * g), options);
  auto rank = [g](int node, int gpu) { return node * g + gpu; };
  // The GPU of node n1 that handles its traffic with node n2 (and, on n2, the same for n1).
  auto cross = [&](int n1, int n2) { return rank(n1, (n2 > n1 ? n2 - 1 : n2) % g); };
  auto buffer = [](int n1, int n2) {
    return "ib_" + std::to_string(n1) + "_" + std::to_string(n2);
  };
  for (int n1 = 0; n1 < nodes; ++n1) {
    for (int g1 = 0; g1 < g; ++g1) {
      for (int n2 = 0; n2 < nodes; ++n2) {
        if (n2 != n1) {
          p.chunk(rank(n1, g1), dsl::input, rank(n2, 0), g)
              .copy(cross(n1, n2), buffer(n1, n2), dsl::next_free);
          continue;
        }
        for (int g2 = 0; g2 < g; ++g2) {
          const dsl::ChunkRef local = p.chunk(rank(n1, g1), dsl::input, rank(n1, g2));
          local.copy(local.dst_rank(), dsl::output, local.dst_index());
        }
      }
    }
  }
  for (int n1 = 0; n1 < nodes; ++n1) {
    for (int n2 = 0; n2 < nodes; ++n2) {
      if (n2 == n1) continue;
      const dsl::ChunkRef arrived =
          p.chunk(cross(n1, n2), buffer(n1, n2), 0, g * g).copy(cross(n2, n1), buffer(n1, n2), 0);
      for (const dsl::ChunkRef& c : arrived.split(g * g))
        c.copy(c.dst_rank(), dsl::output, c.dst_index());
    }
  }
  return p;
}

}  // namespace weft::algorithms
