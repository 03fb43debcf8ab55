// Broadcast from a root: a pipelined chain (root → root+1 → ..., chunk after chunk, so every
// link is busy once the pipeline fills) and a binomial tree (in round d every rank that has the
// data sends it d further), also pipelined over chunks.
#include "common.h"
#include "weft/algorithms/library.h"

namespace weft::algorithms {

namespace {

// Out of place, the root's own output needs its input too.
void root_copy(Program& p, int root, int chunks, bool in_place) {
  if (!in_place) p.chunk(root, dsl::input, 0, chunks).copy(root, dsl::output, 0);
}

}  // namespace

Program broadcast_chain(const AlgorithmParams& params) {
  const int n = params.ranks;
  const int root = params.root;
  const int chunks = detail::chunks_or(params, n);
  const bool in_place = detail::in_place_or(params, true);
  Program p("broadcast_chain", dsl::Collective::broadcast(n, root, chunks, in_place),
            params.options());
  root_copy(p, root, chunks, in_place);
  for (int k = 0; k < chunks; ++k) {
    for (int step = 0; step < n - 1; ++step) {
      const int from = (root + step) % n;
      const int to = (from + 1) % n;
      const dsl::Buffer source = step == 0 ? dsl::input : dsl::output;
      p.chunk(from, source, k).copy(to, dsl::output, k, detail::on_channel(k, params.channels));
    }
  }
  return p;
}

Program broadcast_binomial_tree(const AlgorithmParams& params) {
  const int n = params.ranks;
  const int root = params.root;
  const int chunks = detail::chunks_or(params, 4);
  const bool in_place = detail::in_place_or(params, true);
  Program p("broadcast_binomial_tree", dsl::Collective::broadcast(n, root, chunks, in_place),
            params.options());
  root_copy(p, root, chunks, in_place);
  for (int k = 0; k < chunks; ++k) {
    for (int d = 1; d < n; d *= 2) {
      // Ranks (relative to the root) below d have the chunk; each sends it d further.
      for (int v = 0; v < d && v + d < n; ++v) {
        const int from = (root + v) % n;
        const int to = (root + v + d) % n;
        const dsl::Buffer source = v == 0 ? dsl::input : dsl::output;
        p.chunk(from, source, k).copy(to, dsl::output, k, detail::on_channel(k, params.channels));
      }
    }
  }
  return p;
}

}  // namespace weft::algorithms
