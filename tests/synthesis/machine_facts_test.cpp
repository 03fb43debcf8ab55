// The machine facts the sketch families share (weft/synthesis/machine_facts.h), on preset
// machines: each value here is worked out from the machine's links and NCCL's channel speeds.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "support.h"
#include "weft/synthesis/families.h"
#include "weft/synthesis/machine_facts.h"

namespace weft::synthesis {
namespace {

using test::nominal_topology;

// The node's rings and paths, as every non-alltoall collective gets them.
NodePlan plan_of(const predict::Topology& machine) {
  return plan_node(machine, ir::Collective::AllGather);
}

TEST_CASE("Node 0's ranks are the first node's GPUs in order") {
  const std::vector<int> expected{0, 1, 2, 3, 4, 5, 6, 7};
  CHECK(node0_ranks(nominal_topology("h100-nvswitch")) == expected);
  CHECK(node0_ranks(nominal_topology("a100-nvswitch", 2)) == expected);
  CHECK(node0_ranks(nominal_topology("h100-nvswitch", 1, 6)) == std::vector<int>{0, 1, 2, 3, 4, 5});
}

TEST_CASE("On one H100 NVSwitch node the ring fills 450 GB/s and the paths agree with it") {
  const predict::Topology h100 = nominal_topology("h100-nvswitch");
  const NodePlan plan = plan_of(h100);
  REQUIRE(plan.rings.size() == 1);
  CHECK(rings_width(plan) == Approx(450));
  // The paths carry every origin's data at 450 / 7 GB/s, as the ring does.
  CHECK(broadcast_rate(plan.paths) == Approx(450.0 / 7).epsilon(1e-3));
  CHECK_FALSE(paths_differ_from_rings(plan));
  CHECK(paths_pay(h100, plan));  // one node: the paths contend anyway
  // One node has no NIC to its rail peer: nothing binds, and the NIC's share is not finite.
  CHECK(std::isinf(nic_gbs(h100)));
  CHECK_FALSE(node_links_bind(h100, rings_width(plan)));
  CHECK_FALSE(std::isfinite(nic_share_of_links(h100, rings_width(plan))));
  CHECK(home_channels(h100, rings_width(plan), 8) == 8);
}

TEST_CASE("One H100 node's channels, lanes and direct pieces") {
  const predict::Topology h100 = nominal_topology("h100-nvswitch");
  const NodePlan plan = plan_of(h100);
  // NCCL's ring search credits each channel 30 GB/s there.
  CHECK(channel_gbs(h100) == Approx(30));
  CHECK(ring_lane_gbs(h100) == Approx(30.0 * 8 / 4));
  CHECK(sketch_channels(ir::Collective::AllGather, 64) == 64);
  CHECK(sketch_channels(ir::Collective::AllReduce, 64) == 32);
  CHECK(sketch_channels(ir::Collective::AllReduce, 1) == 1);
  CHECK(most_lanes(h100, 64) == 8);
  CHECK(most_lanes(h100, 32) == 4);
  CHECK(most_lanes(h100, 4) == 1);
  CHECK(path_lanes(h100, 64) == 8);
  // 30 × 7 / 2 = 105 GB/s per piece: four pieces (420) fall short of 450, eight fill it.
  CHECK(direct_pieces(h100, plan, 64) == 8);
  CHECK(direct_pieces(h100, plan, 4) == 4);  // within the channels
  CHECK(pipelined_pieces(h100, ir::Collective::AllGather) == 64);
  CHECK(pipelined_pieces(h100, ir::Collective::AllReduce) == 64);
  // Two, four pieces per pair move 210, 420 GB/s out of a GPU's 450: eight.
  CHECK(alltoall_channels(h100) == 8);
}

TEST_CASE("On a PCIe tree the ring is 16 GB/s wide, the paths differ and one piece fills it") {
  const predict::Topology pcie = nominal_topology("pcie-gen4");
  const NodePlan plan = plan_of(pcie);
  CHECK(rings_width(plan) == Approx(16));
  // The paths carry 4 GB/s of every origin's data, the ring 16 / 7.
  CHECK(broadcast_rate(plan.paths) == Approx(4).epsilon(1e-3));
  CHECK(paths_differ_from_rings(plan));
  CHECK(paths_pay(pcie, plan));
  CHECK(channel_gbs(pcie) == Approx(15));
  CHECK(direct_pieces(pcie, plan, 64) == 1);
  CHECK(alltoall_channels(pcie) == 2);
}

TEST_CASE("On two A100 nodes a GPU's links within the node bind, not its NIC") {
  const predict::Topology a100 = nominal_topology("a100-nvswitch", 2);
  const NodePlan plan = plan_of(a100);
  const double width = rings_width(plan);
  CHECK(width == Approx(300));
  CHECK(nic_gbs(a100) == Approx(25));
  // 7 / 300 GB/s over the node's links against 1 / (2 × 25) over the NIC.
  CHECK(node_links_bind(a100, width));
  CHECK(nic_share_of_links(a100, width) == Approx(7.0 * 25 / 300));
  // The other node's eight channels of chains need 7/12 of the links: the root's own chains
  // may take 5 of 8 channels (8 × 5/12 ÷ 7/12 = 5.7).
  CHECK(home_channels(a100, width, 8) == 5);
  // Across NVSwitch nodes the paths only cost prediction time.
  CHECK_FALSE(paths_differ_from_rings(plan));
  CHECK_FALSE(paths_pay(a100, plan));
  CHECK(channel_gbs(a100) == Approx(24));
  // 24 × 7 / 2 = 84 GB/s per piece: four fill 300.
  CHECK(direct_pieces(a100, plan, 64) == 4);
  CHECK(split_channels(a100, 4) == 2);
  CHECK(pipelined_pieces(a100, ir::Collective::AllGather) == 64);
  CHECK(pipelined_pieces(a100, ir::Collective::AllReduce) == 64);
  CHECK(alltoall_channels(a100) == 4);
}

TEST_CASE("On four and eight A100 nodes the NICs bind") {
  const predict::Topology four = nominal_topology("a100-nvswitch", 4);
  const double width = rings_width(plan_of(four));
  // 7 / 300 against 3 / (4 × 25).
  CHECK_FALSE(node_links_bind(four, width));
  // Three other nodes' chains need no more than the links leave: every channel is the root's.
  CHECK(home_channels(four, width, 8) == 8);
  const predict::Topology eight = nominal_topology("a100-nvswitch", 8);
  CHECK_FALSE(node_links_bind(eight, rings_width(plan_of(eight))));
  // 64 ranks: 2^18 / 64² = 64 pieces, allreduce a quarter of that.
  CHECK(pipelined_pieces(eight, ir::Collective::AllGather) == 64);
  CHECK(pipelined_pieces(eight, ir::Collective::ReduceScatter) == 64);
  CHECK(pipelined_pieces(eight, ir::Collective::AllReduce) == 16);
  // Split by node, at most eight channels over the eight nodes.
  CHECK(split_channels(eight, 4) == 1);
  // Twins of 64 pieces per pair on 64 ranks would be 2^19 hops: not; of 32, 2^18: yes.
  CHECK_FALSE(twins_pay(eight, 64));
  CHECK(twins_pay(eight, 32));
}

TEST_CASE("On four H100 nodes the links bind, and the root's chains leave the NIC 7 × 50 / 450") {
  const predict::Topology h100 = nominal_topology("h100-nvswitch", 4);
  const NodePlan plan = plan_of(h100);
  const double width = rings_width(plan);
  CHECK(nic_gbs(h100) == Approx(50));
  // 7 / 450 against 3 / (4 × 50).
  CHECK(node_links_bind(h100, width));
  CHECK(nic_share_of_links(h100, width) == Approx(7.0 * 50 / 450));
  // The other three nodes' 24 channels of chains need 78 % of the links: 6 of 8 for the root's
  // own leaves them 80 %.
  CHECK(home_channels(h100, width, 8) == 6);
  CHECK(channel_gbs(h100) == Approx(48));
  CHECK(direct_pieces(h100, plan, 64) == 4);
}

TEST_CASE("Pieces double within the hop budget and the most asked") {
  // 256 ranks (32 H100 nodes) with turns' half budget, 2^21: 16 pieces (2^20 hops); on 1,024
  // ranks four pieces are already 2^22, and none are added.
  CHECK(pieces_within(4, 16, 256, kTurnsBudget / 2) == 16);
  CHECK(pieces_within(4, 16, 512, kTurnsBudget / 2) == 8);
  CHECK(pieces_within(4, 16, 1024, kTurnsBudget / 2) == 4);
  CHECK(pieces_within(64, 256, 16, hop_budget(ir::Collective::ReduceScatter)) == 256);
  CHECK(pieces_within(64, 256, 32, hop_budget(ir::Collective::ReduceScatter)) == 256);
  CHECK(pieces_within(64, 256, 64, hop_budget(ir::Collective::ReduceScatter)) == 64);
  CHECK(hop_budget(ir::Collective::AllGather) == 1 << 18);
  CHECK(hop_budget(ir::Collective::AllReduce) == 1 << 16);
}

TEST_CASE("Paths differ from rings only where their rates do") {
  NodePlan none;
  CHECK_FALSE(paths_differ_from_rings(none));
  NodePlan paths_only;
  paths_only.paths.resize(2, {BroadcastPath{{0, 1}, 10, {}}});
  CHECK(paths_differ_from_rings(paths_only));
  // Two GPUs: a ring of 10 GB/s moves each origin's data at 10 / 1.
  NodePlan both = paths_only;
  both.rings.push_back({{0, 1}, 10});
  CHECK_FALSE(paths_differ_from_rings(both));
  both.rings.front().rate_gbs = 12;
  CHECK(paths_differ_from_rings(both));
  CHECK(rings_width(both) == Approx(12));
}

TEST_CASE("On a DGX-1 four rings fill 150 GB/s and the paths differ from them") {
  const std::optional<std::string> file = test::dgx1_file();
  if (!file) return;
  const predict::Topology dgx1 = nominal_topology(*file);
  const NodePlan plan = plan_of(dgx1);
  // Two rings over the doubled links at 50 GB/s, two at 25.
  CHECK(plan.rings.size() == 4);
  CHECK(rings_width(plan) == Approx(150));
  CHECK(paths_differ_from_rings(plan));
  CHECK(direct_pieces(dgx1, plan, 64) == 4);
  // With an NVLink pair down: two rings, 100 GB/s, and half the direct pieces.
  const predict::Topology degraded = nominal_topology(*file, 1, 0, {{0, 1, 0}});
  const NodePlan down = plan_of(degraded);
  CHECK(rings_width(down) == Approx(100));
  CHECK(direct_pieces(degraded, down, 64) == 2);
}

// Two nodes of eight A100s sharing fewer NICs than GPUs (tests/data/topologies): the pieces each
// rail carries, by the NIC it crosses on.
std::vector<int> pieces_per_nic(const RailGateways& gateways,
                                const std::vector<std::vector<int>>& nics_of_gpus) {
  std::vector<int> on_rail(gateways.of.size(), 0);
  for (const std::vector<int>& origin : gateways.of) {
    for (const int rail : origin) ++on_rail[static_cast<std::size_t>(rail)];
  }
  std::vector<int> out;
  for (const std::vector<int>& gpus : nics_of_gpus) {
    int sum = 0;
    for (const int g : gpus) sum += on_rail[static_cast<std::size_t>(g)];
    out.push_back(sum);
  }
  return out;
}

std::string uneven_nics_file(const std::string& name) {
  return std::string(WEFT_TEST_DATA_DIR) + "/topologies/" + name;
}

TEST_CASE("A NIC per GPU, or NICs each shared alike, leave every piece on its own rail") {
  const std::vector<std::vector<int>> pieces(8, std::vector<int>(64, 1));
  for (const std::string& source : {std::string("a100-nvswitch"), std::string("h100-nvswitch"),
                                    uneven_nics_file("a100-2nic-dump.xml")}) {
    INFO(source);
    const predict::Topology machine = nominal_topology(source, 2);
    CHECK_FALSE(nics_uneven(machine));
    CHECK(rail_gateways(machine, pieces, rings_width(plan_of(machine))).of.empty());
  }
  // On one node there is no rail.
  CHECK(rail_gateways(nominal_topology("h100-nvswitch"), pieces).of.empty());
}

// Five NICs: socket 0's GPUs reach their pair's NIC (behind its own bridge) and the root port's
// at the same cost, so GPUs 1 and 3 take the root port's NIC, GPUs 0 and 2 one NIC each, and
// socket 1's pairs theirs: 2, 1, 1, 2, 2 GPUs on NICs of one speed.
TEST_CASE("On five NICs shared unevenly, each NIC's rails carry a fifth of the pieces") {
  const predict::Topology five =
      nominal_topology(uneven_nics_file("a100-5nic-two-gpus-on-root-dump.xml"), 2);
  CHECK(nics_uneven(five));
  const std::vector<std::vector<int>> pieces(8, std::vector<int>(64, 1));
  const RailGateways gateways = rail_gateways(five, pieces, rings_width(plan_of(five)));
  REQUIRE(gateways.of.size() == 8);
  CHECK(gateways.nics == 5);
  // 512 pieces: 102 or 103 on each NIC.
  for (const int on : pieces_per_nic(gateways, {{0}, {2}, {1, 3}, {4, 5}, {6, 7}})) {
    CHECK(on >= 102);
    CHECK(on <= 103);
  }
  // An origin keeps its own rail for its first pieces and sends its last ones on others'.
  for (std::size_t g = 0; g < 8; ++g) {
    const std::vector<int>& rails = gateways.of[g];
    const auto own = std::find_if(rails.begin(), rails.end(),
                                  [&](int rail) { return rail != static_cast<int>(g); });
    CHECK(std::all_of(own, rails.end(), [&](int rail) { return rail != static_cast<int>(g); }));
  }
  // GPUs 0 and 2 carry 1.6 GPUs' share each: spreading it over the node, 7 × (64 + 102) pieces
  // over links of 300 GB/s at line rate, against 102 over a NIC of 25, the links have room;
  // at achievable rates (NVLink 240, the NIC 24) they do not, and the pieces are handed on.
  CHECK_FALSE(gateways.hand_on);
  const predict::Topology achievable =
      test::topology(uneven_nics_file("a100-5nic-two-gpus-on-root-dump.xml"), 2);
  CHECK(rail_gateways(achievable, pieces, rings_width(plan_of(achievable))).hand_on);
}

// Three NICs in use: socket 1's last pair has no NIC on its switch and takes its neighbours', so
// one NIC serves four GPUs; the root port's NIC is on no GPU's route.
TEST_CASE("On three NICs, one of them for four GPUs, each NIC's rails carry a third") {
  const predict::Topology three =
      test::topology(uneven_nics_file("a100-3nic-plus-root-dump.xml"), 2);
  const std::vector<std::vector<int>> pieces(8, std::vector<int>(64, 1));
  const RailGateways gateways = rail_gateways(three, pieces, rings_width(plan_of(three)));
  REQUIRE(gateways.of.size() == 8);
  CHECK(gateways.nics == 3);
  for (const int on : pieces_per_nic(gateways, {{0, 1}, {2, 3}, {4, 5, 6, 7}})) {
    CHECK(on >= 170);
    CHECK(on <= 171);
  }
  // A gateway carries 1.33 GPUs' share at most: its links within the node have room.
  CHECK_FALSE(gateways.hand_on);
}

}  // namespace
}  // namespace weft::synthesis
