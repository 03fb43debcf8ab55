// How much host memory a weft-perf run will take, asked before it allocates anything: a run that
// would not fit is refused with the figure and the ways out, instead of growing until the kernel
// kills it (host mode at 1 GB on 8 ranks wanted 24 GB).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "weft/ir/host_memory.h"  // memory_limit, human_bytes: the callers' words
#include "weft/ir/ir.h"
#include "weft/ir/types.h"

namespace weft::perf {

using ir::human_bytes;
using ir::memory_limit;

struct MemoryEstimate {
  std::uint64_t buffers = 0;    // the call's buffers of the ranks in this process (host mode: RAM)
  std::uint64_t reference = 0;  // the CPU reference: initial and expected images of every rank
  std::uint64_t total = 0;      // the largest row's, with the run's overheads (see the .cpp)
};

// The largest row of the sweep. `local_ranks`: the ranks this process holds (emulation and host
// mode: all). `host`: the call's buffers are host memory too (host mode).
MemoryEstimate estimate_memory(const ir::Algorithm& algo, const std::vector<std::size_t>& counts,
                               DataType dtype, int local_ranks, bool check, bool host);

}  // namespace weft::perf
