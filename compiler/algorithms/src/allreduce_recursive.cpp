// Recursive halving (reduce-scatter) then recursive doubling (allgather), for a power-of-two rank
// count: log2(N) rounds each, exchanging half the remaining data with the partner rank ^ d.
#include <algorithm>
#include <vector>

#include "common.h"
#include "weft/algorithms/library.h"

namespace weft::algorithms {

Program allreduce_recursive_halving_doubling(const AlgorithmParams& params) {
  const int n = params.ranks;
  const int chunks = n * detail::chunks_or(params, 1);
  const bool in_place = detail::in_place_or(params, true);
  Program p("allreduce_recursive_halving_doubling", dsl::Collective::allreduce(n, chunks, in_place),
            params.options());
  if (!in_place) {
    for (int r = 0; r < n; ++r) p.chunk(r, dsl::input, 0, chunks).copy(r, dsl::output, 0);
  }
  // The range of chunks each rank is responsible for, halved every round.
  std::vector<int> lo(static_cast<std::size_t>(n), 0);
  std::vector<int> hi(static_cast<std::size_t>(n), chunks);
  std::vector<int> distances;
  for (int d = n / 2; d >= 1; d /= 2) distances.push_back(d);
  for (const int d : distances) {
    std::vector<int> next_lo = lo;
    std::vector<int> next_hi = hi;
    for (int r = 0; r < n; ++r) {
      const auto ur = static_cast<std::size_t>(r);
      const int mid = lo[ur] + (hi[ur] - lo[ur]) / 2;
      const bool lower = (r & d) == 0;
      next_lo[ur] = lower ? lo[ur] : mid;
      next_hi[ur] = lower ? mid : hi[ur];
      // Keep one half: reduce the partner's copy of it into ours.
      const int size = next_hi[ur] - next_lo[ur];
      p.chunk(r, dsl::output, next_lo[ur], size)
          .reduce(p.chunk(r ^ d, dsl::output, next_lo[ur], size),
                  detail::on_channel(0, params.channels));
    }
    lo = next_lo;
    hi = next_hi;
  }
  for (auto it = distances.rbegin(); it != distances.rend(); ++it) {
    const int d = *it;
    std::vector<int> next_lo = lo;
    std::vector<int> next_hi = hi;
    for (int r = 0; r < n; ++r) {
      const auto ur = static_cast<std::size_t>(r);
      const auto up = static_cast<std::size_t>(r ^ d);
      // Send what we hold to the partner; both then hold the union.
      p.chunk(r, dsl::output, lo[ur], hi[ur] - lo[ur])
          .copy(r ^ d, dsl::output, lo[ur], detail::on_channel(0, params.channels));
      next_lo[ur] = std::min(lo[ur], lo[up]);
      next_hi[ur] = std::max(hi[ur], hi[up]);
    }
    lo = next_lo;
    hi = next_hi;
  }
  return p;
}

}  // namespace weft::algorithms
