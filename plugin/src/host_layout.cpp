#include "weft/plugin/host_layout.h"

#include <algorithm>

#include <fmt/format.h>

namespace weft::plugin {

std::string HostLayout::describe() const {
  if (hosts.size() == 1) return "one host";
  if (blocks) return fmt::format("{} hosts, {} ranks each", hosts.size(), per_host);
  return fmt::format("{} hosts, ranks not in equal consecutive blocks", hosts.size());
}

HostLayout host_layout(std::span<const std::string> host_of_rank) {
  HostLayout layout;
  for (const std::string& host : host_of_rank) {
    if (std::find(layout.hosts.begin(), layout.hosts.end(), host) == layout.hosts.end()) {
      layout.hosts.push_back(host);
    }
  }
  const auto n = static_cast<int>(host_of_rank.size());
  const int count = layout.count();
  if (count == 0 || n % count != 0) return layout;
  const int per_host = n / count;
  for (int r = 0; r < n; ++r) {
    if (host_of_rank[static_cast<std::size_t>(r)] != layout.hosts[static_cast<std::size_t>(r / per_host)]) {
      return layout;
    }
  }
  layout.blocks = true;
  layout.per_host = per_host;
  return layout;
}

std::optional<std::string> placement_mismatch(const ir::Algorithm& algorithm,
                                              const HostLayout& layout) {
  const int nodes = std::max(algorithm.nnodes, 1);
  if (layout.count() <= 1) {
    if (nodes == 1) return std::nullopt;
    return fmt::format("it is written for {} nodes of {} ranks and the communicator is on one host",
                       nodes, algorithm.ngpus / nodes);
  }
  if (algorithm.nnodes <= 1) {
    return fmt::format("it is written for one node (its file states no nnodes) and the "
                       "communicator spans {}",
                       layout.describe());
  }
  if (!layout.blocks || layout.count() != nodes) {
    return fmt::format("it is written for {} nodes of {} ranks each (ranks in consecutive blocks, "
                       "block k on node k) and the communicator's ranks lie on {}",
                       nodes, algorithm.ngpus / nodes, layout.describe());
  }
  return std::nullopt;
}

}  // namespace weft::plugin
