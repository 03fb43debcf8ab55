// weftc: verify, lint, describe and compile collective algorithms.
#include <exception>

#include <fmt/format.h>

#include "command_line.h"
#include "commands.h"
#include "version.h"

int main(int argc, char** argv) {
  using namespace weft::weftc;
  CLI::App app{"weftc: compile, verify and inspect MSCCL-compatible collective algorithms"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_text, "Weft's version and NCCL's, then exit");
  int exit_code = kOk;
  add_verify_command(app, exit_code);
  add_lint_command(app, exit_code);
  add_info_command(app, exit_code);
  add_simulate_command(app, exit_code);
  add_topology_command(app, exit_code);
  add_draw_command(app, exit_code);
#ifdef WEFT_HAVE_COMPILER
  add_compile_command(app, exit_code);
  add_list_command(app, exit_code);
  add_tune_command(app, exit_code);
#endif
#ifdef WEFT_HAVE_SYNTHESIS
  add_synthesize_command(app, exit_code);
#endif
  // CLI11 would say "A subcommand is required" of a misspelt one, and of an option the command
  // lacks only after other complaints: weftc names the word and the nearest that exists first.
  if (const auto problem = misspelling(app, argc, argv)) {
    fmt::print(stderr, "weftc: {}\n", *problem);
    return kUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kUsage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "weftc: internal error: {}\n", e.what());
    return kInternal;
  }
  return exit_code;
}
