// Ring allreduce: every chunk is reduced around the ring (ending fully reduced on the rank before
// its start) and then copied around it again. Chunk k starts at rank k mod N and runs on channel
// k mod channels, so several rings share the links.
#include <algorithm>

#include "common.h"
#include "weft/algorithms/library.h"

namespace weft::algorithms {

Program allreduce_ring(const AlgorithmParams& params) {
  const int n = params.ranks;
  const int channels = params.channels;
  const int chunks = detail::chunks_or(params, n * std::max(1, (channels + n - 1) / n));
  const bool in_place = detail::in_place_or(params, true);
  Program p("allreduce_ring", dsl::Collective::allreduce(n, chunks, in_place), params.options());
  if (!in_place) {
    for (int r = 0; r < n; ++r) p.chunk(r, dsl::input, 0, chunks).copy(r, dsl::output, 0);
  }
  // Step by step, all chunks at once: the order a ring runs in.
  for (int step = 0; step < n - 1; ++step) {
    for (int k = 0; k < chunks; ++k) {
      const int from = (k + step) % n;
      const int to = (from + 1) % n;
      p.chunk(to, dsl::output, k)
          .reduce(p.chunk(from, dsl::output, k), detail::on_channel(k, channels));
    }
  }
  for (int step = 0; step < n - 1; ++step) {
    for (int k = 0; k < chunks; ++k) {
      const int from = (k + n - 1 + step) % n;
      const int to = (from + 1) % n;
      p.chunk(from, dsl::output, k).copy(to, dsl::output, k, detail::on_channel(k, channels));
    }
  }
  return p;
}

}  // namespace weft::algorithms
