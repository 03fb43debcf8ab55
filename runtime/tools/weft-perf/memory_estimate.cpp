#include "memory_estimate.h"

#include <algorithm>

#include "weft/ir/geometry.h"

namespace weft::perf {
namespace {

// Every rank's input, output and scratch extent at one count: what the executor lays out per
// rank (RankBuffers) and, give or take the in-place call's smaller layout, what the device holds.
std::uint64_t all_buffers(const ir::Algorithm& algo, std::size_t count, std::size_t element) {
  const auto m = static_cast<std::uint64_t>(std::max(ir::count_multiplier(algo), 1));
  const auto chunks = static_cast<std::uint64_t>(std::max(algo.nchunksperloop, 1));
  const std::uint64_t chunk = count * m / chunks * element;
  std::uint64_t bytes = 0;
  for (int rank = 0; rank < algo.ngpus; ++rank) {
    const auto extent = ir::input_extent_chunks(algo, rank) + ir::output_extent_chunks(algo, rank) +
                        ir::scratch_extent_chunks(algo, rank);
    bytes += static_cast<std::uint64_t>(std::max(extent, 0)) * chunk;
  }
  return bytes;
}

}  // namespace

MemoryEstimate estimate_memory(const ir::Algorithm& algo, const std::vector<std::size_t>& counts,
                               DataType dtype, int local_ranks, bool check, bool host) {
  MemoryEstimate best;
  const std::size_t element = size_of(dtype);
  for (const std::size_t count : counts) {
    const std::uint64_t every = all_buffers(algo, count, element);
    MemoryEstimate e;
    e.buffers = every / static_cast<std::uint64_t>(std::max(algo.ngpus, 1)) *
                static_cast<std::uint64_t>(local_ranks);
    // The reference holds each rank's initial image and the expected one (reference.h), and the
    // executor works in the latter.
    e.reference = check ? 2 * every : 0;
    // Measured peaks in host mode (ring at 64 MB on 4 ranks; all-pairs, with scratch, at 32 MB
    // on 8): about 1.5x the buffers without a check (the staging of fills and uploads), and
    // 0.75x to 1.1x the reference more with one (the downloads compared with it). A tenth more
    // for what varies by algorithm: the estimate came out 8 to 35 % above those peaks.
    const double staged = host ? 1.5 * static_cast<double>(e.buffers) : 0.0;
    e.total = static_cast<std::uint64_t>(
        1.1 * (staged + (check ? 1.1 : 0.0) * static_cast<double>(e.reference)));
    if (e.total > best.total) best = e;
  }
  return best;
}

}  // namespace weft::perf
