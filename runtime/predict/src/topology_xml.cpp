// NCCL topology XML into a MachineDescription. Both forms are read in one pass over the tree:
// the full dump (gpu with sm and nvlink children, nic/net with speeds) and the partial files
// (pci elements only). What is left open after the pass (GPU model, NVLink, PCIe speeds, NIC
// speeds) is settled afterwards, each settlement adding one sentence to the assumptions.
#include "weft/predict/topology_xml.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <pugixml.hpp>

#include "pci_devices.h"
#include "weft/ir/text_file.h"
#include "weft/ir/xml_text.h"
#include "weft/predict/presets.h"

namespace weft::predict {
namespace {

using ir::detail::LineIndex;

bool parse_int(std::string_view text, int& out, int base = 10) {
  if (base == 16 && (text.starts_with("0x") || text.starts_with("0X"))) text.remove_prefix(2);
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out, base);
  return ec == std::errc() && end == text.data() + text.size();
}

bool parse_double(std::string_view text, double& out) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && std::isfinite(out);
}

// "16 GT/s", "16.0 GT/s PCIe", "32.0 GT/s PCIe": the GT/s per lane. Empty: unknown (0).
// Anything else: nothing.
std::optional<double> parse_link_speed(std::string_view text) {
  if (text.empty()) return 0.0;
  const std::size_t unit = text.find(" GT/s");
  if (unit == std::string_view::npos) return std::nullopt;
  const std::string_view rest = text.substr(unit + 5);
  if (!rest.empty() && rest != " PCIe") return std::nullopt;
  double gts = 0;
  if (!parse_double(text.substr(0, unit), gts) || gts <= 0) return std::nullopt;
  return gts;
}

// NVLink 2 (V100), 3 (A100), 4 (H100, H200, H800).
int nvlink_generation(int sm) {
  return sm >= 90 ? 4 : sm >= 80 ? 3 : 2;
}

int pcie_generation(double gts) {
  return gts >= 64 ? 6 : gts >= 32 ? 5 : gts >= 16 ? 4 : gts >= 8 ? 3 : gts >= 5 ? 2 : 1;
}

struct PendingLink {
  std::size_t link = 0;  // index in machine.links whose bandwidth is not known yet
  bool unknown_speed = false;
  bool unknown_width = false;
  int lanes = 16;
  double gts = 0;
};

struct FileGpu {
  int vertex = -1;
  std::string busid;
  int dev = -1;
  int sm = 0;
  int cpu = -1;         // vertex of the CPU above it
  int pci_device = -1;  // NVIDIA's PCI device id; -1: not stated
  bool has_gpu_element = false;
  int line = 0;
};

struct FileNic {
  int vertex = -1;
  double speed_gbs = 0;  // 0: not stated
  int pci_device = -1;   // Mellanox's PCI device id; -1: not stated or another vendor's
};

struct NvlinkRef {
  int gpu = 0;  // index into gpus
  std::string target;
  int count = 0;
  enum Kind { Gpu, NVSwitch, Cpu } kind = Gpu;
  int line = 0;
};

constexpr int kMaxPciDepth = 32;

class Reader {
 public:
  Reader(std::string_view text, const std::string& source, Diagnostics& diagnostics)
      : text_(text), lines_(text), source_(source), diag_(diagnostics) {}

  std::optional<MachineDescription> read() {
    pugi::xml_document doc;
    const pugi::xml_parse_result parsed =
        doc.load_buffer(text_.data(), text_.size(), pugi::parse_default, pugi::encoding_utf8);
    if (!parsed) {
      error(lines_.line_of(parsed.offset),
            fmt::format("not well-formed XML: {}", parsed.description()));
      return std::nullopt;
    }
    const pugi::xml_node system = doc.document_element();
    if (std::string_view(system.name()) != "system") {
      error(line(system), fmt::format("the root element is <{}>; an NCCL topology file has "
                                      "<system>",
                                      system.name()));
      return std::nullopt;
    }
    if (!any_pci_class(system)) return std::nullopt;
    m_.name = source_;
    for (pugi::xml_node child : system.children()) {
      if (child.type() != pugi::node_element) continue;
      const std::string_view name = child.name();
      if (name == "cpu") {
        read_cpu(child);
      } else {
        ignored(child);
      }
    }
    if (diag_.has_errors()) return std::nullopt;
    if (gpus_.empty()) {
      error(line(system),
            "no GPUs: the file has no <pci> of a display class (0x03...) and no <gpu>");
      return std::nullopt;
    }
    settle();
    if (diag_.has_errors()) return std::nullopt;
    return std::move(m_);
  }

 private:
  int line(const pugi::xml_node& node) const { return lines_.line_of(node.offset_debug()); }
  void error(int at, std::string message) { diag_.error(source_, at, "", std::move(message)); }
  void ignored(const pugi::xml_node& node) {
    diag_.warning(source_, line(node), "",
                  fmt::format("<{}> is not part of the topology Weft reads; ignored", node.name()));
  }
  void assume(std::string sentence) { m_.assumptions.push_back(std::move(sentence)); }

