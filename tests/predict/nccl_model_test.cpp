// NCCL's prediction on the presets, pinned to figures worked out by hand from NCCL's
// src/graph/tuning.cc (the tuner constants, ncclTopoTuneModel, ncclTopoGetAlgoTime) with the
// channel counts of nccl_ring_graph (the search.cc approximation in nccl_model.h).
#include <algorithm>

#include <catch2/catch.hpp>

#include "weft/predict/nccl_model.h"
#include "weft/predict/topology.h"

using namespace weft::predict;
using weft::ir::Collective;
using weft::ir::Protocol;

namespace {

constexpr std::uint64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;

Topology load(const std::string& source, int nodes = 1) {
  TopologyResult r = load_topology({source, nodes, 0});
  INFO(r.diagnostics.str());
  REQUIRE(r.topology.has_value());
  return std::move(*r.topology);
}

NcclPrediction find(const std::vector<NcclPrediction>& all, const std::string& algorithm,
                    Protocol protocol) {
  const auto it = std::find_if(all.begin(), all.end(), [&](const NcclPrediction& p) {
    return p.algorithm == algorithm && p.protocol == protocol;
  });
  REQUIRE(it != all.end());
  return *it;
}

double busbw(const Topology& t, Collective c, std::uint64_t bytes, double time_us) {
  return static_cast<double>(bytes) / time_us / 1000 * bus_bandwidth_factor(c, t.ranks());
}

}  // namespace

TEST_CASE("nccl_ring_graph: channels and per-channel speed on the presets") {
  // h100-nvswitch: a GPU's NVLink counts 18 x 20.6 = 370.8 GB/s (topo.h SM90_NVLINK_BW). Speeds
  // from 60 (search.cc, sm90 intra): 6 channels x 60 = 360; no later speed beats 360 before the
  // next falls below half of 60. Hopper at 60 >= 50 doubles: 12 channels x 30; 40 fits only 9.
  const NcclGraph h100 = nccl_ring_graph(load("h100-nvswitch"));
  CHECK(h100.channels == 12);
  CHECK(h100.speed_gbs == 30);
  CHECK(h100.intra_type == LinkType::NVLink);
  CHECK(h100.ll128);
  CHECK(h100.total_bw == Approx(370.8));
  // a100-nvswitch: 12 x 20 = 240 GB/s. At 40, 6 channels reach 240 = the GPU's total: done;
  // doubled to 12 x 20 (NCCL's DGX A100 log shows the same).
  const NcclGraph a100 = nccl_ring_graph(load("a100-nvswitch"));
  CHECK(a100.channels == 12);
  CHECK(a100.speed_gbs == 20);
  // pcie-gen4: the ring crosses the AMD socket link, 16 GB/s: one channel at 15.
  const NcclGraph pcie = nccl_ring_graph(load("pcie-gen4"));
  CHECK(pcie.channels == 1);
  CHECK(pcie.speed_gbs == 15);
  CHECK(pcie.intra_type == LinkType::PCIe);
  CHECK(!pcie.ll128);
  // Two h100 nodes: a GPU reaches its NIC at PCIe Gen5 x16 = 48 (NIC 400 Gb/s = 50); from 48
  // (sm90 inter) each of 8 NICs takes one channel and NVLink, used by 7 of 8 channels per GPU,
  // fits floor(370.8 / (48 x 7/8)) = 8: 8 x 48 = 384 >= 370.8, done; not doubled (Hopper, under
  // 50 with more than 4 channels).
  const NcclGraph two = nccl_ring_graph(load("h100-nvswitch", 2));
  CHECK(two.channels == 8);
  CHECK(two.speed_gbs == 48);
  CHECK(two.ll128);
  // Two a100 nodes: GPU to NIC at PCIe Gen4 x16 = 24 (NIC 25): 8 x 24 = 192; not doubled (< 25).
  const NcclGraph two_a100 = nccl_ring_graph(load("a100-nvswitch", 2));
  CHECK(two_a100.channels == 8);
  CHECK(two_a100.speed_gbs == 24);
}

