// Reduce-scatter: ring (block q is reduced around the ring, ending on rank q) and all-pairs
// (every rank sends block q to rank q's scratch; rank q reduces what it received).
#include "common.h"
#include "weft/algorithms/library.h"

namespace weft::algorithms {

Program reducescatter_ring(const AlgorithmParams& params) {
  const int n = params.ranks;
  const int c = detail::chunks_or(params, params.channels);
  const bool in_place = detail::in_place_or(params, true);
  Program p("reducescatter_ring", dsl::Collective::reducescatter(n, c, in_place), params.options());
  // Partial sums travel through the inputs; fusion keeps them in flight (rrs), so only the last
  // rank of each chain stores anything.
  for (int step = 0; step < n - 1; ++step) {
    for (int q = 0; q < n; ++q) {
      const int from = (q + 1 + step) % n;
      const int to = (from + 1) % n;
      for (int j = 0; j < c; ++j) {
        const int k = q * c + j;
        const dsl::Hints hints = detail::on_channel(k, params.channels);
        if (to == q && !in_place) {
          const dsl::ChunkRef result = p.chunk(q, dsl::output, j);
          p.chunk(q, dsl::input, k).copy(result);
          result.reduce(p.chunk(from, dsl::input, k), hints);
        } else {
          p.chunk(to, dsl::input, k).reduce(p.chunk(from, dsl::input, k), hints);
        }
      }
    }
  }
  if (n == 1 && !in_place) p.chunk(0, dsl::input, 0, c).copy(0, dsl::output, 0);
  return p;
}

Program reducescatter_allpairs(const AlgorithmParams& params) {
  const int n = params.ranks;
  // By default as allreduce_allpairs: one chunk per rank, up to 8, reduced side by side.
  const int c = detail::chunks_or(params, detail::allpairs_chunks(n));
  const bool in_place = detail::in_place_or(params, true);
  Program p("reducescatter_allpairs", dsl::Collective::reducescatter(n, c, in_place),
            params.options());
  const dsl::Buffer scratch = p.scratch("received");
  auto slot = [&](int r, int q) { return ((r - q - 1 + n) % n) * c; };
  for (int r = 0; r < n; ++r) {
    for (int d = 1; d < n; ++d) {
      const int q = (r + d) % n;
      p.chunk(r, dsl::input, q * c, c)
          .copy(q, scratch, slot(r, q), detail::on_channel(q, params.channels));
    }
  }
  for (int q = 0; q < n; ++q) {
    const dsl::ChunkRef result = p.chunk(q, dsl::output, 0, c);
    if (!in_place) p.chunk(q, dsl::input, q * c, c).copy(result);
    // Chunk j's reductions start from a different peer than chunk j+1's, so that with --chunks
    // the threadblocks that received them reduce side by side (as in allreduce_allpairs).
    for (int j = 0; j < c; ++j) {
      for (int t = 0; t < n - 1; ++t) {
        const int d = (j + t) % (n - 1) + 1;
        p.chunk(q, dsl::output, j).reduce(p.chunk(q, scratch, slot((q + d) % n, q) + j));
      }
    }
  }
  return p;
}

}  // namespace weft::algorithms
