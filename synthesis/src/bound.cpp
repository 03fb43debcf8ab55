#include "weft/synthesis/bound.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "flow_graph.h"

namespace weft::synthesis {

namespace {

using detail::FlowGraph;

// Ranks whose cuts are checked: all of them on one node; on several, node 0's, because the other
// nodes are copies of it joined by one network (TopologyRequest), so their cuts are the same.
std::vector<int> representative_ranks(const predict::Topology& topology) {
  const int count = topology.nodes() > 1 ? topology.gpus_per_node() : topology.ranks();
  std::vector<int> ranks(static_cast<std::size_t>(count));
  for (int r = 0; r < count; ++r) ranks[static_cast<std::size_t>(r)] = r;
  return ranks;
}

std::string gpu_name(const predict::Topology& topology, int rank) {
  for (const predict::Vertex& v : topology.vertices()) {
    if (v.rank == rank) return v.name;
  }
  return fmt::format("rank {}", rank);
}

// "the links into node 0 gpu 3", "... into node 1", "... into 5 GPUs (ranks 0, 2, ...)".
std::string describe_cut(const predict::Topology& topology, const std::vector<bool>& inside,
                         bool reversed) {
  std::vector<int> ranks;
  for (std::size_t r = 0; r < inside.size(); ++r) {
    if (inside[r]) ranks.push_back(static_cast<int>(r));
  }
  const char* way = reversed ? "out of" : "into";
  if (ranks.size() == 1) return fmt::format("the links {} {}", way, gpu_name(topology, ranks[0]));
  const int per_node = topology.gpus_per_node();
  if (topology.nodes() > 1 && !ranks.empty() && ranks.size() % static_cast<std::size_t>(per_node) == 0) {
    std::vector<int> nodes;
    bool whole = true;
    for (std::size_t i = 0; i < ranks.size() && whole; i += static_cast<std::size_t>(per_node)) {
      const int node = ranks[i] / per_node;
      for (int g = 0; g < per_node; ++g) {
        whole = whole && ranks[i + static_cast<std::size_t>(g)] == node * per_node + g;
      }
      nodes.push_back(node);
    }
    if (whole && nodes.size() == 1) return fmt::format("the links {} node {}", way, nodes[0]);
    if (whole) return fmt::format("the links {} {} of the {} nodes", way, nodes.size(), topology.nodes());
  }
  std::string list;
  for (std::size_t i = 0; i < ranks.size() && i < 8; ++i) {
    list += fmt::format("{}{}", i ? ", " : "", ranks[i]);
  }
  if (ranks.size() > 8) list += ", ...";
  return fmt::format("the links {} {} GPUs (ranks {})", way, ranks.size(), list);
}

struct TreeRate {
  double per_root_gbs = 0;  // each rank's block reaches every other rank at this rate
  std::string cut;
};

// The largest rate x at which every rank can send its block to all others at once: for every
// GPU v, the max-flow from a source feeding each GPU at x into v must be N·x (every set holding v
// takes in x per rank outside it). Bisection on x to a relative 1e-5.
TreeRate tree_rate(const predict::Topology& topology, bool reversed) {
  FlowGraph graph(topology, reversed);
  const int n = topology.ranks();
  std::vector<int> order = representative_ranks(topology);
  double hi = std::numeric_limits<double>::infinity();
  int weakest = 0;
  for (int r : order) {
    const double x = graph.ingress(r) / (n - 1);
    if (x < hi) {
      hi = x;
      weakest = r;
    }
  }
  if (!(hi > 0)) {
    throw std::invalid_argument(fmt::format("{} has no links {} the other GPUs",
                                            gpu_name(topology, weakest),
                                            reversed ? "to" : "from"));
  }
  std::vector<bool> cut(static_cast<std::size_t>(n), false);
  cut[static_cast<std::size_t>(weakest)] = true;
  auto feasible = [&](double x, std::vector<bool>* failed_cut) {
    for (int r = 0; r < n; ++r) graph.set_source(r, x);
    for (std::size_t i = 0; i < order.size(); ++i) {
      const int v = order[i];
      graph.set_sink(v, detail::kUnbounded);
      std::vector<bool> side;
      const double flow = graph.max_flow(&side);
      graph.set_sink(v, 0);
      if (flow < n * x * (1 - 1e-9)) {
        // Check this GPU first next time: a cut that fails once tends to fail again.
        std::rotate(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(i),
                    order.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        if (failed_cut) *failed_cut = std::move(side);
        return false;
      }
    }
    return true;
  };
  TreeRate rate;
  if (feasible(hi, nullptr)) {
    rate.per_root_gbs = hi;
  } else {
    double lo = 0;
    while (hi - lo > 1e-5 * hi) {
      const double mid = (lo + hi) / 2;
      if (feasible(mid, &cut)) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    rate.per_root_gbs = lo;
  }
  rate.cut = describe_cut(topology, cut, reversed);
  return rate;
}

// Alltoall: a set S of s GPUs takes s (N - s) M / N bytes in and sends as many out; the time is
// at least that over the max-flow into (out of) S, for the sets tried.
Bound alltoall_bound(const predict::Topology& topology) {
  const int n = topology.ranks();
  std::vector<std::vector<bool>> sets;
  for (int r : representative_ranks(topology)) {
    std::vector<bool> s(static_cast<std::size_t>(n), false);
    s[static_cast<std::size_t>(r)] = true;
    sets.push_back(std::move(s));
  }
  if (topology.nodes() > 1) {
    for (int count : {1, topology.nodes() / 2}) {
      std::vector<bool> s(static_cast<std::size_t>(n), false);
      for (int r = 0; r < count * topology.gpus_per_node(); ++r) s[static_cast<std::size_t>(r)] = true;
      sets.push_back(std::move(s));
    }
  }
  Bound bound;
  bound.collective = ir::Collective::AllToAll;
  double worst = 0;  // µs per byte of M... as seconds per GB: s (N - s) / (N · flow)
  for (const bool reversed : {false, true}) {
    FlowGraph graph(topology, reversed);
    for (const std::vector<bool>& s : sets) {
      int inside = 0;
      for (int r = 0; r < n; ++r) {
        const bool in = s[static_cast<std::size_t>(r)];
        inside += in;
        graph.set_source(r, in ? 0 : detail::kUnbounded);
        graph.set_sink(r, in ? detail::kUnbounded : 0);
      }
      const double flow = graph.max_flow();
      if (!(flow > 0)) {
        throw std::invalid_argument(fmt::format("no path {} {}", reversed ? "out of" : "into",
                                                describe_cut(topology, s, reversed).substr(14)));
      }
      const double cost = static_cast<double>(inside) * (n - inside) / (n * flow);
      if (cost > worst) {
        worst = cost;
        bound.cut = describe_cut(topology, s, reversed);
      }
    }
  }
  bound.algbw_gbs = 1 / worst;
  return bound;
}

}  // namespace

Bound bandwidth_bound(const predict::Topology& topology, ir::Collective collective) {
  if (topology.ranks() < 2) {
    throw std::invalid_argument(
        fmt::format("topology '{}' has {} rank: a collective needs two at least", topology.name(),
                    topology.ranks()));
  }
  if (topology.machine().emulated_ranks > 0) {
    throw std::invalid_argument(fmt::format(
        "topology '{}' emulates its ranks on one GPU: there are no links to synthesize for",
        topology.name()));
  }
  const int n = topology.ranks();
  Bound bound;
  bound.collective = collective;
  switch (collective) {
    case ir::Collective::AllGather:
    case ir::Collective::ReduceScatter: {
      const TreeRate rate = tree_rate(topology, collective == ir::Collective::ReduceScatter);
      bound.algbw_gbs = n * rate.per_root_gbs;
      bound.cut = rate.cut;
      return bound;
    }
    case ir::Collective::AllReduce: {
      const TreeRate scatter = tree_rate(topology, true);
      const TreeRate gather = tree_rate(topology, false);
      bound.algbw_gbs = 1 / (1 / (n * scatter.per_root_gbs) + 1 / (n * gather.per_root_gbs));
      bound.cut = fmt::format("reduce-scatter: {}; allgather: {}", scatter.cut, gather.cut);
      return bound;
    }
    case ir::Collective::AllToAll:
      return alltoall_bound(topology);
    default:
      throw std::invalid_argument(fmt::format(
          "no synthesis for {}: allgather, reducescatter, allreduce and alltoall are synthesized",
          ir::to_string(collective)));
  }
}

}  // namespace weft::synthesis