TEST_CASE("allreduce on h100-nvswitch, 8 ranks: NCCL's figures by hand") {
  const Topology t = load("h100-nvswitch");
  // 12 channels x 30 = 360 GB/s bus; ring steps 2 x 7 = 14, algbw = bus x 8 / 14.
  // Ring Simple: bw 360 x 8/14 = 205.714; lat 8.4 + 14 x 3.4 = 56.0.
  // Ring LL:     bw min(141 (llMaxBw Hopper, 1 node), 360 x 0.5) x 8/14 = 80.571; lat 6.6 + 14 x
  // 0.6 = 15.0. Ring LL128:  bw min(360 x 0.92, 12 x 36.7) x 8/14 = 189.257; lat 14.0 + 14 x 1.9
  // = 40.6. Tree Simple: bw min(360 x 0.92, 12 x 38.7) x 0.5 = 165.6; lat 8.4 + 2 x 7 x 4.0 = 64.4.
  // Tree LL:     bw min(331.2 / 3.8, 141) x 0.5 = 43.579; lat 6.8 + 2 x 7 x 0.6 = 15.2.
  // Tree LL128:  bw min(331.2 x 7/9, 12 x 36.7) x 0.5 = 128.8; lat 14.0 + 2 x 7 x 1.25 = 31.5.
  const auto k1 = predict_nccl(t, Collective::AllReduce, kKiB);
  REQUIRE(k1.size() == 6);
  const auto ring_ll = find(k1, "Ring", Protocol::LL);
  CHECK(ring_ll.channels == 12);
  CHECK(ring_ll.latency_us == Approx(15.0));
  CHECK(ring_ll.algbw_gbs == Approx(80.5714).epsilon(1e-5));
  CHECK(ring_ll.time_us == Approx(15.0 + 1024 / 80571.43).epsilon(1e-6));
  CHECK(find(k1, "Ring", Protocol::LL128).algbw_gbs == Approx(189.2571).epsilon(1e-5));
  CHECK(find(k1, "Ring", Protocol::LL128).latency_us == Approx(40.6));
  CHECK(find(k1, "Ring", Protocol::Simple).latency_us == Approx(56.0));
  CHECK(find(k1, "Tree", Protocol::Simple).latency_us == Approx(64.4));
  CHECK(find(k1, "Tree", Protocol::LL128).latency_us == Approx(31.5));
  // Tree LL at 1 KiB: log2(1024 / 64) = 4, correction 0.9: 43.579 x 0.9 = 39.221;
  // 15.2 + 1024 / 39221 = 15.2261 > Ring LL's 15.0127: NCCL picks Ring LL.
  CHECK(find(k1, "Tree", Protocol::LL).time_us == Approx(15.2 + 1024 / 39221.05).epsilon(1e-5));
  const auto best_k1 = best_nccl(t, Collective::AllReduce, kKiB);
  REQUIRE(best_k1);
  CHECK(best_k1->algorithm == "Ring");
  CHECK(best_k1->protocol == Protocol::LL);

  // 1 MiB: Ring LL 15 + 1048576 / 80571.43 = 28.014; Tree LL128 (correction 0.6 at log 14)
  // 31.5 + 1048576 / 77280 = 45.069; Ring Simple 56 + 5.097 = 61.097. Ring LL wins.
  const auto m1 = predict_nccl(t, Collective::AllReduce, kMiB);
  CHECK(find(m1, "Ring", Protocol::LL).time_us == Approx(28.0142).epsilon(1e-5));
  CHECK(find(m1, "Tree", Protocol::LL128).time_us == Approx(45.0685).epsilon(1e-5));
  CHECK(find(m1, "Ring", Protocol::Simple).time_us == Approx(61.0972).epsilon(1e-5));
  CHECK(best_nccl(t, Collective::AllReduce, kMiB)->protocol == Protocol::LL);

  // 1 GiB: Ring Simple 56 + 1073741824 / 205714.29 = 5275.578 us; busbw 2^30 / 5275.578 us x
  // 14/8 = 356.2 GB/s, within 1.1% of the 360 it converges to.
  const auto g1 = best_nccl(t, Collective::AllReduce, kGiB);
  REQUIRE(g1);
  CHECK(g1->algorithm == "Ring");
  CHECK(g1->protocol == Protocol::Simple);
  CHECK(g1->time_us == Approx(5275.578).epsilon(1e-6));
  CHECK(busbw(t, Collective::AllReduce, kGiB, g1->time_us) == Approx(356.18).epsilon(1e-4));
  CHECK(busbw(t, Collective::AllReduce, 64 * kGiB,
              best_nccl(t, Collective::AllReduce, 64 * kGiB)->time_us) ==
        Approx(360).epsilon(1e-3));
}

