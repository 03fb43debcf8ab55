#include "flow_network.h"

#include <algorithm>
#include <limits>

namespace weft::predict::detail {

FlowNetwork::FlowNetwork(std::vector<double> capacity)
    : capacity_(std::move(capacity)), load_(capacity_.size(), 0), members_(capacity_.size()) {}

void FlowNetwork::settle(Flow& flow, double now) {
  flow.remaining = std::max(0.0, flow.remaining - flow.rate * (now - flow.updated));
  flow.updated = now;
}

void FlowNetwork::rerate(int id, double now) {
  Flow& flow = flows_[static_cast<std::size_t>(id)];
  double rate = flow.cap;
  for (const LinkUse& use : flow.uses) {
    const auto l = static_cast<std::size_t>(use.link);
    rate = std::min(rate, capacity_[l] / load_[l]);
  }
  flow.rate = rate;
  ++flow.version;
  ends_.push({now + flow.remaining / rate, id, flow.version});
}

void FlowNetwork::touch_links(std::span<const LinkUse> uses, double now) {
  for (const LinkUse& use : uses) {
    for (const int member : members_[static_cast<std::size_t>(use.link)]) {
      settle(flows_[static_cast<std::size_t>(member)], now);
    }
  }
}

void FlowNetwork::rerate_links(std::span<const LinkUse> uses, double now, int skip) {
  // A flow that shares several links with the changed one is re-rated once.
  ++pass_;
  for (const LinkUse& use : uses) {
    for (const int member : members_[static_cast<std::size_t>(use.link)]) {
      if (member == skip || stamp_[static_cast<std::size_t>(member)] == pass_) continue;
      stamp_[static_cast<std::size_t>(member)] = pass_;
      rerate(member, now);
    }
  }
}

int FlowNetwork::start(double now, double bytes, std::span<const LinkUse> uses, double cap) {
  int id = 0;
  if (free_ids_.empty()) {
    id = static_cast<int>(flows_.size());
    flows_.emplace_back();
    stamp_.push_back(0);
  } else {
    id = free_ids_.back();
    free_ids_.pop_back();
  }
  touch_links(uses, now);
  Flow& flow = flows_[static_cast<std::size_t>(id)];
  flow.uses.assign(uses.begin(), uses.end());
  flow.remaining = std::max(0.0, bytes);
  flow.rate = 0;
  flow.cap = cap > 0 ? cap : std::numeric_limits<double>::max();
  flow.updated = now;
  flow.active = true;
  for (const LinkUse& use : uses) {
    const auto l = static_cast<std::size_t>(use.link);
    load_[l] += use.weight;
    members_[l].push_back(id);
  }
  rerate_links(uses, now, id);
  rerate(id, now);
  return id;
}

std::optional<std::pair<double, int>> FlowNetwork::next_end() {
  while (!ends_.empty()) {
    const End& top = ends_.top();
    const Flow& flow = flows_[static_cast<std::size_t>(top.flow)];
    if (flow.active && flow.version == top.version) return std::pair{top.time, top.flow};
    ends_.pop();  // superseded by a later rate
  }
  return std::nullopt;
}

void FlowNetwork::finish(double now, int id) {
  Flow& flow = flows_[static_cast<std::size_t>(id)];
  flow.active = false;
  ++flow.version;
  for (const LinkUse& use : flow.uses) {
    const auto l = static_cast<std::size_t>(use.link);
    auto& list = members_[l];
    const auto it = std::find(list.begin(), list.end(), id);
    if (it != list.end()) {
      *it = list.back();
      list.pop_back();
    }
    load_[l] = list.empty() ? 0 : std::max(0.0, load_[l] - use.weight);
  }
  const std::vector<LinkUse> uses = std::move(flow.uses);
  flow.uses.clear();
  touch_links(uses, now);
  rerate_links(uses, now, -1);
  free_ids_.push_back(id);
}

}  // namespace weft::predict::detail
