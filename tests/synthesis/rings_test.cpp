// Ring packing: as wide as the links allow, in the order the links favour.
#include <algorithm>
#include <numeric>

#include <catch2/catch.hpp>

#include "support.h"
#include "weft/synthesis/rings.h"

namespace weft::synthesis {
namespace {

using test::nominal_topology;

std::vector<int> all_ranks(const predict::Topology& t) {
  std::vector<int> ranks(static_cast<std::size_t>(t.ranks()));
  std::iota(ranks.begin(), ranks.end(), 0);
  return ranks;
}

double total_width(const std::vector<NodeRing>& rings) {
  double w = 0;
  for (const NodeRing& r : rings) w += r.rate_gbs;
  return w;
}

TEST_CASE("On an NVSwitch one ring fills every GPU's NVLink") {
  const predict::Topology h100 = nominal_topology("h100-nvswitch");
  const std::vector<NodeRing> rings = pack_rings(h100, all_ranks(h100));
  REQUIRE(rings.size() == 1);
  CHECK(rings[0].rate_gbs == Approx(450));
  CHECK(rings[0].order.size() == 8);
}

TEST_CASE("On a PCIe tree the ring visits the GPUs switch by switch") {
  const predict::Topology pcie = nominal_topology("pcie-gen4");
  const std::vector<NodeRing> rings = pack_rings(pcie, all_ranks(pcie));
  REQUIRE_FALSE(rings.empty());
  const std::vector<int>& order = rings[0].order;
  REQUIRE(order.size() == 8);
  // GPUs 2k and 2k+1 share a switch: next to each other, so that each uplink is crossed once.
  for (int pair = 0; pair < 4; ++pair) {
    const auto a = std::find(order.begin(), order.end(), 2 * pair) - order.begin();
    const auto b = std::find(order.begin(), order.end(), 2 * pair + 1) - order.begin();
    const auto gap = (a - b + 8) % 8;
    CHECK((gap == 1 || gap == 7));
  }
}

TEST_CASE("A DGX-1's rings use all six NVLinks of every GPU, one way each") {
  const auto file = test::dgx1_file();
  if (!file) return;
  const predict::Topology dgx1 = nominal_topology(*file);
  const std::vector<NodeRing> rings = pack_rings(dgx1, all_ranks(dgx1));
  CHECK(total_width(rings) == Approx(150));
}

}  // namespace
}  // namespace weft::synthesis
