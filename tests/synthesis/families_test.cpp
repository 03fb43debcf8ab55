// The sketch families (weft/synthesis/families.h), golden: on every machine of the synthesis suite
// (scripts/bench-synthesis.sh) and each collective, the families that offer sketches, in the
// registry's order, with how many variants each gives ("direct-wide 1+2": one, and two LL/LL128
// twins). The order is the order sketches are predicted and pruned in, so a change here changes
// what synthesis chooses: change the table only with the family's branches, and read it against
// them. Each cell was worked out from the families' conditions (docs/synthesis.md, "How candidates
// are found") and the machine facts tests/synthesis/machine_facts_test.cpp pins.
#include <algorithm>
#include <array>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "support.h"
#include "weft/ir/validate.h"
#include "weft/synthesis/families.h"

namespace weft::synthesis {
namespace {

using test::topology;

constexpr std::array<ir::Collective, 4> kCollectives{
    ir::Collective::AllGather, ir::Collective::ReduceScatter, ir::Collective::AllReduce,
    ir::Collective::AllToAll};

int weft_channels() {
  return ir::limits_by_name("weft")->max_channels;
}

// The node's plan for each collective: the same rings and paths for all but alltoall (packing
// them takes a second on an NVSwitch node), none for alltoall.
NodePlan plan_for(const NodePlan& trees, ir::Collective collective) {
  return collective == ir::Collective::AllToAll ? NodePlan{} : trees;
}

// "family N" or "family N+T" (T twins) for every family offering sketches, in order.
std::string offered(const predict::Topology& machine, const NodePlan& plan,
                    ir::Collective collective) {
  std::string out;
  for (const FamilyVariants& f : family_variants(machine, collective, plan, weft_channels())) {
    if (!out.empty()) out += ", ";
    out += std::string(f.family) + " " + std::to_string(f.variants.size());
    if (!f.twins.empty()) out += "+" + std::to_string(f.twins.size());
  }
  return out;
}

// Allgather, reduce-scatter, allreduce, alltoall.
using Golden = std::array<std::string_view, 4>;

void check(const predict::Topology& machine, const Golden& golden) {
  const NodePlan trees = plan_node(machine, ir::Collective::AllGather);
  for (std::size_t c = 0; c < kCollectives.size(); ++c) {
    INFO(ir::to_string(kCollectives[c]));
    CHECK(offered(machine, plan_for(trees, kCollectives[c]), kCollectives[c]) == golden[c]);
  }
}

// One NVSwitch node: rings and paths agree, and on one node both contend with the equal lanes;
// eight direct pieces fill a GPU's links (twinned on one node); alltoall's routed sketch relieves
// nothing on a switch, its finer routes come on one node.
TEST_CASE("Families on one H100 node") {
  check(topology("h100-nvswitch"),
        {"node-rings 1, node-paths 1, equal-lanes 2, rings-ll128 1, one-hop 3, direct-wide 1+2",
         "node-rings 1, node-paths 1, equal-lanes 2, rings-ll128 1, one-hop 3, direct-wide 1+2",
         "node-rings 1, node-paths 1, equal-lanes 2, lanes-both-ways 1, lanes-along-trees 1, "
         "rings-ll128 1, one-hop 3, direct-wide 1+2",
         "alltoall-routes 3+2, alltoall-finer-routes 4"});
}

// A PCIe tree: one piece fills its 16 GB/s ring, so no direct trees wider than one hop.
TEST_CASE("Families on a PCIe tree") {
  check(topology("pcie-gen4"),
        {"node-rings 1, node-paths 1, equal-lanes 2, rings-ll128 1, one-hop 3",
         "node-rings 1, node-paths 1, equal-lanes 2, rings-ll128 1, one-hop 3",
         "node-rings 1, node-paths 1, equal-lanes 2, lanes-both-ways 1, lanes-along-trees 1, "
         "rings-ll128 1, one-hop 3",
         "alltoall-routes 3+2, alltoall-finer-routes 4"});
}

// Two A100 nodes: the node's links bind (rings and split trees with the partials first, the
// NIC's window), the budget leaves 64 pipelined pieces and room for half as many (allgather's
// four, on 4 and 8 channels, each with its LL128 twin), and reduce-scatter's 256 finer pieces.
TEST_CASE("Families on two A100 nodes") {
  check(topology("a100-nvswitch", 2),
        {"node-rings 1, rings-ll128 1, one-hop 3, direct-wide 1+2, direct-pipelined 4+4",
         "node-rings 2, rings-ll128 1, one-hop 3, direct-wide 1, split-pipelined 2+1, "
         "split-finer 3, split-wide 2+4",
         "node-rings 1, rings-ll128 1, one-hop 3, direct-wide 1, split-pipelined 1+1, "
         "split-wide 2+4",
         "alltoall-routes 3+2, alltoall-rails 1+2"});
}

// Four A100 nodes: the NICs bind (no partials first; reduce-scatter's finer pieces halved first
// instead), chains of rail peers from three nodes (the rings' and allgather's widest pipelined).
TEST_CASE("Families on four A100 nodes") {
  check(topology("a100-nvswitch", 4),
        {"node-rings 2, rings-ll128 1, one-hop 3, direct-wide 1+2, direct-pipelined 5+5",
         "node-rings 2, rings-ll128 1, one-hop 3, direct-wide 1, split-pipelined 1+1, "
         "split-finer 2, split-wide 2+4",
         "node-rings 2, rings-ll128 1, one-hop 3, direct-wide 1, split-pipelined 1+1, "
         "split-wide 2+4",
         "alltoall-routes 3+2, alltoall-rails 1+2"});
}

// Eight A100 nodes (64 ranks): the budget leaves no room for half the pipelined pieces, nor
// reduce-scatter's finer ones.
TEST_CASE("Families on eight A100 nodes") {
  check(topology("a100-nvswitch", 8),
        {"node-rings 2, rings-ll128 1, one-hop 3, direct-wide 1+2, direct-pipelined 3+3",
         "node-rings 2, rings-ll128 1, one-hop 3, direct-wide 1, split-pipelined 1+1, "
         "split-wide 2+4",
         "node-rings 2, rings-ll128 1, one-hop 3, direct-wide 1, split-pipelined 1+1, "
         "split-wide 2+4",
         "alltoall-routes 3+2, alltoall-rails 1+2"});
}

// Four H100 nodes: the node's links bind and there are three nodes or more, so the rings come
// three ways for reduce-scatter (direct, partials first, chain).
TEST_CASE("Families on four H100 nodes") {
  check(topology("h100-nvswitch", 4),
        {"node-rings 2, rings-ll128 1, one-hop 3, direct-wide 1+2, direct-pipelined 5+5",
         "node-rings 3, rings-ll128 1, one-hop 3, direct-wide 1, split-pipelined 2+1, "
         "split-finer 3, split-wide 2+4",
         "node-rings 2, rings-ll128 1, one-hop 3, direct-wide 1, split-pipelined 1+1, "
         "split-wide 2+4",
         "alltoall-routes 3+2, alltoall-rails 1+2"});
}

// Sixteen to 128 H100 nodes, by name only (their sketches take minutes to build on 1,024 GPUs):
// the budget leaves the direct trees no more pieces than their channels from 256 ranks
// (allreduce from 128), where their pieces take turns instead; split-wide while a channel per
// node fits.
TEST_CASE("Families on 16 to 128 H100 nodes, by name") {
  const auto names = [](int nodes) {
    const predict::Topology machine = topology("h100-nvswitch", nodes);
    const NodePlan trees = plan_node(machine, ir::Collective::AllGather);
    std::array<std::string, 4> out;
    for (std::size_t c = 0; c < kCollectives.size(); ++c) {
      for (const std::string_view name : offering_families(
               machine, kCollectives[c], plan_for(trees, kCollectives[c]), weft_channels())) {
        if (!out[c].empty()) out[c] += ", ";
        out[c] += name;
      }
    }
    return out;
  };
  using Names = std::array<std::string, 4>;
  const std::string bandwidth = "node-rings, rings-ll128, one-hop, direct-wide, ";
  const std::string alltoall = "alltoall-routes, alltoall-rails";
  CHECK(names(16) == Names{bandwidth + "direct-pipelined",
                           bandwidth + "split-pipelined, split-wide",
                           bandwidth + "direct-turns, split-wide", alltoall});
  CHECK(names(32) == Names{bandwidth + "direct-turns", bandwidth + "direct-turns, split-wide",
                           bandwidth + "direct-turns", alltoall});
  CHECK(names(128) == Names{bandwidth + "direct-turns", bandwidth + "direct-turns",
                            bandwidth + "direct-turns", alltoall});
}

// A DGX-1: its rings and paths differ (both contend across nodes too), and alltoall's routed
// sketch relieves its busiest link.
TEST_CASE("Families on a DGX-1, whole, degraded, partial and doubled") {
  const std::optional<std::string> file = test::azure_file("azure-ndv2-topo.xml");
  if (!file) return;
  const Golden one_node{
      "node-rings 1, node-paths 1, equal-lanes 2, rings-ll128 1, one-hop 3, direct-wide 1+2",
      "node-rings 1, node-paths 1, equal-lanes 2, rings-ll128 1, one-hop 3, direct-wide 1+2",
      "node-rings 1, node-paths 1, equal-lanes 2, lanes-both-ways 1, lanes-along-trees 1, "
      "rings-ll128 1, one-hop 3, direct-wide 1+2",
      "alltoall-routes 4+2, alltoall-finer-routes 4"};
  SECTION("whole") {
    check(topology(*file), one_node);
  }
  SECTION("NVLink 0-1 down") {
    check(topology(*file, 1, 0, {{0, 1, 0}}), one_node);
  }
  SECTION("6 of 8 GPUs") {
    // One piece fills the 50 GB/s its rings leave: no direct trees wider than one hop, and
    // relaying relieves no link.
    check(topology(*file, 1, 6),
          {"node-rings 1, node-paths 1, equal-lanes 2, rings-ll128 1, one-hop 3",
           "node-rings 1, node-paths 1, equal-lanes 2, rings-ll128 1, one-hop 3",
           "node-rings 1, node-paths 1, equal-lanes 2, lanes-both-ways 1, lanes-along-trees 1, "
           "rings-ll128 1, one-hop 3",
           "alltoall-routes 3+2, alltoall-finer-routes 4"});
  }
  SECTION("two nodes") {
    check(topology(*file, 2),
          {"node-rings 1, node-paths 1, rings-ll128 1, one-hop 3, direct-wide 1+2, "
           "direct-pipelined 4+4",
           "node-rings 2, node-paths 1, rings-ll128 1, one-hop 3, direct-wide 1, "
           "split-pipelined 2+1, split-finer 3, split-wide 2+4",
           "node-rings 1, node-paths 1, rings-ll128 1, one-hop 3, direct-wide 1, "
           "split-pipelined 1+1, split-wide 2+4",
           "alltoall-routes 3+2, alltoall-rails 1+2"});
  }
}

TEST_CASE("Families on an NC v4 (four A100 on PCIe)") {
  const std::optional<std::string> file = test::azure_file("azure-ncv4-topo.xml");
  if (!file) return;
  check(topology(*file),
        {"node-rings 1, node-paths 1, equal-lanes 2, rings-ll128 1, one-hop 3, direct-wide 1+2",
         "node-rings 1, node-paths 1, equal-lanes 2, rings-ll128 1, one-hop 3, direct-wide 1+2",
         "node-rings 1, node-paths 1, equal-lanes 2, lanes-both-ways 1, lanes-along-trees 1, "
         "rings-ll128 1, one-hop 3, direct-wide 1+2",
         "alltoall-routes 3+2, alltoall-finer-routes 4"});
}

TEST_CASE("The variants are every family's twins, then every family's other variants") {
  const predict::Topology machine = topology("a100-nvswitch", 2);
  const NodePlan trees = plan_node(machine, ir::Collective::AllGather);
  for (const ir::Collective c : kCollectives) {
    INFO(ir::to_string(c));
    const NodePlan plan = plan_for(trees, c);
    std::vector<std::string> expected;
    const std::vector<FamilyVariants> families = family_variants(machine, c, plan, weft_channels());
    for (const FamilyVariants& f : families) {
      for (const Variant& v : f.twins) {
        CHECK(v.twin);
        expected.push_back(v.sketch.name + " " + std::string(ir::to_string(v.protocol)));
      }
    }
    for (const FamilyVariants& f : families) {
      for (const Variant& v : f.variants) {
        CHECK_FALSE(v.twin);
        expected.push_back(v.sketch.name + " " + std::string(ir::to_string(v.protocol)));
      }
    }
    std::vector<std::string> listed;
    for (const Variant& v : variants(machine, c, plan, weft_channels())) {
      listed.push_back(v.sketch.name + " " + std::string(ir::to_string(v.protocol)));
    }
    CHECK(listed == expected);
    std::vector<std::string_view> names;
    for (const FamilyVariants& f : families) names.push_back(f.family);
    CHECK(names == offering_families(machine, c, plan, weft_channels()));
  }
}

TEST_CASE("Every family has a name of its own and its reason in docs/synthesis.md") {
  const std::vector<std::string_view> names = family_names();
  CHECK(std::set<std::string_view>(names.begin(), names.end()).size() == names.size());
  std::ifstream doc(std::string(WEFT_TEST_DATA_DIR) + "/../../docs/synthesis.md");
  REQUIRE(doc);
  const std::string text((std::istreambuf_iterator<char>(doc)), std::istreambuf_iterator<char>());
  for (const std::string_view name : names) {
    INFO(name);
    CHECK(text.find("<a id=\"family-" + std::string(name) + "\"></a>") != std::string::npos);
  }
}

}  // namespace
}  // namespace weft::synthesis
