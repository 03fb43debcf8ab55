// Cost parameters: their NCCL-calibrated defaults and their text form.
#include "weft/predict/cost_parameters.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "nccl_tables.h"
#include "weft/predict/nccl_model.h"
#include "weft/predict/presets.h"

namespace weft::predict {
namespace {

constexpr std::array<ir::Protocol, 3> kProtocols{ir::Protocol::Simple, ir::Protocol::LL,
                                                 ir::Protocol::LL128};
constexpr std::array<LinkType, kLinkTypes> kTypes{LinkType::Memory, LinkType::NVLink,
                                                  LinkType::PCIe, LinkType::Network};

// Payload bytes per byte moved: LL sends a 4-byte flag with every 4 bytes of data; LL128 a
// 8-byte flag in every 128-byte line (NCCL's prims_ll.h, prims_ll128.h).
constexpr double kLLEfficiency = 0.5;
constexpr double kLL128Efficiency = 120.0 / 128.0;

std::size_t index(ir::Protocol p) {
  return static_cast<std::size_t>(p);
}
std::size_t index(LinkType t) {
  return static_cast<std::size_t>(t);
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string protocol_key(ir::Protocol p) {
  return lower(ir::to_string(p));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Shortest text that reads back to the same double.
std::string number(double v) {
  std::array<char, 64> buf{};
  const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return ec == std::errc() ? std::string(buf.data(), end) : fmt::format("{}", v);
}

// A step of Weft's interpreter (Simple, LL, LL128, as kProtocols), from the runs named where
// they are set: (55.10 - 6.6 - 1.8) / 14, (51.84 - 6.6) / 14, (58.62 - 6.6 - 7.4) / 14, to 0.1 us.
constexpr std::array<double, 3> kWeftStepUs{3.3, 3.2, 3.2};

// The share of a link's line rate that SM copies deliver as payload, by link type, on a GPU of
// compute capability `sm` (docs/prediction.md, "Achievable rates", has the error table).
//   NVLink: NCCL's own per-link figures (src/graph/topo.h: SM70/SM80_NVLINK_BW 20.0,
//     SM90_NVLINK_BW 20.6, SM100_NVLINK_BW 40.1 GB/s) over the link's signalling rate (25 GB/s
//     per direction for NVLink 2-4, 50 for NVLink 5). Hopper's 20.6 x 18 links = 370.8 GB/s is
//     what NVIDIA states NCCL's ring moves on 8 H100s (NVIDIA/nccl-tests issue 212: "450GB/s is
//     the line rate ... NCCL can get an effective NVLink bandwidth of 370GB/s").
//   PCIe: NCCL's figure for a PCIe link (topo.cc: width x GT/s x 7.5 / 80, Gen4 x16 24 GB/s)
//     over the line rate after 128b/130b encoding (31.5 GB/s), as nccl_tables.h has it.
//   Network: 24 of 25 GB/s, what NVIDIA measures through an HDR NIC: 192 GB/s allreduce busbw on
//     two DGX-A100 with 8 x 200 Gb/s NICs (NVIDIA/nccl issue 812), "24GB/s inter-node" on one
//     (NVIDIA/nccl issue 412); NDR: "48-49GB/s per NIC" (NVIDIA/nccl-tests issue 267).
//   Memory: 1, the presets' memory figures are already copy rates (presets.cpp).
std::array<double, kLinkTypes> achievable_shares(int sm) {
  std::array<double, kLinkTypes> share{};
  share[index(LinkType::Memory)] = 1.0;
  share[index(LinkType::NVLink)] = sm >= 100 ? 40.1 / 50.0 : nccl::nvlink_link_bw(sm) / 25.0;
  share[index(LinkType::PCIe)] = nccl::kPciShareOfLineRate;
  share[index(LinkType::Network)] = 24.0 / 25.0;
  return share;
}

}  // namespace

bool LinkOverrides::empty() const {
  return std::none_of(bandwidth_gbs.begin(), bandwidth_gbs.end(),
                      [](const auto& v) { return v.has_value(); }) &&
         std::none_of(latency_us.begin(), latency_us.end(),
                      [](const auto& v) { return v.has_value(); });
}

CostParameters default_cost_parameters(const Topology& topology) {
  if (topology.machine().emulated_ranks > 0) {
    // One GPU's threadblocks run the same copy loops as on an NVSwitch H100 node.
    auto h100 = preset_machine("h100-nvswitch");
    return default_cost_parameters(build_topology(*h100, 1, 0));
  }
  CostParameters c;
  const NcclGraph graph = nccl_ring_graph(topology);
  const int nodes = topology.nodes();
  const int sm = topology.machine().gpu_sm > 0 ? topology.machine().gpu_sm : 80;
  const std::size_t gen = nccl::generation(sm);
  const std::size_t column = nodes <= 2 ? static_cast<std::size_t>(nodes - 1) : 2;
  const std::size_t ll_row =
      nodes == 1 ? gen : (topology.machine().cpu_vendor == CpuVendor::Amd ? 1 : 0);
  const double channels = std::max(1, graph.channels);
  const double speed = graph.speed_gbs;

  // tuning.cc baseLatencies, Ring row: LL 6.6, LL128 14.0, Simple 8.4. The smallest is the
  // launch; the rest is the protocol's own set-up.
  c.launch_latency_us = nccl::kBaseLatency[nccl::kRing][nccl::kLL];
  for (ir::Protocol proto : kProtocols) {
    const std::size_t p = nccl::nccl_protocol(proto);
    ProtocolCosts& pc = c.protocols[index(proto)];
    pc.call_latency_us = nccl::kBaseLatency[nccl::kRing][p] - c.launch_latency_us;
    // tuning.cc hwLatencies, Ring row, by hardware. A route that is the memory link itself
    // (one-GPU emulation) is a flag in the same GPU's memory: NVLink's row is the nearest NCCL
    // measured.
    pc.hop_latency_us[index(LinkType::Memory)] = nccl::kHwLatency[nccl::kHwNvlink][nccl::kRing][p];
    pc.hop_latency_us[index(LinkType::NVLink)] = nccl::kHwLatency[nccl::kHwNvlink][nccl::kRing][p];
    pc.hop_latency_us[index(LinkType::PCIe)] = nccl::kHwLatency[nccl::kHwPci][nccl::kRing][p];
    pc.hop_latency_us[index(LinkType::Network)] = nccl::kHwLatency[nccl::kHwNet][nccl::kRing][p];
  }
  // A threadblock is one NCCL channel. Per channel NCCL credits the ring `speed` of bus
  // bandwidth with Simple, with LL half of it up to llMaxBws shared by all channels, with LL128
  // 0.92 of it up to perChMaxRingLL128Bws (tuning.cc). Dividing the payload rate by the
  // protocol's payload efficiency gives the bytes a threadblock moves.
  ProtocolCosts& simple = c.protocols[index(ir::Protocol::Simple)];
  simple.payload_efficiency = 1.0;
  simple.threadblock_bandwidth_gbs = speed;
  ProtocolCosts& ll = c.protocols[index(ir::Protocol::LL)];
  ll.payload_efficiency = kLLEfficiency;
  ll.threadblock_bandwidth_gbs =
      std::min(nccl::kLlMaxBw[ll_row][column] / channels, speed * nccl::kRingLLFactor) /
      kLLEfficiency;
  ProtocolCosts& ll128 = c.protocols[index(ir::Protocol::LL128)];
  ll128.payload_efficiency = kLL128Efficiency;
  ll128.threadblock_bandwidth_gbs =
      std::min(speed * nccl::kRingLL128Factor, nccl::kPerChMaxRingLL128Bw[gen][column]) /
      kLL128Efficiency;
  c.achievable_share = achievable_shares(sm);
  // A step of Weft's interpreter, measured: an 8-rank ring allreduce of 1 KB on one H100 (ranks
  // emulated, docs/performance/h100/) takes launch + call latency + 14 steps, one after another:
  // Simple, 1 channel, 55.10 us; LL, 8 channels, 51.84 us; LL128, 4 channels, 58.62 us.
  for (std::size_t p = 0; p < kProtocols.size(); ++p) {
    c.protocols[index(kProtocols[p])].step_latency_us = kWeftStepUs[p];
  }
  return c;
}

std::string write_cost_parameters(const CostParameters& costs) {
  return write_cost_parameters(costs, LinkOverrides{});
}

std::string write_cost_parameters(const CostParameters& costs, const LinkOverrides& links) {
  std::string out;
  out += "# Weft cost parameters: `key = value`, `#` comments. Latencies in us, bandwidths in\n";
  out += "# GB/s (10^9 bytes) per direction. Defaults follow NCCL's src/graph/tuning.cc.\n\n";
  out += "# Per call: kernel launch and set-up (NCCL's ring LL base latency).\n";
  out += fmt::format("launch_latency_us = {}\n", number(costs.launch_latency_us));
  for (ir::Protocol proto : kProtocols) {
    const ProtocolCosts& pc = costs.protocol(proto);
    const std::string k = protocol_key(proto);
    out += fmt::format("\n# {}: extra per call; payload bytes per byte moved; one threadblock's\n",
                       ir::to_string(proto));
    out += "# bytes per second; the least a step of Weft's costs (measured); per message and hop\n";
    out += "# by link type (flag handshake, one slot; a hop is never shorter than a step).\n";
    out += fmt::format("{}.call_latency_us = {}\n", k, number(pc.call_latency_us));
    out += fmt::format("{}.payload_efficiency = {}\n", k, number(pc.payload_efficiency));
    out +=
        fmt::format("{}.threadblock_bandwidth_gbs = {}\n", k, number(pc.threadblock_bandwidth_gbs));
    out += fmt::format("{}.step_latency_us = {}\n", k, number(pc.step_latency_us));
    for (LinkType type : kTypes) {
      out += fmt::format("{}.hop_latency_us.{} = {}\n", k, to_string(type),
                         number(pc.hop_latency_us[index(type)]));
    }
  }
  out +=
      "\n# Per link type: the share of its line rate a link delivers to SM copies (NVLink: "
      "NCCL's\n";
  out += "# per-link figure over the signalling rate; PCIe: NCCL's figure; network: NVIDIA's\n";
  out += "# measurements through HDR and NDR NICs; sources in Weft's cost_parameters.cpp).\n";
  for (LinkType type : kTypes) {
    out +=
        fmt::format("link.{}.achievable = {}\n", to_string(type), number(costs.achievable(type)));
  }
  if (!links.empty()) {
    out +=
        "\n# Every link of a type takes these line rates and latencies (overriding the "
        "topology's).\n";
    for (LinkType type : kTypes) {
      if (const auto& bw = links.bandwidth_gbs[index(type)]) {
        out += fmt::format("link.{}.bandwidth_gbs = {}\n", to_string(type), number(*bw));
      }
      if (const auto& lat = links.latency_us[index(type)]) {
        out += fmt::format("link.{}.latency_us = {}\n", to_string(type), number(*lat));
      }
    }
  }
  return out;
}

Diagnostics read_cost_parameters(std::string_view text, std::string source, CostParameters& into) {
  return read_cost_parameters(text, std::move(source), into, nullptr);
}

Diagnostics read_cost_parameters(std::string_view text, std::string source, CostParameters& into,
                                 LinkOverrides* links) {
  Diagnostics out;
  CostParameters costs = into;
  LinkOverrides overrides = links != nullptr ? *links : LinkOverrides{};
  int line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const std::size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) {
      line = line.substr(0, hash);
    }
    line = trim(line);
    if (line.empty()) continue;
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      out.error(source, line_number, "", fmt::format("expected `key = value`, found \"{}\"", line));
      continue;
    }
    const std::string key = lower(trim(line.substr(0, eq)));
    const std::string_view value_text = trim(line.substr(eq + 1));
    double value = 0;
    const char* first = value_text.data();
    const char* last = first + value_text.size();
    const auto [end, ec] = std::from_chars(first, last, value);
    if (value_text.empty() || ec != std::errc() || end != last || !std::isfinite(value)) {
      out.error(source, line_number, key,
                fmt::format("value \"{}\" is not a finite decimal number", value_text));
      continue;
    }
    if (value < 0) {
      out.error(source, line_number, key, fmt::format("value {} is negative", value_text));
      continue;
    }

