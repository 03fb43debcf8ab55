// Cost parameters: NCCL-calibrated defaults, the text form both ways, errors, link overrides.
#include <catch2/catch.hpp>

#include "weft/predict/cost_parameters.h"
#include "weft/predict/nccl_model.h"
#include "weft/predict/topology.h"

using namespace weft::predict;
using weft::Diagnostics;
using weft::ir::Protocol;

namespace {

Topology load(const std::string& source, int nodes = 1, int gpus_per_node = 0) {
  TopologyResult r = load_topology({source, nodes, gpus_per_node});
  INFO(r.diagnostics.str());
  REQUIRE(r.topology.has_value());
  return std::move(*r.topology);
}

std::size_t at(LinkType t) {
  return static_cast<std::size_t>(t);
}

}  // namespace

TEST_CASE("defaults: NCCL's ring latencies, and threadblocks that add up to NCCL's bandwidth") {
  const Topology t = load("h100-nvswitch");
  const CostParameters& c = t.costs();
  CHECK(c.launch_latency_us == Approx(6.6));
  CHECK(c.protocol(Protocol::LL).call_latency_us == Approx(0));
  CHECK(c.protocol(Protocol::LL128).call_latency_us == Approx(7.4));
  CHECK(c.protocol(Protocol::Simple).call_latency_us == Approx(1.8));
  CHECK(c.protocol(Protocol::Simple).hop_latency_us[at(LinkType::NVLink)] == Approx(3.4));
  CHECK(c.protocol(Protocol::LL).hop_latency_us[at(LinkType::PCIe)] == Approx(1.0));
  CHECK(c.protocol(Protocol::LL128).hop_latency_us[at(LinkType::Network)] == Approx(4.0));
  CHECK(c.protocol(Protocol::LL).payload_efficiency == Approx(0.5));
  CHECK(c.protocol(Protocol::LL128).payload_efficiency == Approx(120.0 / 128));
  // 12 threadblocks (channels) moving payload at NCCL's ring bus bandwidth per protocol:
  // Simple 360, LL 141 (its ceiling on one Hopper node), LL128 360 x 0.92.
  const double channels = nccl_ring_graph(t).channels;
  const auto payload = [&](Protocol p) {
    return channels * c.protocol(p).threadblock_bandwidth_gbs * c.protocol(p).payload_efficiency;
  };
  CHECK(payload(Protocol::Simple) == Approx(360));
  CHECK(payload(Protocol::LL) == Approx(141));
  CHECK(payload(Protocol::LL128) == Approx(331.2));
  // Launch plus the protocol's call latency is NCCL's ring base latency.
  CHECK(c.launch_latency_us + c.protocol(Protocol::Simple).call_latency_us == Approx(8.4));
}

TEST_CASE("defaults follow the machine: A100, two nodes, emulation") {
  CHECK(load("a100-nvswitch").costs().protocol(Protocol::Simple).threadblock_bandwidth_gbs ==
        Approx(20));
  CHECK(load("h100-nvswitch", 2).costs().protocol(Protocol::Simple).threadblock_bandwidth_gbs ==
        Approx(48));
  const Topology e = load("emulated", 1, 8);
  CHECK(e.costs().protocol(Protocol::Simple).threadblock_bandwidth_gbs == Approx(30));
  CHECK(e.costs().protocol(Protocol::LL).hop_latency_us[at(LinkType::Memory)] == Approx(0.6));
}

