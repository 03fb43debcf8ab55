#include "weft/synthesis/bound.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "flow_graph.h"

namespace weft::synthesis {

namespace {

// A call of `transfer_us` over the cut at full payload efficiency, in one protocol.
double floor_time_us(const ProtocolFloor& f, double transfer_us) {
  return f.latency_us + transfer_us / f.efficiency;
}

// The least latency of any protocol (0 where there are none).
double least_latency_us(const std::vector<ProtocolFloor>& floors) {
  double least = floors.empty() ? 0 : std::numeric_limits<double>::infinity();
  for (const ProtocolFloor& f : floors) least = std::min(least, f.latency_us);
  return least;
}

}  // namespace

double Bound::time_us(std::uint64_t bytes) const {
  if (floors.empty()) return transfer_us(bytes);
  double best = std::numeric_limits<double>::infinity();
  for (const ProtocolFloor& f : floors) best = std::min(best, time_us(bytes, f.protocol));
  return best;
}

double Bound::time_us(std::uint64_t bytes, ir::Protocol protocol) const {
  double time = transfer_us(bytes);
  for (const ProtocolFloor& f : floors) {
    if (f.protocol == protocol) time = floor_time_us(f, transfer_us(bytes));
  }
  if (node) {
    const double over_node = static_cast<double>(bytes) / (node->algbw_gbs * 1e3);
    for (const ProtocolFloor& f : node->floors) {
      if (f.protocol == protocol) time = std::max(time, floor_time_us(f, over_node));
    }
  }
  return time;
}

double Bound::latency_us(std::uint64_t bytes) const {
  const double time = time_us(bytes);
  for (const ProtocolFloor& f : floors) {
    if (time_us(bytes, f.protocol) == time) return time - transfer_us(bytes) / f.efficiency;
  }
  return 0;
}

double Cut::min_latency_us() const {
  return least_latency_us(floors);
}

double Bound::min_latency_us() const {
  return least_latency_us(floors);
}

const Cut* Bound::slower_hop_cut() const {
  if (!node || node->cut == cut || !(node->min_latency_us() > min_latency_us())) return nullptr;
  return &*node;
}

namespace {

using detail::FlowGraph;

// Which side of a cut each rank is on: a message crosses it between ranks of different groups
// (two groups for a set and the rest; one per GPU or per node where groups of them bind).
using Groups = std::vector<int>;

Groups set_groups(const std::vector<bool>& inside) {
  Groups groups(inside.size());
  for (std::size_t r = 0; r < inside.size(); ++r) groups[r] = inside[r] ? 1 : 0;
  return groups;
}

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
  if (topology.nodes() > 1 && !ranks.empty() &&
      ranks.size() % static_cast<std::size_t>(per_node) == 0) {
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
    if (whole)
      return fmt::format("the links {} {} of the {} nodes", way, nodes.size(), topology.nodes());
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
  Groups groups;
};

// The largest rate x at which every rank can send its block to all others at once: for every
// GPU v, the max-flow from a source feeding each GPU at x into v must be N·x (every set holding v
// takes in x per rank outside it). Bisection on x to a relative 1e-5.
TreeRate tree_rate(const predict::Topology& topology, FlowGraph& graph, bool reversed) {
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
                                            gpu_name(topology, weakest), reversed ? "to" : "from"));
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
      // Flows are whole kB/s (flow_graph.h): each of the n source arcs may round by half of one.
      if (flow < n * x * (1 - 1e-9) - n * 1e-6) {
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
  rate.groups = set_groups(cut);
  return rate;
}

double flow_into(FlowGraph& graph, const std::vector<bool>& inside);

// Sets of node 0's GPUs that one link of the node separates from the rest: a PCIe switch's or a
// CPU's GPUs below its uplink, a socket's GPUs behind the link between the sockets. Where routes
// run through a tree of switches these are the cuts that bind.
std::vector<std::vector<bool>> bridge_sets(const predict::Topology& topology) {
  const auto& vertices = topology.vertices();
  const auto& links = topology.links();
  const int n = topology.ranks();
  std::vector<std::vector<std::pair<int, int>>> adjacent(vertices.size());  // (vertex, link)
  for (std::size_t l = 0; l < links.size(); ++l) {
    const predict::Link& link = links[l];
    if (link.type == predict::LinkType::Memory || link.from == link.to) continue;
    const auto& a = vertices[static_cast<std::size_t>(link.from)];
    const auto& b = vertices[static_cast<std::size_t>(link.to)];
    if (a.node != 0 || b.node != 0 || a.kind == predict::VertexKind::NetworkSwitch ||
        b.kind == predict::VertexKind::NetworkSwitch) {
      continue;
    }
    adjacent[static_cast<std::size_t>(link.from)].emplace_back(link.to, static_cast<int>(l));
    adjacent[static_cast<std::size_t>(link.to)].emplace_back(link.from, static_cast<int>(l));
  }
  int first_gpu = -1;
  for (std::size_t v = 0; v < vertices.size() && first_gpu < 0; ++v) {
    if (vertices[v].rank == 0) first_gpu = static_cast<int>(v);
  }
  std::vector<std::vector<bool>> sets;
  for (std::size_t l = 0; l < links.size() && first_gpu >= 0; ++l) {
    const predict::Link& cut = links[l];
    if (adjacent[static_cast<std::size_t>(cut.from)].empty() || cut.from > cut.to) continue;
    // The GPUs reached from rank 0 without crossing this link (either way).
    std::vector<bool> seen(vertices.size(), false);
    std::vector<int> stack{first_gpu};
    seen[static_cast<std::size_t>(first_gpu)] = true;
    while (!stack.empty()) {
      const int v = stack.back();
      stack.pop_back();
      for (const auto& [w, via] : adjacent[static_cast<std::size_t>(v)]) {
        const predict::Link& other = links[static_cast<std::size_t>(via)];
        const bool same = (other.from == cut.from && other.to == cut.to) ||
                          (other.from == cut.to && other.to == cut.from);
        if (same || seen[static_cast<std::size_t>(w)]) continue;
        seen[static_cast<std::size_t>(w)] = true;
        stack.push_back(w);
      }
    }
    std::vector<bool> inside(static_cast<std::size_t>(n), false);
    int count = 0;
    for (std::size_t v = 0; v < vertices.size(); ++v) {
      if (seen[v] && vertices[v].rank >= 0) {
        inside[static_cast<std::size_t>(vertices[v].rank)] = true;
        ++count;
      }
    }
    if (count > 1 && count < topology.gpus_per_node() &&
        std::find(sets.begin(), sets.end(), inside) == sets.end()) {
      sets.push_back(std::move(inside));
    }
  }
  return sets;
}

// A node of at most this many GPUs has every set of them checked (2^G max-flows per direction),
// on machines of at most kEverySetRanks ranks (a max-flow's cost grows with the machine).
constexpr int kEverySetGpus = 10;
constexpr int kEverySetRanks = 128;

// Sets of two or more of node 0's GPUs, short of the whole node, whose cuts are checked beside the
// single GPUs and the nodes: every such set where the node is small enough, else the sets one
// link separates (bridge_sets). Links between GPUs can bind a set that no one link separates: a
// DGX-1's two quads of GPUs are joined by four NVLinks (150 GB/s each way), which bind its
// alltoall at less than half what one GPU's links allow.
std::vector<std::vector<bool>> node_sets(const predict::Topology& topology) {
  const int gpus = topology.gpus_per_node();
  if (gpus > kEverySetGpus || topology.ranks() > kEverySetRanks) return bridge_sets(topology);
  std::vector<std::vector<bool>> sets;
  for (unsigned mask = 1; mask + 1 < (1U << gpus); ++mask) {
    if (std::popcount(mask) < 2) continue;
    std::vector<bool> inside(static_cast<std::size_t>(topology.ranks()), false);
    for (int g = 0; g < gpus; ++g) inside[static_cast<std::size_t>(g)] = (mask >> g & 1U) != 0;
    sets.push_back(std::move(inside));
  }
  return sets;
}

// Alltoall: a set S of s GPUs takes s (N - s) M / N bytes in and sends as many out; the time is
// at least that over the max-flow into (out of) S, for the sets tried.
Bound alltoall_bound(const predict::Topology& topology, FlowGraph& in, FlowGraph& out,
                     Groups& groups) {
  const int n = topology.ranks();
  std::vector<std::vector<bool>> sets;
  for (int r : representative_ranks(topology)) {
    std::vector<bool> s(static_cast<std::size_t>(n), false);
    s[static_cast<std::size_t>(r)] = true;
    sets.push_back(std::move(s));
  }
  for (std::vector<bool>& s : node_sets(topology)) sets.push_back(std::move(s));
  if (topology.nodes() > 1) {
    for (int count : {1, topology.nodes() / 2}) {
      std::vector<bool> s(static_cast<std::size_t>(n), false);
      for (int r = 0; r < count * topology.gpus_per_node(); ++r)
        s[static_cast<std::size_t>(r)] = true;
      sets.push_back(std::move(s));
    }
  }
  Bound bound;
  bound.collective = ir::Collective::AllToAll;
  double worst = 0;  // µs per byte of M... as seconds per GB: s (N - s) / (N · flow)
  for (const bool reversed : {false, true}) {
    FlowGraph& graph = reversed ? out : in;
    for (const std::vector<bool>& s : sets) {
      const int inside = static_cast<int>(std::count(s.begin(), s.end(), true));
      const double flow = flow_into(graph, s);
      if (!(flow > 0)) {
        throw std::invalid_argument(
            fmt::format("{} carry nothing", describe_cut(topology, s, reversed)));
      }
      const double cost = static_cast<double>(inside) * (n - inside) / (n * flow);
      if (cost > worst) {
        worst = cost;
        bound.cut = describe_cut(topology, s, reversed);
        groups = set_groups(s);
      }
    }
  }
  bound.algbw_gbs = 1 / worst;
  return bound;
}

// The max-flow into (out of, reversed) a set of GPUs from all the others, GB/s.
double flow_into(FlowGraph& graph, const std::vector<bool>& inside) {
  for (int r = 0; r < graph.ranks(); ++r) {
    const bool in = inside[static_cast<std::size_t>(r)];
    graph.set_source(r, in ? 0 : detail::kUnbounded);
    graph.set_sink(r, in ? detail::kUnbounded : 0);
  }
  return graph.max_flow();
}

// One node of at most this many GPUs has every grouping of them checked for allreduce: 2^G
// max-flows each way, then every partition of the GPUs (Bell(10) = 115,975 sums at 10 GPUs).
constexpr int kEveryPartitionGpus = 10;

// "the links into 4 groups of GPUs, together ({0, 1} {2} {3, 5} {4})".
std::string describe_groups(const Groups& groups, int count, bool reversed) {
  std::string list;
  for (int g = 0; g < count; ++g) {
    std::string members;
    for (std::size_t r = 0; r < groups.size(); ++r) {
      if (groups[r] == g) members += fmt::format("{}{}", members.empty() ? "" : ", ", r);
    }
    list += fmt::format("{}{{{}}}", g ? " " : "", members);
  }
  return fmt::format("the links {} {} groups of GPUs, together ({})", reversed ? "out of" : "into",
                     count, list);
}

// Every partition of one node's GPUs into k groups: the groups take in (send out) 2 (k - 1) M
// through the sum of their max-flows in (out). Single GPUs and two groups are the partitions the
// bound checked before; between them, a weak GPU's links can bind only with its neighbours as a
// group (a DGX-1's six GPUs, whose trees packed both ways reach this bound and not the one of
// single GPUs: Nash-Williams and Tutte's partition condition, on these links).
template <typename Consider>
void every_partition(const predict::Topology& topology, FlowGraph& in, FlowGraph& out,
                     Consider& consider) {
  const int n = topology.ranks();
  const unsigned full = (1U << n) - 1;
  // Max-flows into and out of every set short of the node (indexed by the set's bits).
  std::vector<double> into(full, 0);
  std::vector<double> out_of(full, 0);
  for (unsigned mask = 1; mask < full; ++mask) {
    std::vector<bool> s(static_cast<std::size_t>(n), false);
    for (int r = 0; r < n; ++r) s[static_cast<std::size_t>(r)] = (mask >> r & 1U) != 0;
    into[mask] = flow_into(in, s);
    out_of[mask] = flow_into(out, s);
  }
  // Partitions as restricted growth strings: rank r's group is at most one more than the highest
  // group of the ranks before it.
  std::vector<int> group(static_cast<std::size_t>(n), 0);
  std::vector<unsigned> members(static_cast<std::size_t>(n), 0);
  double worst = 0;
  Groups worst_groups;
  int worst_count = 0;
  bool worst_reversed = false;
  const auto visit = [&](int count) {
    double sum_in = 0;
    double sum_out = 0;
    for (int g = 0; g < count; ++g) {
      sum_in += into[members[static_cast<std::size_t>(g)]];
      sum_out += out_of[members[static_cast<std::size_t>(g)]];
    }
    const double cost = 2.0 * (count - 1) / std::min(sum_in, sum_out);
    if (cost > worst) {
      worst = cost;
      worst_groups.assign(group.begin(), group.end());
      worst_count = count;
      worst_reversed = sum_out < sum_in;
    }
  };
  // Depth-first over the ranks; `count` groups so far.
  const auto place = [&](const auto& self, int r, int count) -> void {
    if (r == n) {
      if (count >= 2) visit(count);
      return;
    }
    for (int g = 0; g <= count; ++g) {
      group[static_cast<std::size_t>(r)] = g;
      members[static_cast<std::size_t>(g)] |= 1U << r;
      self(self, r + 1, std::max(count, g + 1));
      members[static_cast<std::size_t>(g)] &= ~(1U << r);
    }
  };
  place(place, 0, 0);
  if (worst > 0) {
    consider(worst, describe_groups(worst_groups, worst_count, worst_reversed), worst_groups);
  }
}

// Allreduce (Patarasuk and Yuan's argument, per grouping of the GPUs): with the GPUs in k groups,
// every element's k partial values must cross between groups k - 1 times to be reduced and its
// sum k - 1 times to reach every group, so the groups together take in 2 (k - 1) M bytes at least,
// through the sum of their capacities in (and send as many out). Groupings: single GPUs, nodes,
// and a set of a node's GPUs (node_sets) with the rest. Besides, any one set of GPUs takes in M
// (the others' partial sum) and sends M out. On a symmetric machine this is the reduce-scatter plus
// allgather bound; where links are uneven it is lower, because a weak GPU need not take its full
// share (a leaf of every tree takes M in and sends M out).
Bound allreduce_bound(const predict::Topology& topology, FlowGraph& in, FlowGraph& out,
                      Groups& groups) {
  const int n = topology.ranks();
  const int nodes = topology.nodes();
  const std::vector<int> ranks = representative_ranks(topology);
  Bound bound;
  bound.collective = ir::Collective::AllReduce;
  double worst = 0;  // seconds per GB of M
  auto consider = [&](double cost, std::string cut, Groups sides) {
    if (cost > worst) {
      worst = cost;
      bound.cut = std::move(cut);
      groups = std::move(sides);
    }
  };
  Groups each_gpu(static_cast<std::size_t>(n));
  Groups each_node(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    each_gpu[static_cast<std::size_t>(r)] = r;
    each_node[static_cast<std::size_t>(r)] = r / topology.gpus_per_node();
  }
  for (const bool reversed : {false, true}) {
    FlowGraph& graph = reversed ? out : in;
    const char* way = reversed ? "out of" : "into";
    double total = 0;
    for (int r : ranks) {
      std::vector<bool> s(static_cast<std::size_t>(n), false);
      s[static_cast<std::size_t>(r)] = true;
      const double flow = flow_into(graph, s);
      if (!(flow > 0)) {
        throw std::invalid_argument(
            fmt::format("{} has no path {} it", gpu_name(topology, r), way));
      }
      total += flow;
      consider(1 / flow, describe_cut(topology, s, reversed), set_groups(s));
    }
    total *= static_cast<double>(n) / static_cast<double>(ranks.size());
    consider(2.0 * (n - 1) / total, fmt::format("the links {} every GPU, together", way), each_gpu);
    if (nodes > 1) {
      std::vector<bool> s(static_cast<std::size_t>(n), false);
      for (int r = 0; r < topology.gpus_per_node(); ++r) s[static_cast<std::size_t>(r)] = true;
      const double flow = flow_into(graph, s);
      consider(1 / flow, describe_cut(topology, s, reversed), set_groups(s));
      consider(2.0 * (nodes - 1) / (nodes * flow),
               fmt::format("the links {} every node, together", way), each_node);
    }
  }
  // Two groups, a set of a node's GPUs and the rest: 2 M cross between them (the sockets of a
  // PCIe machine).
  for (const std::vector<bool>& s : node_sets(topology)) {
    const double into = flow_into(in, s);
    const double out_of = flow_into(out, s);
    consider(2 / (into + out_of), fmt::format("{}, both ways", describe_cut(topology, s, false)),
             set_groups(s));
  }
  if (nodes == 1 && n <= kEveryPartitionGpus) {
    every_partition(topology, in, out, consider);
  }
  bound.algbw_gbs = 1 / worst;
  return bound;
}

// Per protocol, what every call pays besides its transfer (bound.h): the launch, the protocol's
// call latency and the cheapest hop between two ranks on different sides of the cut. Pairs with a
// rank of node 0 stand for all: the other nodes are copies of it, joined by one network.
std::vector<ProtocolFloor> floors(const predict::Topology& topology, const Groups& groups) {
  std::array<bool, predict::kLinkTypes> crossing{};
  const int n = topology.ranks();
  for (const int a : representative_ranks(topology)) {
    for (int b = 0; b < n; ++b) {
      if (groups[static_cast<std::size_t>(a)] == groups[static_cast<std::size_t>(b)]) continue;
      crossing[static_cast<std::size_t>(topology.route_type(a, b))] = true;
      crossing[static_cast<std::size_t>(topology.route_type(b, a))] = true;
    }
  }
  std::vector<ProtocolFloor> out;
  for (const ir::Protocol protocol :
       {ir::Protocol::Simple, ir::Protocol::LL, ir::Protocol::LL128}) {
    const predict::ProtocolCosts& costs = topology.costs().protocol(protocol);
    double hop = std::numeric_limits<double>::infinity();
    for (std::size_t type = 0; type < predict::kLinkTypes; ++type) {
      if (crossing[type]) hop = std::min(hop, costs.hop_us(static_cast<predict::LinkType>(type)));
    }
    if (!std::isfinite(hop)) hop = 0;
    ProtocolFloor f;
    f.protocol = protocol;
    f.latency_us = topology.costs().launch_latency_us + costs.call_latency_us + hop;
    f.efficiency = costs.payload_efficiency > 0 ? std::min(1.0, costs.payload_efficiency) : 1;
    out.push_back(f);
  }
  return out;
}

// Across nodes, the cut around node 0: what `collective` moves over it, per byte of M, over its
// max-flow, as an algbw (the same arguments as the binding cut's, for that one set), with floors
// whose hop is the network's. Nothing on one node. `in` and `out` are the links as the binding
// cut's search had them, null where the collective does not take that way.
std::optional<Cut> node_cut(const predict::Topology& topology, ir::Collective collective,
                            FlowGraph* in, FlowGraph* out) {
  const int n = topology.ranks();
  const int gpus = topology.gpus_per_node();
  const int nodes = topology.nodes();
  if (nodes < 2) return std::nullopt;
  std::vector<bool> node0(static_cast<std::size_t>(n), false);
  for (int r = 0; r < gpus; ++r) node0[static_cast<std::size_t>(r)] = true;
  const double into = in ? flow_into(*in, node0) : 0;
  const double out_of = out ? flow_into(*out, node0) : 0;
  if ((in && !(into > 0)) || (out && !(out_of > 0))) {
    return std::nullopt;  // the binding cut has said why
  }
  const double others = static_cast<double>(n - gpus) / n;  // of M, per node
  double cost = 0;                                          // seconds per GB of M
  bool reversed = false;
  switch (collective) {
    case ir::Collective::AllGather:  // the node takes in the blocks it lacks
      cost = others / into;
      break;
    case ir::Collective::ReduceScatter:  // and sends out what the others' blocks need of it
      cost = others / out_of;
      reversed = true;
      break;
    case ir::Collective::AllReduce: {  // every node takes in and sends out 2 (N - 1) / N of M
      const double together = 2.0 * (nodes - 1) / nodes;
      cost = std::max(together / into, together / out_of);
      reversed = out_of < into;
      break;
    }
    case ir::Collective::AllToAll:  // G (N - G) M / N in and out
      cost = std::max(gpus * others / into, gpus * others / out_of);
      reversed = out_of < into;
      break;
    default:
      return std::nullopt;
  }
  Cut cut;
  cut.algbw_gbs = 1 / cost;
  cut.cut = describe_cut(topology, node0, reversed);
  cut.floors = floors(topology, set_groups(node0));
  return cut;
}

// Node 0's NICs that no GPU's route to the next node leaves through (Bound::left_out). A GPU
// leaves through one NIC whatever its peer, so its route to one rank of the next node shows it.
std::vector<std::string> unused_nics(const predict::Topology& topology) {
  std::vector<std::string> out;
  if (topology.nodes() < 2) return out;
  const auto& links = topology.links();
  const auto& vertices = topology.vertices();
  std::vector<bool> used(vertices.size(), false);
  for (const int r : representative_ranks(topology)) {
    for (const int l : topology.route(r, topology.gpus_per_node())) {
      const predict::Link& link = links[static_cast<std::size_t>(l)];
      if (link.type == predict::LinkType::Network) used[static_cast<std::size_t>(link.from)] = true;
    }
  }
  for (std::size_t l = 0; l < links.size(); ++l) {
    const predict::Link& link = links[l];
    const predict::Vertex& nic = vertices[static_cast<std::size_t>(link.from)];
    if (link.type != predict::LinkType::Network || nic.kind != predict::VertexKind::Nic ||
        nic.node != 0 || used[static_cast<std::size_t>(link.from)]) {
      continue;
    }
    out.push_back(fmt::format(
        "{} ({:.1f} GB/s): no GPU's route to another node leaves through it (each GPU takes the "
        "NIC it reaches at the least cost), so no schedule can use it",
        nic.name, link.bandwidth_gbs));
  }
  return out;
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
  if (collective != ir::Collective::AllGather && collective != ir::Collective::ReduceScatter &&
      collective != ir::Collective::AllReduce && collective != ir::Collective::AllToAll) {
    throw std::invalid_argument(fmt::format(
        "no synthesis for {}: allgather, reducescatter, allreduce and alltoall are synthesized",
        ir::to_string(collective)));
  }
  const int n = topology.ranks();
  // The links each way the collective takes, built once for the binding cut and the node's:
  // building one walks every route between two GPUs.
  std::optional<FlowGraph> in;
  std::optional<FlowGraph> out;
  if (collective != ir::Collective::ReduceScatter) in.emplace(topology, false);
  if (collective != ir::Collective::AllGather) out.emplace(topology, true);
  Bound bound;
  bound.collective = collective;
  Groups groups;
  if (collective == ir::Collective::AllGather || collective == ir::Collective::ReduceScatter) {
    const bool reversed = collective == ir::Collective::ReduceScatter;
    const TreeRate rate = tree_rate(topology, reversed ? *out : *in, reversed);
    bound.algbw_gbs = n * rate.per_root_gbs;
    bound.cut = rate.cut;
    groups = rate.groups;
  } else if (collective == ir::Collective::AllReduce) {
    bound = allreduce_bound(topology, *in, *out, groups);
  } else {
    bound = alltoall_bound(topology, *in, *out, groups);
  }
  bound.floors = floors(topology, groups);
  bound.node = node_cut(topology, collective, in ? &*in : nullptr, out ? &*out : nullptr);
  bound.left_out = unused_nics(topology);
  return bound;
}

void line_rate_bound(Bound& bound, const predict::Topology& topology) {
  if (bound.line_rate_algbw_gbs > 0) return;
  bound.line_rate_algbw_gbs = bandwidth_bound(topology.at_line_rate(), bound.collective).algbw_gbs;
}

}  // namespace weft::synthesis
