// Allgather: ring (each rank's block travels around the ring), direct (each rank sends its block
// to every other rank at once) and recursive doubling (log2 N rounds, exchanging everything held
// so far with rank ^ d).
#include "common.h"
#include "weft/algorithms/library.h"

namespace weft::algorithms {

namespace {

// Out of place, a rank's own block must also land in its output.
void copy_own_blocks(Program& p, int n, int c, bool in_place) {
  if (in_place) return;
  for (int r = 0; r < n; ++r) p.chunk(r, dsl::input, 0, c).copy(r, dsl::output, r * c);
}

}  // namespace

Program allgather_ring(const AlgorithmParams& params) {
  const int n = params.ranks;
  const int c = detail::chunks_or(params, params.channels);
  const bool in_place = detail::in_place_or(params, true);
  Program p("allgather_ring", dsl::Collective::allgather(n, c, in_place), params.options());
  copy_own_blocks(p, n, c, in_place);
  for (int step = 0; step < n - 1; ++step) {
    for (int origin = 0; origin < n; ++origin) {
      const int from = (origin + step) % n;
      const int to = (from + 1) % n;
      for (int j = 0; j < c; ++j) {
        const int k = origin * c + j;
        p.chunk(from, dsl::output, k)
            .copy(to, dsl::output, k, detail::on_channel(k, params.channels));
      }
    }
  }
  return p;
}

Program allgather_direct(const AlgorithmParams& params) {
  const int n = params.ranks;
  const int c = detail::chunks_or(params, 1);
  const bool in_place = detail::in_place_or(params, true);
  Program p("allgather_direct", dsl::Collective::allgather(n, c, in_place), params.options());
  copy_own_blocks(p, n, c, in_place);
  for (int r = 0; r < n; ++r) {
    for (int d = 1; d < n; ++d) {
      const int q = (r + d) % n;
      p.chunk(r, dsl::input, 0, c)
          .copy(q, dsl::output, r * c, detail::on_channel(q, params.channels));
    }
  }
  return p;
}

Program allgather_recursive_doubling(const AlgorithmParams& params) {
  const int n = params.ranks;
  const int c = detail::chunks_or(params, 1);
  const bool in_place = detail::in_place_or(params, true);
  Program p("allgather_recursive_doubling", dsl::Collective::allgather(n, c, in_place),
            params.options());
  copy_own_blocks(p, n, c, in_place);
  for (int d = 1; d < n; d *= 2) {
    for (int r = 0; r < n; ++r) {
      // Before this round a rank holds the d blocks of its aligned group.
      const int first = (r / d) * d;
      p.chunk(r, dsl::output, first * c, d * c)
          .copy(r ^ d, dsl::output, first * c, detail::on_channel(0, params.channels));
    }
  }
  return p;
}

}  // namespace weft::algorithms
