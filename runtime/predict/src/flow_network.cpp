#include "flow_network.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace weft::predict::detail {

namespace {
constexpr double kUnbound = std::numeric_limits<double>::infinity();
}  // namespace

FlowNetwork::FlowNetwork(std::vector<double> capacity, std::vector<bool> fair)
    : capacity_(std::move(capacity)),
      fair_(capacity_.size(), 0),
      load_(capacity_.size(), 0),
      share_(capacity_.size(), kUnbound),
      members_(capacity_.size()),
      demand_(capacity_.size(), 0),
      level_(capacity_.size(), kUnbound),
      least_(capacity_.size(), kUnbound),
      dirty_stamp_(capacity_.size(), 0),
      changed_stamp_(capacity_.size(), 0),
      load_before_(capacity_.size(), 0) {
  for (std::size_t l = 0; l < fair.size() && l < fair_.size(); ++l) fair_[l] = fair[l] ? 1 : 0;
}

void FlowNetwork::settle(Flow& flow, double now) {
  flow.remaining = std::max(0.0, flow.remaining - flow.rate * (now - flow.updated));
  flow.updated = now;
}

double FlowNetwork::even_limit(const Flow& flow) const {
  double limit = flow.cap;
  for (const LinkUse& use : flow.uses) {
    const auto l = static_cast<std::size_t>(use.link);
    if (fair_[l] == 0) limit = std::min(limit, share_[l]);
  }
  return limit;
}

double FlowNetwork::demand_on(double limit, double weight, int link) const {
  return std::min(weight * limit, capacity_[static_cast<std::size_t>(link)]);
}

void FlowNetwork::touch(int id) {
  auto& stamp = touch_stamp_[static_cast<std::size_t>(id)];
  if (stamp == pass_) return;
  stamp = pass_;
  touched_.push_back(id);
}

void FlowNetwork::mark_dirty(int link) {
  auto& stamp = dirty_stamp_[static_cast<std::size_t>(link)];
  if (stamp == pass_) return;
  stamp = pass_;
  dirty_.push_back(link);
}

void FlowNetwork::relimit(int id) {
  auto& stamp = limit_stamp_[static_cast<std::size_t>(id)];
  if (stamp == pass_) return;
  stamp = pass_;
  Flow& flow = flows_[static_cast<std::size_t>(id)];
  const double limit = even_limit(flow);
  if (limit == flow.limit) return;
  for (std::size_t k = 0; k < flow.uses.size(); ++k) {
    const LinkUse& use = flow.uses[k];
    const auto l = static_cast<std::size_t>(use.link);
    members_[l][flow.slots[k]].limit = limit;
    if (fair_[l] == 0) continue;
    least_[l] = std::min(least_[l], limit);
    demand_[l] +=
        demand_on(limit, use.weight, use.link) - demand_on(flow.limit, use.weight, use.link);
    mark_dirty(use.link);
  }
  flow.limit = limit;
  touch(id);
}

void FlowNetwork::begin(double now) {
  if (open_ && now == now_) return;
  if (open_) resolve();
  ++pass_;
  open_ = true;
  now_ = now;
}

void FlowNetwork::mark_changed(int link) {
  const auto l = static_cast<std::size_t>(link);
  if (changed_stamp_[l] == pass_) return;
  changed_stamp_[l] = pass_;
  load_before_[l] = load_[l];
  changed_.push_back(link);
}

void FlowNetwork::relimit_links() {
  for (const int link : changed_) {
    const auto l = static_cast<std::size_t>(link);
    share_[l] = load_[l] > 0 ? capacity_[l] / load_[l] : kUnbound;
  }
  for (const int link : changed_) {
    const auto l = static_cast<std::size_t>(link);
    if (fair_[l] != 0) {
      mark_dirty(link);
      continue;
    }
    // An even link whose share, before the instant and after it, is no less than any flow's cap
    // limits none of its flows, before or after.
    const double heaviest = std::max(load_before_[l], load_[l]);
    if (heaviest <= 0 || capacity_[l] / heaviest >= max_cap_) continue;
    // A flow limited below the lesser of the link's shares, before and after, is limited
    // elsewhere either way.
    const double lesser = capacity_[l] / heaviest;
    for (const Member& member : members_[l]) {
      if (member.limit >= lesser) relimit(member.id);
    }
  }
  for (const int id : started_) {
    relimit(id);
    touch(id);
  }
  changed_.clear();
  started_.clear();
}

