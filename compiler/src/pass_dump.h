// Text forms of the program as it stands after each pass, for CompileOptions::dump_after
// (docs/dsl.md, "Watching the passes"). Each renders the whole state, a line per operation,
// instruction, schedule position, threadblock or step, in the domain's words (rank, chunk, channel,
// threadblock, connection, step): a person reads them, so the layout may change between versions;
// only emit's XML is a format.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fuse_and_schedule.h"
#include "plan_search.h"
#include "weft/compiler/instruction_dag.h"
#include "weft/compiler/verify.h"
#include "weft/dsl/postcondition.h"
#include "weft/dsl/program.h"
#include "weft/ir/ir.h"

namespace weft::compiler::detail {

// The trace (every operation, in program order, with its slots, size, hints and call site) and the
// postcondition's verdict on it.
std::string dump_trace(const dsl::Program& program, const dsl::PostconditionReport& postcondition);

// Every instruction of `dag`: its rank, step type, slots, count, the message it sends or receives
// (peer and instruction), the same-rank instructions it follows, hints and the operation it came
// from. `title` says which DAG it is.
std::string dump_dag(const InstructionDag& dag, std::string_view title);

// A schedule the fuse ⇄ schedule passes built, as the dumps name it, and what became of it
// ("placed 1st", "not placed: the same steps in the same order as schedule 1").
struct NamedSchedule {
  const Scheduled* scheduled = nullptr;
  std::string name;
  std::string placed;
};
// The fused DAG of each schedule (the one before it where they are the same).
std::string dump_fused(const std::vector<NamedSchedule>& schedules);
// The order of each schedule: every instruction at its position, with its longest path to a sink.
std::string dump_schedules(const std::vector<NamedSchedule>& schedules);

// The channel and placement search: every plan it placed and what became of it, the times where
// they were judged, the kept plan, and its channel and threadblock for every instruction, its
// threadblocks and its connections. `judged`: CompileResult::judged.
std::string dump_channel_plan(const ChosenPlan& plan, const std::vector<std::uint64_t>& sizes,
                              const std::string& judged);

// Every rank's threadblocks (peers, channel) and their steps (type, slots, count, the step waited
// for, hasdep). `title` says which algorithm it is.
std::string dump_threadblocks(const ir::Algorithm& algorithm, std::string_view title);

// Every case the executor ran, its verdict, and the first failure's report.
std::string dump_verification(const VerificationResult& verification);

}  // namespace weft::compiler::detail
