// The compiler pipeline (docs/architecture.md §4): trace → postcondition → lower → cut for
// instances → forward → fuse ⇄ schedule → assign ⇄ dependencies (the channel search) → replicate →
// emit → verify. Only a verified result can be written.
//
//   weft::dsl::Program p = ...;
//   weft::compiler::CompileResult result = weft::compiler::compile(p);
//   if (!result.ok()) { std::cerr << result.error_text(); return 1; }
//   weft::compiler::write_xml_file(result, "ring.xml", &error);
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "weft/compiler/forward.h"
#include "weft/compiler/fuse.h"
#include "weft/compiler/judge.h"
#include "weft/compiler/verify.h"
#include "weft/cpu/verify.h"
#include "weft/dsl/program.h"
#include "weft/ir/ir.h"

namespace weft::compiler {

// The passes, in the order a compile runs them (docs/architecture.md §4): postcondition, lower,
// cut (for instances), forward, fuse, schedule, assign (the channel and placement search),
// dependencies, replicate, emit, verify. What PassDumps names.
std::span<const std::string_view> pass_names();

// Why `name` is not a pass PassDumps can name, with the nearest pass and every one ("'fusion' is
// not a pass; did you mean 'fuse'? The passes: postcondition, lower, ..., verify, or all"); nullopt
// when it is one of pass_names() or "all".
std::optional<std::string> unknown_pass(std::string_view name);

// The program as it stands after the passes named, as text for people (docs/dsl.md, "Watching the
// passes"): the trace and the postcondition's verdict after postcondition; the instruction DAG
// after lower, cut and forward; every schedule's fused DAG after fuse and its order after schedule;
// the plans the channel search placed and the channel and threadblock of every instruction of the
// kept one after assign; threadblocks and their steps after dependencies (one instance) and
// replicate; the XML after emit (what write_xml_file writes, byte for byte); every case after
// verify. A pass that does not run for this program (cut and replicate with one instance) says
// so; a compile that stops early dumps no further. Rendered only for the passes named.
struct PassDumps {
  std::vector<std::string> passes;  // of pass_names(), or "all"; empty: none
  // Gets each pass's text as the pass ends; required when `passes` names any.
  std::function<void(std::string_view pass, std::string_view text)> sink;

  bool wants(std::string_view pass) const;
};

struct CompileOptions {
  // The executor sweep of the verify pass: `weftc compile`'s (compile_proof(): S = 37, tiles of
  // 8 and 64 elements, FIFO depths 2 and 8, up to 3 seeds). Fewer seeds make it lighter; it
  // cannot be switched off.
  cpu::VerifyOptions verify = compile_proof();
  // Hears the name of each pass as it ends ("lower", "schedule", ...), then "verify" as the
  // executor sweep begins: for a progress line on large programs. Not called when unset.
  std::function<void(std::string_view pass)> on_pass;
  // Where legal schedules differ, predicted time on this machine decides (judge.h).
  JudgeOptions judge;
  // The passes to watch (nothing by default). A name that is not a pass is an error of the compile.
  PassDumps dump_after;
};

struct CompileStats {
  int ranks = 0;
  int threadblocks = 0;  // all ranks
  int steps = 0;         // all ranks, nops included
  int nops = 0;
  int channels = 0;
  int max_threadblocks_per_rank = 0;
  int max_steps_per_threadblock = 0;
  FuseStats fused;
  ForwardStats forwarded;
};

struct CompileResult {
  std::optional<ir::Algorithm> algorithm;  // present once emitted and valid
  std::vector<std::string> errors;         // why there is no (verified) algorithm
  std::vector<std::string> notes;          // fallbacks the passes took
  // How the schedule was chosen: "judged by predicted time on 'a100-nvswitch' (1 node(s) × 8
  // GPUs)", or why the critical path judged instead; empty when there was nothing to judge.
  std::string judged;
  int candidates_predicted = 0;  // distinct candidates the simulator predicted
  // Every candidate time judged, in the order they were placed (the first is the incumbent), and
  // the sizes they were predicted at; empty where time did not judge.
  std::vector<JudgedCandidate> candidates;
  std::vector<std::uint64_t> judged_sizes;
  bool verified = false;
  VerificationResult verification;
  CompileStats stats;
  double compile_seconds = 0;  // trace check through emit
  double verify_seconds = 0;   // the executor sweep
  // Seconds spent in each pass, in order ("postcondition", "lower", ...), for benchmarks.
  std::vector<std::pair<std::string, double>> pass_seconds;

  bool ok() const { return algorithm.has_value() && errors.empty() && verified; }
  std::string error_text() const;  // one error per line
  // "8 ranks, 8 threadblocks, 120 steps, 1 channel; verified: 12 cases passed (min FIFO depth 1)"
  std::string summary() const;
};

// Everything up to emit: no executor run, so never written to a file. For benchmarks and tests.
// Of `options`, the verify sweep is not used.
CompileResult compile_unverified(const dsl::Program& program, const CompileOptions& options = {});
// The executor sweep on an emitted result; sets verified, verification and verify_seconds.
void verify(const dsl::Program& program, CompileResult& result,
            const cpu::VerifyOptions& options = {});
// Both.
CompileResult compile(const dsl::Program& program, const CompileOptions& options = {});

// Writes the executor dialect (atomically). Refuses a result that is not ok().
bool write_xml_file(const CompileResult& result, const std::string& path, std::string* error);

}  // namespace weft::compiler
