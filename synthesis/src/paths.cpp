#include "weft/synthesis/paths.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>

namespace weft::synthesis {

namespace {

// The links (by index) every hop's route crosses, for the ranks of one node.
struct Hops {
  int n = 0;
  std::vector<std::vector<std::vector<int>>> links;  // [from][to] → link indices
};

// The cheapest Hamiltonian path from `root` under `cost[from][to]` (Held–Karp). The method below
// asks for one thousands of times, so its tables are kept between calls.
class CheapestPath {
 public:
  explicit CheapestPath(int n)
      : n_(n),
        best_(static_cast<std::size_t>((1 << n) * n)),
        prev_(static_cast<std::size_t>((1 << n) * n)),
        cost_(static_cast<std::size_t>(n * n)) {}

  std::vector<int> operator()(int root, const std::vector<std::vector<double>>& cost) {
    const int n = n_;
    const int full = (1 << n) - 1;
    const double inf = std::numeric_limits<double>::infinity();
    for (int v = 0; v < n; ++v) {
      for (int w = 0; w < n; ++w) {
        cost_[static_cast<std::size_t>(v * n + w)] =
            cost[static_cast<std::size_t>(v)][static_cast<std::size_t>(w)];
      }
    }
    std::fill(best_.begin(), best_.end(), inf);
    auto at = [n](int mask, int v) { return static_cast<std::size_t>(mask * n + v); };
    best_[at(1 << root, root)] = 0;
    prev_[at(1 << root, root)] = -1;
    // A state is read only once it is reached (best finite), and then its prev was written.
    for (int mask = 1; mask <= full; ++mask) {
      if (!(mask & (1 << root))) continue;
      for (int v = 0; v < n; ++v) {
        const double here = best_[at(mask, v)];
        if (here == inf) continue;
        const double* from_v = &cost_[static_cast<std::size_t>(v * n)];
        // The ranks not on the path yet, in ascending order.
        for (unsigned rest = static_cast<unsigned>(~mask & full); rest != 0; rest &= rest - 1) {
          const int w = std::countr_zero(rest);
          const double c = here + from_v[w];
          const std::size_t next = at(mask | (1 << w), w);
          if (c < best_[next]) {
            best_[next] = c;
            prev_[next] = v;
          }
        }
      }
    }
    int end = root == 0 && n > 1 ? 1 : 0;
    for (int v = 0; v < n; ++v) {
      if (best_[at(full, v)] < best_[at(full, end)]) end = v;
    }
    std::vector<int> order;
    for (int mask = full, v = end; v >= 0;) {
      order.push_back(v);
      const int p = prev_[at(mask, v)];
      mask &= ~(1 << v);
      v = p;
    }
    std::reverse(order.begin(), order.end());
    return order;
  }

 private:
  int n_;
  std::vector<double> best_;
  std::vector<int> prev_;
  std::vector<double> cost_;  // [from * n + to]
};

// The cheapest spanning tree under symmetric costs (Prim's, O(n²) on the complete graph of
// hops), rooted at `root`: its ranks in breadth-first order from the root, each after the rank
// that sends to it (`from`).
BroadcastPath cheapest_tree(int root, const std::vector<std::vector<double>>& cost) {
  const auto n = cost.size();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> reach(n, inf);
  std::vector<int> parent(n, -1);
  std::vector<bool> in(n, false);
  reach[static_cast<std::size_t>(root)] = 0;
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t v = n;
    for (std::size_t w = 0; w < n; ++w) {
      if (!in[w] && (v == n || reach[w] < reach[v])) v = w;
    }
    in[v] = true;
    for (std::size_t w = 0; w < n; ++w) {
      if (!in[w] && cost[v][w] < reach[w]) {
        reach[w] = cost[v][w];
        parent[w] = static_cast<int>(v);
      }
    }
  }
  BroadcastPath tree;
  tree.order.push_back(root);
  tree.from.push_back(-1);
  for (std::size_t i = 0; i < tree.order.size(); ++i) {
    for (std::size_t w = 0; w < n; ++w) {
      if (parent[w] == tree.order[i] && static_cast<int>(w) != root) {
        tree.order.push_back(static_cast<int>(w));
        tree.from.push_back(tree.order[i]);
      }
    }
  }
  return tree;
}

// A path's order as a BroadcastPath (no `from`).
BroadcastPath as_path(std::vector<int> order) {
  BroadcastPath p;
  p.order = std::move(order);
  return p;
}

}  // namespace