  // Some files only place PCI bus ids under NUMA nodes (`<cpu numaid="0"><pci busid=.../>`), as
  // a hint of locality to NCCL, which detects the rest on the machine. Without a single class
  // code nothing says which device is a GPU or a NIC, so such a file is refused as a whole, with
  // the way to the file Weft needs, rather than at its first <pci> as a broken one would be.
  bool any_pci_class(pugi::xml_node system) {
    struct Walker : pugi::xml_tree_walker {
      pugi::xml_node first_pci;
      bool classed = false;
      bool for_each(pugi::xml_node& node) override {
        if (node.type() != pugi::node_element || std::string_view(node.name()) != "pci")
          return true;
        if (!first_pci) first_pci = node;
        classed = node.attribute("class").value()[0] != '\0';
        return !classed;  // the walk stops at the first class code
      }
    } walker;
    system.traverse(walker);  // iterative: deep nesting is refused later, not here
    if (!walker.first_pci || walker.classed) return true;
    error(line(walker.first_pci),
          "no <pci> of the file has a class code: it only places PCI bus ids under NUMA "
          "nodes, which says neither which devices are GPUs or NICs nor how they are linked. "
          "Dump the live machine's topology instead: run any NCCL program on it (nccl-tests' "
          "all_reduce_perf, say) with NCCL_TOPO_DUMP_FILE=/path/topo.xml, and give that file "
          "to -t");
    return false;
  }

  // A hexadecimal PCI id attribute (vendor, device): -1 when absent, an error when malformed.
  int pci_id(const pugi::xml_node& node, const char* name) {
    const pugi::xml_attribute attribute = node.attribute(name);
    int id = -1;
    if (attribute.empty()) return -1;
    if (!parse_int(attribute.value(), id, 16) || id < 0 || id > 0xffff) {
      error(line(node),
            fmt::format("<pci {}=\"{}\"> is not a PCI id (0x10de)", name, attribute.value()));
      return -1;
    }
    return id;
  }

  void read_cpu(const pugi::xml_node& node) {
    const std::string numa = node.attribute("numaid").value();
    const int cpu = m_.add_vertex(
        VertexKind::Cpu, fmt::format("cpu {}", numa.empty() ? std::to_string(cpus_.size()) : numa));
    cpus_.push_back(cpu);
    const std::string_view vendor = node.attribute("vendor").value();
    const CpuVendor v = vendor == "GenuineIntel"   ? CpuVendor::Intel
                        : vendor == "AuthenticAMD" ? CpuVendor::Amd
                                                   : CpuVendor::Unknown;
    int model = 0;
    if (!node.attribute("modelid").empty() &&
        !parse_int(node.attribute("modelid").value(), model)) {
      error(line(node),
            fmt::format("<cpu modelid=\"{}\"> is not a number", node.attribute("modelid").value()));
    }
    if (cpus_.size() == 1) {
      m_.info.cpu_vendor = v;
      m_.info.cpu_model = model;
    } else if (m_.info.cpu_vendor != v || m_.info.cpu_model != model) {
      mixed_cpus_ = true;
    }
    for (pugi::xml_node child : node.children()) {
      if (child.type() != pugi::node_element) continue;
      const std::string_view name = child.name();
      if (name == "pci") {
        read_pci(child, cpu, cpu);
      } else if (name == "nic") {
        read_nic(child, cpu, nullptr, -1);
      } else {
        ignored(child);
      }
    }
  }

  // A PCIe link from `vertex` up to `parent`, at the element's link_speed x link_width (settled
  // later when the file leaves either out).
  void pci_link(const pugi::xml_node& node, int vertex, int parent) {
    PendingLink p;
    const std::string_view speed_text = node.attribute("link_speed").value();
    const std::optional<double> gts = parse_link_speed(speed_text);
    if (!gts) {
      error(line(node), fmt::format("link_speed \"{}\" is not a PCIe speed (\"16.0 GT/s PCIe\", "
                                    "\"32 GT/s\")",
                                    speed_text));
      return;
    }
    p.gts = *gts;
    p.unknown_speed = *gts == 0;
    const pugi::xml_attribute width = node.attribute("link_width");
    if (!width.empty() && !parse_int(width.value(), p.lanes)) {
      error(line(node), fmt::format("link_width \"{}\" is not a number", width.value()));
      return;
    }
    if (width.empty() || p.lanes <= 0) {
      p.unknown_width = true;
      p.lanes = 16;
    }
    p.link = m_.links.size();
    m_.add_link(vertex, parent, LinkType::PCIe,
                p.unknown_speed ? 0.0 : pcie_bandwidth_gbs(p.gts, p.lanes));
    pcie_.push_back(p);
  }

