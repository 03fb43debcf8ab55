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
  // A flow whose bottleneck is elsewhere keeps its rate, and so its end: most of a memory link's
  // flows, when one more starts on it. Its bytes are settled only when its rate changes.
  if (flow.heap_slot >= 0 && rate == flow.rate) return;
  settle(flow, now);
  flow.rate = rate;
  flow.end = now + flow.remaining / rate;
  heap_update(id);
}

bool FlowNetwork::earlier(int a, int b) const {
  const double ea = flows_[static_cast<std::size_t>(a)].end;
  const double eb = flows_[static_cast<std::size_t>(b)].end;
  return ea != eb ? ea < eb : a < b;
}

void FlowNetwork::place(std::size_t slot, int id) {
  heap_[slot] = id;
  flows_[static_cast<std::size_t>(id)].heap_slot = static_cast<int>(slot);
}

void FlowNetwork::sift_up(std::size_t slot) {
  const int id = heap_[slot];
  while (slot > 0) {
    const std::size_t parent = (slot - 1) / 2;
    if (!earlier(id, heap_[parent])) break;
    place(slot, heap_[parent]);
    slot = parent;
  }
  place(slot, id);
}

void FlowNetwork::sift_down(std::size_t slot) {
  const int id = heap_[slot];
  const std::size_t size = heap_.size();
  while (true) {
    std::size_t child = 2 * slot + 1;
    if (child >= size) break;
    if (child + 1 < size && earlier(heap_[child + 1], heap_[child])) ++child;
    if (!earlier(heap_[child], id)) break;
    place(slot, heap_[child]);
    slot = child;
  }
  place(slot, id);
}

void FlowNetwork::heap_update(int id) {
  Flow& flow = flows_[static_cast<std::size_t>(id)];
  if (flow.heap_slot < 0) {
    heap_.push_back(id);
    sift_up(heap_.size() - 1);
    return;
  }
  const auto slot = static_cast<std::size_t>(flow.heap_slot);
  sift_up(slot);
  sift_down(static_cast<std::size_t>(flow.heap_slot));
}

void FlowNetwork::heap_remove(int id) {
  Flow& flow = flows_[static_cast<std::size_t>(id)];
  if (flow.heap_slot < 0) return;
  const auto slot = static_cast<std::size_t>(flow.heap_slot);
  flow.heap_slot = -1;
  const int last = heap_.back();
  heap_.pop_back();
  if (last == id) return;
  place(slot, last);
  sift_up(slot);
  sift_down(static_cast<std::size_t>(flows_[static_cast<std::size_t>(last)].heap_slot));
}

void FlowNetwork::rerate_links(std::span<const LinkUse> uses, double now, int skip, bool started) {
  // A flow that shares several links with the changed one is re-rated once.
  ++pass_;
  for (const LinkUse& use : uses) {
    // A link whose share, with the changed flow on it, is no less than any flow's cap binds none
    // of its flows, before or after: their rates stay as they are (an HBM link under a few
    // threadblocks).
    const auto l = static_cast<std::size_t>(use.link);
    const double load = started ? load_[l] : load_[l] + use.weight;
    if (capacity_[l] / load >= max_cap_) continue;
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
  Flow& flow = flows_[static_cast<std::size_t>(id)];
  flow.uses.assign(uses.begin(), uses.end());
  flow.remaining = std::max(0.0, bytes);
  flow.rate = 0;
  flow.cap = cap > 0 ? cap : std::numeric_limits<double>::max();
  max_cap_ = std::max(max_cap_, flow.cap);
  flow.updated = now;
  for (const LinkUse& use : uses) {
    const auto l = static_cast<std::size_t>(use.link);
    load_[l] += use.weight;
    members_[l].push_back(id);
  }
  rerate_links(uses, now, id, true);
  rerate(id, now);
  return id;
}

std::optional<std::pair<double, int>> FlowNetwork::next_end() {
  if (heap_.empty()) return std::nullopt;
  const int id = heap_.front();
  return std::pair{flows_[static_cast<std::size_t>(id)].end, id};
}

void FlowNetwork::finish(double now, int id) {
  heap_remove(id);
  Flow& flow = flows_[static_cast<std::size_t>(id)];
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
  rerate_links(uses, now, -1, false);
  free_ids_.push_back(id);
}

}  // namespace weft::predict::detail
