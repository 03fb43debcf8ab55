// Presets: shapes, routes, link figures, multi-node copies, emulation, and requests refused.
#include <algorithm>
#include <set>

#include <catch2/catch.hpp>

#include "weft/predict/presets.h"
#include "weft/predict/topology.h"

using namespace weft::predict;

namespace {

Topology load(const std::string& source, int nodes = 1, int gpus_per_node = 0) {
  TopologyResult r = load_topology({source, nodes, gpus_per_node});
  INFO(r.diagnostics.str());
  REQUIRE(r.topology.has_value());
  return std::move(*r.topology);
}

std::vector<LinkType> route_types(const Topology& t, int a, int b) {
  std::vector<LinkType> out;
  for (int l : t.route(a, b)) out.push_back(t.links()[static_cast<std::size_t>(l)].type);
  return out;
}

}  // namespace

TEST_CASE("every preset is listed with a description and loads") {
  REQUIRE(presets().size() == 4);
  for (const PresetInfo& p : presets()) {
    INFO(p.name);
    CHECK(!p.description.empty());
    Topology t = load(std::string(p.name), 1, p.name == "emulated" ? 4 : 0);
    CHECK(t.name() == p.name);
    CHECK(!t.describe().empty());
  }
}

TEST_CASE("h100-nvswitch: 8 GPUs, NVLink through one NVSwitch at 450 GB/s per direction") {
  const Topology t = load("h100-nvswitch");
  CHECK(t.ranks() == 8);
  CHECK(t.nodes() == 1);
  CHECK(t.gpus_per_node() == 8);
  CHECK(t.machine().gpu_sm == 90);
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      if (a == b) {
        CHECK(t.route(a, b).empty());
        continue;
      }
      CHECK(route_types(t, a, b) == std::vector{LinkType::NVLink, LinkType::NVLink});
      CHECK(t.route_type(a, b) == LinkType::NVLink);
      for (int l : t.route(a, b)) {
        CHECK(t.links()[static_cast<std::size_t>(l)].line_rate_gbs == Approx(450));
      }
    }
    const Link& mem = t.links()[static_cast<std::size_t>(t.memory_link(a))];
    CHECK(mem.type == LinkType::Memory);
    CHECK(mem.from == mem.to);
    CHECK(t.vertices()[static_cast<std::size_t>(mem.from)].rank == a);
  }
  const auto nics = std::count_if(t.vertices().begin(), t.vertices().end(),
                                  [](const Vertex& v) { return v.kind == VertexKind::Nic; });
  CHECK(nics == 8);
  CHECK(t.machine().nic_speed_gbs == Approx(50));
}

TEST_CASE("a100-nvswitch: 300 GB/s NVLink per GPU and direction, 200 Gb/s NICs") {
  const Topology t = load("a100-nvswitch");
  CHECK(t.ranks() == 8);
  CHECK(t.machine().gpu_sm == 80);
  const int l = t.route(0, 5)[0];
  CHECK(t.links()[static_cast<std::size_t>(l)].line_rate_gbs == Approx(300));
  CHECK(t.machine().nic_speed_gbs == Approx(25));
}

TEST_CASE("pcie-gen4: pairs share a switch, sockets are joined by one link") {
  const Topology t = load("pcie-gen4");
  CHECK(t.ranks() == 8);
  // Same switch: up to the switch and down.
  CHECK(route_types(t, 0, 1) == std::vector{LinkType::PCIe, LinkType::PCIe});
  // Same socket, other switch: through the CPU.
  CHECK(t.route(0, 2).size() == 4);
  // Other socket: through both CPUs and the link between them.
  CHECK(t.route(0, 4).size() == 5);
  CHECK(t.route_type(0, 4) == LinkType::PCIe);
  const double gen4 = pcie_bandwidth_gbs(16, 16);
  CHECK(gen4 == Approx(31.5).epsilon(0.01));
  CHECK(t.links()[static_cast<std::size_t>(t.route(0, 1)[0])].line_rate_gbs == Approx(gen4));
}

