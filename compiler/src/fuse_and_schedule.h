// Fusion and one global order of the steps (fuse.h, schedule.h), tried together because fusion
// can make the messages between two ranks impossible to keep in one order: the driver schedules
// the lowered DAG with it, and the channel plan search (plan_search.h) again for the DAG with one
// channel per data chain.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "weft/compiler/forward.h"
#include "weft/compiler/fuse.h"
#include "weft/compiler/instruction_dag.h"
#include "weft/compiler/schedule.h"

namespace weft::compiler::detail {

// Records the time since the previous lap under a pass's name (CompileResult::pass_seconds).
using Lap = std::function<void(const char*)>;

// A fused DAG (as far as a schedule allows) and one global order of it, from the lowered DAG and
// its forwarded copies (null: nothing forwarded).
struct Scheduled {
  InstructionDag dag;
  std::optional<Schedule> schedule;  // none: no order of messages between ranks holds
  FuseStats fused;
  ForwardStats forwarded;
  std::vector<std::string> notes;                     // each fallback taken, and why
  ScheduleOrder order = ScheduleOrder::CriticalPath;  // the order asked for first
  // The FIFO depth the order keeps room for (schedule.h); 0: unbounded, so that deadlock freedom
  // at depth 2 rests on the executor alone.
  int fifo_depth = 2;
  // Asked for unbounded: a candidate only where the executor shows it completes at depth 2.
  bool unbounded = false;
  // Fused by msccl-tools' rule (msccl_unfused_sends), not Weft's.
  bool msccl_fusion = false;
  // The attempt that held, as the notes name attempts: "fused, critical path, FIFO depth 2".
  std::string attempt;
};

// Fused and in order `first` (critical path or level) first; program order and no fusion are the
// fallbacks when the messages between two ranks cannot keep one order. `unbounded`: without the
// FIFO depth 2 the order otherwise keeps room for (as msccl-tools orders: a send need not wait for
// a receive between the same ranks); the result must then be shown to complete at depth 2.
// `msccl_fusion`: only the fusions msccl-tools makes (fuse.h).
Scheduled fuse_and_schedule(const InstructionDag& lowered, const InstructionDag* forwarded,
                            const ForwardStats& forward_stats, bool fusion, ScheduleOrder first,
                            const Lap& lap, bool unbounded = false, bool msccl_fusion = false);

// Whether two schedules are the same steps in the same order (the orders often agree).
bool same_schedule(const Scheduled& a, const Scheduled& b);

}  // namespace weft::compiler::detail