TEST_CASE("allreduce on a100-nvswitch, 8 ranks: NCCL's figures by hand") {
  const Topology t = load("a100-nvswitch");
  // 12 channels x 20 = 240 bus. Ring Simple bw 240 x 8/14 = 137.143, lat 56.0;
  // Ring LL bw min(87.7 (Ampere, 1 node), 120) x 8/14 = 50.114, lat 15.0;
  // Ring LL128 bw min(240 x 0.92, 12 x 20) x 8/14 = 126.171, lat 40.6;
  // Tree LL bw min(220.8 / 3.8, 87.7) x 0.5 = 29.053, lat 15.2.
  const auto k1 = predict_nccl(t, Collective::AllReduce, kKiB);
  CHECK(find(k1, "Ring", Protocol::LL).algbw_gbs == Approx(50.1143).epsilon(1e-5));
  CHECK(find(k1, "Ring", Protocol::LL).time_us == Approx(15.0 + 1024 / 50114.29).epsilon(1e-6));
  CHECK(find(k1, "Ring", Protocol::LL128).algbw_gbs == Approx(126.1714).epsilon(1e-5));
  CHECK(find(k1, "Tree", Protocol::LL).algbw_gbs == Approx(29.0526 * 0.9).epsilon(1e-4));
  CHECK(best_nccl(t, Collective::AllReduce, kKiB)->protocol == Protocol::LL);
  // 1 MiB: Ring LL 15 + 1048576 / 50114.29 = 35.924; Ring LL128 40.6 + 1048576 / 126171.4 =
  // 48.911; Tree LL128: min(220.8 x 7/9, 240) x 0.5 x 0.6 = 51.52 -> 31.5 + 20.353 = 51.853.
  const auto m1 = predict_nccl(t, Collective::AllReduce, kMiB);
  CHECK(find(m1, "Ring", Protocol::LL).time_us == Approx(35.9239).epsilon(1e-5));
  CHECK(find(m1, "Ring", Protocol::LL128).time_us == Approx(48.9107).epsilon(1e-5));
  CHECK(find(m1, "Tree", Protocol::LL128).time_us == Approx(51.8527).epsilon(1e-5));
  // 1 GiB: Ring Simple 56 + 1073741824 / 137142.86 = 7885.367; busbw x 14/8 = 238.3.
  const auto g1 = best_nccl(t, Collective::AllReduce, kGiB);
  CHECK(g1->algorithm == "Ring");
  CHECK(g1->protocol == Protocol::Simple);
  CHECK(g1->time_us == Approx(7885.367).epsilon(1e-6));
  CHECK(busbw(t, Collective::AllReduce, kGiB, g1->time_us) == Approx(238.30).epsilon(1e-4));
}

TEST_CASE("allreduce across two h100-nvswitch nodes: NCCL's figures by hand") {
  const Topology t = load("h100-nvswitch", 2);
  // 16 ranks, 8 channels x 48 = 384 bus; steps 30, of which 2 cross the network.
  // Ring Simple: bw 384 x 16/30 = 204.8; lat 8.4 + 28 x max(3.4, 1.0 x 3 (Intel net overhead))
  //   + 2 x 14.0 = 131.6, x 1.4 once 2^20 / (8 x 16) >= 64 bytes (plateau).
  // Ring LL: bw min(39 (Intel, 2 nodes), 384 x 0.5) x 16/30 = 20.8; lat 6.6 + 28 x max(0.6, 1.0)
  //   + 2 x 2.7 = 40.0.
  // Tree LL: bw min(min(384 x 0.92, 8 x 41.4) / 3.8, 39) x 0.5 = 19.5, x 0.9 at 1 KiB;
  //   lat 6.8 + 2 x (7 x 0.6 + 1 x 5.0) = 25.2.
  const auto k1 = predict_nccl(t, Collective::AllReduce, kKiB);
  CHECK(find(k1, "Ring", Protocol::LL).latency_us == Approx(40.0));
  CHECK(find(k1, "Ring", Protocol::LL).algbw_gbs == Approx(20.8));
  CHECK(find(k1, "Ring", Protocol::Simple).latency_us == Approx(131.6));
  CHECK(find(k1, "Tree", Protocol::LL).latency_us == Approx(25.2));
  CHECK(find(k1, "Tree", Protocol::LL).time_us == Approx(25.2 + 1024 / 17550.0).epsilon(1e-6));
  const auto best_k1 = best_nccl(t, Collective::AllReduce, kKiB);
  CHECK(best_k1->algorithm == "Tree");
  CHECK(best_k1->protocol == Protocol::LL);
  const auto m1 = predict_nccl(t, Collective::AllReduce, kMiB);
  CHECK(find(m1, "Ring", Protocol::Simple).latency_us == Approx(131.6 * 1.4));
  // 1 GiB: 184.24 + 1073741824 / 204800 = 5427.12 us; busbw x 30/16 = 370.96 (-> 384).
  const auto g1 = best_nccl(t, Collective::AllReduce, kGiB);
  CHECK(g1->algorithm == "Ring");
  CHECK(g1->protocol == Protocol::Simple);
  CHECK(g1->time_us == Approx(5427.12).epsilon(1e-6));
  CHECK(busbw(t, Collective::AllReduce, kGiB, g1->time_us) == Approx(370.96).epsilon(1e-4));
}