TEST_CASE("two nodes: the second is a copy, joined through the NICs and one network switch") {
  const Topology t = load("h100-nvswitch", 2);
  CHECK(t.ranks() == 16);
  CHECK(t.nodes() == 2);
  CHECK(t.vertices()[static_cast<std::size_t>(
                         t.links()[static_cast<std::size_t>(t.memory_link(9))].from)]
            .rank == 9);
  CHECK(t.route_type(0, 1) == LinkType::NVLink);
  CHECK(t.route_type(0, 8) == LinkType::Network);
  CHECK(t.route_type(3, 12) == LinkType::Network);
  // GPU -> PCIe switch -> NIC -> network switch -> NIC -> PCIe switch -> GPU.
  CHECK(route_types(t, 3, 12) == std::vector{LinkType::PCIe, LinkType::PCIe, LinkType::Network,
                                             LinkType::Network, LinkType::PCIe, LinkType::PCIe});
  const auto route = t.route(3, 12);
  const Link& out = t.links()[static_cast<std::size_t>(route[2])];
  CHECK(t.vertices()[static_cast<std::size_t>(out.to)].kind == VertexKind::NetworkSwitch);
  CHECK(out.line_rate_gbs == Approx(50));
  CHECK(t.vertices()[static_cast<std::size_t>(t.links()[route.back()].to)].rank == 12);
  // Each GPU goes out through its own NIC.
  std::set<int> first_network_links;
  for (int r = 0; r < 8; ++r) first_network_links.insert(t.route(r, 8 + r)[2]);
  CHECK(first_network_links.size() == 8);
}

TEST_CASE("a100-nvswitch across nodes: the two GPUs of a switch use its two NICs") {
  const Topology t = load("a100-nvswitch", 2);
  std::set<int> nic_links;
  for (int r = 0; r < 8; ++r) nic_links.insert(t.route(r, 8)[2]);
  CHECK(nic_links.size() == 8);
}

TEST_CASE("1024 ranks: 128 nodes of h100-nvswitch build and look up routes") {
  const Topology t = load("h100-nvswitch", 128);
  CHECK(t.ranks() == 1024);
  CHECK(t.route(0, 1023).size() == 6);
  CHECK(t.route(1023, 1016).size() == 2);
}

TEST_CASE("emulated: N ranks share one GPU's memory link, which is every route") {
  const Topology t = load("emulated", 1, 6);
  CHECK(t.ranks() == 6);
  CHECK(t.gpus_per_node() == 6);
  CHECK(t.machine().emulated_ranks == 6);
  CHECK(t.links().size() == 1);
  const int mem = t.memory_link(0);
  for (int a = 0; a < 6; ++a) {
    CHECK(t.memory_link(a) == mem);
    for (int b = 0; b < 6; ++b) {
      if (a == b) continue;
      REQUIRE(t.route(a, b).size() == 1);
      CHECK(t.route(a, b)[0] == mem);
      CHECK(t.route_type(a, b) == LinkType::Memory);
    }
  }
  CHECK(t.links()[0].bandwidth_gbs == Approx(0.9 * 3350 / 2));
  CHECK(!t.assumptions().empty());
}

TEST_CASE("fewer GPUs per node keep the first ones") {
  const Topology t = load("pcie-gen4", 2, 4);
  CHECK(t.ranks() == 8);
  CHECK(t.gpus_per_node() == 4);
  const auto gpus = std::count_if(t.vertices().begin(), t.vertices().end(),
                                  [](const Vertex& v) { return v.kind == VertexKind::Gpu; });
  CHECK(gpus == 8);
  CHECK(t.route_type(0, 3) == LinkType::PCIe);
  CHECK(t.route_type(0, 4) == LinkType::Network);
}

TEST_CASE("requests a preset cannot meet are refused with the reason") {
  const auto refused = [](TopologyRequest request, const std::string& words) {
    TopologyResult r = load_topology(request);
    INFO(r.diagnostics.str());
    CHECK(!r.topology.has_value());
    CHECK(r.diagnostics.has_errors());
    CHECK(r.diagnostics.str().find(words) != std::string::npos);
  };
  refused({"h100-nvswitch", 0, 0}, "--nodes is 0");
  refused({"h100-nvswitch", 1, 16}, "asks for 16 GPUs but h100-nvswitch has 8");
  refused({"h100-nvswitch", 1, -2}, "--gpus-per-node is -2");
  refused({"emulated", 1, 0}, "give the rank count");
  refused({"emulated", 2, 8}, "--nodes must be 1");
  refused({"", 1, 0}, "no topology given");
  refused({"h100-nvswitch", 300, 0}, "2400 ranks asked for; a topology has at most 2048");
  refused({"emulated", 1, 100000}, "100000 ranks asked for");
  refused({"h100-nvswitch", 2000000000, 8}, "16000000000 ranks asked for");
  refused({"no-such-preset-or-file.xml", 1, 0}, "no-such-preset-or-file.xml");
}
