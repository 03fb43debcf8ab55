#include "flow_graph.h"

#include <lemon/preflow.h>
#include <lemon/smart_graph.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace weft::synthesis::detail {

using Digraph = lemon::SmartDigraph;
// Capacities in whole kB/s: LEMON's tolerance for integers is exact and needs no library, and a
// kB/s is far below what any bound resolves.
using Capacity = long long;
constexpr double kScale = 1e6;  // per GB/s

Capacity scaled(double gbs) {
  return static_cast<Capacity>(std::llround(std::min(gbs, kUnbounded) * kScale));
}

struct FlowGraph::Impl {
  Digraph graph;
  Digraph::ArcMap<Capacity> capacity{graph};
  Digraph::Node source;
  Digraph::Node sink;
  std::vector<Digraph::Node> gpu;        // per rank
  std::vector<Digraph::Arc> source_arc;  // per rank
  std::vector<Digraph::Arc> sink_arc;    // per rank
  std::vector<double> ingress;           // per rank
};

FlowGraph::FlowGraph(const predict::Topology& topology, bool reversed)
    : impl_(std::make_unique<Impl>()) {
  const int ranks = topology.ranks();
  const auto& links = topology.links();
  const auto& vertices = topology.vertices();
  // Which links routes use, and the turns they take at every vertex between two links.
  std::vector<bool> used(links.size(), false);
  std::set<std::pair<int, int>> turns;  // (link in, link out)
  for (int a = 0; a < ranks; ++a) {
    for (int b = 0; b < ranks; ++b) {
      if (a == b) continue;
      const auto route = topology.route(a, b);
      if (route.empty()) {
        throw std::invalid_argument(fmt::format("no route from rank {} to rank {} in topology '{}'",
                                                a, b, topology.name()));
      }
      for (std::size_t i = 0; i < route.size(); ++i) {
        used[static_cast<std::size_t>(route[i])] = true;
        if (i > 0) turns.emplace(route[i - 1], route[i]);
      }
    }
  }
  // Per vertex: its used links in and out.
  std::vector<std::vector<int>> in_links(vertices.size());
  std::vector<std::vector<int>> out_links(vertices.size());
  for (std::size_t l = 0; l < links.size(); ++l) {
    const predict::Link& link = links[l];
    if (!used[l] || link.type == predict::LinkType::Memory || link.from == link.to) continue;
    out_links[static_cast<std::size_t>(link.from)].push_back(static_cast<int>(l));
    in_links[static_cast<std::size_t>(link.to)].push_back(static_cast<int>(l));
  }
  // A switch is split into ports where its routes do not turn every way (U-turns aside).
  std::vector<bool> expanded(vertices.size(), false);
  for (std::size_t v = 0; v < vertices.size(); ++v) {
    if (vertices[v].kind == predict::VertexKind::Gpu) continue;
    if (static_cast<int>(in_links[v].size()) > kMaxExpandedPorts ||
        static_cast<int>(out_links[v].size()) > kMaxExpandedPorts) {
      continue;
    }
    for (int in : in_links[v]) {
      for (int out : out_links[v]) {
        const bool u_turn =
            links[static_cast<std::size_t>(in)].from == links[static_cast<std::size_t>(out)].to;
        if (!u_turn && !turns.contains({in, out})) expanded[v] = true;
      }
    }
  }
  Digraph& g = impl_->graph;
  std::vector<Digraph::Node> node(vertices.size(), lemon::INVALID);
  std::map<int, Digraph::Node> in_port;   // link → the port it enters at an expanded vertex
  std::map<int, Digraph::Node> out_port;  // link → the port it leaves from
  for (std::size_t v = 0; v < vertices.size(); ++v) {
    if (!expanded[v]) {
      node[v] = g.addNode();
      continue;
    }
    for (int in : in_links[v]) in_port[in] = g.addNode();
    for (int out : out_links[v]) out_port[out] = g.addNode();
  }
  std::vector<std::pair<Digraph::Arc, double>> arcs;
  auto add = [&](Digraph::Node from, Digraph::Node to, double capacity) {
    if (reversed) std::swap(from, to);
    arcs.emplace_back(g.addArc(from, to), capacity);
  };
  for (std::size_t v = 0; v < vertices.size(); ++v) {
    if (!expanded[v]) continue;
    for (int in : in_links[v]) {
      for (int out : out_links[v]) {
        if (turns.contains({in, out})) add(in_port[in], out_port[out], kUnbounded);
      }
    }
  }
  impl_->ingress.assign(static_cast<std::size_t>(ranks), 0);
  std::vector<int> rank_of(vertices.size(), -1);
  for (std::size_t v = 0; v < vertices.size(); ++v) rank_of[v] = vertices[v].rank;
  for (std::size_t v = 0; v < vertices.size(); ++v) {
    for (int l : out_links[v]) {
      const predict::Link& link = links[static_cast<std::size_t>(l)];
      const auto from = static_cast<std::size_t>(link.from);
      const auto to = static_cast<std::size_t>(link.to);
      add(expanded[from] ? out_port[l] : node[from], expanded[to] ? in_port[l] : node[to],
          link.bandwidth_gbs);
      // What enters a GPU (leaves it, reversed) bounds what it can take in.
      const int rank = rank_of[reversed ? from : to];
      if (rank >= 0) impl_->ingress[static_cast<std::size_t>(rank)] += link.bandwidth_gbs;
    }
  }
  impl_->source = g.addNode();
  impl_->sink = g.addNode();
  for (std::size_t v = 0; v < vertices.size(); ++v) {
    if (vertices[v].rank < 0) continue;
    impl_->gpu.resize(static_cast<std::size_t>(ranks));
    impl_->gpu[static_cast<std::size_t>(vertices[v].rank)] = node[v];
  }
  for (int r = 0; r < ranks; ++r) {
    // The source and the sink keep their roles when reversed: only the machine's arcs turn.
    impl_->source_arc.push_back(g.addArc(impl_->source, impl_->gpu[static_cast<std::size_t>(r)]));
    impl_->sink_arc.push_back(g.addArc(impl_->gpu[static_cast<std::size_t>(r)], impl_->sink));
  }
  for (const auto& [arc, capacity] : arcs) impl_->capacity[arc] = scaled(capacity);
  for (int r = 0; r < ranks; ++r) {
    impl_->capacity[impl_->source_arc[static_cast<std::size_t>(r)]] = 0;
    impl_->capacity[impl_->sink_arc[static_cast<std::size_t>(r)]] = 0;
  }
}

FlowGraph::~FlowGraph() = default;

int FlowGraph::ranks() const {
  return static_cast<int>(impl_->gpu.size());
}

void FlowGraph::set_source(int rank, double capacity) {
  impl_->capacity[impl_->source_arc.at(static_cast<std::size_t>(rank))] = scaled(capacity);
}

void FlowGraph::set_sink(int rank, double capacity) {
  impl_->capacity[impl_->sink_arc.at(static_cast<std::size_t>(rank))] = scaled(capacity);
}

double FlowGraph::ingress(int rank) const {
  return impl_->ingress.at(static_cast<std::size_t>(rank));
}

double FlowGraph::max_flow(std::vector<bool>* sink_side) const {
  lemon::Preflow<Digraph, Digraph::ArcMap<Capacity>> preflow(impl_->graph, impl_->capacity,
                                                             impl_->source, impl_->sink);
  preflow.runMinCut();
  if (sink_side) {
    sink_side->assign(impl_->gpu.size(), false);
    for (std::size_t r = 0; r < impl_->gpu.size(); ++r) {
      (*sink_side)[r] = !preflow.minCut(impl_->gpu[r]);
    }
  }
  return static_cast<double>(preflow.flowValue()) / kScale;
}

}  // namespace weft::synthesis::detail