TEST_CASE("other collectives: ring only, with their step counts and bytes") {
  const Topology t = load("h100-nvswitch");
  // Allgather: steps 7, algbw = 360 x 8/7 = 411.43 (Simple); lat 8.4 + 7 x 3.4 = 32.2.
  const auto ag = predict_nccl(t, Collective::AllGather, kGiB);
  REQUIRE(ag.size() == 3);
  CHECK(std::all_of(ag.begin(), ag.end(), [](const auto& p) { return p.algorithm == "Ring"; }));
  const auto ag_simple = find(ag, "Ring", Protocol::Simple);
  CHECK(ag_simple.algbw_gbs == Approx(411.4286).epsilon(1e-5));
  CHECK(ag_simple.latency_us == Approx(32.2));
  CHECK(busbw(t, Collective::AllGather, 64 * kGiB,
              best_nccl(t, Collective::AllGather, 64 * kGiB)->time_us) ==
        Approx(360).epsilon(1e-3));
  // Reducescatter: the same as allgather.
  CHECK(find(predict_nccl(t, Collective::ReduceScatter, kGiB), "Ring", Protocol::Simple).time_us ==
        Approx(ag_simple.time_us));
  // Broadcast: steps 8, algbw = 360 x 8/8 = 360; lat 8.4 + one hop 3.4 (sameChannels).
  const auto bc = find(predict_nccl(t, Collective::Broadcast, kMiB), "Ring", Protocol::Simple);
  CHECK(bc.algbw_gbs == Approx(360));
  CHECK(bc.latency_us == Approx(11.8));
  CHECK(find(predict_nccl(t, Collective::Reduce, kMiB), "Ring", Protocol::LL).latency_us ==
        Approx(7.2));
  // Not in NCCL's model: alltoall, custom; and an emulated topology.
  CHECK(predict_nccl(t, Collective::AllToAll, kMiB).empty());
  TopologyResult emulated = load_topology({"emulated", 1, 4});
  REQUIRE(emulated.topology);
  CHECK(predict_nccl(*emulated.topology, Collective::AllReduce, kMiB).empty());
  CHECK(!best_nccl(*emulated.topology, Collective::AllReduce, kMiB));
}

TEST_CASE("PCIe machine: PCI latencies, no LL128") {
  const Topology t = load("pcie-gen4");
  const auto k1 = predict_nccl(t, Collective::AllReduce, kKiB);
  CHECK(k1.size() == 4);  // Ring and Tree, LL and Simple
  // Ring Simple lat 8.4 + 14 x 5.7 = 88.2; bw 15 x 8/14 = 8.571.
  CHECK(find(k1, "Ring", Protocol::Simple).latency_us == Approx(88.2));
  CHECK(find(k1, "Ring", Protocol::Simple).algbw_gbs == Approx(8.5714).epsilon(1e-4));
}

TEST_CASE("bus bandwidth factors follow nccl-tests") {
  CHECK(bus_bandwidth_factor(Collective::AllReduce, 8) == Approx(1.75));
  CHECK(bus_bandwidth_factor(Collective::AllGather, 8) == Approx(0.875));
  CHECK(bus_bandwidth_factor(Collective::ReduceScatter, 4) == Approx(0.75));
  CHECK(bus_bandwidth_factor(Collective::Broadcast, 8) == Approx(1));
}
