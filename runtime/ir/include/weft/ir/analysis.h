// Static facts about an IR for `weftc info`, the compiler's summaries and benchmarks.
#pragma once

#include <cstdint>
#include <vector>

#include "weft/ir/ir.h"

namespace weft::ir {

struct RankSummary {
  int rank = 0;
  int threadblocks = 0;
  int steps = 0;  // nops included
  int channels = 0;
  int send_connections = 0;
  int recv_connections = 0;
  double sent_per_count = 0;  // elements sent per element of `count`
  double received_per_count = 0;
};

struct Summary {
  int ranks = 0;
  int channels = 0;      // distinct channels some threadblock uses
  int threadblocks = 0;  // all ranks
  int steps = 0;         // all ranks
  int connections = 0;
  int max_threadblocks_per_rank = 0;
  int max_steps_per_threadblock = 0;
  // Longest chain through program order, deps and messages (k-th send on a connection before its
  // k-th receive), counting real steps: nops only carry dependencies and weigh nothing.
  int critical_path_steps = 0;
  std::vector<RankSummary> per_rank;
};

// `algo` must be valid (an invalid one still gives numbers without crashing; steps on a message
// cycle are left out of the critical path).
Summary summarize(const Algorithm& algo);

}  // namespace weft::ir
