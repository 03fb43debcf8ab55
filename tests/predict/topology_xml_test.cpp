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
#include "weft/predict/cost_parameters.h"
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
  return t.links()[static_cast<std::size_t>(l)].line_rate_gbs;
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
  CHECK(net.line_rate_gbs == Approx(25));
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
  // One <pci> without a class code among others with one is a broken element (a file with none
  // at all is refused as a whole, below).
  CHECK(
      errors_of("<system>\n<cpu>\n<pci busid='a' link_speed='' link_width='16'/>\n"
                "<pci busid='b' class='0x030200' link_speed='' link_width='16'/>\n</cpu></system>")
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

// Cloud vendors' files for 8-GPU SXM instances (docs/prediction.md, "Topology"): PCI devices named
// by vendor and device id, no <nvlink>, no NIC speeds. NCCL finds those on the live machine; Weft
// infers them from the ids and says so.
namespace {

// The NVLink bandwidth of a GPU of the `preset` machine, per direction.
double preset_nvlink_gbs(const std::string& preset) {
  const Topology t = load(preset);
  REQUIRE(t.route_type(0, 1) == LinkType::NVLink);
  return link_bw(t, t.route(0, 1)[0]);
}

void check_nvswitch_at(const Topology& t, double gbs) {
  for (int b = 1; b < 8; ++b) {
    REQUIRE(t.route(0, b).size() == 2);  // GPU -> NVSwitch -> GPU
    CHECK(t.route_type(0, b) == LinkType::NVLink);
    CHECK(link_bw(t, t.route(0, b)[0]) == Approx(gbs));
  }
}

// 8 GPUs, two under each of four PCIe switches with one NIC (a layout no known machine has, so
// only the ids can decide): `gpu` the GPU <pci>'s extra attributes, `inside` what it holds (a
// <gpu>), `nic` the NIC <pci>'s extra attributes and `net` its contents.
std::string eight_gpus(const std::string& gpu, const std::string& inside = "",
                       const std::string& nic = "", const std::string& net = "") {
  std::string text = "<system version='1'>\n<cpu numaid='0' vendor='GenuineIntel' modelid='143'>\n";
  const std::string pcie = "link_speed='32.0 GT/s PCIe' link_width='16'";
  for (int s = 0; s < 4; ++s) {
    const std::string n = std::to_string(s);
    text += "<pci busid='s" + n + "' class='0x060400' " + pcie + ">";
    for (int g = 0; g < 2; ++g) {
      text += "<pci busid='g" + n + std::to_string(g) + "' class='0x030200' " + pcie + " " + gpu +
              ">" + inside + "</pci>";
    }
    text += "<pci busid='n" + n + "' class='0x020700' " + pcie + " " + nic + ">" + net + "</pci>";
    text += "</pci>\n";
  }
  return text + "</cpu>\n</system>\n";
}

Topology read_text(const std::string& text, Diagnostics* warnings = nullptr) {
  Diagnostics d;
  std::optional<MachineDescription> machine = read_topology_xml_text(text, "t.xml", d);
  INFO(d.str());
  REQUIRE(machine.has_value());
  if (warnings != nullptr) *warnings = d;
  return build_topology(*machine, 1, 0);
}

}  // namespace

TEST_CASE("a vendor's PCI-only 8 x H100 SXM file: NVLink through NVSwitch as h100-nvswitch has") {
  const Topology t = load(kData + "pci-only-h100.xml");
  INFO(t.describe());
  CHECK(t.ranks() == 8);
  CHECK(t.machine().gpu_model == "H100 SXM");
  CHECK(t.machine().gpu_sm == 90);
  check_nvswitch_at(t, preset_nvlink_gbs("h100-nvswitch"));
  CHECK(mentions(t,
                 "no <nvlink> in the file: 8 H100 SXM5 80GB GPUs (PCI device 0x2330) assumed "
                 "joined by NVLink 4 through NVSwitch (18 links per GPU, 450 GB/s per "
                 "direction, as in h100-nvswitch)"));
  CHECK(mentions(t, "link.nvlink.bandwidth_gbs"));
  CHECK(mentions(t, "NCCL_TOPO_DUMP_FILE"));
  // The NICs' speed from their device id (ConnectX-7), said so; nothing says "matches no machine".
  CHECK(t.machine().nic_speed_gbs == Approx(50));
  CHECK(mentions(t, "4 NICs without a speed: taken as 400 Gb/s, the line rate of a ConnectX-7"));
  CHECK(!mentions(t, "matches no machine"));
  const Topology two = load(kData + "pci-only-h100.xml", 2);
  CHECK(two.route_type(0, 8) == LinkType::Network);
}

TEST_CASE("what the user gives applies to the inferred NVLinks, as to the preset's") {
  // --parameters' link override sets the inferred links' bandwidth.
  Topology t = load(kData + "pci-only-h100.xml");
  LinkOverrides links;
  links.bandwidth_gbs[static_cast<std::size_t>(LinkType::NVLink)] = 100;
  apply_link_overrides(t, links);
  check_nvswitch_at(t, 100);
  // --link A-B edits a direct link between two GPUs; through an NVSwitch there is none, on the
  // file as on the preset, and both say so.
  for (const std::string& source : {kData + "pci-only-h100.xml", std::string("h100-nvswitch")}) {
    TopologyRequest request{source, 1, 0};
    request.link_edits.push_back({0, 1, 0});
    const TopologyResult r = load_topology(request);
    CHECK(!r.topology);
    CHECK(r.diagnostics.str().find("link 0-1: GPUs 0 and 1 have no direct link to change") !=
          std::string::npos);
  }
}

TEST_CASE("<gpu sm=\"90\"> x 8 without <nvlink>: NVLink through NVSwitch, NICs by device id") {
  const Topology t = load(kData + "gpu-sm90-no-nvlink.xml");
  INFO(t.describe());
  CHECK(t.machine().gpu_model == "H100 SXM");
  check_nvswitch_at(t, preset_nvlink_gbs("h100-nvswitch"));
  CHECK(mentions(t,
                 "no <nvlink> in the file: 8 GPUs of sm 90 are taken as H100 SXM and assumed "
                 "joined by NVLink 4 through NVSwitch"));
  CHECK(!mentions(t, "talk over PCIe"));
  CHECK(t.machine().nic_speed_gbs == Approx(25));
  CHECK(mentions(t, "8 NICs without a speed: taken as 200 Gb/s, the line rate of a ConnectX-6"));
}

TEST_CASE("the SXM baseboards Weft knows by PCI device id") {
  SECTION("A100 SXM4 80GB: NVLink 3, as a100-nvswitch") {
    const Topology t = read_text(eight_gpus("vendor='0x10de' device='0x20b2'"));
    CHECK(t.machine().gpu_model == "A100 SXM");
    check_nvswitch_at(t, preset_nvlink_gbs("a100-nvswitch"));
    CHECK(mentions(t,
                   "NVLink 3 through NVSwitch (12 links per GPU, 300 GB/s per direction, as "
                   "in a100-nvswitch)"));
  }
  SECTION("H200 SXM: the H100's links, its own memory") {
    const Topology t = read_text(eight_gpus("vendor='0x10de' device='0x2335'"));
    CHECK(t.machine().gpu_model == "H200 SXM");
    check_nvswitch_at(t, 450);
    // HBM3e 4.8 TB/s, the H100's 3.35: 0.9 x peak / 2 of copies (presets.cpp).
    CHECK(link_bw(t, t.memory_link(0)) == Approx(0.9 * 4800 / 2));
  }
  SECTION("H800 SXM: 8 NVLink 4 links") {
    const Topology t = read_text(eight_gpus("vendor='0x10de' device='0x2324'"));
    CHECK(t.machine().gpu_model == "H800 SXM");
    check_nvswitch_at(t, 200);
  }
  SECTION("<gpu sm> and an SXM device id together") {
    const Topology t =
        read_text(eight_gpus("vendor='0x10de' device='0x2330'", "<gpu dev='0' sm='90'/>"));
    check_nvswitch_at(t, 450);
    CHECK(mentions(t, "8 H100 SXM5 80GB GPUs (PCI device 0x2330)"));
  }
}

TEST_CASE("no NVLink is inferred where the file does not describe an 8-GPU SXM baseboard") {
  SECTION("PCIe cards (H100 PCIe) with <gpu sm='90'>: over PCIe, as before") {
    const Topology t =
        read_text(eight_gpus("vendor='0x10de' device='0x2331'", "<gpu dev='0' sm='90'/>"));
    CHECK(t.route_type(0, 1) == LinkType::PCIe);
    CHECK(mentions(t, "without <nvlink>: the GPUs are taken to have no NVLink"));
    CHECK(!mentions(t, "through NVSwitch"));
  }
  SECTION("four H100 SXM: not the 8-GPU baseboard") {
    std::string text = eight_gpus("vendor='0x10de' device='0x2330'");
    // Keep the first two switches.
    std::size_t cut = 0;
    for (int k = 0; k < 3; ++k) cut = text.find("<pci busid='s", cut + 1);
    text = text.substr(0, cut) + "</cpu>\n</system>\n";
    const Topology t = read_text(text);
    CHECK(t.ranks() == 4);
    CHECK(t.route_type(0, 1) == LinkType::PCIe);
    CHECK(mentions(t, "matches no machine Weft knows"));
  }
  SECTION("mixed device ids") {
    std::string text = eight_gpus("vendor='0x10de' device='0x2330'");
    text.replace(text.rfind("0x2330"), 6, "0x2335");
    const Topology t = read_text(text);
    CHECK(t.route_type(0, 1) == LinkType::PCIe);
  }
  SECTION("a file with <nvlink> keeps its own links") {
    const Topology t = load(kData + "h100-dump.xml");
    CHECK(!mentions(t, "no <nvlink> in the file"));
  }
}

TEST_CASE("NIC speeds come from the device id only where the file states none") {
  SECTION("a stated speed stands") {
    const Topology t = read_text(
        eight_gpus("vendor='0x10de' device='0x2330'", "", "vendor='0x15b3' device='0x1021'",
                   "<nic><net name='mlx5_0' dev='0' speed='100000' port='1' gdr='1'/></nic>"));
    CHECK(t.machine().nic_speed_gbs == Approx(12.5));
    CHECK(!mentions(t, "line rate"));
  }
  SECTION("ConnectX-5 and ConnectX-6, bare PCI devices") {
    CHECK(
        read_text(eight_gpus("", "", "vendor='0x15b3' device='0x1017'")).machine().nic_speed_gbs ==
        Approx(12.5));
    CHECK(
        read_text(eight_gpus("", "", "vendor='0x15b3' device='0x101b'")).machine().nic_speed_gbs ==
        Approx(25));
  }
  SECTION("another vendor's NIC: the stated default, as before") {
    const Topology t = read_text(eight_gpus("", "", "vendor='0x8086' device='0x1021'"));
    CHECK(t.machine().nic_speed_gbs == Approx(12.5));
    CHECK(mentions(t, "(100 Gb/s EDR / 100 GbE)"));
  }
}

TEST_CASE("a display device of another vendor is not a GPU") {
  std::string text = eight_gpus("vendor='0x10de' device='0x2330'");
  text.insert(text.find("<pci busid='s0'"),
              "<pci busid='bmc' class='0x030000' vendor='0x1a03' device='0x2000' "
              "link_speed='' link_width='1'/>\n");
  Diagnostics warnings;
  const Topology t = read_text(text, &warnings);
  CHECK(t.ranks() == 8);
  check_nvswitch_at(t, 450);
  CHECK(warnings.str().find("t.xml:3: warning: <pci busid=\"bmc\"> is a display device of vendor "
                            "0x1a03, not an NVIDIA GPU; ignored") != std::string::npos);
  CHECK(errors_of("<system><cpu>\n<pci busid='g' class='0x030200' vendor='nvidia' link_speed='' "
                  "link_width='16'/></cpu></system>")
            .find("t.xml:2: error: <pci vendor=\"nvidia\"> is not a PCI id") != std::string::npos);
}

TEST_CASE("a file of bus ids under NUMA nodes only is refused with the way to a real one") {
  const TopologyResult r = load_topology({kData + "numa-only.xml", 1, 0});
  CHECK(!r.topology);
  const std::string says = r.diagnostics.str();
  INFO(says);
  CHECK(says.find("numa-only.xml:6: error: no <pci> of the file has a class code") !=
        std::string::npos);
  CHECK(says.find("NCCL_TOPO_DUMP_FILE=/path/topo.xml, and give that file to -t") !=
        std::string::npos);
  CHECK(says.find("all_reduce_perf") != std::string::npos);
  // Nothing else is said about it: one error, not one per <pci>.
  CHECK(r.diagnostics.items.size() == 1);
}
