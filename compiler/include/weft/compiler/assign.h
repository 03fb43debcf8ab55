// The assign pass: a channel and a threadblock for every instruction, obeying docs/architecture.md
// §2.4 (a threadblock has at most one send peer, one receive peer and one channel; each connection
// is driven by one threadblock per direction on each rank).
//
// Channels: instructions linked by messages and fused steps form chains that must share a
// channel. A chain takes its hint; the others follow a ChannelPlan, which the pipeline widens
// until the limits profile is met. Threadblocks (Auto policy): a fused step joins its receive and
// send connections; a send and a receive connection with the same peer share a threadblock (unless
// the placement is Separate);
// local steps (cpy, re) join the threadblock of what they depend on (or of what depends on
// them). Hints are honoured; under the Manual policy every operation must carry them, and an
// impossible assignment is a CompileError naming the operation.
#pragma once

#include <vector>

#include "weft/compiler/instruction_dag.h"
#include "weft/compiler/schedule.h"
#include "weft/dsl/options.h"

namespace weft::compiler {

// How unhinted chains spread over channels: `spread` channels; by peer (channel follows the
// distance between the two ranks), and when `by_volume`, also by how many chains share a pair
// of ranks: a pair's chains move to the next channel every `per_channel` chains (at least
// chains/spread), so that a busy connection is cut over several channels and a quiet one is not.
struct ChannelPlan {
  int spread = 1;
  bool by_volume = false;
  int per_channel = 1;
};

struct ThreadblockInfo {
  int send = -1;
  int recv = -1;
  int channel = 0;
};

struct Assignment {
  std::vector<int> channel;      // per instruction
  std::vector<int> threadblock;  // per instruction: its rank's threadblock id
  std::vector<std::vector<ThreadblockInfo>> threadblocks;  // per rank
  int channels = 1;                                        // highest channel + 1
  // Whether some threadblock took a send and a receive because they had the same peer (Paired):
  // Separate would then differ.
  bool paired_directions = false;
};

// `placement`: Paired, Separate or Msccl (dsl::Placement; Auto is the pipeline's choice among
// them).
Assignment assign(const InstructionDag& dag, const Schedule& schedule,
                  dsl::ThreadblockPolicy policy, const ChannelPlan& plan,
                  dsl::Placement placement = dsl::Placement::Paired);

// The longest chain of steps through threadblock order, dependencies and messages: what
// `weftc info` reports as the critical path of the IR this assignment becomes (nops, which only
// carry dependencies, weigh nothing, and the waits they carry are among the dependencies).
int critical_path(const InstructionDag& dag, const Schedule& schedule,
                  const Assignment& assignment);

}  // namespace weft::compiler
