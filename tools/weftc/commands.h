// weftc's subcommands. Each add_*_command registers one subcommand on the app; its callback
// stores the process exit code in `exit_code`. Exit codes are documented in README.md.
#pragma once

#include <CLI/CLI.hpp>

namespace weft::weftc {

enum ExitCode : int {
  kOk = 0,        // success: verified, no lint errors, compiled
  kFailed = 1,    // the input was read but is wrong: verification failed, lint errors
  kUsage = 2,     // bad command line (CLI11's own errors also exit 2... see main.cpp)
  kBadInput = 3,  // a file could not be read or is not valid XML/IR
  kInternal = 4,  // a bug in weftc: please report
};

void add_verify_command(CLI::App& app, int& exit_code);
void add_lint_command(CLI::App& app, int& exit_code);
void add_info_command(CLI::App& app, int& exit_code);
void add_simulate_command(CLI::App& app, int& exit_code);
void add_topology_command(CLI::App& app, int& exit_code);
void add_draw_command(CLI::App& app, int& exit_code);

#ifdef WEFT_HAVE_COMPILER
// In compile/: `weftc compile NAME ...` and `weftc list`.
void add_compile_command(CLI::App& app, int& exit_code);
void add_list_command(CLI::App& app, int& exit_code);
// `weftc tune`: compiles the library's candidates, so it needs the compiler too.
void add_tune_command(CLI::App& app, int& exit_code);
#endif
#ifdef WEFT_HAVE_SYNTHESIS
// In synthesize/: `weftc synthesize` (needs the synthesis library, which needs LEMON).
void add_synthesize_command(CLI::App& app, int& exit_code);
#endif

}  // namespace weft::weftc
