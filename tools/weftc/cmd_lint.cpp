// `weftc lint`: validation only, every finding listed.
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "load.h"

namespace weft::weftc {

void add_lint_command(CLI::App& app, int& exit_code) {
  struct Args {
    std::vector<std::string> files;
    std::string profile = "msccl";
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "lint",
      "Validate algorithm files (structure, connections, dependencies, limits) and list "
      "every finding");
  cmd->add_option("files", args->files, "MSCCL XML files")->required();
  add_profile_option(*cmd, args->profile);
  cmd->callback([args, &exit_code] {
    const ir::LimitsProfile limits = profile_or_throw(args->profile);
    int worst = kOk;
    for (const std::string& file : args->files) {
      ir::LoadResult loaded = ir::load_xml_file(file, limits, ir::kCommandLineFile);
      for (const Diagnostic& finding : loaded.diagnostics.items) {
        fmt::print("{}\n", finding.str());
      }
      const std::size_t errors = loaded.diagnostics.error_count();
      const std::size_t warnings = loaded.diagnostics.items.size() - errors;
      fmt::print("{}: {} error(s), {} warning(s) (limits profile '{}')\n", file, errors, warnings,
                 limits.name);
      // A file that could not be read at all is bad input; one that reads but breaks rules fails.
      if (!loaded.ok()) worst = std::max<int>(worst, loaded.algorithm ? kFailed : kBadInput);
      if (errors != 0) worst = std::max<int>(worst, kFailed);
    }
    exit_code = worst;
  });
}

}  // namespace weft::weftc
