#include "weft/dsl/registry.h"

#include <stdexcept>

#include <fmt/format.h>

namespace weft::dsl {

Options AlgorithmParams::options() const {
  Options options;
  options.protocol = protocol;
  options.instances = instances;
  options.min_bytes = min_bytes;
  options.max_bytes = max_bytes;
  options.limits = limits;
  options.placement = placement;
  options.channel_policy = channel_policy;
  options.nodes = nodes > 1 ? nodes : 0;
  return options;
}

std::optional<std::string> check_shape(const AlgorithmInfo& info, const AlgorithmParams& params) {
  if (info.shape == Shape::NodesTimesGpus) {
    if (params.nodes < 1 || params.gpus_per_node < 1) {
      return fmt::format("{} is hierarchical: give --nodes and --gpus-per-node", info.name);
    }
    if (params.ranks != params.nodes * params.gpus_per_node) {
      return fmt::format("ranks {} is not nodes × gpus per node ({} × {})", params.ranks,
                         params.nodes, params.gpus_per_node);
    }
  }
  if (params.ranks < info.min_ranks) {
    return fmt::format("{} needs at least {} ranks (got {})", info.name, info.min_ranks,
                       params.ranks);
  }
  if (info.shape == Shape::PowerOfTwoRanks && (params.ranks & (params.ranks - 1)) != 0) {
    return fmt::format("{} needs a power-of-two rank count (got {})", info.name, params.ranks);
  }
  if (params.instances < 1)
    return fmt::format("instances must be at least 1 (got {})", params.instances);
  if (params.channels < 1)
    return fmt::format("channels must be at least 1 (got {})", params.channels);
  if (params.chunks < 0) return fmt::format("chunks must be at least 1 (got {})", params.chunks);
  if (params.root < 0 || params.root >= params.ranks) {
    return fmt::format("root {} is not a rank (0..{})", params.root, params.ranks - 1);
  }
  return std::nullopt;
}

void Registry::add(AlgorithmInfo info) {
  if (info.name.empty()) throw std::invalid_argument("an algorithm needs a name");
  if (!info.build)
    throw std::invalid_argument(fmt::format("algorithm '{}' has no builder", info.name));
  if (find(info.name)) {
    throw std::invalid_argument(fmt::format("algorithm '{}' is registered twice", info.name));
  }
  algorithms_.push_back(std::move(info));
}

const AlgorithmInfo* Registry::find(std::string_view name) const {
  for (const AlgorithmInfo& info : algorithms_) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

}  // namespace weft::dsl