namespace {

// `visit(sender, receiver)` for every hop of a path or tree, in order (hops_along without its
// vector: the method below walks hops millions of times).
template <typename Visit>
void for_each_hop(const BroadcastPath& path, Visit&& visit) {
  for (std::size_t i = 1; i < path.order.size(); ++i) {
    visit(path.from.empty() ? path.order[i - 1] : path.from[i], path.order[i]);
  }
}

}  // namespace

std::vector<std::pair<int, int>> hops_along(const BroadcastPath& path) {
  std::vector<std::pair<int, int>> hops;
  for_each_hop(path, [&hops](int a, int b) { hops.emplace_back(a, b); });
  return hops;
}

namespace {

// A path or tree as a key: its order and senders.
using Shape = std::pair<std::vector<int>, std::vector<int>>;

// One run of the method: every root's unit of data routed again and again on the path `cheapest`
// picks under the current lengths, until the lengths say the links are full; then scaled so that
// the fullest link is exactly full. Rates per root and path or tree (local ranks).
template <typename Cheapest>
std::vector<std::map<Shape, double>> concurrent_flow(const predict::Topology& topology,
                                                     const Hops& hops, double epsilon,
                                                     Cheapest cheapest) {
  const int n = hops.n;
  const auto& links = topology.links();
  std::vector<bool> used(links.size(), false);
  int m = 0;
  for (const auto& row : hops.links) {
    for (const auto& route : row) {
      for (int l : route) {
        if (!used[static_cast<std::size_t>(l)]) ++m;
        used[static_cast<std::size_t>(l)] = true;
      }
    }
  }
  // Lengths start at δ / capacity; the method stops once Σ length × capacity reaches 1.
  const double delta = (1 + epsilon) / std::pow((1 + epsilon) * m, 1 / epsilon);
  std::vector<double> length(links.size(), 0);
  double total = 0;
  for (std::size_t l = 0; l < links.size(); ++l) {
    if (!used[l]) continue;
    length[l] = delta / links[l].bandwidth_gbs;
    total += delta;
  }
  std::vector<std::map<Shape, double>> flow(static_cast<std::size_t>(n));
  std::vector<double> carried(links.size(), 0);
  std::vector<std::vector<double>> cost(static_cast<std::size_t>(n),
                                        std::vector<double>(static_cast<std::size_t>(n)));
  std::vector<int> uses(links.size(), 0);
  while (total < 1) {
    for (int root = 0; root < n && total < 1; ++root) {
      double demand = 1;
      while (demand > 0 && total < 1) {
        for (int a = 0; a < n; ++a) {
          for (int b = 0; b < n; ++b) {
            double c = 0;
            for (int l : hops.links[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)]) {
              c += length[static_cast<std::size_t>(l)];
            }
            cost[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)] = c;
          }
        }
        BroadcastPath shape = cheapest(root, cost);
        std::vector<int> touched;
        for_each_hop(shape, [&](int a, int b) {
          for (int l : hops.links[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)]) {
            if (uses[static_cast<std::size_t>(l)]++ == 0) touched.push_back(l);
          }
        });
        double amount = demand;
        for (int l : touched) {
          amount = std::min(amount, links[static_cast<std::size_t>(l)].bandwidth_gbs /
                                        uses[static_cast<std::size_t>(l)]);
        }
        for (int l : touched) {
          const auto li = static_cast<std::size_t>(l);
          const double c = links[li].bandwidth_gbs;
          carried[li] += amount * uses[li];
          const double grown = length[li] * (1 + epsilon * amount * uses[li] / c);
          total += (grown - length[li]) * c;
          length[li] = grown;
          uses[li] = 0;
        }
        flow[static_cast<std::size_t>(root)][{std::move(shape.order), std::move(shape.from)}] +=
            amount;
        demand -= amount;
      }
    }
  }
  double overuse = 0;
  for (std::size_t l = 0; l < links.size(); ++l) {
    if (used[l]) overuse = std::max(overuse, carried[l] / links[l].bandwidth_gbs);
  }
  for (auto& paths : flow) {
    for (auto& [order, rate] : paths) rate /= overuse;
  }
  return flow;
}