  void read_pci(const pugi::xml_node& node, int parent, int cpu, int depth = 1) {
    // Real machines nest a few switches deep; a file nesting hundreds is refused before the
    // recursion can exhaust the stack.
    if (depth > kMaxPciDepth) {
      error(line(node), fmt::format("<pci> elements nest more than {} deep", kMaxPciDepth));
      return;
    }
    const std::string busid = node.attribute("busid").value();
    const std::string cls = node.attribute("class").value();
    int class_code = 0;
    if (cls.empty() || !parse_int(cls, class_code, 16)) {
      error(line(node), fmt::format("<pci busid=\"{}\"> has class \"{}\"; a PCI class code "
                                    "(0x060400 bridge, 0x03.... GPU, 0x02.... NIC) is needed",
                                    busid, cls));
      return;
    }
    const int base_class = class_code >> 16;
    if (class_code == 0x060400 || class_code == 0x080100) {
      const int sw = m_.add_vertex(VertexKind::PciSwitch, fmt::format("pci {}", busid));
      pci_link(node, sw, parent);
      for (pugi::xml_node child : node.children()) {
        if (child.type() != pugi::node_element) continue;
        const std::string_view name = child.name();
        if (name == "pci") {
          read_pci(child, sw, cpu, depth + 1);
        } else if (name == "nic") {
          read_nic(child, sw, nullptr, -1);
        } else {
          ignored(child);
        }
      }
    } else if (base_class == 0x03) {
      read_pci_gpu(node, parent, cpu);
    } else if (base_class == 0x02) {
      const int nic_device =
          pci_id(node, "vendor") == kMellanoxVendor ? pci_id(node, "device") : -1;
      bool any = false;
      for (pugi::xml_node child : node.children()) {
        if (child.type() != pugi::node_element) continue;
        if (std::string_view(child.name()) == "nic") {
          read_nic(child, parent, &node, nic_device);
          any = true;
        } else {
          ignored(child);
        }
      }
      if (!any) {
        // A partial file's NIC: a PCI device of a network class and nothing more.
        const int nic = m_.add_vertex(VertexKind::Nic, fmt::format("nic {}", busid));
        pci_link(node, nic, parent);
        nics_.push_back({nic, 0, nic_device});
      }
    } else if (class_code == 0x068000) {
      // An NVSwitch as a PCI device: its NVLinks are read from the GPUs' <nvlink> elements.
    } else if (node.first_child()) {
      error(line(node), fmt::format("<pci busid=\"{}\"> has class {} with elements inside; only "
                                    "bridges (0x060400) hold other devices",
                                    busid, cls));
    } else {
      diag_.warning(source_, line(node), "",
                    fmt::format("<pci busid=\"{}\"> of class {} is neither a GPU, a NIC nor a "
                                "switch; ignored",
                                busid, cls));
    }
  }

  // A display-class device: a GPU, unless its vendor is stated and not NVIDIA's (a server's
  // management controller shows as a VGA device too).
  void read_pci_gpu(const pugi::xml_node& node, int parent, int cpu) {
    const std::string busid = node.attribute("busid").value();
    const int vendor = pci_id(node, "vendor");
    if (vendor >= 0 && vendor != kNvidiaVendor) {
      diag_.warning(source_, line(node), "",
                    fmt::format("<pci busid=\"{}\"> is a display device of vendor 0x{:04x}, not "
                                "an NVIDIA GPU; ignored",
                                busid, vendor));
      return;
    }
    FileGpu gpu;
    gpu.busid = busid;
    gpu.cpu = cpu;
    gpu.line = line(node);
    gpu.pci_device = pci_id(node, "device");
    gpu.vertex = m_.add_vertex(VertexKind::Gpu, fmt::format("gpu {}", busid));
    pci_link(node, gpu.vertex, parent);
    const std::size_t index = gpus_.size();
    gpus_.push_back(gpu);
    for (pugi::xml_node child : node.children()) {
      if (child.type() != pugi::node_element) continue;
      if (std::string_view(child.name()) == "gpu") {
        read_gpu(child, index);
      } else {
        ignored(child);
      }
    }
  }

  void read_gpu(const pugi::xml_node& node, std::size_t index) {
    FileGpu& gpu = gpus_[index];
    gpu.has_gpu_element = true;
    const pugi::xml_attribute dev = node.attribute("dev");
    if (!dev.empty() && !parse_int(dev.value(), gpu.dev)) {
      error(line(node), fmt::format("<gpu dev=\"{}\"> is not a number", dev.value()));
    }
    const pugi::xml_attribute sm = node.attribute("sm");
    if (!sm.empty() && (!parse_int(sm.value(), gpu.sm) || gpu.sm <= 0)) {
      error(line(node), fmt::format("<gpu sm=\"{}\"> is not a compute capability", sm.value()));
    }
    for (pugi::xml_node child : node.children()) {
      if (child.type() != pugi::node_element) continue;
      if (std::string_view(child.name()) != "nvlink") {
        ignored(child);
        continue;
      }
      NvlinkRef ref;
      ref.gpu = static_cast<int>(index);
      ref.target = child.attribute("target").value();
      ref.line = line(child);
      if (!parse_int(child.attribute("count").value(), ref.count) || ref.count <= 0) {
        error(ref.line, fmt::format("<nvlink count=\"{}\"> is not a positive number",
                                    child.attribute("count").value()));
        continue;
      }
      const std::string tclass = child.attribute("tclass").value();
      int code = 0;
      if (!parse_int(tclass, code, 16)) {
        error(ref.line, fmt::format("<nvlink tclass=\"{}\"> is not a PCI class code", tclass));
        continue;
      }
      if (code == 0x068000) {
        ref.kind = NvlinkRef::NVSwitch;
      } else if ((code >> 16) == 0x03) {
        ref.kind = NvlinkRef::Gpu;
      } else if (code == 0x068001 || code == 0x060400) {
        ref.kind = NvlinkRef::Cpu;  // NCCL links any other target to the CPU (POWER9's NVLink)
      } else {
        error(ref.line, fmt::format("<nvlink tclass=\"{}\"> is neither an NVSwitch (0x068000), "
                                    "a GPU (0x03....) nor a CPU (0x068001)",
                                    tclass));
        continue;
      }
      nvlinks_.push_back(ref);
    }
  }

