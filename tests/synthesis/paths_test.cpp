// Broadcast paths per origin, and the lanes of equal shares a sketch runs them in.
#include <algorithm>
#include <numeric>

#include <catch2/catch.hpp>

#include "support.h"
#include "weft/synthesis/bound.h"
#include "weft/synthesis/paths.h"

namespace weft::synthesis {
namespace {

using test::topology;

std::vector<int> node_ranks(const predict::Topology& t) {
  std::vector<int> ranks(static_cast<std::size_t>(t.gpus_per_node()));
  std::iota(ranks.begin(), ranks.end(), 0);
  return ranks;
}

// Every path (or tree) starts at its origin and visits every rank once, a tree's every rank after
// the one that sends to it, and the rates together fit every link (counted here from the routes,
// not taken from the packing). With `both_ways`, every hop loads its links both ways (allreduce).
void check_fits(const predict::Topology& t, const std::vector<int>& ranks,
                const std::vector<std::vector<BroadcastPath>>& paths, bool both_ways = false) {
  REQUIRE(paths.size() == ranks.size());
  std::vector<double> carried(t.links().size(), 0);
  for (std::size_t root = 0; root < paths.size(); ++root) {
    for (const BroadcastPath& p : paths[root]) {
      REQUIRE(p.order.size() == ranks.size());
      CHECK(p.order.front() == ranks[root]);
      std::vector<int> sorted = p.order;
      std::sort(sorted.begin(), sorted.end());
      CHECK(sorted == ranks);
      if (!p.from.empty()) {
        REQUIRE(p.from.size() == p.order.size());
        CHECK(p.from.front() == -1);
        for (std::size_t i = 1; i < p.order.size(); ++i) {
          const auto sender = std::find(p.order.begin(), p.order.end(), p.from[i]);
          CHECK(sender < p.order.begin() + static_cast<std::ptrdiff_t>(i));
        }
      }
      const auto hops = hops_along(p);
      CHECK(hops.size() + 1 == p.order.size());
      for (const auto& [from, to] : hops) {
        for (const int l : t.route(from, to)) carried[static_cast<std::size_t>(l)] += p.rate_gbs;
        if (!both_ways) continue;
        for (const int l : t.route(to, from)) carried[static_cast<std::size_t>(l)] += p.rate_gbs;
      }
    }
  }
  for (std::size_t l = 0; l < carried.size(); ++l) {
    INFO("link " << l);
    CHECK(carried[l] <= t.links()[l].bandwidth_gbs * (1 + 1e-6));
  }
}

// A DGX-1 with an NVLink down, and 6 of its GPUs: the packing reaches the bound's rate (every
// GPU's data at the algbw bound over the ranks); eight lanes of equal shares, apportioned by the
// packing's rates alone, reach 93 % and 95 % of it; placed by the local search, nearly all.
TEST_CASE("Paths on a degraded DGX-1 reach its bound, and lanes of equal shares nearly so") {
  const auto file = test::dgx1_file();
  if (!file) return;
  struct Case {
    const char* name;
    predict::Topology machine;
    double lanes_at_least;  // of the packing's rate
  };
  Case cases[] = {{"NVLink 0-1 down", topology(*file, 1, 0, {{0, 1, 0}}), 0.97},
                  {"6 of 8 GPUs", topology(*file, 1, 6), 0.98}};
  for (const Case& c : cases) {
    INFO(c.name);
    const std::vector<int> ranks = node_ranks(c.machine);
    const auto packed = pack_paths(c.machine, ranks, 8);
    check_fits(c.machine, ranks, packed);
    const Bound bound = bandwidth_bound(c.machine, ir::Collective::AllGather);
    const double packed_rate = broadcast_rate(packed);
    CHECK(packed_rate * static_cast<double>(ranks.size()) >= 0.99 * bound.algbw_gbs);

    const auto lanes = equal_lanes(c.machine, ranks, packed, 8);
    check_fits(c.machine, ranks, lanes);
    for (const auto& mine : lanes) {
      REQUIRE(mine.size() == 8);
      for (const BroadcastPath& p : mine) CHECK(p.rate_gbs == mine.front().rate_gbs);
    }
    CHECK(broadcast_rate(lanes) >= c.lanes_at_least * packed_rate);
  }
}

// Allreduce sends each piece back along its path: packed for the load both ways, the paths on a
// DGX-1 with an NVLink down reach the allreduce bound (each GPU's data moving both ways at the
// bound's algbw over the ranks), and four lanes of equal shares come within 3 % of them.
TEST_CASE("Paths packed both ways reach a degraded DGX-1's allreduce bound") {
  const auto file = test::dgx1_file();
  if (!file) return;
  const predict::Topology t = topology(*file, 1, 0, {{0, 1, 0}});
  const std::vector<int> ranks = node_ranks(t);
  const auto packed = pack_paths(t, ranks, 8, /*both_ways=*/true);
  check_fits(t, ranks, packed, true);
  const double rate = broadcast_rate(packed);
  CHECK(rate * 8 >= 0.99 * bandwidth_bound(t, ir::Collective::AllReduce).algbw_gbs);
  // Packed one way only, the same paths would overload the links coming back.
  CHECK(broadcast_rate(pack_paths(t, ranks, 8)) > 1.5 * rate);
  const auto lanes = equal_lanes(t, ranks, packed, 4, true);
  check_fits(t, ranks, lanes, true);
  CHECK(broadcast_rate(lanes) >= 0.97 * rate);
}

TEST_CASE("Equal lanes on an NVSwitch node fill it, and need a packing to start from") {
  const predict::Topology t = topology("h100-nvswitch");
  const std::vector<int> ranks = node_ranks(t);
  const auto packed = pack_paths(t, ranks, 8);
  const auto lanes = equal_lanes(t, ranks, packed, 4);
  check_fits(t, ranks, lanes);
  CHECK(broadcast_rate(lanes) >= 0.99 * broadcast_rate(packed));
  CHECK(equal_lanes(t, ranks, {}, 4).empty());
  CHECK(equal_lanes(t, ranks, packed, 0).empty());
}

// On 6 of a DGX-1's GPUs, a path both ways crosses between the quad and the two GPUs beyond it
// more often than it must, so paths carry 56 GB/s of allreduce (90 % of the bound); spanning
// trees, which cross between those three groups exactly twice each, reach the bound, and their
// four lanes of equal shares come within 5 % of it.
TEST_CASE("Spanning trees packed both ways reach the allreduce bound on 6 of a DGX-1's GPUs") {
  const auto file = test::dgx1_file();
  if (!file) return;
  const predict::Topology t = topology(*file, 1, 6);
  const std::vector<int> ranks = node_ranks(t);
  const double bound = bandwidth_bound(t, ir::Collective::AllReduce).algbw_gbs;
  const auto trees = pack_trees(t, ranks, 8);
  check_fits(t, ranks, trees, true);
  for (const auto& mine : trees) {
    REQUIRE(!mine.empty());
    for (const BroadcastPath& tree : mine) CHECK(tree.from.size() == tree.order.size());
  }
  const double rate = broadcast_rate(trees) * static_cast<double>(ranks.size());
  CHECK(rate >= 0.99 * bound);
  const double paths =
      broadcast_rate(pack_paths(t, ranks, 8, true)) * static_cast<double>(ranks.size());
  CHECK(paths < 0.92 * bound);
  const auto lanes = equal_lanes(t, ranks, trees, 4, true);
  check_fits(t, ranks, lanes, true);
  for (const auto& mine : lanes) {
    REQUIRE(mine.size() == 4);
    for (const BroadcastPath& lane : mine) CHECK(!lane.from.empty());
  }
  CHECK(broadcast_rate(lanes) * static_cast<double>(ranks.size()) >= 0.95 * bound);
}

}  // namespace
}  // namespace weft::synthesis
