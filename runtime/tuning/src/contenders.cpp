#include "weft/tuning/contenders.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "weft/predict/nccl_model.h"
#include "weft/predict/simulator.h"

namespace weft::tuning {

int busiest_threadblocks(const ir::Algorithm& algorithm) {
  int most = 0;
  for (const ir::Gpu& gpu : algorithm.gpus) {
    most = std::max(most, static_cast<int>(gpu.threadblocks.size()));
  }
  return most;
}

Contender predict_candidate(const Candidate& candidate, const predict::Topology& topology,
                            const std::vector<std::uint64_t>& sizes, bool in_place,
                            const std::function<void(std::uint64_t bytes)>& on_size,
                            const Pruning& pruning, LeftOut* left_out) {
  Contender c;
  c.name = candidate.name;
  c.protocol = candidate.algorithm.protocol;
  c.threadblocks = busiest_threadblocks(candidate.algorithm);
  c.time_us.assign(sizes.size(), kNotApplicable);
  // Built only where a size is predicted: its plan is most of a large algorithm's memory.
  std::optional<predict::Simulator> simulator;
  predict::SimulationOptions options;
  options.in_place = in_place;
  bool behind_twin = false;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (behind_twin) {
      if (left_out) ++left_out->behind_twin;
      continue;
    }
    const double ceiling = i < pruning.ceiling_us.size() ? pruning.ceiling_us[i] : kNotApplicable;
    const bool bounded = ceiling != kNotApplicable;
    if (bounded && i < pruning.floor_us.size() && pruning.floor_us[i] >= ceiling) {
      if (left_out) ++left_out->by_bound;
      continue;
    }
    if (!simulator) simulator.emplace(candidate.algorithm, topology);
    options.bytes = sizes[i];
    if (bounded && simulator->floor_us(options) >= ceiling) {
      if (left_out) ++left_out->by_bound;
      continue;
    }
    if (on_size) on_size(sizes[i]);
    const predict::SimulationResult r = simulator->run(options);
    if (r.ok()) c.time_us[i] = r.time_us;
    const double twin = i < pruning.twin_us.size() ? pruning.twin_us[i] : kNotApplicable;
    behind_twin = r.ok() && twin != kNotApplicable && r.time_us > twin;
  }
  return c;
}

std::vector<Contender> nccl_contenders(const predict::Topology& topology, ir::Collective collective,
                                       const std::vector<std::uint64_t>& sizes) {
  std::vector<Contender> contenders;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    for (const predict::NcclPrediction& p : predict::predict_nccl(topology, collective, sizes[i])) {
      const std::string name = fmt::format("NCCL {} {}", p.algorithm, ir::to_string(p.protocol));
      auto it = std::find_if(contenders.begin(), contenders.end(),
                             [&name](const Contender& c) { return c.name == name; });
      if (it == contenders.end()) {
        Contender c;
        c.name = name;
        c.nccl = true;
        c.nccl_algorithm = p.algorithm == "Tree" ? "tree" : "ring";
        c.protocol = p.protocol;
        c.channels = p.channels;
        c.time_us.assign(sizes.size(), kNotApplicable);
        contenders.push_back(std::move(c));
        it = contenders.end() - 1;
      }
      it->time_us[i] = p.time_us;
    }
  }
  return contenders;
}

}  // namespace weft::tuning