  // `device`: the Mellanox PCI device id of the <pci> around the <nic>, -1 when none.
  void read_nic(const pugi::xml_node& nic, int parent, const pugi::xml_node* pci, int device) {
    bool any = false;
    for (pugi::xml_node net : nic.children()) {
      if (net.type() != pugi::node_element) continue;
      if (std::string_view(net.name()) != "net") {
        ignored(net);
        continue;
      }
      any = true;
      const std::string name = net.attribute("name").value();
      const int v =
          m_.add_vertex(VertexKind::Nic,
                        fmt::format("nic {}", name.empty() ? std::to_string(nics_.size()) : name));
      FileNic file_nic{v, 0, device};
      const pugi::xml_attribute speed = net.attribute("speed");
      int mbps = 0;
      if (!speed.empty() && (!parse_int(speed.value(), mbps) || mbps < 0)) {
        error(line(net), fmt::format("<net speed=\"{}\"> is not a speed in Mb/s", speed.value()));
      }
      file_nic.speed_gbs = mbps / 8000.0;
      double latency = 0;
      const pugi::xml_attribute lat = net.attribute("latency");
      if (!lat.empty() && (!parse_double(lat.value(), latency) || latency < 0)) {
        error(line(net), fmt::format("<net latency=\"{}\"> is not a latency", lat.value()));
      }
      nic_latency_us_ = std::max(nic_latency_us_, latency);
      if (pci != nullptr) {
        pci_link(*pci, v, parent);
      } else {
        // A NIC right under a CPU, no PCIe link stated: a link as fast as the NIC.
        nic_links_without_pci_.push_back(m_.links.size());
        m_.add_link(v, parent, LinkType::PCIe, 0);
      }
      nics_.push_back(file_nic);
    }
    if (!any) {
      error(line(nic), "<nic> holds no <net>: a NIC needs at least one");
    }
  }

  // The file's PCI layout, for recognising partial files of known machines.
  struct Layout {
    int gpus = 0;
    int nics = 0;
    int switches = 0;
    bool one_gpu_one_nic_per_switch = true;
    bool two_gpus_two_nics_per_switch = true;
    bool gpus_under_cpus = true;  // no switches at all
    double gpu_gts = 0;
  };
  Layout layout() const {
    Layout l;
    l.gpus = static_cast<int>(gpus_.size());
    l.nics = static_cast<int>(nics_.size());
    std::map<int, std::pair<int, int>> per_switch;  // switch -> (gpus, nics)
    for (const MachineLink& link : m_.links) {
      const VertexKind a = m_.vertices[static_cast<std::size_t>(link.a)].kind;
      const VertexKind b = m_.vertices[static_cast<std::size_t>(link.b)].kind;
      if (b == VertexKind::PciSwitch && a == VertexKind::Gpu) ++per_switch[link.b].first;
      if (b == VertexKind::PciSwitch && a == VertexKind::Nic) ++per_switch[link.b].second;
      if (a == VertexKind::Gpu && b == VertexKind::PciSwitch) l.gpus_under_cpus = false;
    }
    for (const PendingLink& p : pcie_) {
      const MachineLink& link = m_.links[p.link];
      if (m_.vertices[static_cast<std::size_t>(link.a)].kind == VertexKind::Gpu) {
        l.gpu_gts = std::max(l.gpu_gts, p.gts);
      }
    }
    l.switches = 0;
    for (const auto& [sw, counts] : per_switch) {
      if (counts.first == 0) continue;
      ++l.switches;
      if (counts != std::pair{1, 1}) l.one_gpu_one_nic_per_switch = false;
      if (counts != std::pair{2, 2}) l.two_gpus_two_nics_per_switch = false;
    }
    if (l.switches == 0) l.one_gpu_one_nic_per_switch = l.two_gpus_two_nics_per_switch = false;
    return l;
  }

  // What settling the GPU model decides for the settlements after it.
  struct GpuSettlement {
    const GpuFigures* figures = nullptr;
    int nvswitch_links = 0;      // per GPU, from a known machine the layout matched; 0: the file's
    double nic_gbs_assumed = 0;  // the matched machine's NIC speed; 0: no machine matched
    bool cube_mesh = false;      // the matched machine is a DGX-1 (hybrid cube-mesh NVLink)
  };

