// NCCL's own algorithms as contenders of `weftc tune` and the baseline of `weftc simulate`:
// its ring and tree with each protocol, timed by NCCL's own cost model on the topology
// (runtime/include/weft/runtime/predict/nccl_model.h).
#pragma once

#include <cstdint>
#include <vector>

#include "weft/runtime/predict/topology.h"
#include "weft/runtime/predict/tuning.h"

namespace weft::weftc {

std::vector<predict::Contender> nccl_contenders(const predict::Topology& topology,
                                                ir::Collective collective,
                                                const std::vector<std::uint64_t>& sizes);

}  // namespace weft::weftc
