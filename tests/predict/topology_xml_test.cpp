// The NCCL topology XML reader: full dumps (Weft's own test files), the partial files of Azure's
// HPC images (read where they are, skipped when absent) and broken input.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "skip.h"
#include "weft/predict/topology.h"
#include "weft/predict/topology_xml.h"

using namespace weft::predict;
using weft::Diagnostics;

namespace {

const std::string kData = std::string(WEFT_TEST_DATA_DIR) + "/topologies/";
const std::string kAzure = std::string(WEFT_TOPOLOGY_XML_DIR) + "/";

Topology load(const std::string& path, int nodes = 1, int gpus_per_node = 0) {
  TopologyResult r = load_topology({path, nodes, gpus_per_node});
  INFO(r.diagnostics.str());
  REQUIRE(r.topology.has_value());
  return std::move(*r.topology);
}

bool azure_present(const std::string& file) {
  if (std::filesystem::exists(kAzure + file)) return true;
  weft::test_support::skip_test_case(
      kAzure + file +
      " is absent (Azure HPC topology files, kept outside the project; "
      "-DWEFT_TOPOLOGY_XML_DIR=FOLDER gives them)");
  return false;
}

bool mentions(const Topology& t, const std::string& words) {
  return std::any_of(t.assumptions().begin(), t.assumptions().end(),
                     [&](const std::string& a) { return a.find(words) != std::string::npos; });
}

std::string errors_of(std::string_view text) {
  Diagnostics d;
  const auto machine = read_topology_xml_text(text, "t.xml", d);
  CHECK(!machine.has_value());
  CHECK(d.has_errors());
  return d.str();
}

double link_bw(const Topology& t, int l) {
  return t.links()[static_cast<std::size_t>(l)].bandwidth_gbs;
}

}  // namespace

TEST_CASE("full dump: 8 x H100, 18 NVLinks to four NVSwitches become one NVSwitch at 450 GB/s") {
  const Topology t = load(kData + "h100-dump.xml");
  CHECK(t.ranks() == 8);
  CHECK(t.machine().gpu_sm == 90);
  CHECK(t.machine().gpu_model == "H100 SXM");
  CHECK(t.machine().cpu_vendor == CpuVendor::Intel);
  CHECK(t.machine().nic_speed_gbs == Approx(50));
  for (int b = 1; b < 8; ++b) {
    REQUIRE(t.route(0, b).size() == 2);
    CHECK(t.route_type(0, b) == LinkType::NVLink);
    CHECK(link_bw(t, t.route(0, b)[0]) == Approx(450));
  }
  // Only the sockets' link is assumed; nothing else was missing.
  CHECK(t.assumptions().size() == 1);
  CHECK(mentions(t, "joined pairwise"));
  // Two nodes: through each GPU's own NIC, PCIe Gen5 x16 on the way.
  const Topology two = load(kData + "h100-dump.xml", 2);
  CHECK(two.route_type(0, 8) == LinkType::Network);
  CHECK(link_bw(two, two.route(0, 8)[0]) == Approx(32.0 * 16 / 8 * 128 / 130));
}

TEST_CASE("full dump: GPU-to-GPU NVLinks listed on both GPUs become one link each way") {
  const Topology t = load(kData + "a100-nvlink-mesh-dump.xml");
  CHECK(t.ranks() == 4);
  CHECK(t.machine().gpu_sm == 80);
  CHECK(t.machine().gpu_model == "A100 SXM");
  CHECK(t.machine().cpu_vendor == CpuVendor::Amd);
  const auto nvlinks = std::count_if(t.links().begin(), t.links().end(),
                                     [](const Link& l) { return l.type == LinkType::NVLink; });
  CHECK(nvlinks == 12);  // 6 pairs, both directions
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      if (a == b) continue;
      REQUIRE(t.route(a, b).size() == 1);
      CHECK(link_bw(t, t.route(a, b)[0]) == Approx(100));
    }
  }
  // Rank order follows <gpu dev>: rank 0 is dev 0, the last GPU in the file.
  const Vertex& rank0 = t.vertices()[static_cast<std::size_t>(t.links()[t.route(0, 1)[0]].from)];
  CHECK(rank0.name == "gpu 0000:42:00.0");
  // The NICs' latency attribute becomes the network links' latency across nodes.
  const Topology two = load(kData + "a100-nvlink-mesh-dump.xml", 2);
  const Link& net = two.links()[static_cast<std::size_t>(two.route(0, 4)[2])];
  CHECK(net.type == LinkType::Network);
  CHECK(net.latency_us == Approx(1.5));
  CHECK(net.bandwidth_gbs == Approx(25));
}

