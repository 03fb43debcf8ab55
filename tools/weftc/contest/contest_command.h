// What `weftc tune` and `weftc synthesize` share (weft/tuning/contest.h): the options of the
// machine, the sizes, a user's own files, and the folder; one machine loader
// (load_machine_or_report); and the contest run and written as WEFT_ALGO_DIR and
// WEFT_TUNER_CONFIG load it. Each command is an option set that lists its sources.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "../predict_options.h"
#include "../progress_line.h"
#include "sources.h"
#include "weft/ir/ir.h"
#include "weft/tuning/contest.h"

namespace weft::weftc {

struct ContestArgs {
  MachineArgs machine;
  SizeArgs sizes;
  std::string collective;
  std::string profile = "weft";
  std::vector<std::string> xml;         // --xml FILE: must fit the collective and machine
  std::vector<std::string> candidates;  // --candidates DIR: the files there that fit
  bool in_place = false;
  bool no_nccl = false;
  bool force = false;
  int max_threadblocks = 0;  // --max-threadblocks; 0: NCCL's channel ceiling for the GPUs
  std::string output;
};

// The options every contest takes: `collectives` lists those the command takes (--collective's
// help), `verb` says what it does (--in-place's help).
void add_contest_options(CLI::App& cmd, ContestArgs& args, const char* collectives,
                         const char* verb);

// The threadblock budget per rank (--max-threadblocks, else NCCL's channel ceiling for the
// machine's GPUs), printed with where it came from.
int threadblock_budget_printed(const ContestArgs& args, const predict::Topology& machine);

// The user's files (--xml, --candidates) as the contest's field, checked against the machine.
// False when one could not be used (the reason printed).
bool user_field(const ContestArgs& args, ir::Collective collective, int ranks, tuning::Field& out);

// The library's variants as a field (LibraryVariants' collective, profile and placement from
// `args`), compiled with the progress line; nothing when --load failed (the reason printed).
std::optional<tuning::Field> library_or_report(const std::vector<std::string>& load,
                                               LibraryVariants variants, const ContestArgs& args,
                                               const predict::Topology& machine,
                                               ProgressLine& progress);

// Runs the contest with the progress line. Returns kOk, or the exit code after printing why
// (`command`: "weftc tune"), also where nothing contended.
int run_or_report(const char* command, const ContestArgs& args, const predict::Topology& machine,
                  std::vector<tuning::Field> fields, tuning::ContestRequest request,
                  ProgressLine& progress, tuning::Contest& contest);

// Writes the folder (prepared before: tuning::prepare_folder). kOk, or kFailed after printing why.
int write_or_report(const char* command, const std::string& output, tuning::Tuning& tuning,
                    const std::vector<tuning::Candidate>& candidates,
                    const predict::Topology& machine);

}  // namespace weft::weftc
