// A custom collective, "all-to-next": rank i's input ends up in rank i+1's output; rank 0's output
// is left unspecified. Shows how a collective outside NCCL's set is defined by its pre- and
// postcondition and checked like any other.
#include "common.h"
#include "weft/algorithms/library.h"

namespace weft::algorithms {

Program all_to_next(const AlgorithmParams& params) {
  const int n = params.ranks;
  const int c = detail::chunks_or(params, 1);
  dsl::CustomCollective definition;
  definition.name = "alltonext";
  definition.ranks = n;
  definition.input_chunks.assign(static_cast<std::size_t>(n), c);
  definition.output_chunks.assign(static_cast<std::size_t>(n), c);
  definition.postcondition = [](int rank, int index) -> std::vector<ChunkId> {
    if (rank == 0) return {};
    return {ChunkId{rank - 1, index}};
  };
  Program p("all_to_next", dsl::Collective::custom(std::move(definition)), params.options());
  for (int r = 0; r + 1 < n; ++r) {
    for (int k = 0; k < c; ++k) {
      p.chunk(r, dsl::input, k).copy(r + 1, dsl::output, k, detail::on_channel(k, params.channels));
    }
  }
  return p;
}

}  // namespace weft::algorithms
