// The bound: exact on machines whose cuts are known by hand, refusals named.
#include <stdexcept>
#include <string>

#include <catch2/catch.hpp>

#include "support.h"
#include "weft/synthesis/bound.h"

namespace weft::synthesis {
namespace {

using test::nominal_topology;

TEST_CASE("On one NVSwitch node a GPU's NVLink binds: 450 GB/s over (N-1)/N") {
  const predict::Topology h100 = nominal_topology("h100-nvswitch");
  const Bound ag = bandwidth_bound(h100, ir::Collective::AllGather);
  CHECK(ag.algbw_gbs == Approx(450.0 * 8 / 7).epsilon(1e-4));
  CHECK_THAT(ag.cut, Catch::Contains("into gpu"));
  const Bound rs = bandwidth_bound(h100, ir::Collective::ReduceScatter);
  CHECK(rs.algbw_gbs == Approx(ag.algbw_gbs).epsilon(1e-4));
  CHECK_THAT(rs.cut, Catch::Contains("out of gpu"));
  const Bound ar = bandwidth_bound(h100, ir::Collective::AllReduce);
  CHECK(ar.algbw_gbs == Approx(ag.algbw_gbs / 2).epsilon(1e-4));
  CHECK(ag.transfer_us(1 << 30) == Approx((1 << 30) / (ag.algbw_gbs * 1e3)));
}

// The bound is taken on the links as the model rates them: NVLink at NCCL's 20.6 of 25 GB/s per
// link on Hopper (18 x 20.6 = 370.8 GB/s into a GPU), 20.0 of 25 on Ampere, a NIC at 24 of 25.
TEST_CASE("At achievable rates the bound is what the links deliver, not their line rate") {
  const predict::Topology h100 = test::topology("h100-nvswitch");
  CHECK(bandwidth_bound(h100, ir::Collective::AllGather).algbw_gbs ==
        Approx(370.8 * 8 / 7).epsilon(1e-4));
  CHECK(bandwidth_bound(h100.at_line_rate(), ir::Collective::AllGather).algbw_gbs ==
        Approx(450.0 * 8 / 7).epsilon(1e-4));
  // Two A100 nodes: a GPU's links in, NVLink's 240 and its NIC's 24 (line rate 300 + 25).
  const predict::Topology a100 = test::topology("a100-nvswitch", 2);
  CHECK(bandwidth_bound(a100, ir::Collective::AllGather).algbw_gbs ==
        Approx(264.0 * 16 / 15).epsilon(1e-4));
}

// Every call pays the launch, its protocol's call latency and one hop across the cut: small
// calls are bound by LL's (no call latency, the shortest hop, half the payload per line), large
// ones by Simple's (full payload).
TEST_CASE("The bound's time adds what every call pays to the transfer, by the best protocol") {
  const predict::Topology h100 = nominal_topology("h100-nvswitch");
  const predict::CostParameters& costs = h100.costs();
  const Bound ag = bandwidth_bound(h100, ir::Collective::AllGather);
  REQUIRE(ag.floors.size() == 3);
  const auto latency = [&](ir::Protocol p, predict::LinkType hop) {
    return costs.launch_latency_us + costs.protocol(p).call_latency_us +
           costs.protocol(p).hop_us(hop);
  };
  const double ll = latency(ir::Protocol::LL, predict::LinkType::NVLink);
  const double simple = latency(ir::Protocol::Simple, predict::LinkType::NVLink);
  REQUIRE(ll < simple);
  const double ll_efficiency = costs.protocol(ir::Protocol::LL).payload_efficiency;
  CHECK(ag.time_us(1024) == Approx(ll + ag.transfer_us(1024) / ll_efficiency));
  CHECK(ag.latency_us(1024) == Approx(ll));
  CHECK(ag.time_us(1 << 30) == Approx(simple + ag.transfer_us(1 << 30)));
  CHECK(ag.latency_us(1 << 30) == Approx(simple));

  // Across nodes the binding cut is a node's NICs: its hop is the network's.
  const predict::Topology a100 = nominal_topology("a100-nvswitch", 8);
  const Bound across = bandwidth_bound(a100, ir::Collective::AllGather);
  const predict::ProtocolCosts& a100_simple = a100.costs().protocol(ir::Protocol::Simple);
  CHECK(across.latency_us(1 << 30) ==
        Approx(a100.costs().launch_latency_us + a100_simple.call_latency_us +
               a100_simple.hop_latency_us[static_cast<std::size_t>(predict::LinkType::Network)]));
}

// The figure: NVLink (300) plus the GPU's own NIC (25) into each GPU; the PCIe switch a
// GPU shares with its NIC does not route GPU to GPU, so its 31.5 GB/s does not count.
TEST_CASE("Across two A100 nodes a GPU's NVLink and NIC bind the allgather, not PCIe paths") {
  const Bound ag = bandwidth_bound(nominal_topology("a100-nvswitch", 2), ir::Collective::AllGather);
  CHECK(ag.algbw_gbs == Approx(325.0 * 16 / 15).epsilon(1e-4));
  CHECK_THAT(ag.cut, Catch::Contains("node 0 gpu"));
}

TEST_CASE("Across eight A100 nodes the NICs into a node bind the allgather") {
  const Bound ag = bandwidth_bound(nominal_topology("a100-nvswitch", 8), ir::Collective::AllGather);
  // A node takes in the other 56 ranks' blocks through 8 NICs of 25 GB/s.
  CHECK(ag.algbw_gbs == Approx(200.0 * 64 / 56).epsilon(1e-4));
  CHECK_THAT(ag.cut, Catch::Contains("into node 0"));
}

// On four H100 nodes a GPU's NVLink and NIC (450 + 50 GB/s) bind the allgather's bandwidth, but
// a node's eight NICs (400 GB/s for the 24 blocks of 32 it lacks) carry their bytes almost as
// fast and their last ones cross the network: from mid sizes the node's cut takes longer, and
// the bound's time is the longer of the two, in every protocol.
TEST_CASE("Across nodes a call takes as long as the node's cut with its network hop at least") {
  const predict::Topology h100 = nominal_topology("h100-nvswitch", 4);
  const Bound ag = bandwidth_bound(h100, ir::Collective::AllGather);
  CHECK(ag.algbw_gbs == Approx(500.0 * 32 / 31).epsilon(1e-4));
  REQUIRE(ag.node);
  CHECK(ag.node->algbw_gbs == Approx(400.0 * 32 / 24).epsilon(1e-4));
  CHECK_THAT(ag.node->cut, Catch::Contains("into node 0"));
  const predict::CostParameters& costs = h100.costs();
  const auto latency = [&](ir::Protocol p, predict::LinkType hop) {
    return costs.launch_latency_us + costs.protocol(p).call_latency_us +
           costs.protocol(p).hop_us(hop);
  };
  const std::uint64_t mid = 64ull << 20;
  const double over_gpu = latency(ir::Protocol::Simple, predict::LinkType::NVLink) +
                          static_cast<double>(mid) / (ag.algbw_gbs * 1e3);
  const double over_node = latency(ir::Protocol::Simple, predict::LinkType::Network) +
                           static_cast<double>(mid) / (ag.node->algbw_gbs * 1e3);
  REQUIRE(over_node > over_gpu);  // 148.2 against 141.8 us
  CHECK(ag.time_us(mid, ir::Protocol::Simple) == Approx(over_node));
  CHECK(ag.time_us(mid) == Approx(over_node));
  CHECK(ag.latency_us(mid) == Approx(over_node - ag.transfer_us(mid)));
  // At 1 GB the GPU's links bind again.
  const std::uint64_t large = 1ull << 30;
  CHECK(ag.time_us(large) ==
        Approx(latency(ir::Protocol::Simple, predict::LinkType::NVLink) + ag.transfer_us(large)));
  // On one node there is no node's cut to count.
  CHECK_FALSE(bandwidth_bound(nominal_topology("h100-nvswitch"), ir::Collective::AllGather).node);
}

TEST_CASE("Alltoall across two nodes is bound by the NICs: half of every rank's bytes cross") {
  const Bound a2a = bandwidth_bound(nominal_topology("a100-nvswitch", 2), ir::Collective::AllToAll);
  // 8 ranks × M / 2 leave a node through 200 GB/s.
  CHECK(a2a.algbw_gbs == Approx(200.0 / 4).epsilon(1e-4));
  CHECK_THAT(a2a.cut, Catch::Contains("node 0"));
}

TEST_CASE("The bound refuses what has no links to bound, naming why") {
  CHECK_THROWS_WITH(
      bandwidth_bound(nominal_topology("h100-nvswitch", 1, 1), ir::Collective::AllGather),
      Catch::Contains("1 rank"));
  CHECK_THROWS_WITH(bandwidth_bound(nominal_topology("emulated", 1, 4), ir::Collective::AllGather),
                    Catch::Contains("emulates"));
  CHECK_THROWS_WITH(bandwidth_bound(nominal_topology("h100-nvswitch"), ir::Collective::Broadcast),
                    Catch::Contains("broadcast") && Catch::Contains("allgather"));
}

TEST_CASE("A DGX-1's bound is its six NVLinks, and falls with a link removed") {
  const auto file = test::dgx1_file();
  if (!file) return;
  const Bound whole = bandwidth_bound(nominal_topology(*file), ir::Collective::AllGather);
  // 150 GB/s of NVLink into every GPU; PCIe adds only what crosses between the sockets.
  CHECK(whole.algbw_gbs >= 150.0 * 8 / 7);
  CHECK(whole.algbw_gbs < 160.0 * 8 / 7);
  const Bound degraded =
      bandwidth_bound(nominal_topology(*file, 1, 0, {{0, 1, 0}}), ir::Collective::AllGather);
  CHECK(degraded.algbw_gbs < whole.algbw_gbs * 0.9);
  CHECK(degraded.algbw_gbs >= 125.0 * 8 / 7);
  // A weak GPU can be a leaf of every tree: allreduce need not pay it twice its share.
  const Bound allreduce =
      bandwidth_bound(nominal_topology(*file, 1, 0, {{0, 1, 0}}), ir::Collective::AllReduce);
  CHECK(allreduce.algbw_gbs > degraded.algbw_gbs / 2 * 1.1);
  CHECK_THAT(allreduce.cut, Catch::Contains("every GPU, together"));
}

// The hybrid cube-mesh joins its two quads of GPUs (0-3, 4-7) by four NVLinks, 50 + 50 + 25 +
// 25 GB/s each way, and routes between the quads turn at a GPU, never through PCIe: the 16 pairs
// from one quad to the other cross those links, which no single GPU's cut and no one link shows.
TEST_CASE("A DGX-1's alltoall is bound by the NVLinks between its two quads of GPUs") {
  const auto file = test::dgx1_file();
  if (!file) return;
  const Bound a2a = bandwidth_bound(nominal_topology(*file), ir::Collective::AllToAll);
  // 4 × 4 blocks of M / 8 over 150 GB/s: M / 75 GB/s (a GPU's own links allow M / 171 GB/s).
  CHECK(a2a.algbw_gbs == Approx(75.0).epsilon(1e-4));
  CHECK_THAT(a2a.cut, Catch::Contains("4 GPUs (ranks 0, 1, 2, 3)"));
  // With a link within a quad down, the quads still bind.
  const Bound degraded =
      bandwidth_bound(nominal_topology(*file, 1, 0, {{0, 1, 0}}), ir::Collective::AllToAll);
  CHECK(degraded.algbw_gbs == Approx(75.0).epsilon(1e-4));
}

// On 6 of a DGX-1's GPUs (ranks 0-5), GPUs 4 and 5 reach the quad 0-3 by one 50 GB/s NVLink
// each (4-0, 5-1) and each other by 25 GB/s. In three groups, the quad, GPU 4 and GPU 5, every
// element crosses between groups 2 (3 - 1) times, through 100 + 75 + 75 GB/s into the groups:
// M / 62.5 GB/s, where single GPUs allow M / 70 (and spanning trees packed both ways, which cross
// between the three groups twice each, reach exactly 62.5).
TEST_CASE("On 6 of a DGX-1's GPUs allreduce is bound by a grouping of them, not single GPUs") {
  const auto file = test::dgx1_file();
  if (!file) return;
  const Bound ar = bandwidth_bound(nominal_topology(*file, 1, 6), ir::Collective::AllReduce);
  CHECK(ar.algbw_gbs == Approx(62.5).epsilon(1e-4));
  CHECK_THAT(ar.cut,
             Catch::Contains("3 groups of GPUs") && Catch::Contains("{0, 1, 2, 3} {4} {5}"));
  // On the whole machine and on it with an NVLink down no grouping binds more than single GPUs.
  CHECK_THAT(bandwidth_bound(nominal_topology(*file), ir::Collective::AllReduce).cut,
             Catch::Contains("every GPU, together"));
}

TEST_CASE("Across nodes the allreduce bound is every node's NICs together") {
  const Bound ar = bandwidth_bound(nominal_topology("a100-nvswitch", 8), ir::Collective::AllReduce);
  // 64 ranks in 8 nodes: 2 · 7 · M over 8 nodes × 200 GB/s.
  CHECK(ar.algbw_gbs == Approx(8 * 200.0 / 14).epsilon(1e-4));
  CHECK_THAT(ar.cut, Catch::Contains("every node, together"));
}

}  // namespace
}  // namespace weft::synthesis