double FlowNetwork::water_level(int link) {
  const auto l = static_cast<std::size_t>(link);
  const double capacity = capacity_[l];
  // The running sum drifts by rounding: near the capacity it is summed again.
  if (demand_[l] <= capacity * (1 - 1e-9)) return kUnbound;
  // Mostly every flow of a busy link asks more than an even split of it (they are alike): the
  // level is that split. Then the flows need not be read: the running sums answer, with the
  // least limit kept as a bound from below (exact after each reading; a flow that leaves or
  // rises leaves it low, and the next reading mends it).
  const double even = capacity / load_[l];
  if (demand_[l] > capacity * (1 + 1e-9) && even <= least_[l]) return even;
  // Else the level mostly moves little: the flows split at the last level, those held below it
  // by their limits and those above, are tried first, in the same reading.
  const double hint = level_[l];
  double demand = 0;
  double least = kUnbound;
  double below_hint = 0;  // Σ weight × limit of the flows below the hint
  double above_hint = 0;  // Σ weight of the others
  double highest_below = 0;
  double lowest_above = kUnbound;
  for (const Member& member : members_[l]) {
    demand += demand_on(member.limit, member.weight, link);
    least = std::min(least, member.limit);
    if (member.limit < hint) {
      below_hint += member.limit * member.weight;
      highest_below = std::max(highest_below, member.limit);
    } else {
      above_hint += member.weight;
      lowest_above = std::min(lowest_above, member.limit);
    }
  }
  demand_[l] = demand;
  least_[l] = least;
  if (demand <= capacity) return kUnbound;
  if (even <= least) return even;
  if (above_hint > 0) {
    const double level = (capacity - below_hint) / above_hint;
    if (highest_below <= level && level <= lowest_above) return level;
  }
  fill_.clear();
  for (const Member& member : members_[l]) fill_.emplace_back(member.limit, member.weight);
  // The level λ where Σ weight × min(limit, λ) reaches the capacity: flows held below it take
  // their limit, the rest share what is left, each as much per unit of weight. Found by
  // selection on the limits (expected linear time; a sort per event was a fifth of an alltoall's
  // prediction on eight nodes): the median of the undecided limits is tried as λ, and the half
  // it rules out is settled.
  double left = capacity;   // for the undecided flows and those above the level
  double weight_above = 0;  // of flows known to be above the level
  auto first = fill_.begin();
  auto last = fill_.end();
  while (first != last) {
    const auto mid = first + (last - first) / 2;
    std::nth_element(first, mid, last);
    const double pivot = mid->first;
    double below = 0;
    for (auto it = first; it != mid; ++it) below += it->first * it->second;
    double weight_from_mid = 0;
    for (auto it = mid; it != last; ++it) weight_from_mid += it->second;
    if (below + (weight_from_mid + weight_above) * pivot >= left) {
      weight_above += weight_from_mid;  // the level is at most the pivot
      last = mid;
    } else {
      left -= below + mid->first * mid->second;  // the level is above the pivot
      first = mid + 1;
    }
  }
  return weight_above > 0 ? left / weight_above : kUnbound;
}

void FlowNetwork::resolve() {
  open_ = false;
  const double now = now_;
  relimit_links();
  for (const int link : dirty_) {
    const auto l = static_cast<std::size_t>(link);
    const double level = members_[l].empty() ? kUnbound : water_level(link);
    if (members_[l].empty()) demand_[l] = 0;
    if (level == level_[l]) continue;
    // A flow held below both levels by its limit keeps its rate.
    const double lower = std::min(level, level_[l]);
    level_[l] = level;
    for (const Member& member : members_[l]) {
      if (member.limit > lower) touch(member.id);
    }
  }
  for (const int id : touched_) {
    Flow& flow = flows_[static_cast<std::size_t>(id)];
    double rate = flow.limit;
    for (const LinkUse& use : flow.uses) {
      const auto l = static_cast<std::size_t>(use.link);
      if (fair_[l] != 0) rate = std::min(rate, level_[l]);
    }
    // A flow whose rate stays keeps its end; its bytes are settled only when its rate changes.
    if (heap_slot_[static_cast<std::size_t>(id)] >= 0 && rate == flow.rate) continue;
    settle(flow, now);
    flow.rate = rate;
    flow.end = now + flow.remaining / rate;
    heap_update(id);
  }
  dirty_.clear();
  touched_.clear();
}

void FlowNetwork::place(std::size_t slot, HeapEntry entry) {
  heap_[slot] = entry;
  heap_slot_[static_cast<std::size_t>(entry.id)] = static_cast<int>(slot);
}

void FlowNetwork::sift_up(std::size_t slot) {
  const HeapEntry entry = heap_[slot];
  while (slot > 0) {
    const std::size_t parent = (slot - 1) / kArity;
    if (!entry.before(heap_[parent])) break;
    place(slot, heap_[parent]);
    slot = parent;
  }
  place(slot, entry);
}

