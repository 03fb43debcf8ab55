#include "weft/synthesis/rings.h"

#include <algorithm>
#include <limits>
#include <span>

namespace weft::synthesis {

namespace {

// What a ring in the making uses of every link, and the width that leaves it.
class Usage {
 public:
  Usage(const predict::Topology& topology, const std::vector<double>& remaining)
      : topology_(topology), remaining_(remaining), uses_(remaining.size(), 0) {}

  // The ring's width after adding the hop from → to to a ring of width `width`.
  double add(int from, int to, double width) {
    for (int link : topology_.route(from, to)) {
      const auto l = static_cast<std::size_t>(link);
      width = std::min(width, remaining_[l] / ++uses_[l]);
    }
    return width;
  }
  void remove(int from, int to) {
    for (int link : topology_.route(from, to)) --uses_[static_cast<std::size_t>(link)];
  }

 private:
  const predict::Topology& topology_;
  const std::vector<double>& remaining_;
  std::vector<int> uses_;
};

struct Search {
  const predict::Topology& topology;
  const std::vector<int>& ranks;
  Usage usage;
  std::vector<int> path;
  std::vector<bool> visited;
  std::vector<int> best;
  double best_width = 0;

  void extend(double width) {
    if (width <= best_width) return;  // adding hops only narrows a ring
    const int last = path.back();
    if (path.size() == ranks.size()) {
      const double closed = usage.add(last, path.front(), width);
      usage.remove(last, path.front());
      if (closed > best_width) {
        best_width = closed;
        best = path;
      }
      return;
    }
    for (std::size_t i = 1; i < ranks.size(); ++i) {
      if (visited[i]) continue;
      visited[i] = true;
      path.push_back(ranks[i]);
      extend(usage.add(last, ranks[i], width));
      usage.remove(last, ranks[i]);
      path.pop_back();
      visited[i] = false;
    }
  }

  void greedy() {
    for (std::size_t start = 0; start < ranks.size(); ++start) {
      std::vector<int> order{ranks[start]};
      std::vector<bool> taken(ranks.size(), false);
      taken[start] = true;
      double width = std::numeric_limits<double>::infinity();
      std::vector<std::pair<int, int>> hops;
      while (order.size() < ranks.size()) {
        double next_width = -1;
        std::size_t next = 0;
        for (std::size_t i = 0; i < ranks.size(); ++i) {
          if (taken[i]) continue;
          const double w = usage.add(order.back(), ranks[i], width);
          usage.remove(order.back(), ranks[i]);
          if (w > next_width) {
            next_width = w;
            next = i;
          }
        }
        width = usage.add(order.back(), ranks[next], width);
        hops.emplace_back(order.back(), ranks[next]);
        order.push_back(ranks[next]);
        taken[next] = true;
      }
      width = usage.add(order.back(), order.front(), width);
      hops.emplace_back(order.back(), order.front());
      for (const auto& [from, to] : hops) usage.remove(from, to);
      if (width > best_width) {
        best_width = width;
        best = order;
      }
    }
  }
};

}  // namespace

std::vector<NodeRing> pack_rings(const predict::Topology& topology, const std::vector<int>& ranks,
                                 int max_rings) {
  std::vector<NodeRing> rings;
  if (ranks.size() < 2) return rings;
  std::vector<double> remaining;
  remaining.reserve(topology.links().size());
  for (const predict::Link& link : topology.links()) remaining.push_back(link.bandwidth_gbs);
  while (static_cast<int>(rings.size()) < max_rings) {
    Search search{topology,
                  ranks,
                  Usage(topology, remaining),
                  {ranks.front()},
                  std::vector<bool>(ranks.size(), false),
                  {},
                  0};
    search.visited[0] = true;
    if (ranks.size() <= 9) {
      search.extend(std::numeric_limits<double>::infinity());
    } else {
      search.greedy();
    }
    if (search.best.empty() || search.best_width <= 0 ||
        (!rings.empty() && search.best_width < 0.1 * rings.front().rate_gbs)) {
      break;
    }
    for (std::size_t i = 0; i < search.best.size(); ++i) {
      const int from = search.best[i];
      const int to = search.best[(i + 1) % search.best.size()];
      for (int link : topology.route(from, to)) {
        remaining[static_cast<std::size_t>(link)] -= search.best_width;
      }
    }
    rings.push_back({search.best, search.best_width});
  }
  return rings;
}

}  // namespace weft::synthesis