namespace weft::synthesis {
namespace {

// pcie-gen4's two sockets, four GPUs each, meet through one 16 GB/s link: a set that one link
// separates, which neither a single GPU nor the node shows.
TEST_CASE("On a PCIe machine the link between the sockets binds alltoall and allreduce") {
  const predict::Topology pcie = nominal_topology("pcie-gen4");
  const Bound a2a = bandwidth_bound(pcie, ir::Collective::AllToAll);
  // 4 × 4 blocks of M / 8 cross each way.
  CHECK(a2a.algbw_gbs == Approx(16.0 / 2).epsilon(1e-4));
  CHECK_THAT(a2a.cut, Catch::Contains("4 GPUs"));
  const Bound ar = bandwidth_bound(pcie, ir::Collective::AllReduce);
  // 2 M cross between the two sockets, 16 GB/s each way.
  CHECK(ar.algbw_gbs == Approx(16.0).epsilon(1e-4));
  CHECK_THAT(ar.cut, Catch::Contains("both ways"));
}

// Two nodes of eight A100s sharing their NICs (tests/data/topologies): a NIC no GPU's route
// leaves through is left out of the bound, and the bound says so; one some routes take counts.
TEST_CASE("Across nodes the bound leaves out a NIC no route uses, and says why") {
  const std::string data = std::string(WEFT_TEST_DATA_DIR) + "/topologies/";
  // Three NICs in use at 25 GB/s each, the root port's fourth on no GPU's route: 75 GB/s into a
  // node for the half of every block it lacks.
  const Bound three = bandwidth_bound(nominal_topology(data + "a100-3nic-plus-root-dump.xml", 2),
                                      ir::Collective::AllGather);
  CHECK(three.algbw_gbs == Approx(150).epsilon(1e-4));
  REQUIRE(three.left_out.size() == 1);
  CHECK_THAT(three.left_out.front(),
             Catch::Contains("node 0 nic mlx5_2") && Catch::Contains("no GPU's route"));
  // Five NICs, the root port's taken by the two GPUs on socket 0's root ports: all five count.
  // Four NICs behind switches and a fifth on the root port: each GPU takes the NIC under its
  // own switch, as NCCL does, and the fifth is left out.
  const Bound four = bandwidth_bound(nominal_topology(data + "a100-4nic-plus-root-dump.xml", 2),
                                     ir::Collective::AllGather);
  REQUIRE(four.left_out.size() == 1);
  CHECK_THAT(four.left_out.front(), Catch::Contains("node 0 nic mlx5_2"));
  const Bound five = bandwidth_bound(
      nominal_topology(data + "a100-5nic-two-gpus-on-root-dump.xml", 2), ir::Collective::AllGather);
  CHECK(five.algbw_gbs == Approx(250).epsilon(1e-4));
  CHECK(five.left_out.empty());
  // A NIC per GPU, and one node: nothing left out.
  CHECK(bandwidth_bound(nominal_topology("a100-nvswitch", 2), ir::Collective::AllGather)
            .left_out.empty());
  CHECK(bandwidth_bound(nominal_topology("a100-nvswitch"), ir::Collective::AllGather)
            .left_out.empty());
}

}  // namespace
}  // namespace weft::synthesis