void FlowNetwork::sift_down(std::size_t slot) {
  const HeapEntry entry = heap_[slot];
  const std::size_t size = heap_.size();
  while (true) {
    const std::size_t first = kArity * slot + 1;
    if (first >= size) break;
    std::size_t child = first;
    const std::size_t last = std::min(size, first + kArity);
    for (std::size_t c = first + 1; c < last; ++c) {
      if (heap_[c].before(heap_[child])) child = c;
    }
    if (!heap_[child].before(entry)) break;
    place(slot, heap_[child]);
    slot = child;
  }
  place(slot, entry);
}

void FlowNetwork::heap_update(int id) {
  const double end = flows_[static_cast<std::size_t>(id)].end;
  const int slot = heap_slot_[static_cast<std::size_t>(id)];
  if (slot < 0) {
    heap_.push_back({end, id});
    sift_up(heap_.size() - 1);
    return;
  }
  // A later end leaves the entry where it is: its key stays a bound from below, mended only if
  // it comes to the top (mend_top). A flow is mostly re-rated several times, slower each time a
  // flow joins its links, before it is the earliest, and sifting it down each time was wasted.
  const auto at = static_cast<std::size_t>(slot);
  if (end < heap_[at].end) {
    heap_[at].end = end;
    sift_up(at);
  }
}

void FlowNetwork::mend_top() {
  while (!heap_.empty()) {
    HeapEntry& top = heap_.front();
    const double end = flows_[static_cast<std::size_t>(top.id)].end;
    if (end == top.end) return;
    top.end = end;
    sift_down(0);
  }
}

void FlowNetwork::heap_remove(int id) {
  const int slot = heap_slot_[static_cast<std::size_t>(id)];
  if (slot < 0) return;
  heap_slot_[static_cast<std::size_t>(id)] = -1;
  const HeapEntry last = heap_.back();
  heap_.pop_back();
  if (last.id == id) return;
  const auto at = static_cast<std::size_t>(slot);
  place(at, last);
  sift_up(at);
  sift_down(static_cast<std::size_t>(heap_slot_[static_cast<std::size_t>(last.id)]));
}

int FlowNetwork::start(double now, double bytes, std::span<const LinkUse> uses, double cap) {
  begin(now);
  int id = 0;
  if (free_ids_.empty()) {
    id = static_cast<int>(flows_.size());
    flows_.emplace_back();
    limit_stamp_.push_back(0);
    touch_stamp_.push_back(0);
    heap_slot_.push_back(-1);
  } else {
    id = free_ids_.back();
    free_ids_.pop_back();
  }
  Flow& flow = flows_[static_cast<std::size_t>(id)];
  flow.uses.assign(uses.begin(), uses.end());
  flow.slots.resize(uses.size());
  flow.remaining = std::max(0.0, bytes);
  flow.rate = 0;
  flow.limit = 0;  // asks nothing of its fair links until relimit gives it its limit
  flow.cap = cap > 0 ? cap : std::numeric_limits<double>::max();
  flow.updated = now;
  max_cap_ = std::max(max_cap_, flow.cap);
  for (std::size_t k = 0; k < uses.size(); ++k) {
    const auto l = static_cast<std::size_t>(uses[k].link);
    mark_changed(uses[k].link);
    load_[l] += uses[k].weight;
    flow.slots[k] = members_[l].size();
    members_[l].push_back({id, uses[k].weight});
  }
  started_.push_back(id);
  return id;
}

std::optional<std::pair<double, int>> FlowNetwork::next_end() {
  if (open_) resolve();
  mend_top();
  if (heap_.empty()) return std::nullopt;
  return std::pair{heap_.front().end, heap_.front().id};
}

bool FlowNetwork::open_and_quiet(double now) {
  if (!open_ || now != now_) return false;
  mend_top();
  return heap_.empty() || heap_.front().end > now;
}

void FlowNetwork::finish(double now, int id) {
  begin(now);
  heap_remove(id);
  Flow& flow = flows_[static_cast<std::size_t>(id)];
  for (std::size_t k = 0; k < flow.uses.size(); ++k) {
    const LinkUse& use = flow.uses[k];
    const auto l = static_cast<std::size_t>(use.link);
    mark_changed(use.link);
    // Out of the link's list in constant time: the last member takes this one's place.
    auto& list = members_[l];
    const std::size_t slot = flow.slots[k];
    const Member moved = list.back();
    list[slot] = moved;
    list.pop_back();
    if (moved.id != id) {
      Flow& other = flows_[static_cast<std::size_t>(moved.id)];
      for (std::size_t j = 0; j < other.uses.size(); ++j) {
        if (other.uses[j].link == use.link) other.slots[j] = slot;
      }
    }
    load_[l] = list.empty() ? 0 : std::max(0.0, load_[l] - use.weight);
    if (fair_[l] != 0) demand_[l] -= demand_on(flow.limit, use.weight, use.link);
  }
  flow.uses.clear();
  free_ids_.push_back(id);
}

}  // namespace weft::predict::detail
