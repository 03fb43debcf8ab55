#include "step_graph.h"

#include <algorithm>

namespace weft::ir::detail {

StepNumbering::StepNumbering(const Algorithm& algo) {
  first_tb_.reserve(algo.gpus.size() + 1);
  first_step_.push_back(0);
  std::size_t tbs = 0;
  for (const Gpu& gpu : algo.gpus) {
    first_tb_.push_back(tbs);
    for (const Threadblock& tb : gpu.threadblocks) {
      first_step_.push_back(first_step_.back() + tb.steps.size());
    }
    tbs += gpu.threadblocks.size();
  }
  first_tb_.push_back(tbs);
}

StepNumbering::Location StepNumbering::locate(std::size_t node) const {
  // The flat threadblock holding `node`, then the rank holding that threadblock; empty
  // threadblocks share a start with the next one, so take the last start not above `node`.
  const auto tb_it = std::upper_bound(first_step_.begin(), first_step_.end(), node) - 1;
  const auto flat_tb = static_cast<std::size_t>(tb_it - first_step_.begin());
  const auto rank_it = std::upper_bound(first_tb_.begin(), first_tb_.end(), flat_tb) - 1;
  const auto rank = static_cast<std::size_t>(rank_it - first_tb_.begin());
  return {static_cast<int>(rank), static_cast<int>(flat_tb - first_tb_[rank]),
          static_cast<int>(node - *tb_it)};
}

bool dependency_in_range(const Gpu& gpu, int tb, const Step& step) {
  if (step.depid < 0 || step.depid == tb) return false;
  if (static_cast<std::size_t>(step.depid) >= gpu.threadblocks.size()) return false;
  const auto& target = gpu.threadblocks[static_cast<std::size_t>(step.depid)];
  return step.deps >= 0 && static_cast<std::size_t>(step.deps) < target.steps.size();
}

void StepGraph::add_edge(std::size_t from, std::size_t to) {
  for (std::size_t& slot : predecessors_[to]) {
    if (slot == kNone) {
      slot = from;
      return;
    }
  }
}

std::vector<std::size_t> StepGraph::topological_order() const {
  const std::size_t n = predecessors_.size();
  // Successor lists in compressed form, built from the predecessor slots.
  std::vector<std::size_t> first_successor(n + 1, 0);
  std::vector<std::uint32_t> waiting(n, 0);
  for (std::size_t v = 0; v < n; ++v) {
    for (std::size_t p : predecessors_[v]) {
      if (p == kNone) continue;
      ++first_successor[p + 1];
      ++waiting[v];
    }
  }
  for (std::size_t v = 0; v < n; ++v) first_successor[v + 1] += first_successor[v];
  std::vector<std::size_t> successors(first_successor[n]);
  std::vector<std::size_t> fill(first_successor.begin(), first_successor.end() - 1);
  for (std::size_t v = 0; v < n; ++v) {
    for (std::size_t p : predecessors_[v]) {
      if (p != kNone) successors[fill[p]++] = v;
    }
  }

  std::vector<std::size_t> order;
  order.reserve(n);
  for (std::size_t v = 0; v < n; ++v) {
    if (waiting[v] == 0) order.push_back(v);
  }
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::size_t v = order[k];
    for (std::size_t e = first_successor[v]; e < first_successor[v + 1]; ++e) {
      if (--waiting[successors[e]] == 0) order.push_back(successors[e]);
    }
  }
  return order;
}

StepGraph local_step_graph(const Algorithm& algo, const StepNumbering& numbering) {
  StepGraph graph(numbering.size());
  for (std::size_t r = 0; r < algo.gpus.size(); ++r) {
    const Gpu& gpu = algo.gpus[r];
    const int rank = static_cast<int>(r);
    for (std::size_t t = 0; t < gpu.threadblocks.size(); ++t) {
      const int tb = static_cast<int>(t);
      const auto& steps = gpu.threadblocks[t].steps;
      for (std::size_t s = 0; s < steps.size(); ++s) {
        const std::size_t node = numbering.node(rank, tb, static_cast<int>(s));
        if (s > 0) graph.add_edge(node - 1, node);
        if (dependency_in_range(gpu, tb, steps[s])) {
          graph.add_edge(numbering.node(rank, steps[s].depid, steps[s].deps), node);
        }
      }
    }
  }
  return graph;
}

std::vector<int> message_steps(const Threadblock& tb, bool sending) {
  std::vector<int> indices;
  for (std::size_t s = 0; s < tb.steps.size(); ++s) {
    const StepType type = tb.steps[s].type;
    if (sending ? sends(type) : receives(type)) indices.push_back(static_cast<int>(s));
  }
  return indices;
}

}  // namespace weft::ir::detail