TEST_CASE("Azure ND H100 v5 (PCI only) is taken as h100-nvswitch, and says so") {
  if (!azure_present("azure-ndv5-topo.xml")) return;
  const Topology t = load(kAzure + "azure-ndv5-topo.xml");
  INFO(t.describe());
  CHECK(t.ranks() == 8);
  CHECK(t.machine().gpu_sm == 90);
  CHECK(t.machine().nic_speed_gbs == Approx(50));
  CHECK(t.route_type(0, 7) == LinkType::NVLink);
  CHECK(link_bw(t, t.route(0, 7)[0]) == Approx(450));
  CHECK(mentions(t, "PCI devices only"));
  CHECK(mentions(t, "ND H100 v5"));
  const Topology two = load(kAzure + "azure-ndv5-topo.xml", 2);
  std::set<int> nics;
  for (int r = 0; r < 8; ++r) nics.insert(two.route(r, 8)[2]);
  CHECK(nics.size() == 8);
}

TEST_CASE("Azure ND A100 v4 (PCI only) is taken as a100-nvswitch, and says so") {
  if (!azure_present("azure-ndv4-topo.xml")) return;
  const Topology t = load(kAzure + "azure-ndv4-topo.xml");
  INFO(t.describe());
  CHECK(t.ranks() == 8);
  CHECK(t.machine().gpu_sm == 80);
  CHECK(t.machine().cpu_vendor == CpuVendor::Amd);
  CHECK(t.machine().nic_speed_gbs == Approx(25));
  CHECK(link_bw(t, t.route(0, 5)[0]) == Approx(300));
  CHECK(mentions(t, "ND A100 v4"));
  CHECK(mentions(t, "4 CPUs (NUMA domains) are joined pairwise"));
}

TEST_CASE("Azure ND v2 (PCI only, Skylake) is taken as a DGX-1 V100 cube-mesh, and says so") {
  if (!azure_present("azure-ndv2-topo.xml")) return;
  const Topology t = load(kAzure + "azure-ndv2-topo.xml");
  INFO(t.describe());
  CHECK(t.ranks() == 8);
  CHECK(t.machine().gpu_sm == 70);
  CHECK(mentions(t, "hybrid cube-mesh"));
  // GPU 0 and 3 share two links; 0 and 5 share none and go over PCIe or through another GPU.
  REQUIRE(t.route(0, 3).size() == 1);
  CHECK(link_bw(t, t.route(0, 3)[0]) == Approx(50));
  CHECK(t.route(0, 5).size() == 2);
  CHECK(t.route_type(0, 5) == LinkType::NVLink);
  CHECK(t.machine().nic_speed_gbs == Approx(12.5));
}

TEST_CASE("Azure NC A100 v4: the self-targeted NVLinks are ignored, the PCIe speed assumed") {
  if (!azure_present("azure-ncv4-topo.xml")) return;
  const Topology t = load(kAzure + "azure-ncv4-topo.xml");
  INFO(t.describe());
  CHECK(t.ranks() == 4);
  CHECK(t.machine().gpu_sm == 80);
  CHECK(t.machine().gpu_model == "A100 PCIe");
  CHECK(t.route_type(0, 1) == LinkType::PCIe);
  CHECK(t.machine().nic_speed_gbs == Approx(12.5));
  CHECK(mentions(t, "GPU's own bus id"));
  CHECK(mentions(t, "without link_speed"));
  CHECK(mentions(t, "without a link_width"));
  CHECK(mentions(t, "right under a CPU"));
  // One NIC for 4 GPUs: two nodes still build, every GPU through it.
  const Topology two = load(kAzure + "azure-ncv4-topo.xml", 2);
  CHECK(two.route_type(1, 6) == LinkType::Network);
}

TEST_CASE("a request for more GPUs than the file has is refused, naming the file") {
  TopologyResult r = load_topology({kData + "a100-nvlink-mesh-dump.xml", 1, 8});
  CHECK(!r.topology);
  CHECK(r.diagnostics.str().find("asks for 8 GPUs but") != std::string::npos);
  CHECK(r.diagnostics.str().find("a100-nvlink-mesh-dump.xml") != std::string::npos);
}

