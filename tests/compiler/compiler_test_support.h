// Programs and views of compiled IR shared by the compiler tests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "weft/compiler/compiler.h"
#include "weft/dsl/dsl.h"
#include "weft/ir/ir.h"
#include "weft/predict/simulator.h"
#include "weft/predict/topology.h"

namespace weft::test {

// A ring allreduce over `n` ranks (n chunks), recorded as msccl-tools' example does.
inline dsl::Program ring_allreduce(int n, dsl::Options options = {}) {
  dsl::Program p("ring", dsl::Collective::allreduce(n, n), options);
  for (int step = 0; step < n - 1; ++step) {
    for (int k = 0; k < n; ++k) {
      p.chunk((k + step + 1) % n, dsl::input, k).reduce(p.chunk((k + step) % n, dsl::input, k));
    }
  }
  for (int step = 0; step < n - 1; ++step) {
    for (int k = 0; k < n; ++k) {
      const int from = (k + n - 1 + step) % n;
      p.chunk(from, dsl::input, k).copy((from + 1) % n, dsl::input, k);
    }
  }
  return p;
}

// "s rrs rrcs rcs r": a threadblock's step types.
inline std::string step_types(const ir::Threadblock& tb) {
  std::string text;
  for (const ir::Step& step : tb.steps) {
    if (!text.empty()) text += ' ';
    text += std::string(ir::to_string(step.type));
  }
  return text;
}

inline int count_steps(const ir::Algorithm& algo, ir::StepType type) {
  int count = 0;
  for (const ir::Gpu& gpu : algo.gpus) {
    for (const ir::Threadblock& tb : gpu.threadblocks) {
      for (const ir::Step& step : tb.steps) count += step.type == type ? 1 : 0;
    }
  }
  return count;
}

// Predicted times (µs) at `sizes` on the machine the compiler judges on by default: a100-nvswitch,
// the ranks on one node (at most 8 ranks here), or spread evenly over `nodes`. Empty when the
// simulator refuses.
inline std::vector<double> predicted(const ir::Algorithm& algo,
                                     const std::vector<std::uint64_t>& sizes,
                                     std::optional<bool> in_place = std::nullopt, int nodes = 1) {
  predict::TopologyResult loaded =
      predict::load_topology({"a100-nvswitch", nodes, algo.ngpus / nodes});
  if (!loaded.topology) return {};
  const predict::Simulator simulator(algo, *loaded.topology);
  std::vector<double> times;
  for (const std::uint64_t bytes : sizes) {
    predict::SimulationOptions options;
    options.bytes = bytes;
    options.in_place = in_place;
    const predict::SimulationResult r = simulator.run(options);
    if (!r.ok()) return {};
    times.push_back(r.time_us);
  }
  return times;
}

// Light verification for tests: one chunk size, two tiles, both depths, one seed.
inline compiler::CompileOptions quick() {
  compiler::CompileOptions options;
  options.verify.seeds = 1;
  return options;
}

}  // namespace weft::test
