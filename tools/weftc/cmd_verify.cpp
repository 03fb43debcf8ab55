// `weftc verify`: prove an algorithm file correct on the CPU reference executor over several
// tile sizes, FIFO depths, seeds and call modes.
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command_line.h"
#include "commands.h"
#include "load.h"
#include "weft/cpu/cpu_executor.h"
#include "weft/cpu/verify.h"
#include "weft/ir/collective_spec.h"
#include "weft/ir/geometry.h"

namespace weft::weftc {
namespace {

struct VerifyArgs {
  std::vector<std::string> files;
  std::size_t count = 0;  // 0: pick chunk size S = 37
  std::vector<std::size_t> tiles;
  std::vector<int> depths;
  int seeds = 3;
  int threads = 0;  // --threads: 0 for one per core
  std::string dtype = "float";
  std::string op = "sum";
  int root = 0;
  std::string mode = "declared";
  std::string profile = "weft";
  bool quiet = false;
};

std::string case_label(const cpu::RunOptions& o) {
  return fmt::format("{:<10} S={} T={} D={} seed={}", o.in_place ? "in-place" : "out-of-place",
                     o.chunk_elements, o.tile_elements,
                     o.fifo_depth == 0 ? std::string("inf") : std::to_string(o.fifo_depth), o.seed);
}

int verify_file(const std::string& path, const VerifyArgs& args, const ir::LimitsProfile& limits,
                DataType dtype, ReduceOp op) {
  auto algo = load_or_report(path, limits);
  if (!algo) return kBadInput;
  if ((algo->collective == ir::Collective::Broadcast ||
       algo->collective == ir::Collective::Reduce) &&
      (args.root < 0 || args.root >= algo->ngpus)) {
    fmt::print(stderr, "{}: --root {} is not a rank of this {}-rank algorithm\n", path, args.root,
               algo->ngpus);
    return kUsage;
  }

  cpu::VerifyOptions options;
  if (args.count != 0) {
    auto elements = ir::chunk_elements(*algo, args.count);
    if (!elements) {
      fmt::print(stderr,
                 "{}: --count {} does not apply: count x {} is not a multiple of nchunksperloop "
                 "{}\n",
                 path, args.count, ir::count_multiplier(*algo), algo->nchunksperloop);
      return kUsage;
    }
    options.chunk_elements = {*elements};
  }
  if (!args.tiles.empty()) options.tile_elements = args.tiles;
  if (!args.depths.empty()) options.fifo_depths = args.depths;
  options.seeds = args.seeds;
  options.dtype = dtype;
  options.op = op;
  options.root = args.root;
  if (args.mode == "in-place") options.in_place = true;
  if (args.mode == "out-of-place") options.in_place = false;
  options.threads = args.threads;  // runs that check data still go one at a time

  bool has_postcondition = true;
  cpu::Executor executor(*algo, spec_for(*algo, args.root, has_postcondition));
  if (!has_postcondition) {
    fmt::print(
        "{}: note: collective '{}' has no postcondition in XML; checking that every rank "
        "completes without deadlock or protocol error only\n",
        path, algo->collective_name);
  }
  cpu::VerifyReport report = cpu::verify(executor, options);

  for (const cpu::CaseResult& c : report.cases) {
    const bool pass = c.result.outcome == cpu::Outcome::Pass;
    if (pass && args.quiet) continue;
    fmt::print("{} {}  {}\n", pass ? "PASS" : "FAIL", path, case_label(c.options));
    if (!pass) {
      std::string text = c.result.report();
      for (std::size_t start = 0; start < text.size();) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        fmt::print("     {}\n", std::string_view(text).substr(start, end - start));
        start = end + 1;
      }
    }
  }
  const std::size_t failed = report.failures();
  fmt::print("{}: {} cases, {} pass, {} fail ({} {}, {} ranks, {} {})\n", path, report.cases.size(),
             report.cases.size() - failed, failed, ir::to_string(algo->collective),
             ir::to_string(algo->protocol), algo->ngpus, to_string(dtype), to_string(op));
  if (report.min_fifo_depth) {
    fmt::print("{}: smallest FIFO depth at which it completes: {}{}\n", path,
               *report.min_fifo_depth,
               *report.min_fifo_depth > 2 ? " (more than the 2 every runtime guarantees)" : "");
  } else {
    fmt::print("{}: deadlocks at every FIFO depth (even unbounded)\n", path);
  }
  return failed == 0 ? kOk : kFailed;
}

}  // namespace

void add_verify_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<VerifyArgs>();
  CLI::App* cmd = app.add_subcommand(
      "verify",
      "Run algorithm files on the CPU reference executor over several tile sizes, FIFO depths, "
      "seeds and call modes, and check every rank's result against the collective's definition");
  cmd->add_option("files", args->files, "MSCCL XML files")->required();
  cmd->add_option("--count", args->count,
                  "Elements per call in NCCL's sense (default: 37 elements per chunk)")
      ->check(whole_number(1, std::int64_t{1} << 40, "the elements per call"));
  cmd->add_option("--tile", args->tiles,
                  "Tile size(s) T in elements (default: 8 and 64, so several tiles run)")
      ->check(whole_number(1, std::int64_t{1} << 30, "the elements in a tile"));
  cmd->add_option("--fifo-depth", args->depths,
                  "FIFO depth(s) D in messages per connection, 0 = unbounded (default: 2 and 8)")
      ->check(whole_number(0, 1 << 20, "the FIFO depth (messages per connection, 0: unbounded)"));
  cmd->add_option("--seeds", args->seeds, "Interleavings to try per case")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--threads", args->threads,
                  "Threads of the sweep: runs that check data go one at a time, the least-depth "
                  "search beside them (default 0: one per core)")
      ->check(whole_number(0, 1024, "the threads (0: one per core)"));
  cmd->add_option("--dtype", args->dtype,
                  "Data type: int8 uint8 int32 uint32 int64 uint64 half bfloat16 float double")
      ->capture_default_str();
  cmd->add_option("--op", args->op, "Reduction: sum prod min max avg")->capture_default_str();
  cmd->add_option("--root", args->root, "Root rank of broadcast and reduce")->capture_default_str();
  cmd->add_option("--mode", args->mode,
                  "Call modes: 'declared' (the file's inplace/outofplace flags), 'in-place', "
                  "'out-of-place'")
      ->capture_default_str()
      ->check(CLI::IsMember({"declared", "in-place", "out-of-place"}));
  add_profile_option(*cmd, args->profile);
  cmd->add_flag("-q,--quiet", args->quiet, "Print only failing cases and the summary");

  cmd->callback([args, &exit_code] {
    const ir::LimitsProfile limits = profile_or_throw(args->profile);
    auto dtype = parse_data_type(args->dtype);
    if (!dtype) throw CLI::ValidationError("--dtype", "unknown data type '" + args->dtype + "'");
    auto op = parse_reduce_op(args->op);
    if (!op) throw CLI::ValidationError("--op", "unknown reduction '" + args->op + "'");
    if (*op == ReduceOp::Avg && !is_floating(*dtype)) {
      throw CLI::ValidationError("--op", "avg is defined for floating-point types only");
    }
    int worst = kOk;
    for (const std::string& file : args->files) {
      worst = std::max(worst, verify_file(file, *args, limits, *dtype, *op));
    }
    exit_code = worst;
  });
}

}  // namespace weft::weftc
