// Static facts about an IR for `weftc info`, the compiler's summaries and benchmarks.
#pragma once

#include <cstdint>
#include <vector>

#include "weft/runtime/ir.h"

namespace weft::ir {

struct RankSummary {
  int rank = 0;
  int threadblocks = 0;
  int steps = 0;  // nops included
  int channels = 0;
  int send_connections = 0;
  int recv_connections = 0;
  double sent_per_count = 0;      // elements sent per element of `count`
  double received_per_count = 0;
};

struct Summary {
  int ranks = 0;
  int channels = 0;
  int threadblocks = 0;  // all ranks
  int steps = 0;         // all ranks
  int connections = 0;
  int max_threadblocks_per_rank = 0;
  int max_steps_per_threadblock = 0;
  int critical_path_steps = 0;  // longest chain through program order, deps and messages
  std::vector<RankSummary> per_rank;
};

// `algo` must be valid.
Summary summarize(const Algorithm& algo);

}  // namespace weft::ir
