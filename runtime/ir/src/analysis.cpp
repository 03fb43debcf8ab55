// Static facts about an IR: sizes, traffic per rank and the critical path.
#include "weft/ir/analysis.h"

#include <algorithm>
#include <set>
#include <vector>

#include "step_graph.h"
#include "weft/ir/geometry.h"

namespace weft::ir {
namespace {

// The longest chain of real steps through program order, dependencies and messages (the k-th
// send on a connection precedes the k-th receive). Nops only carry dependencies, so they weigh
// nothing. Steps on a cycle (an algorithm that deadlocks) are left out rather than looped on.
int critical_path(const Algorithm& algo, const detail::ConnectionMap& connections) {
  const detail::StepNumbering numbering(algo);
  detail::StepGraph graph = detail::local_step_graph(algo, numbering);
  for (const auto& [conn, ends] : connections) {
    if (ends.sender_tb < 0 || ends.receiver_tb < 0) continue;
    const auto& sender = algo.gpus[static_cast<std::size_t>(conn.sender)]
                             .threadblocks[static_cast<std::size_t>(ends.sender_tb)];
    const auto& receiver = algo.gpus[static_cast<std::size_t>(conn.receiver)]
                               .threadblocks[static_cast<std::size_t>(ends.receiver_tb)];
    const std::vector<int> sent = detail::message_steps(sender, true);
    const std::vector<int> received = detail::message_steps(receiver, false);
    for (std::size_t k = 0; k < sent.size() && k < received.size(); ++k) {
      graph.add_edge(numbering.node(conn.sender, ends.sender_tb, sent[k]),
                     numbering.node(conn.receiver, ends.receiver_tb, received[k]));
    }
  }

  // Numbering is rank by rank, threadblock by threadblock, so the weights follow in that order.
  std::vector<int> weight;
  weight.reserve(graph.size());
  for (const Gpu& gpu : algo.gpus) {
    for (const Threadblock& tb : gpu.threadblocks) {
      for (const Step& step : tb.steps) weight.push_back(step.type == StepType::Nop ? 0 : 1);
    }
  }
  std::vector<int> length(graph.size(), 0);
  int longest = 0;
  for (std::size_t v : graph.topological_order()) {
    int before = 0;
    for (std::size_t p : graph.predecessors(v)) {
      if (p != detail::StepGraph::kNone) before = std::max(before, length[p]);
    }
    length[v] = before + weight[v];
    longest = std::max(longest, length[v]);
  }
  return longest;
}

}  // namespace

Summary summarize(const Algorithm& algo) {
  Summary summary;
  summary.ranks = static_cast<int>(algo.gpus.size());
  const detail::ConnectionMap connections =
      detail::index_connections(algo, [](const Connection&, bool, int, int) {});
  summary.connections = static_cast<int>(connections.size());

  // Elements of one chunk per element of `count`: S = count·m / nchunksperloop.
  const double chunk_per_count =
      algo.nchunksperloop > 0
          ? static_cast<double>(count_multiplier(algo)) / static_cast<double>(algo.nchunksperloop)
          : 0.0;
  std::set<int> all_channels;
  for (std::size_t r = 0; r < algo.gpus.size(); ++r) {
    const Gpu& gpu = algo.gpus[r];
    RankSummary rank;
    rank.rank = static_cast<int>(r);
    rank.threadblocks = static_cast<int>(gpu.threadblocks.size());
    std::set<int> channels;
    std::set<std::pair<int, int>> send_connections;
    std::set<std::pair<int, int>> recv_connections;
    long long sent_chunks = 0;
    long long received_chunks = 0;
    for (const Threadblock& tb : gpu.threadblocks) {
      rank.steps += static_cast<int>(tb.steps.size());
      summary.max_steps_per_threadblock =
          std::max(summary.max_steps_per_threadblock, static_cast<int>(tb.steps.size()));
      channels.insert(tb.channel);
      if (tb.send >= 0) send_connections.insert({tb.channel, tb.send});
      if (tb.recv >= 0) recv_connections.insert({tb.channel, tb.recv});
      for (const Step& step : tb.steps) {
        if (sends(step.type)) sent_chunks += step.count;
        if (receives(step.type)) received_chunks += step.count;
      }
    }
    rank.channels = static_cast<int>(channels.size());
    rank.send_connections = static_cast<int>(send_connections.size());
    rank.recv_connections = static_cast<int>(recv_connections.size());
    rank.sent_per_count = static_cast<double>(sent_chunks) * chunk_per_count;
    rank.received_per_count = static_cast<double>(received_chunks) * chunk_per_count;
    all_channels.insert(channels.begin(), channels.end());
    summary.threadblocks += rank.threadblocks;
    summary.steps += rank.steps;
    summary.max_threadblocks_per_rank =
        std::max(summary.max_threadblocks_per_rank, rank.threadblocks);
    summary.per_rank.push_back(rank);
  }
  summary.channels = static_cast<int>(all_channels.size());
  summary.critical_path_steps = critical_path(algo, connections);
  return summary;
}

}  // namespace weft::ir