double path_cost(const BroadcastPath& path, const std::vector<std::vector<double>>& cost) {
  double c = 0;
  for_each_hop(path, [&](int a, int b) {
    c += cost[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)];
  });
  return c;
}

}  // namespace

double broadcast_rate(const std::vector<std::vector<BroadcastPath>>& paths) {
  double rate = std::numeric_limits<double>::infinity();
  for (const auto& mine : paths) {
    double sum = 0;
    for (const BroadcastPath& p : mine) sum += p.rate_gbs;
    rate = std::min(rate, sum);
  }
  return rate;
}

namespace {

Hops hops_of(const predict::Topology& topology, const std::vector<int>& ranks, bool both_ways) {
  const int n = static_cast<int>(ranks.size());
  Hops hops{n, std::vector<std::vector<std::vector<int>>>(
                   static_cast<std::size_t>(n),
                   std::vector<std::vector<int>>(static_cast<std::size_t>(n)))};
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      const auto route =
          topology.route(ranks[static_cast<std::size_t>(a)], ranks[static_cast<std::size_t>(b)]);
      auto& links = hops.links[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)];
      links.assign(route.begin(), route.end());
      if (both_ways) {
        const auto back =
            topology.route(ranks[static_cast<std::size_t>(b)], ranks[static_cast<std::size_t>(a)]);
        links.insert(links.end(), back.begin(), back.end());
      }
    }
  }
  return hops;
}

}  // namespace

namespace {

// Per root, its paths or trees as `cheapest` finds them: first over every one it finds, which
// spreads each root's data over many; then over each root's `most` heaviest only, which settles
// their rates so that together they carry as much as such a few can.
template <typename Cheapest>
std::vector<std::vector<BroadcastPath>> pack(const predict::Topology& topology,
                                             const std::vector<int>& ranks, int most,
                                             bool both_ways, Cheapest cheapest) {
  const int n = static_cast<int>(ranks.size());
  std::vector<std::vector<BroadcastPath>> out;
  if (n < 2 || n > kMaxPathGpus || most < 1) return out;
  const Hops hops = hops_of(topology, ranks, both_ways);
  const auto spread = concurrent_flow(topology, hops, 0.1, cheapest);
  std::vector<std::vector<BroadcastPath>> kept(static_cast<std::size_t>(n));
  for (int root = 0; root < n; ++root) {
    std::vector<std::pair<double, Shape>> ranked;
    for (const auto& [shape, rate] : spread[static_cast<std::size_t>(root)]) {
      ranked.emplace_back(rate, shape);
    }
    std::sort(ranked.begin(), ranked.end(),
              [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t i = 0; i < ranked.size() && static_cast<int>(i) < most; ++i) {
      BroadcastPath p;
      p.order = ranked[i].second.first;
      p.from = ranked[i].second.second;
      kept[static_cast<std::size_t>(root)].push_back(std::move(p));
    }
  }
  const auto settled = concurrent_flow(topology, hops, 0.05, [&kept](int root, const auto& cost) {
    const auto& mine = kept[static_cast<std::size_t>(root)];
    std::size_t best = 0;
    for (std::size_t i = 1; i < mine.size(); ++i) {
      if (path_cost(mine[i], cost) < path_cost(mine[best], cost)) best = i;
    }
    return mine[best];
  });
  for (int root = 0; root < n; ++root) {
    std::vector<BroadcastPath> paths;
    for (const auto& [shape, rate] : settled[static_cast<std::size_t>(root)]) {
      BroadcastPath p;
      for (int local : shape.first) p.order.push_back(ranks[static_cast<std::size_t>(local)]);
      for (int local : shape.second) {
        p.from.push_back(local < 0 ? -1 : ranks[static_cast<std::size_t>(local)]);
      }
      p.rate_gbs = rate;
      paths.push_back(std::move(p));
    }
    std::sort(paths.begin(), paths.end(), [](const BroadcastPath& a, const BroadcastPath& b) {
      return a.rate_gbs > b.rate_gbs;
    });
    out.push_back(std::move(paths));
  }
  return out;
}

}  // namespace

std::vector<std::vector<BroadcastPath>> pack_paths(const predict::Topology& topology,
                                                   const std::vector<int>& ranks, int most,
                                                   bool both_ways) {
  const int n = static_cast<int>(ranks.size());
  if (n < 2 || n > kMaxPathGpus) return {};
  CheapestPath cheapest(n);
  return pack(topology, ranks, most, both_ways,
              [&cheapest](int root, const auto& cost) { return as_path(cheapest(root, cost)); });
}

std::vector<std::vector<BroadcastPath>> pack_trees(const predict::Topology& topology,
                                                   const std::vector<int>& ranks, int most) {
  return pack(topology, ranks, most, /*both_ways=*/true,
              [](int root, const auto& cost) { return cheapest_tree(root, cost); });
}

namespace {

// The lanes' load on the links, as a fraction of what each link carries when every root's data
// moves at `rate` (GB/s), and what a lane adds to the potential the local search lowers,
// Σ exp(α × load): it weighs the busiest links most without stalling, as their maximum would,
// where several are equally busy.
class LaneLoad {
 public:
  static constexpr double kAlpha = 30;