TEST_CASE("written cost parameters read back to the same values") {
  const CostParameters original = load("a100-nvswitch", 2).costs();
  const std::string text = write_cost_parameters(original);
  CHECK(text.find("launch_latency_us = 6.6") != std::string::npos);
  CHECK(text.find("ll128.hop_latency_us.nvlink = 1.9") != std::string::npos);
  CostParameters back;
  const Diagnostics d = read_cost_parameters(text, "costs.txt", back);
  INFO(d.str());
  CHECK(!d.has_errors());
  CHECK(back.launch_latency_us == original.launch_latency_us);
  for (std::size_t p = 0; p < 3; ++p) {
    CHECK(back.protocols[p].call_latency_us == original.protocols[p].call_latency_us);
    CHECK(back.protocols[p].payload_efficiency == original.protocols[p].payload_efficiency);
    CHECK(back.protocols[p].threadblock_bandwidth_gbs ==
          original.protocols[p].threadblock_bandwidth_gbs);
    CHECK(back.protocols[p].hop_latency_us == original.protocols[p].hop_latency_us);
  }
}

TEST_CASE("a cost file sets only what it names, comments and blank lines aside") {
  CostParameters c = load("h100-nvswitch").costs();
  const Diagnostics d = read_cost_parameters(
      "# tuned on our cluster\n\nlaunch_latency_us = 5.5   # measured\n"
      "  LL.Hop_Latency_us.NVLink=0.7\nsimple.threadblock_bandwidth_gbs = 42\n",
      "mine.txt", c);
  CHECK(!d.has_errors());
  CHECK(c.launch_latency_us == 5.5);
  CHECK(c.protocol(Protocol::LL).hop_latency_us[at(LinkType::NVLink)] == 0.7);
  CHECK(c.protocol(Protocol::Simple).threadblock_bandwidth_gbs == 42);
  CHECK(c.protocol(Protocol::LL128).call_latency_us == Approx(7.4));  // untouched
}

TEST_CASE("cost file errors name file, line and key, and change nothing") {
  CostParameters c = load("h100-nvswitch").costs();
  const CostParameters before = c;
  const auto error = [&](const std::string& text, const std::string& words) {
    const Diagnostics d = read_cost_parameters(text, "c.txt", c);
    INFO(d.str());
    CHECK(d.has_errors());
    CHECK(d.str().find(words) != std::string::npos);
    CHECK(c.launch_latency_us == before.launch_latency_us);
  };
  error("launch_latency_us = 1\nwarp_speed = 9\n", "c.txt:2: warp_speed: error: unknown key");
  error("\n\nlaunch_latency_us 5\n", "c.txt:3: error: expected `key = value`");
  error("launch_latency_us = fast\n", "c.txt:1: launch_latency_us: error: value \"fast\"");
  error("launch_latency_us =\n", "value \"\" is not a finite decimal number");
  error("ll.hop_latency_us.pcie = -1\n",
        "c.txt:1: ll.hop_latency_us.pcie: error: value -1 is negative");
  error("simple.payload_efficiency = 1.5\n", "it must be at most 1");
  error("ll.threadblock_bandwidth_gbs = 0\n", "must be above 0");
  error("launch_latency_us = nan\n", "not a finite decimal number");
  error("link.nvlink.bandwidth_gbs = 100\n", "link overrides apply to a topology");
  error("ll.hop_latency_us.infiniband = 1\n", "unknown key");
}

TEST_CASE("link overrides are read, written and applied to a topology by type") {
  CostParameters c;
  LinkOverrides links;
  const Diagnostics d = read_cost_parameters(
      "link.nvlink.bandwidth_gbs = 400\nlink.network.latency_us = 2.5\n", "o.txt", c, &links);
  INFO(d.str());
  REQUIRE(!d.has_errors());
  CHECK(links.bandwidth_gbs[at(LinkType::NVLink)] == 400);
  CHECK(!links.latency_us[at(LinkType::NVLink)]);
  const std::string text = write_cost_parameters(c, links);
  CHECK(text.find("link.nvlink.bandwidth_gbs = 400") != std::string::npos);
  CHECK(text.find("link.network.latency_us = 2.5") != std::string::npos);

  Topology t = load("h100-nvswitch", 2);
  apply_link_overrides(t, links);
  // The override is the links' line rate; the model moves the type's achievable share of it.
  const Link& nvlink = t.links()[static_cast<std::size_t>(t.route(0, 1)[0])];
  CHECK(nvlink.line_rate_gbs == 400);
  CHECK(nvlink.bandwidth_gbs == Approx(400 * t.costs().achievable(LinkType::NVLink)));
  const Link& network = t.links()[static_cast<std::size_t>(t.route(0, 8)[2])];
  CHECK(network.latency_us == 2.5);
  CHECK(network.line_rate_gbs == Approx(50));
  CHECK(network.bandwidth_gbs == Approx(48));
}