  // Everything the pass left open, each with its sentence.
  void settle() {
    order_local_ranks();
    std::set<int> sms;
    for (const FileGpu& g : gpus_) {
      if (g.sm > 0) sms.insert(g.sm);
    }
    if (sms.size() > 1) {
      error(gpus_.front().line,
            "the file mixes GPU generations (several <gpu sm>); Weft models "
            "one GPU kind a machine");
      return;
    }
    settle_cpus();

    // GPU model and NVLink: from the file, or from a known machine the PCI layout matches.
    const bool any_gpu_element =
        std::any_of(gpus_.begin(), gpus_.end(), [](const FileGpu& g) { return g.has_gpu_element; });
    const GpuSettlement gpu = any_gpu_element ? gpu_from_file(sms) : gpu_from_layout(layout());
    m_.info.gpu_model = std::string(gpu.figures->model);
    m_.info.gpu_sm = gpu.figures->sm;
    m_.memory_bandwidth_gbs = gpu.figures->memory_bandwidth_gbs;

    settle_nvlinks(gpu);
    settle_pcie(*gpu.figures);
    settle_nics(gpu.nic_gbs_assumed);
    m_.nic_latency_us = nic_latency_us_;
    join_sockets();
  }

  // Local rank order: by <gpu dev> where every GPU has one, else file order.
  void order_local_ranks() {
    std::vector<std::size_t> order(gpus_.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    if (std::all_of(gpus_.begin(), gpus_.end(), [](const FileGpu& g) { return g.dev >= 0; })) {
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t a, std::size_t b) { return gpus_[a].dev < gpus_[b].dev; });
    }
    m_.gpus.clear();
    for (std::size_t k : order) m_.gpus.push_back(gpus_[k].vertex);
  }

  void settle_cpus() {
    if (mixed_cpus_) {
      assume(
          fmt::format("the file's CPUs differ; every CPU is taken as the first one ({} model "
                      "{})",
                      to_string(m_.info.cpu_vendor), m_.info.cpu_model));
    }
    if (m_.info.cpu_vendor == CpuVendor::Unknown) {
      assume(
          "CPU vendor unknown (no <cpu vendor> Weft knows): NCCL's AMD figures are taken for "
          "the link between sockets and the network overhead");
    }
  }

  // A partial file (PCI devices only): an SXM baseboard its GPUs' PCI device ids name, else the
  // machine whose PCI layout it has, else an A100 PCIe without NVLink. The ids come first: they
  // name the GPU, where a layout only resembles a machine's.
  GpuSettlement gpu_from_layout(const Layout& l) {
    if (std::optional<GpuSettlement> board = gpu_from_baseboard(0)) return *board;
    GpuSettlement gpu;
    std::string matched;
    const std::string unknown =
        "the file has PCI devices only (no <gpu>, no <nvlink>, no NIC speed)";
    if (l.gpus == 8 && l.one_gpu_one_nic_per_switch && l.gpu_gts >= 32) {
      gpu.figures = &h100_sxm();
      gpu.nvswitch_links = gpu.figures->nvlinks;
      gpu.nic_gbs_assumed = 400.0 / 8;
      matched = fmt::format(
          "{}; its layout (8 GPUs, each with one NIC under its own PCIe Gen5 switch) is ND H100 "
          "v5's, so it is taken as h100-nvswitch: H100 SXM (sm 90), 18 NVLink 4 links per GPU "
          "through NVSwitch (450 GB/s per direction), 400 Gb/s NICs",
          unknown);
    } else if (l.gpus == 8 && l.two_gpus_two_nics_per_switch && l.switches == 4) {
      gpu.figures = &a100_sxm();
      gpu.nvswitch_links = gpu.figures->nvlinks;
      gpu.nic_gbs_assumed = 200.0 / 8;
      matched = fmt::format(
          "{}; its layout (4 PCIe switches, each with 2 GPUs and 2 NICs) is ND A100 v4's, so it "
          "is taken as a100-nvswitch: A100 SXM (sm 80), 12 NVLink 3 links per GPU through "
          "NVSwitch (300 GB/s per direction), 200 Gb/s NICs",
          unknown);
    } else if (l.gpus == 8 && l.gpus_under_cpus && cpus_.size() == 2 &&
               m_.info.cpu_vendor == CpuVendor::Intel && m_.info.cpu_model == 85) {
      gpu.figures = &v100_sxm();
      gpu.cube_mesh = true;
      gpu.nic_gbs_assumed = 100.0 / 8;
      matched = fmt::format(
          "{}; its layout (8 GPUs straight under two Skylake sockets, 4 each) is ND v2's, so "
          "it is taken as a DGX-1: V100 SXM2 (sm 70) in NVLink 2 hybrid cube-mesh (GPUs in "
          "file order as devices 0-7, 6 links of 25 GB/s per GPU), 100 Gb/s EDR NIC",
          unknown);
    }
    if (gpu.figures != nullptr) {
      assume(matched);
      return gpu;
    }
    gpu.figures = &a100_pcie();
    assume(
        fmt::format("{}, and its layout matches no machine Weft knows: no NVLink is "
                    "assumed (GPUs talk over PCIe), and the GPU is taken as an A100 PCIe "
                    "(sm 80) for memory bandwidth and NCCL's per-generation figures",
                    unknown));
    return gpu;
  }

  // Eight GPUs of an SXM model and no <nvlink> at all: a cloud vendor's file of an 8-GPU SXM
  // baseboard (HGX), whose GPUs are always joined through NVSwitch; NCCL finds those links on
  // the live machine, the file leaves them out. The model comes from the GPUs' PCI device id or,
  // without one Weft knows, from <gpu sm> 90 or 80 (`sm`, 0 when the file has no <gpu sm>).
  // Nothing when the file is not such a board: a PCIe card's id, mixed ids, another count.
  std::optional<GpuSettlement> gpu_from_baseboard(int sm) {
    if (gpus_.size() != 8 || !nvlinks_.empty()) return std::nullopt;
    std::set<int> devices;
    for (const FileGpu& g : gpus_) devices.insert(g.pci_device);
    if (devices.size() != 1) return std::nullopt;
    const int device = *devices.begin();
    const NvidiaGpuDevice* known = device >= 0 ? nvidia_gpu_device(device) : nullptr;
    GpuSettlement gpu;
    std::string gpus;
    if (known != nullptr) {
      // A PCIe card has no NVSwitch; an id that contradicts <gpu sm> is left to the rules
      // without it.
      if (known->sxm_figures == nullptr || (sm > 0 && known->sxm_figures->sm != sm)) {
        return std::nullopt;
      }
      gpu.figures = known->sxm_figures;
      gpus = fmt::format("8 {} GPUs (PCI device 0x{:04x})", known->name, device);
    } else if (sm == 90 || sm == 80) {
      gpu.figures = sm == 90 ? &h100_sxm() : &a100_sxm();
      gpus = fmt::format(
          "8 GPUs of sm {}{} are taken as {} and", sm,
          device >= 0 ? fmt::format(" (PCI device 0x{:04x}, not one Weft knows)", device) : "",
          gpu.figures->model);
    } else {
      return std::nullopt;
    }
    gpu.nvswitch_links = gpu.figures->nvlinks;
    const std::string_view preset = gpu.figures == &h100_sxm()   ? ", as in h100-nvswitch"
                                    : gpu.figures == &a100_sxm() ? ", as in a100-nvswitch"
                                                                 : "";
    assume(fmt::format(
        "no <nvlink> in the file: {} assumed joined by NVLink {} through NVSwitch ({} links "
        "per GPU, {} GB/s per direction{}), as every 8-GPU SXM baseboard is; to change it, "
        "give --parameters a file with link.nvlink.bandwidth_gbs = GBPS, or give -t the live "
        "machine's own topology (run any NCCL program there with "
        "NCCL_TOPO_DUMP_FILE=/path/topo.xml)",
        gpus, nvlink_generation(gpu.figures->sm), gpu.nvswitch_links,
        gpu.nvswitch_links * nvlink_bandwidth_gbs(gpu.figures->sm), preset));
    return gpu;
  }

  // A full dump: the GPU model from <gpu sm> (one generation, checked before), the A100's form
  // from whether any NVLink joins the GPU to something other than itself.
  GpuSettlement gpu_from_file(const std::set<int>& sms) {
    const int sm = sms.empty() ? 0 : *sms.begin();
    if (std::optional<GpuSettlement> board = gpu_from_baseboard(sm)) return *board;
    GpuSettlement gpu;
    const bool nvlink_present =
        std::any_of(nvlinks_.begin(), nvlinks_.end(), [&](const NvlinkRef& r) {
          return !(r.kind == NvlinkRef::Gpu &&
                   r.target == gpus_[static_cast<std::size_t>(r.gpu)].busid);
        });
    if (sm >= 90) {
      gpu.figures = &h100_sxm();
      if (sm != 90) assume(fmt::format("GPU sm {} is taken as an H100's figures (sm 90)", sm));
    } else if (sm >= 80) {
      gpu.figures = nvlink_present ? &a100_sxm() : &a100_pcie();
      if (sm != 80) assume(fmt::format("GPU sm {} is taken as an A100's figures (sm 80)", sm));
    } else if (sm >= 70) {
      gpu.figures = &v100_sxm();
      if (sm != 70) assume(fmt::format("GPU sm {} is taken as a V100's figures (sm 70)", sm));
    } else if (sm > 0) {
      gpu.figures = &v100_sxm();
      assume(fmt::format("GPU sm {} is older than Weft's figures go; a V100's are taken", sm));
    } else {
      gpu.figures = &a100_sxm();
      assume("GPU model unknown (<gpu> without sm): an A100's figures are taken (sm 80)");
    }
    if (nvlinks_.empty()) {
      assume(
          "the file has <gpu> elements without <nvlink>: the GPUs are taken to have no "
          "NVLink and to talk over PCIe");
    }
    return gpu;
  }

  // The NVLinks the file states, or those of the machine its layout matched, at the GPU's
  // per-link bandwidth.
  void settle_nvlinks(const GpuSettlement& gpu) {
    std::map<int, int> to_nvswitch;                // gpu index -> links
    std::map<std::pair<int, int>, int> gpu_pairs;  // (gpu, gpu) -> links
    std::map<int, int> to_cpu;                     // gpu index -> links
    std::set<std::string> self_links;
    for (const NvlinkRef& ref : nvlinks_) {
      if (ref.kind == NvlinkRef::NVSwitch) {
        to_nvswitch[ref.gpu] += ref.count;
      } else if (ref.kind == NvlinkRef::Cpu) {
        to_cpu[ref.gpu] += ref.count;
      } else {
        const std::string& own = gpus_[static_cast<std::size_t>(ref.gpu)].busid;
        if (ref.target == own) {
          self_links.insert(own);
          continue;
        }
        const auto peer = std::find_if(gpus_.begin(), gpus_.end(),
                                       [&](const FileGpu& g) { return g.busid == ref.target; });
        if (peer == gpus_.end()) {
          error(ref.line,
                fmt::format("<nvlink target=\"{}\"> names no GPU of the file", ref.target));
          continue;
        }
        const int other = static_cast<int>(peer - gpus_.begin());
        // Both GPUs list the pair; one link each way, with the larger count if they disagree.
        auto& count = gpu_pairs[{std::min(ref.gpu, other), std::max(ref.gpu, other)}];
        count = std::max(count, ref.count);
      }
    }
    if (!self_links.empty()) {
      assume(
          fmt::format("{} <nvlink> element{} target{} the GPU's own bus id ({}...); a GPU "
                      "cannot link to itself, so these are ignored and no NVLink is assumed "
                      "between the GPUs",
                      self_links.size(), self_links.size() == 1 ? "" : "s",
                      self_links.size() == 1 ? "s" : "", *self_links.begin()));
    }
    const double per_link = nvlink_bandwidth_gbs(gpu.figures->sm);
    if (gpu.nvswitch_links > 0) {
      for (std::size_t g = 0; g < gpus_.size(); ++g)
        to_nvswitch[static_cast<int>(g)] = gpu.nvswitch_links;
    }
    if (gpu.cube_mesh) {
      // DGX-1 V100 hybrid cube-mesh (nvidia-smi topo -m on a DGX-1V): count of links per pair.
      constexpr int kMesh[8][8] = {{0, 1, 1, 2, 2, 0, 0, 0}, {1, 0, 2, 1, 0, 2, 0, 0},
                                   {1, 2, 0, 2, 0, 0, 1, 0}, {2, 1, 2, 0, 0, 0, 0, 1},
                                   {2, 0, 0, 0, 0, 1, 1, 2}, {0, 2, 0, 0, 1, 0, 2, 1},
                                   {0, 0, 1, 0, 1, 2, 0, 2}, {0, 0, 0, 1, 2, 1, 2, 0}};
      for (int a = 0; a < 8; ++a) {
        for (int b = a + 1; b < 8; ++b) {
          if (kMesh[a][b] > 0) gpu_pairs[{a, b}] = kMesh[a][b];
        }
      }
    }
    if (!to_nvswitch.empty()) {
      const int nvs = m_.add_vertex(VertexKind::NVSwitch, "nvswitch");
      for (const auto& [g, count] : to_nvswitch) {
        m_.add_link(gpus_[static_cast<std::size_t>(g)].vertex, nvs, LinkType::NVLink,
                    count * per_link);
      }
    }
    for (const auto& [pair, count] : gpu_pairs) {
      m_.add_link(gpus_[static_cast<std::size_t>(pair.first)].vertex,
                  gpus_[static_cast<std::size_t>(pair.second)].vertex, LinkType::NVLink,
                  count * per_link);
    }
    for (const auto& [g, count] : to_cpu) {
      m_.add_link(gpus_[static_cast<std::size_t>(g)].vertex, gpus_[static_cast<std::size_t>(g)].cpu,
                  LinkType::NVLink, count * per_link);
    }
  }

  // PCIe links the file gives without speed or width: the GPU's own generation, x16.
  void settle_pcie(const GpuFigures& figures) {
    const double default_gts = figures.sm >= 90 ? 32.0 : figures.sm >= 80 ? 16.0 : 8.0;
    int no_speed = 0, no_width = 0;
    for (const PendingLink& p : pcie_) {
      const double gts = p.unknown_speed ? default_gts : p.gts;
      m_.links[p.link].bandwidth_gbs = pcie_bandwidth_gbs(gts, p.lanes);
      no_speed += p.unknown_speed ? 1 : 0;
      no_width += p.unknown_width ? 1 : 0;
    }
    if (no_speed > 0) {
      assume(
          fmt::format("{} PCIe link{} without link_speed: taken as Gen{} ({} GT/s), the {}'s "
                      "own PCIe generation",
                      no_speed, no_speed == 1 ? "" : "s", pcie_generation(default_gts), default_gts,
                      figures.model));
    }
    if (no_width > 0) {
      assume(fmt::format("{} PCIe link{} without a link_width (or 0): taken as x16, as NCCL does",
                         no_width, no_width == 1 ? "" : "s"));
    }
  }

  // NIC speeds: one for every NIC, the slowest stated, else the matched machine's
  // (`nic_gbs_assumed`, 0 when none matched), else 100 Gb/s.
  void settle_nics(double nic_gbs_assumed) {
    if (nics_.empty()) return;
    nic_speeds_from_devices();
    double known = 0;
    int unknown = 0;
    std::set<double> speeds;
    for (const FileNic& n : nics_) {
      if (n.speed_gbs > 0) {
        speeds.insert(n.speed_gbs);
      } else {
        ++unknown;
      }
    }
    if (!speeds.empty()) known = *speeds.begin();
    if (speeds.size() > 1) {
      assume(fmt::format("the NICs' speeds differ; every NIC is taken at the slowest, {} Gb/s",
                         known * 8));
    }
    double speed = known;
    if (unknown > 0) {
      speed = known > 0 ? known : nic_gbs_assumed > 0 ? nic_gbs_assumed : 100.0 / 8;
      if (nic_gbs_assumed == 0 || known > 0) {
        assume(fmt::format("{} NIC{} without a speed: taken as {} Gb/s{}", unknown,
                           unknown == 1 ? "" : "s", speed * 8,
                           known > 0 ? ", the other NICs' speed" : " (100 Gb/s EDR / 100 GbE)"));
      }
    }
    m_.info.nic_speed_gbs = speed;
    for (std::size_t k = 0; k < nic_links_without_pci_.size(); ++k) {
      m_.links[nic_links_without_pci_[k]].bandwidth_gbs = speed;
    }
    if (!nic_links_without_pci_.empty()) {
      assume(fmt::format(
          "{} NIC{} right under a CPU, no PCIe link stated: linked to it as fast "
          "as the NIC itself ({} Gb/s)",
          nic_links_without_pci_.size(), nic_links_without_pci_.size() == 1 ? "" : "s", speed * 8));
    }
  }

  // NICs the file gives no speed but a Mellanox PCI device id: the line rate of that NIC.
  void nic_speeds_from_devices() {
    std::map<int, int> taken;  // device id -> NICs
    for (FileNic& n : nics_) {
      if (n.speed_gbs > 0 || n.pci_device < 0) continue;
      const NicDevice* known = mellanox_nic_device(n.pci_device);
      if (known == nullptr) continue;
      n.speed_gbs = known->speed_gbs;
      ++taken[n.pci_device];
    }
    for (const auto& [device, count] : taken) {
      const NicDevice& known = *mellanox_nic_device(device);
      assume(
          fmt::format("{} NIC{} without a speed: taken as {} Gb/s, the line rate of a {} "
                      "(Mellanox PCI device 0x{:04x})",
                      count, count == 1 ? "" : "s", known.speed_gbs * 8, known.name, device));
    }
  }

  // Sockets: NCCL joins every pair of CPUs (NUMA domains) with one link.
  void join_sockets() {
    if (cpus_.size() <= 1) return;
    const double bw = inter_socket_bandwidth_gbs(m_.info.cpu_vendor, m_.info.cpu_model);
    for (std::size_t a = 0; a < cpus_.size(); ++a) {
      for (std::size_t b = a + 1; b < cpus_.size(); ++b) {
        m_.add_link(cpus_[a], cpus_[b], LinkType::PCIe, bw);
      }
    }
    assume(
        fmt::format("the file's {} CPUs (NUMA domains) are joined pairwise, as NCCL does, "
                    "each link at NCCL's figure for GPU traffic between {} sockets ({} GB/s)",
                    cpus_.size(), to_string(m_.info.cpu_vendor), bw));
  }

  std::string_view text_;
  LineIndex lines_;
  const std::string& source_;
  Diagnostics& diag_;
  MachineDescription m_;
  std::vector<int> cpus_;
  bool mixed_cpus_ = false;
  std::vector<FileGpu> gpus_;
  std::vector<FileNic> nics_;
  std::vector<NvlinkRef> nvlinks_;
  std::vector<PendingLink> pcie_;
  std::vector<std::size_t> nic_links_without_pci_;
  double nic_latency_us_ = 0;
};

}  // namespace

std::optional<MachineDescription> read_topology_xml(const std::string& path,
                                                    Diagnostics& diagnostics) {
  ir::FileReadPolicy policy;
  policy.max_bytes = std::uint64_t{16} << 20;  // real dumps are a few KB
  const ir::TextFile file = ir::read_text_file(path, policy);
  if (!file.ok()) {
    diagnostics.error(path, 0, "",
                      fmt::format("no preset has this name and it cannot be read as an NCCL "
                                  "topology file: {}",
                                  file.error));
    return std::nullopt;
  }
  return read_topology_xml_text(ir::strip_utf8_bom(file.text), path, diagnostics);
}

std::optional<MachineDescription> read_topology_xml_text(std::string_view text,
                                                         const std::string& source,
                                                         Diagnostics& diagnostics) {
  return Reader(text, source, diagnostics).read();
}

}  // namespace weft::predict
