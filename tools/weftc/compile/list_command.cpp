// `weftc list`: the algorithms `weftc compile` can build.
#include <memory>

#include <fmt/format.h>

#include "../commands.h"
#include "algorithms.h"

namespace weft::weftc {

namespace {

std::string_view shape_text(dsl::Shape shape) {
  switch (shape) {
    case dsl::Shape::AnyRanks:
      return "--ranks N";
    case dsl::Shape::PowerOfTwoRanks:
      return "--ranks 2^k";
    case dsl::Shape::NodesTimesGpus:
      return "--nodes A --gpus-per-node B";
  }
  return "";
}

}  // namespace

void add_list_command(CLI::App& app, int& exit_code) {
  auto load = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = app.add_subcommand("list", "list the algorithms weftc compile can build");
  add_load_option(*cmd, *load);
  cmd->callback([load, &exit_code] {
    KnownAlgorithms known;
    if (!collect_algorithms(*load, known)) {
      exit_code = kBadInput;
      return;
    }
    std::size_t width = 4;
    for (const dsl::AlgorithmInfo& info : known.registry.algorithms()) {
      width = std::max(width, info.name.size());
    }
    fmt::print("{:<{}}  {:<13}  {:<27}  {}\n", "name", width, "collective", "shape", "summary");
    for (const dsl::AlgorithmInfo& info : known.registry.algorithms()) {
      fmt::print("{:<{}}  {:<13}  {:<27}  {}\n", info.name, width, info.collective,
                 shape_text(info.shape), info.summary);
    }
    exit_code = kOk;
  });
}

}  // namespace weft::weftc
