// Runs a plan on host buffers (docs/architecture.md §2.3–2.6, §3): one threadblock step at a time,
// chosen by seeded priorities among the runnable ones (ready_set.h), each threadblock replaying its
// step list tile after tile, connections as FIFOs of bounded depth. Blocked threadblocks wait on
// the connection or the threadblock they need and are woken when it changes, never polled: a
// step costs O(log n) for n threadblocks (the ready heap and the dependency waiters), whatever
// the number of blocked ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "element_ops.h"
#include "weft/cpu/cpu_executor.h"
#include "weft/cpu/plan.h"

namespace weft::cpu::detail {

struct ScheduleOptions {
  std::size_t chunk_elements = 0;
  std::size_t tile_elements = 0;
  int fifo_depth = 0;  // 0: unbounded
  std::uint64_t seed = 0;
  bool record_trace = false;
  bool check_races = false;  // run a RaceDetector alongside (race_detector.h)
  // false: completion only. Steps run, wait and pass messages as always, but move no data (the
  // buffers are left as they are): whether a run completes does not depend on the data.
  bool move_data = true;
};

// Tiles of `tile_elements` that cover a chunk of `chunk_elements` (the last one may be short).
inline std::size_t tile_count(std::size_t chunk_elements, std::size_t tile_elements) {
  return chunk_elements / tile_elements + (chunk_elements % tile_elements != 0 ? 1 : 0);
}

// Empty when buffers of `chunk_elements`-element chunks can be addressed for every rank of
// `layout`; otherwise why not (sizes that overflow or exceed any real memory).
std::string check_call_size(const Plan& plan, const ModeLayout& layout, std::size_t chunk_elements,
                            std::size_t element_size);

// Empty when `buffers` has one entry per rank with input and output sized as `layout` says for
// chunks of `chunk_elements` elements of `element_size` bytes; otherwise what is wrong.
std::string check_buffer_sizes(const Plan& plan, const ModeLayout& layout,
                               std::size_t chunk_elements, std::size_t element_size,
                               const std::vector<RankBuffers>& buffers);

// `buffers` hold each rank's real input and output buffers, sized for `layout`; scratch is
// allocated here, poisoned. Outcome Pass, Deadlock, Error, or Race (with check_races, when the
// run completed but two threadblocks' accesses race); results are not checked.
RunResult run_schedule(const Plan& plan, const ModeLayout& layout, const ElementOps& ops,
                       const ScheduleOptions& options, std::vector<RankBuffers>& buffers);

}  // namespace weft::cpu::detail
