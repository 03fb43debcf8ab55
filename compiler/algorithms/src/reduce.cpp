// Reduce to a root: a pipelined chain (partial sums flow from the rank farthest from the root
// toward it) and a binomial tree (in round d, rank v with bit d set sends its partial sum to
// v - d), pipelined over chunks. Partial sums travel through the inputs of the ranks on the way;
// fusion keeps them in flight, so only the root stores a result.
#include "common.h"
#include "weft/algorithms/library.h"

namespace weft::algorithms {

namespace {

// Where rank `rank` accumulates: its input on the way, the root's output at the end.
dsl::ChunkRef accumulator(Program& p, int rank, int root, int k) {
  return p.chunk(rank, rank == root ? dsl::output : dsl::input, k);
}

void root_copy(Program& p, int root, int chunks, bool in_place) {
  if (!in_place) p.chunk(root, dsl::input, 0, chunks).copy(root, dsl::output, 0);
}

}  // namespace

Program reduce_chain(const AlgorithmParams& params) {
  const int n = params.ranks;
  const int root = params.root;
  const int chunks = detail::chunks_or(params, n);
  const bool in_place = detail::in_place_or(params, true);
  Program p("reduce_chain", dsl::Collective::reduce(n, root, chunks, in_place), params.options());
  root_copy(p, root, chunks, in_place);
  for (int k = 0; k < chunks; ++k) {
    // Relative rank v = n-1 starts; each hop reduces into v - 1, ending at the root (v = 0).
    for (int v = n - 1; v >= 1; --v) {
      const int from = (root + v) % n;
      const int to = (root + v - 1) % n;
      accumulator(p, to, root, k)
          .reduce(accumulator(p, from, root, k), detail::on_channel(k, params.channels));
    }
  }
  return p;
}

Program reduce_binomial_tree(const AlgorithmParams& params) {
  const int n = params.ranks;
  const int root = params.root;
  const int chunks = detail::chunks_or(params, 4);
  const bool in_place = detail::in_place_or(params, true);
  Program p("reduce_binomial_tree", dsl::Collective::reduce(n, root, chunks, in_place),
            params.options());
  root_copy(p, root, chunks, in_place);
  int top = 1;
  while (top < n) top *= 2;
  for (int k = 0; k < chunks; ++k) {
    for (int d = 1; d < top; d *= 2) {
      // Relative ranks v with v mod 2d == d send to v - d.
      for (int v = d; v < n; v += 2 * d) {
        const int from = (root + v) % n;
        const int to = (root + v - d) % n;
        accumulator(p, to, root, k)
            .reduce(accumulator(p, from, root, k), detail::on_channel(k, params.channels));
      }
    }
  }
  return p;
}

}  // namespace weft::algorithms