  LaneLoad(const predict::Topology& topology, const Hops& hops, double share_gbs)
      : hops_(hops), load_(topology.links().size(), 0), step_(topology.links().size(), 0) {
    for (std::size_t l = 0; l < step_.size(); ++l) {
      const double capacity = topology.links()[l].bandwidth_gbs;
      step_[l] = capacity > 0 ? share_gbs / capacity : 0;
    }
  }
  void add(const BroadcastPath& lane, double sign) {
    for_each_hop(lane, [&](int a, int b) {
      for (int l : hop(a, b)) {
        load_[static_cast<std::size_t>(l)] += sign * step_[static_cast<std::size_t>(l)];
      }
    });
  }
  // What a lane along `order` would add to the potential, hop by hop (exact where no two hops
  // cross one link).
  double rise(int from, int to) const {
    double c = 0;
    for (int l : hop(from, to)) {
      const auto li = static_cast<std::size_t>(l);
      c += std::exp(kAlpha * load_[li]) * std::expm1(kAlpha * step_[li]);
    }
    return c;
  }
  double busiest() const { return *std::max_element(load_.begin(), load_.end()); }

 private:
  const std::vector<int>& hop(int from, int to) const {
    return hops_.links[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)];
  }
  const Hops& hops_;
  std::vector<double> load_;
  std::vector<double> step_;  // per link: one lane's load on it
};

}  // namespace