    // Resolve the key to the value it sets, and what that value must satisfy.
    double* target = nullptr;
    std::optional<double>* optional_target = nullptr;
    bool positive = false;
    bool at_most_one = false;
    if (key == "launch_latency_us") target = &costs.launch_latency_us;
    for (ir::Protocol proto : kProtocols) {
      const std::string k = protocol_key(proto) + ".";
      if (key.rfind(k, 0) != 0) continue;
      ProtocolCosts& pc = costs.protocols[index(proto)];
      const std::string rest = key.substr(k.size());
      if (rest == "call_latency_us") target = &pc.call_latency_us;
      if (rest == "step_latency_us") target = &pc.step_latency_us;
      if (rest == "payload_efficiency") {
        target = &pc.payload_efficiency;
        positive = at_most_one = true;
      }
      if (rest == "threadblock_bandwidth_gbs") {
        target = &pc.threadblock_bandwidth_gbs;
        positive = true;
      }
      for (LinkType type : kTypes) {
        if (rest == fmt::format("hop_latency_us.{}", to_string(type))) {
          target = &pc.hop_latency_us[index(type)];
        }
      }
    }
    for (LinkType type : kTypes) {
      if (key == fmt::format("link.{}.bandwidth_gbs", to_string(type))) {
        optional_target = &overrides.bandwidth_gbs[index(type)];
        positive = true;
      }
      if (key == fmt::format("link.{}.latency_us", to_string(type))) {
        optional_target = &overrides.latency_us[index(type)];
      }
      if (key == fmt::format("link.{}.achievable", to_string(type))) {
        target = &costs.achievable_share[index(type)];
        positive = at_most_one = true;
      }
    }
    if (target == nullptr && optional_target == nullptr) {
      out.error(source, line_number, key,
                "unknown key (launch_latency_us, <simple|ll|ll128>.call_latency_us, "
                ".payload_efficiency, .threadblock_bandwidth_gbs, .step_latency_us, "
                ".hop_latency_us.<link>, "
                "link.<memory|nvlink|pcie|network>.bandwidth_gbs, .latency_us, .achievable)");
      continue;
    }
    if (optional_target != nullptr && links == nullptr) {
      out.error(source, line_number, key,
                "link overrides apply to a topology and are not read here");
      continue;
    }
    if (positive && value <= 0) {
      out.error(source, line_number, key, "must be above 0");
      continue;
    }
    if (at_most_one && value > 1) {
      out.error(source, line_number, key, fmt::format("is {}; it must be at most 1", value_text));
      continue;
    }
    if (target != nullptr) *target = value;
    if (optional_target != nullptr) *optional_target = value;
  }
  if (!out.has_errors()) {
    into = costs;
    if (links != nullptr) *links = overrides;
  }
  return out;
}

void apply_link_overrides(Topology& topology, const LinkOverrides& links) {
  for (LinkType type : kTypes) {
    topology.set_link_parameters(type, links.bandwidth_gbs[index(type)],
                                 links.latency_us[index(type)]);
  }
}

}  // namespace weft::predict
