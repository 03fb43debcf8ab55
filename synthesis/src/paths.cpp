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

}  // namespace

namespace {

// One run of the method: every root's unit of data routed again and again on the path `cheapest`
// picks under the current lengths, until the lengths say the links are full; then scaled so that
// the fullest link is exactly full. Rates per root and path (local orders).
template <typename Cheapest>
std::vector<std::map<std::vector<int>, double>> concurrent_flow(const predict::Topology& topology,
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
  std::vector<std::map<std::vector<int>, double>> flow(static_cast<std::size_t>(n));
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
        const std::vector<int> order = cheapest(root, cost);
        std::vector<int> touched;
        for (std::size_t i = 0; i + 1 < order.size(); ++i) {
          for (int l : hops.links[static_cast<std::size_t>(order[i])]
                                 [static_cast<std::size_t>(order[i + 1])]) {
            if (uses[static_cast<std::size_t>(l)]++ == 0) touched.push_back(l);
          }
        }
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
        flow[static_cast<std::size_t>(root)][order] += amount;
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

double path_cost(const std::vector<int>& order, const std::vector<std::vector<double>>& cost) {
  double c = 0;
  for (std::size_t i = 0; i + 1 < order.size(); ++i) {
    c += cost[static_cast<std::size_t>(order[i])][static_cast<std::size_t>(order[i + 1])];
  }
  return c;
}

}  // namespace

std::vector<std::vector<BroadcastPath>> pack_paths(const predict::Topology& topology,
                                                   const std::vector<int>& ranks, int most) {
  const int n = static_cast<int>(ranks.size());
  std::vector<std::vector<BroadcastPath>> out;
  if (n < 2 || n > kMaxPathGpus || most < 1) return out;
  Hops hops{n, std::vector<std::vector<std::vector<int>>>(
                   static_cast<std::size_t>(n),
                   std::vector<std::vector<int>>(static_cast<std::size_t>(n)))};
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      const auto route =
          topology.route(ranks[static_cast<std::size_t>(a)], ranks[static_cast<std::size_t>(b)]);
      hops.links[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)].assign(route.begin(),
                                                                                  route.end());
    }
  }
  // First over every Hamiltonian path, which spreads each root's data over many of them; then,
  // over each root's `most` heaviest only, which settles their rates so that together they
  // carry as much as such a few can.
  CheapestPath cheapest(n);
  const auto spread = concurrent_flow(topology, hops, 0.1, [&cheapest](int root, const auto& cost) {
    return cheapest(root, cost);
  });
  std::vector<std::vector<std::vector<int>>> kept(static_cast<std::size_t>(n));
  for (int root = 0; root < n; ++root) {
    std::vector<std::pair<double, std::vector<int>>> ranked;
    for (const auto& [order, rate] : spread[static_cast<std::size_t>(root)]) {
      ranked.emplace_back(rate, order);
    }
    std::sort(ranked.begin(), ranked.end(),
              [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t i = 0; i < ranked.size() && static_cast<int>(i) < most; ++i) {
      kept[static_cast<std::size_t>(root)].push_back(ranked[i].second);
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
    for (const auto& [order, rate] : settled[static_cast<std::size_t>(root)]) {
      BroadcastPath p;
      for (int local : order) p.order.push_back(ranks[static_cast<std::size_t>(local)]);
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

}  // namespace weft::synthesis