std::vector<std::vector<BroadcastPath>> equal_lanes(
    const predict::Topology& topology, const std::vector<int>& ranks,
    const std::vector<std::vector<BroadcastPath>>& packed, int lanes, bool both_ways) {
  const int n = static_cast<int>(ranks.size());
  std::vector<std::vector<BroadcastPath>> out;
  if (n < 2 || n > kMaxPathGpus || lanes < 1 || static_cast<int>(packed.size()) != n) return out;
  std::map<int, int> local;
  for (int i = 0; i < n; ++i) local[ranks[static_cast<std::size_t>(i)]] = i;
  // The lanes' loads are measured against the packing's rate.
  const double rate = broadcast_rate(packed);
  if (!(rate > 0)) return out;
  const Hops hops = hops_of(topology, ranks, both_ways);
  LaneLoad load(topology, hops, rate / lanes);
  // Trees (from pack_trees) stay trees: the local search below looks for the cheapest tree.
  const bool trees = !packed.front().empty() && !packed.front().front().from.empty();
  // Apportioned by rate: each next lane to the path with the most rate per lane (D'Hondt).
  std::vector<std::vector<BroadcastPath>> orders(static_cast<std::size_t>(n));
  for (int root = 0; root < n; ++root) {
    const auto& paths = packed[static_cast<std::size_t>(root)];
    if (paths.empty()) return out;
    std::vector<int> given(paths.size(), 0);
    for (int lane = 0; lane < lanes; ++lane) {
      std::size_t pick = 0;
      for (std::size_t i = 1; i < paths.size(); ++i) {
        if (paths[i].rate_gbs / (given[i] + 1) > paths[pick].rate_gbs / (given[pick] + 1)) pick = i;
      }
      ++given[pick];
      BroadcastPath chosen;
      for (const int r : paths[pick].order) {
        const auto at = local.find(r);
        if (at == local.end()) return out;  // not a path over `ranks`
        chosen.order.push_back(at->second);
      }
      for (const int r : paths[pick].from) {
        const auto at = local.find(r);
        chosen.from.push_back(at == local.end() ? -1 : at->second);
      }
      if (chosen.from.size() != (trees ? chosen.order.size() : 0)) return out;  // paths and trees
      orders[static_cast<std::size_t>(root)].push_back(std::move(chosen));
    }
    for (const auto& order : orders[static_cast<std::size_t>(root)]) load.add(order, 1);
  }
  // Each lane in turn moves to the cheapest Hamiltonian path under the potential's rise, while
  // that lowers the potential. The lanes kept are those of the sweep whose busiest link was the
  // least busy, so never busier than the apportionment's.
  CheapestPath cheapest(n);
  std::vector<std::vector<double>> cost(static_cast<std::size_t>(n),
                                        std::vector<double>(static_cast<std::size_t>(n), 0));
  const auto path_rise = [&](const BroadcastPath& lane) {
    double c = 0;
    for_each_hop(lane, [&](int a, int b) { c += load.rise(a, b); });
    return c;
  };
  auto kept = orders;
  double kept_busiest = load.busiest();
  constexpr int kSweeps = 20;
  for (int sweep = 0; sweep < kSweeps; ++sweep) {
    bool moved = false;
    for (int root = 0; root < n; ++root) {
      for (auto& order : orders[static_cast<std::size_t>(root)]) {
        load.add(order, -1);
        for (int a = 0; a < n; ++a) {
          for (int b = 0; b < n; ++b) {
            cost[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)] =
                a == b ? 0 : load.rise(a, b);
          }
        }
        BroadcastPath better = trees ? cheapest_tree(root, cost) : as_path(cheapest(root, cost));
        if ((better.order != order.order || better.from != order.from) &&
            path_rise(better) < path_rise(order) * (1 - 1e-9)) {
          order = std::move(better);
          moved = true;
        }
        load.add(order, 1);
      }
    }
    if (load.busiest() < kept_busiest) {
      kept = orders;
      kept_busiest = load.busiest();
    }
    if (!moved) break;
  }
  // Every lane carries the same share: the busiest link decides it.
  const double each = kept_busiest > 0 ? rate / lanes / kept_busiest : rate / lanes;
  for (int root = 0; root < n; ++root) {
    std::vector<BroadcastPath> mine;
    for (const auto& lane : kept[static_cast<std::size_t>(root)]) {
      BroadcastPath p;
      for (const int i : lane.order) p.order.push_back(ranks[static_cast<std::size_t>(i)]);
      for (const int i : lane.from)
        p.from.push_back(i < 0 ? -1 : ranks[static_cast<std::size_t>(i)]);
      p.rate_gbs = each;
      mine.push_back(std::move(p));
    }
    out.push_back(std::move(mine));
  }
  return out;
}

}  // namespace weft::synthesis
