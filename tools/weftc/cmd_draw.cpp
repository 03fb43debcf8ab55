// `weftc draw`: the step dependency graph of an algorithm file as Graphviz DOT, and as SVG through
// Graphviz's `dot` when it is installed.
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "command_line.h"
#include "commands.h"
#include "load.h"
#include "weft/ir/text_file.h"
#include "weft/predict/pictures.h"

extern char** environ;  // POSIX: the environment posix_spawnp hands on to `dot`

namespace weft::weftc {
namespace {

struct DrawArgs {
  std::string file;
  std::string dag;
  std::string svg;
  std::vector<int> ranks;
  std::size_t max_nodes = predict::DotOptions{}.max_nodes;
  std::string profile = "weft";
};

// A path as a program's argument: one that starts with '-' would be read as an option.
std::string as_argument(const std::string& path) {
  return !path.empty() && path.front() == '-' ? "./" + path : path;
}

enum class Rendered { Done, NoGraphviz, Failed };

// Runs `dot -Tsvg` on `dot_path`, without a shell (file names are arguments, never parsed), into a
// temporary beside `svg_path` that replaces it only when dot succeeded.
Rendered render_svg(const std::string& dot_path, const std::string& svg_path, std::string& error) {
  const std::string temporary = fmt::format("{}.tmp-{}", svg_path, static_cast<long>(::getpid()));
  std::vector<std::string> args = {"dot", "-Tsvg", "-o" + temporary, as_argument(dot_path)};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, "dot", nullptr, nullptr, argv.data(), environ);
  if (spawned == ENOENT) return Rendered::NoGraphviz;
  if (spawned != 0) {
    error = fmt::format("cannot run Graphviz's dot: {}", std::strerror(spawned));
    return Rendered::Failed;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      error = fmt::format("waiting for Graphviz's dot: {}", std::strerror(errno));
      return Rendered::Failed;
    }
  }
  std::error_code ignored;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::filesystem::remove(temporary, ignored);
    error = WIFEXITED(status) ? fmt::format("Graphviz's dot failed (exit code {}) on {}",
                                            WEXITSTATUS(status), dot_path)
                              : fmt::format("Graphviz's dot was killed by signal {} on {}",
                                            WIFSIGNALED(status) ? WTERMSIG(status) : 0, dot_path);
    return Rendered::Failed;
  }
  std::error_code ec;
  std::filesystem::rename(temporary, svg_path, ec);
  if (ec) {
    std::filesystem::remove(temporary, ignored);
    error = fmt::format("cannot rename {} to {}: {}", temporary, svg_path, ec.message());
    return Rendered::Failed;
  }
  return Rendered::Done;
}

int run_draw(const DrawArgs& args) {
  const ir::LimitsProfile limits = profile_or_throw(args.profile);
  const auto algo = load_or_report(args.file, limits);
  if (!algo) return kBadInput;
  predict::DotOptions options;
  options.ranks = args.ranks;
  options.max_nodes = args.max_nodes;
  std::string dot;
  try {
    dot = predict::step_graph_dot(*algo, options);
  } catch (const predict::PictureError& e) {
    fmt::print(stderr, "weftc draw: {}: {} (--ranks, --max-nodes)\n", args.file, e.what());
    return kUsage;
  }
  std::string error;
  if (!ir::write_text_file(args.dag, dot, &error)) {
    fmt::print(stderr, "weftc draw: {}\n", error);
    return kFailed;
  }
  fmt::print("wrote {}\n", args.dag);
  if (args.svg.empty()) return kOk;
  switch (render_svg(args.dag, args.svg, error)) {
    case Rendered::Done:
      fmt::print("wrote {}\n", args.svg);
      return kOk;
    case Rendered::NoGraphviz:
      // The graph is the product and it is written; the SVG is a convenience of an optional
      // tool, so its absence is a note, not a failure.
      fmt::print(stderr,
                 "weftc draw: {} not written: Graphviz's `dot` is not on PATH; install graphviz "
                 "(Debian: apt-get install graphviz) or render {} elsewhere\n",
                 args.svg, args.dag);
      return kOk;
    case Rendered::Failed:
      fmt::print(stderr, "weftc draw: {}: {}\n", args.svg, error);
      return kFailed;
  }
  return kInternal;
}

}  // namespace

void add_draw_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<DrawArgs>();
  CLI::App* cmd = app.add_subcommand(
      "draw",
      "Draw an algorithm's step dependency graph as Graphviz DOT (and SVG through "
      "Graphviz's dot): a cluster per rank and threadblock, program order, dependencies, "
      "messages");
  cmd->add_option("file", args->file, "MSCCL XML file")->required();
  cmd->add_option("--dag", args->dag, "where to write the graph in DOT")->required();
  cmd->add_option("--svg", args->svg,
                  "also render it to this SVG with Graphviz's dot (skipped with a note when "
                  "Graphviz is not installed)");
  cmd->add_option("--ranks", args->ranks, "only these ranks, e.g. 0,1 (peers appear as one node)")
      ->delimiter(',');
  cmd->add_option("--max-nodes", args->max_nodes,
                  "refuse graphs with more steps than this (Graphviz slows to minutes beyond "
                  "a few thousand)")
      ->capture_default_str()
      ->check(whole_number(1, std::int64_t{1} << 30, "the largest graph drawn (steps)"));
  add_profile_option(*cmd, args->profile);
  cmd->callback([args, &exit_code] { exit_code = run_draw(*args); });
}

}  // namespace weft::weftc
