// Topologies for the synthesis tests: presets by name, Azure's files where they are.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "skip.h"
#include "weft/predict/topology.h"

namespace weft::synthesis::test {

inline predict::Topology topology(const std::string& source, int nodes = 1, int gpus_per_node = 0,
                                  std::vector<predict::GpuLinkEdit> edits = {}) {
  predict::TopologyRequest request;
  request.source = source;
  request.nodes = nodes;
  request.gpus_per_node = gpus_per_node;
  request.link_edits = std::move(edits);
  predict::TopologyResult loaded = predict::load_topology(request);
  INFO(loaded.diagnostics.str());
  REQUIRE(loaded.topology.has_value());
  return std::move(*loaded.topology);
}

// The machine as its specifications state it: every link at its line rate (every achievable
// share 1, predict::Topology::at_line_rate) and every hop at NCCL's latency, with no floor of a
// Weft step under it (ProtocolCosts::step_latency_us 0). The tests of what synthesis builds from
// a machine's links (the bound's cuts, rings, pieces per lane, which sketch wins where, the gain
// of one sketch over another) pin figures worked out on those figures; the default model rates
// each link type at its own achievable share (NVLink ~0.8, NICs 0.96, PCIe 0.76) and floors
// every hop at Weft's measured step (3.2-3.3 us, docs/prediction.md), which moves such figures
// and, between link types and sizes, their ratios. What synthesis reaches on the default model
// is the suite's (docs/synthesis.md) and the tests' named "at achievable rates".
inline predict::Topology nominal_topology(const std::string& source, int nodes = 1,
                                          int gpus_per_node = 0,
                                          std::vector<predict::GpuLinkEdit> edits = {}) {
  predict::Topology t = topology(source, nodes, gpus_per_node, std::move(edits)).at_line_rate();
  predict::CostParameters costs = t.costs();
  for (predict::ProtocolCosts& p : costs.protocols) p.step_latency_us = 0;
  t.set_costs(costs);
  return t;
}

// The machine with its links at their line rates, hops floored at Weft's step as by default.
inline predict::Topology line_rate_topology(const std::string& source, int nodes = 1,
                                            int gpus_per_node = 0,
                                            std::vector<predict::GpuLinkEdit> edits = {}) {
  return topology(source, nodes, gpus_per_node, std::move(edits)).at_line_rate();
}

// One of Azure's HPC topology files (azure-ndv2-topo.xml: the DGX-1 of the ND v2 images;
// azure-ncv4-topo.xml: four A100 on PCIe), or nothing where it is absent (the test case is then
// skipped: under CTest this does not return).
inline std::optional<std::string> azure_file(const std::string& name) {
  const std::string path = std::string(WEFT_TOPOLOGY_XML_DIR) + "/" + name;
  if (std::filesystem::exists(path)) return path;
  weft::test_support::skip_test_case(
      path +
      " is absent (Azure HPC topology files, kept outside the project; "
      "-DWEFT_TOPOLOGY_XML_DIR=FOLDER gives them)");
  return std::nullopt;
}

// The DGX-1 of Azure's ND v2 images, or nothing where the file is absent (as azure_file).
inline std::optional<std::string> dgx1_file() {
  return azure_file("azure-ndv2-topo.xml");
}

}  // namespace weft::synthesis::test
