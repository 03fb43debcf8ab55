// `weftc topology T [--nodes A] [--gpus-per-node B] [--write-parameters FILE]`: what Weft makes of
// a machine (vertices, links, routes' types, what was assumed), and its cost parameters as the
// editable file `--parameters` reads back.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "predict_options.h"
#include "weft/ir/text_file.h"
#include "weft/predict/cost_parameters.h"

namespace weft::weftc {

void add_topology_command(CLI::App& app, int& exit_code) {
  struct Args {
    MachineArgs machine;
    std::string write_parameters;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "topology", "Describe a topology (a preset or an NCCL topology XML) and its cost parameters");
  add_machine_options(*cmd, args->machine);
  cmd->add_option(
      "--write-parameters", args->write_parameters,
      "Write the cost parameters to this file, to edit and pass back with --parameters");
  cmd->callback([args, &exit_code] {
    const auto topology = load_machine_or_report(args->machine);
    if (!topology) {
      exit_code = kBadInput;
      return;
    }
    fmt::print("{}", topology->describe());
    if (!args->write_parameters.empty()) {
      std::string error;
      if (!ir::write_text_file(args->write_parameters,
                               predict::write_cost_parameters(topology->costs()), &error)) {
        fmt::print(stderr, "weftc topology: {}\n", error);
        exit_code = kFailed;
        return;
      }
      fmt::print("wrote the cost parameters to {}\n", args->write_parameters);
    }
    exit_code = kOk;
  });
}

}  // namespace weft::weftc