TEST_CASE("achievable shares: NCCL's per-link figures and NVIDIA's measurements, overridable") {
  // Hopper: 18 NVLinks at NCCL's 20.6 GB/s, the 370 GB/s NVIDIA states NCCL's ring moves.
  const Topology h100 = load("h100-nvswitch");
  CHECK(h100.costs().achievable(LinkType::NVLink) == Approx(20.6 / 25));
  const Link& nvlink = h100.links()[static_cast<std::size_t>(h100.route(0, 1)[0])];
  CHECK(nvlink.line_rate_gbs == Approx(450));
  CHECK(nvlink.bandwidth_gbs == Approx(370.8));
  // Ampere: NCCL's 20.0 of 25 GB/s per link.
  CHECK(load("a100-nvswitch").costs().achievable(LinkType::NVLink) == Approx(0.8));
  CHECK(h100.costs().achievable(LinkType::Network) == Approx(0.96));
  CHECK(h100.costs().achievable(LinkType::Memory) == 1.0);

  // Written with the rest, read back, and refused outside (0, 1].
  CostParameters c = h100.costs();
  CHECK(write_cost_parameters(c).find("link.nvlink.achievable = 0.824") != std::string::npos);
  const Diagnostics d = read_cost_parameters("link.nvlink.achievable = 0.9\n", "a.txt", c);
  INFO(d.str());
  REQUIRE(!d.has_errors());
  CHECK(c.achievable(LinkType::NVLink) == 0.9);
  CostParameters unchanged = c;
  CHECK(read_cost_parameters("link.pcie.achievable = 1.2\n", "a.txt", unchanged).has_errors());
  CHECK(read_cost_parameters("link.pcie.achievable = 0\n", "a.txt", unchanged).has_errors());

  // A topology given new costs rates every link again.
  Topology t = load("h100-nvswitch");
  t.set_costs(c);
  CHECK(t.links()[static_cast<std::size_t>(t.route(0, 1)[0])].bandwidth_gbs == Approx(405));
  CHECK(t.at_line_rate().links()[static_cast<std::size_t>(t.route(0, 1)[0])].bandwidth_gbs ==
        Approx(450));
}

TEST_CASE("Weft's measured step floors every hop, and reads and writes as step_latency_us") {
  // NCCL's LL hop over NVLink is 0.6 us; a step of Weft's interpreter measured 3.2 (an 8-rank LL
  // ring of 1 KB on one H100: 51.84 us for 14 steps after a 6.6 us launch).
  const Topology h100 = load("h100-nvswitch");
  const ProtocolCosts& ll = h100.costs().protocol(Protocol::LL);
  CHECK(ll.hop_latency_us[at(LinkType::NVLink)] == Approx(0.6));
  CHECK(ll.step_latency_us == Approx(3.2));
  CHECK(ll.hop_us(LinkType::NVLink) == Approx(3.2));
  // Simple's NVLink hop (3.4 us) is longer than its step (3.3): the hop stands.
  CHECK(h100.costs().protocol(Protocol::Simple).hop_us(LinkType::NVLink) == Approx(3.4));
  CostParameters c = h100.costs();
  CHECK(write_cost_parameters(c).find("ll.step_latency_us = 3.2") != std::string::npos);
  const Diagnostics d = read_cost_parameters("ll.step_latency_us = 0\n", "s.txt", c);
  INFO(d.str());
  REQUIRE(!d.has_errors());
  CHECK(c.protocol(Protocol::LL).hop_us(LinkType::NVLink) == Approx(0.6));
}
