// The schedule pass: one global order of all instructions, from which every threadblock takes its
// steps. A list scheduler picks, among ready instructions, the one with the longest path to a
// sink (critical path); a receive is ready only once it is the next message between its two
// ranks, so every connection's sends and receives come in the same order whatever channels and
// threadblocks are chosen later. With a FIFO depth D, a send is ready only while fewer than D
// messages between its two ranks are in flight: the order is then itself an execution that never
// overfills a FIFO of depth D, and since every step, once able to run, stays able until it runs,
// no interleaving of any threadblock assignment taken from it can deadlock at depth D or more.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/compiler/instruction_dag.h"

namespace weft::compiler {

enum class ScheduleOrder {
  CriticalPath,  // longest path to a sink first, ties in program order
  ProgramOrder,  // as recorded
  // Level by level: fewest instructions from a source first (a chunk's first hop before any
  // second hop), ties by the longest path to a sink, then program order. The order MSCCLang's
  // own compiler gives, which keeps a threadblock's receives ahead of the reductions that wait
  // for other threadblocks' receives.
  Level,
};
std::string_view to_string(ScheduleOrder order);  // "critical path", "program order", "level"

// Per instruction, the longest path (in instructions) from a source: dependencies and messages.
// What the level order sorts by first (msccl-tools' chunk step).
std::vector<int> instruction_levels(const InstructionDag& dag);

struct Schedule {
  std::vector<int> order;     // instruction indices, first to last
  std::vector<int> position;  // position[i]: where instruction i is in `order`
  std::vector<int> priority;  // longest path (in instructions) from i to a sink
};

// Nothing when the order of messages between two ranks cannot be kept (a program whose receives
// need another order than its sends); `why` then says which.
struct ScheduleOptions {
  ScheduleOrder order = ScheduleOrder::CriticalPath;
  int fifo_depth = 2;  // messages in flight between two ranks; 0: unbounded
};

std::optional<Schedule> schedule(const InstructionDag& dag, const ScheduleOptions& options,
                                 std::string* why = nullptr);

// Where a schedule got stuck: `why`, and the instructions left waiting: sends (fused steps
// included) that found no room between their two ranks, and receives at the head of their FIFO
// whose other inputs never came. A fused step among them is a fusion to undo.
struct ScheduleFailure {
  std::string why;
  std::vector<int> waiting_sends;
  std::vector<int> stuck_receives;
};
std::optional<Schedule> schedule(const InstructionDag& dag, const ScheduleOptions& options,
                                 ScheduleFailure* failure);

}  // namespace weft::compiler