TEST_CASE("broken topology files are errors with file and line") {
  CHECK(errors_of("<system>\n  <cpu>\n    <pci busid='1' class='0x030200'>\n</system>\n")
            .find("t.xml:4: error: not well-formed XML") != std::string::npos);
  CHECK(errors_of("<machine/>").find("root element is <machine>") != std::string::npos);
  CHECK(errors_of("<system version='1'>\n<cpu numaid='0'/>\n</system>")
            .find("t.xml:1: error: no GPUs") != std::string::npos);
  CHECK(errors_of("<system>\n<cpu>\n<pci busid='a' class='0x030200' link_speed='fast' "
                  "link_width='16'/>\n</cpu></system>")
            .find("t.xml:3: error: link_speed \"fast\"") != std::string::npos);
  CHECK(
      errors_of("<system>\n<cpu>\n<pci busid='a' link_speed='' link_width='16'/>\n</cpu></system>")
          .find("t.xml:3: error: <pci busid=\"a\"> has class \"\"") != std::string::npos);
  CHECK(errors_of("<system><cpu>\n<pci busid='a' class='0x030200' link_speed='' link_width='x'/>"
                  "</cpu></system>")
            .find("t.xml:2: error: link_width \"x\"") != std::string::npos);
  CHECK(errors_of("<system><cpu><pci busid='a' class='0x030200' link_speed='' link_width='16'>\n"
                  "<gpu dev='0' sm='80'>\n<nvlink target='b' count='2' tclass='0x123456'/>\n"
                  "</gpu></pci></cpu></system>")
            .find("t.xml:3: error: <nvlink tclass=\"0x123456\">") != std::string::npos);
  CHECK(errors_of("<system><cpu><pci busid='a' class='0x030200' link_speed='' link_width='16'>\n"
                  "<gpu dev='0' sm='80'>\n<nvlink target='zz' count='2' tclass='0x030200'/>\n"
                  "</gpu></pci></cpu></system>")
            .find("t.xml:3: error: <nvlink target=\"zz\"> names no GPU") != std::string::npos);
  CHECK(errors_of("<system><cpu><pci busid='a' class='0x030200' link_speed='' link_width='16'>\n"
                  "<gpu dev='0' sm='eighty'/></pci></cpu></system>")
            .find("t.xml:2: error: <gpu sm=\"eighty\">") != std::string::npos);
  CHECK(errors_of("<system><cpu><pci busid='n' class='0x020000' link_speed='' link_width='16'>\n"
                  "<nic><net name='x' speed='-5'/></nic></pci>\n"
                  "<pci busid='a' class='0x030200' link_speed='' link_width='16'/></cpu></system>")
            .find("t.xml:2: error: <net speed=\"-5\">") != std::string::npos);
  CHECK(errors_of("").find("not well-formed XML") != std::string::npos);
}

TEST_CASE("a file that cannot be read is an error naming it") {
  TopologyResult r = load_topology({kData + "no-such-file.xml", 1, 0});
  CHECK(!r.topology);
  CHECK(r.diagnostics.str().find("no-such-file.xml") != std::string::npos);
  TopologyResult dir = load_topology({kData, 1, 0});
  CHECK(!dir.topology);
  CHECK(dir.diagnostics.has_errors());
}

TEST_CASE("deeply nested switches are refused, not recursed into") {
  std::string text = "<system><cpu>";
  for (int k = 0; k < 5000; ++k)
    text += "<pci busid='s' class='0x060400' link_speed='' link_width='16'>";
  for (int k = 0; k < 5000; ++k) text += "</pci>";
  text += "</cpu></system>";
  CHECK(errors_of(text).find("nest more than 32 deep") != std::string::npos);
}

TEST_CASE("every prefix of a real dump is read or refused, never a crash") {
  std::ifstream in(kData + "h100-dump.xml");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string whole = buffer.str();
  REQUIRE(whole.size() > 1000);
  int read = 0;
  for (std::size_t n = 0; n <= whole.size(); n += 37) {
    Diagnostics d;
    const auto machine = read_topology_xml_text(std::string_view(whole).substr(0, n), "p.xml", d);
    CHECK(machine.has_value() != d.has_errors());
    if (machine) ++read;
  }
  Diagnostics d;
  CHECK(read_topology_xml_text(whole, "p.xml", d).has_value());
}
