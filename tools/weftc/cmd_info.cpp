// `weftc info`: what an algorithm file is and what it costs, as a table.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "load.h"
#include "weft/ir/analysis.h"

namespace weft::weftc {
namespace {

void print_info(const std::string& path, const ir::Algorithm& algo) {
  const ir::Summary s = ir::summarize(algo);
  fmt::print("{}\n", path);
  fmt::print("  name            {}\n", algo.name);
  fmt::print("  collective      {}\n", algo.collective == ir::Collective::Custom
                                           ? algo.collective_name
                                           : std::string(ir::to_string(algo.collective)));
  fmt::print("  ranks           {}\n", algo.ngpus);
  fmt::print("  protocol        {}\n", ir::to_string(algo.protocol));
  fmt::print("  chunks per loop {}\n", algo.nchunksperloop);
  fmt::print("  calls           {}{}\n", algo.inplace ? "in-place " : "",
             algo.outofplace ? "out-of-place" : "");
  fmt::print("  size band       {} .. {} bytes\n", algo.min_bytes,
             algo.max_bytes == 0 ? std::string("unbounded") : std::to_string(algo.max_bytes));
  fmt::print("  channels        {} used (nchannels {})\n", s.channels, algo.nchannels);
  fmt::print("  threadblocks    {} in all, at most {} per rank\n", s.threadblocks,
             s.max_threadblocks_per_rank);
  fmt::print("  steps           {} in all, at most {} per threadblock\n", s.steps,
             s.max_steps_per_threadblock);
  fmt::print("  connections     {}\n", s.connections);
  fmt::print("  critical path   {} steps\n", s.critical_path_steps);
  fmt::print("\n  {:>5} {:>5} {:>6} {:>5} {:>6} {:>6} {:>12} {:>12}\n", "rank", "tbs", "steps",
             "chans", "sends", "recvs", "sent/count", "recvd/count");
  for (const ir::RankSummary& r : s.per_rank) {
    fmt::print("  {:>5} {:>5} {:>6} {:>5} {:>6} {:>6} {:>12.4g} {:>12.4g}\n", r.rank,
               r.threadblocks, r.steps, r.channels, r.send_connections, r.recv_connections,
               r.sent_per_count, r.received_per_count);
  }
  fmt::print("  (sent/count: elements each rank sends per element of the call's count)\n");
}

}  // namespace

void add_info_command(CLI::App& app, int& exit_code) {
  struct Args {
    std::vector<std::string> files;
    std::string profile = "weft";
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "info",
      "Summarise algorithm files: collective, ranks, protocol, channels, threadblocks, "
      "steps, connections, traffic per rank, critical path");
  cmd->add_option("files", args->files, "MSCCL XML files")->required();
  add_profile_option(*cmd, args->profile);
  cmd->callback([args, &exit_code] {
    const ir::LimitsProfile limits = profile_or_throw(args->profile);
    int worst = kOk;
    for (const std::string& file : args->files) {
      auto algo = load_or_report(file, limits);
      if (!algo) {
        worst = std::max<int>(worst, kBadInput);
        continue;
      }
      print_info(file, *algo);
    }
    exit_code = worst;
  });
}

}  // namespace weft::weftc
