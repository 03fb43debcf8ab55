// All-pairs allreduce: a one-shot reduce-scatter through scratch (every rank sends chunk q to rank
// q, which reduces what it received into its own chunk) followed by a one-shot allgather. Two
// message latencies; suits small messages on fully connected GPUs.
#include "common.h"
#include "weft/algorithms/library.h"

namespace weft::algorithms {

Program allreduce_allpairs(const AlgorithmParams& params) {
  const int n = params.ranks;
  // Chunks each rank owns: by default one per rank, up to 8 (the shape of msccl-tools' all-pairs
  // program, n² chunks on a node): each is reduced on its own, side by side with the others, which
  // predicts 1.5 to 1.9 times faster than one chunk per rank on 8 A100s.
  const int per_rank = detail::chunks_or(params, detail::allpairs_chunks(n));
  const bool in_place = detail::in_place_or(params, true);
  Program p("allreduce_allpairs", dsl::Collective::allreduce(n, n * per_rank, in_place),
            params.options());
  const dsl::Buffer scratch = p.scratch("received");
  // Rank q keeps what rank r sent at slot (r - q - 1) mod n of its scratch.
  auto slot = [&](int r, int q) { return ((r - q - 1 + n) % n) * per_rank; };
  for (int r = 0; r < n; ++r) {
    for (int d = 1; d < n; ++d) {
      const int q = (r + d) % n;
      p.chunk(r, dsl::input, q * per_rank, per_rank)
          .copy(q, scratch, slot(r, q), detail::on_channel(q, params.channels));
    }
  }
  for (int q = 0; q < n; ++q) {
    const dsl::ChunkRef own = p.chunk(q, dsl::output, q * per_rank, per_rank);
    if (!in_place) p.chunk(q, dsl::input, q * per_rank, per_rank).copy(own);
    // Each chunk of the block is reduced on its own, starting from a different peer: the
    // reductions of chunk j then follow the receives one threadblock apart from chunk j+1's, so
    // the threadblocks reduce side by side instead of passing one chain along.
    for (int j = 0; j < per_rank; ++j) {
      for (int t = 0; t < n - 1; ++t) {
        const int d = (j + t) % (n - 1) + 1;
        p.chunk(q, dsl::output, q * per_rank + j)
            .reduce(p.chunk(q, scratch, slot((q + d) % n, q) + j));
      }
    }
  }
  for (int q = 0; q < n; ++q) {
    for (int d = 1; d < n; ++d) {
      const int r = (q + d) % n;
      p.chunk(q, dsl::output, q * per_rank, per_rank)
          .copy(r, dsl::output, q * per_rank, detail::on_channel(r, params.channels));
    }
  }
  return p;
}

}  // namespace weft::algorithms
