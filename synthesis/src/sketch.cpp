#include "weft/synthesis/sketch.h"

#include <stdexcept>
#include <string_view>

#include "weft/dsl/buffer.h"

namespace weft::synthesis {

namespace {

dsl::Hints on(int channel) {
  dsl::Hints hints;
  hints.channel = channel;
  return hints;
}

dsl::Collective collective_of(const Sketch& s, bool in_place) {
  switch (s.collective) {
    case ir::Collective::AllGather:
      return dsl::Collective::allgather(s.ranks, s.pieces, in_place);
    case ir::Collective::ReduceScatter:
      return dsl::Collective::reducescatter(s.ranks, s.pieces, in_place);
    case ir::Collective::AllReduce:
      return dsl::Collective::allreduce(s.ranks, s.ranks * s.pieces, in_place);
    case ir::Collective::AllToAll:
      return dsl::Collective::alltoall(s.ranks, s.pieces, in_place);
    default:
      throw std::invalid_argument("sketches are for allgather, reducescatter, allreduce, alltoall");
  }
}

// Local copies go piece by piece: a step's count sets how small the runtime cuts every step's
// tile (one FIFO slot holds count × tile), so one copy of a whole block would shrink all tiles.
void copy_pieces(dsl::Program& p, int rank, dsl::Buffer from, int from_index, dsl::Buffer to,
                 int to_index, int count) {
  for (int i = 0; i < count; ++i) p.chunk(rank, from, from_index + i).copy(rank, to, to_index + i);
}

void allgather(dsl::Program& p, const Sketch& s, bool in_place) {
  const int c = s.pieces;
  if (!in_place) {
    for (int r = 0; r < s.ranks; ++r) copy_pieces(p, r, dsl::input, 0, dsl::output, r * c, c);
  }
  for (const Route& route : s.routes) {
    const int k = route.root * c + route.piece;
    for (const Hop& hop : route.hops) {
      p.chunk(hop.from, dsl::output, k, route.count).copy(hop.to, dsl::output, k, on(hop.channel));
    }
  }
}

// The hops in the order a backwards pass reduces them: the tree's from last to first, so that
// every GPU has what its subtree sends before it sends on; with Route::partials_first, the hops
// within the root's node after all the others (reductions into one piece commute).
std::vector<const Hop*> backwards(const Route& route) {
  std::vector<const Hop*> order;
  order.reserve(route.hops.size());
  for (auto hop = route.hops.rbegin(); hop != route.hops.rend(); ++hop) {
    if (!route.partials_first || !hop->in_root_node) order.push_back(&*hop);
  }
  if (route.partials_first) {
    for (auto hop = route.hops.rbegin(); hop != route.hops.rend(); ++hop) {
      if (hop->in_root_node) order.push_back(&*hop);
    }
  }
  return order;
}

// Partial sums travel through the inputs (as the library's rings do); the root's result lands
// in its output, which out of place starts as a copy of its own input piece.
void reducescatter(dsl::Program& p, const Sketch& s, bool in_place) {
  const int c = s.pieces;
  for (const Route& route : s.routes) {
    const int k = route.root * c + route.piece;
    const int n = route.count;
    if (!in_place) {
      copy_pieces(p, route.root, dsl::input, k, dsl::output, route.piece, n);
    }
    for (const Hop* hop : backwards(route)) {
      const dsl::ChunkRef into = hop->from == route.root && !in_place
                                     ? p.chunk(route.root, dsl::output, route.piece, n)
                                     : p.chunk(hop->from, dsl::input, k, n);
      into.reduce(p.chunk(hop->to, dsl::input, k, n), on(hop->channel));
    }
  }
}

void allreduce(dsl::Program& p, const Sketch& s, bool in_place) {
  const int total = s.ranks * s.pieces;
  if (!in_place) {
    for (int r = 0; r < s.ranks; ++r) copy_pieces(p, r, dsl::input, 0, dsl::output, 0, total);
  }
  for (const Route& route : s.routes) {
    const int k = route.root * s.pieces + route.piece;
    const int n = route.count;
    for (const Hop* hop : backwards(route)) {
      p.chunk(hop->from, dsl::output, k, n)
          .reduce(p.chunk(hop->to, dsl::output, k, n), on(hop->channel));
    }
  }
  // The gather runs on channels of its own, after the scatter's: its threadblocks then start a
  // tile's sends as soon as the reduced piece is there, not after the scatter's steps of the tile.
  for (const Route& route : s.routes) {
    const int k = route.root * s.pieces + route.piece;
    for (const Hop& hop : route.hops) {
      p.chunk(hop.from, dsl::output, k, route.count)
          .copy(hop.to, dsl::output, k, on(s.channels + hop.channel));
    }
  }
}

// A piece relayed on its way waits in the relay's scratch; in place, arrivals wait in scratch
// too until everything the destination sends has left, then move into the output.
void alltoall(dsl::Program& p, const Sketch& s, bool in_place) {
  const int c = s.pieces;
  // Named, not declared: a scratch buffer exists only once a piece is written to it.
  const std::string_view relayed = "relayed";
  const std::string_view arrived = "arrived";
  if (!in_place) {
    for (int r = 0; r < s.ranks; ++r) copy_pieces(p, r, dsl::input, r * c, dsl::output, r * c, c);
  }
  for (const Route& route : s.routes) {
    const int dst = route.piece / c;
    const int j = route.piece % c;
    dsl::ChunkRef held = p.chunk(route.root, dsl::input, route.piece);
    for (const Hop& hop : route.hops) {
      if (hop.to == dst) {
        held = in_place ? held.copy(dst, arrived, route.root * c + j, on(hop.channel))
                        : held.copy(dst, dsl::output, route.root * c + j, on(hop.channel));
      } else {
        held = held.copy(hop.to, relayed, dsl::next_free, on(hop.channel));
      }
    }
  }
  if (in_place) {
    for (int dst = 0; dst < s.ranks; ++dst) {
      for (int src = 0; src < s.ranks; ++src) {
        if (src == dst) continue;
        for (int j = 0; j < c; ++j) {
          p.chunk(dst, arrived, src * c + j).copy(dst, dsl::output, src * c + j);
        }
      }
    }
  }
}

}  // namespace

dsl::Program to_program(const Sketch& sketch, const dsl::Options& options, bool in_place) {
  dsl::Program p(sketch.name, collective_of(sketch, in_place), options);
  switch (sketch.collective) {
    case ir::Collective::AllGather:
      allgather(p, sketch, in_place);
      break;
    case ir::Collective::ReduceScatter:
      reducescatter(p, sketch, in_place);
      break;
    case ir::Collective::AllReduce:
      allreduce(p, sketch, in_place);
      break;
    default:
      alltoall(p, sketch, in_place);
      break;
  }
  return p;
}

}  // namespace weft::synthesis
