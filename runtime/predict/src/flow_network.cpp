#include "flow_network.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace weft::predict::detail {

namespace {
constexpr double kUnbound = std::numeric_limits<double>::infinity();
// How many bundles ahead their links are fetched, and twice that the bundles themselves: enough
// to overlap the misses, few enough that what is fetched is still there when it is read.
constexpr std::size_t kAhead = 8;
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

void FlowNetwork::settle(Bundle& bundle, double now) {
  bundle.served += bundle.rate * (now - bundle.updated);
  bundle.updated = now;
}

FlowNetwork::HeapEntry FlowNetwork::key_of(int id) const {
  const Bundle& bundle = bundles_[static_cast<std::size_t>(id)];
  return {bundle.end, bundle.first.id, id};
}

void FlowNetwork::reschedule(int id) {
  Bundle& bundle = bundles_[static_cast<std::size_t>(id)];
  const double left = std::max(0.0, bundle.first.target - bundle.served);
  bundle.end = bundle.updated + left / bundle.rate;
  heap_update(id);
}

namespace {

std::uint64_t mix(std::uint64_t hash, std::uint64_t value) {
  // hash_combine's step, then splitmix64's mixing: over a step's few links and weights.
  hash ^= value + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2);
  hash ^= hash >> 30;
  hash *= 0xbf58476d1ce4e5b9ULL;
  hash ^= hash >> 27;
  return hash;
}

std::uint64_t bits_of(double value) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

}  // namespace

int FlowNetwork::bundle_of(std::span<const LinkUse> uses, double cap) {
  std::uint64_t key = bits_of(cap);
  for (const LinkUse& use : uses) {
    key = mix(key, static_cast<std::uint64_t>(static_cast<std::uint32_t>(use.link)));
    key = mix(key, bits_of(use.weight));
  }
  if (!index_slots_.empty()) {
    for (int at = index_slots_[slot_of(key)]; at >= 0;
         at = bundles_[static_cast<std::size_t>(at)].next_same_slot) {
      const Bundle& bundle = bundles_[static_cast<std::size_t>(at)];
      if (bundle.key != key || bundle.cap != cap || bundle.uses.size() != uses.size()) continue;
      bool same = true;
      for (std::size_t k = 0; k < uses.size() && same; ++k) {
        same = bundle.uses[k].link == uses[k].link && bundle.uses[k].weight == uses[k].weight;
      }
      if (same) return at;
    }
  }
  int id = 0;
  if (free_bundles_.empty()) {
    id = static_cast<int>(bundles_.size());
    bundles_.emplace_back();
    limit_stamp_.push_back(0);
    touch_stamp_.push_back(0);
    heap_slot_.push_back(-1);
  } else {
    id = free_bundles_.back();
    free_bundles_.pop_back();
  }
  Bundle& bundle = bundles_[static_cast<std::size_t>(id)];
  bundle.uses.resize(uses.size());
  bundle.key = key;
  bundle.cap = cap;
  bundle.limit = 0;  // asks nothing of its fair links until relimit gives it its limit
  bundle.rate = 0;
  bundle.served = 0;
  bundle.updated = now_;
  bundle.end = 0;
  bundle.flows.clear();
  for (std::size_t k = 0; k < uses.size(); ++k) {
    const auto l = static_cast<std::size_t>(uses[k].link);
    bundle.uses[k] = {uses[k].link, static_cast<std::uint32_t>(members_[l].size()), uses[k].weight};
    members_[l].push_back({id, uses[k].weight, 0, 0});
  }
  index_insert(id);
  return id;
}

void FlowNetwork::index_insert(int id) {
  if (indexed_ + 1 > index_slots_.size() / 2) {
    // Half full at most: twice the slots, and every running bundle chained again.
    index_slots_.assign(std::max<std::size_t>(64, index_slots_.size() * 2), -1);
    for (std::size_t b = 0; b < bundles_.size(); ++b) {
      Bundle& running = bundles_[b];
      if (!running.indexed) continue;
      int& head = index_slots_[slot_of(running.key)];
      running.next_same_slot = head;
      head = static_cast<int>(b);
    }
  }
  Bundle& bundle = bundles_[static_cast<std::size_t>(id)];
  int& head = index_slots_[slot_of(bundle.key)];
  bundle.next_same_slot = head;
  bundle.indexed = true;
  head = id;
  ++indexed_;
}

void FlowNetwork::index_erase(int id) {
  Bundle& bundle = bundles_[static_cast<std::size_t>(id)];
  int* link = &index_slots_[slot_of(bundle.key)];
  while (*link != id) link = &bundles_[static_cast<std::size_t>(*link)].next_same_slot;
  *link = bundle.next_same_slot;
  bundle.next_same_slot = -1;
  bundle.indexed = false;
  --indexed_;
}

void FlowNetwork::drop_bundle(int id) {
  Bundle& bundle = bundles_[static_cast<std::size_t>(id)];
  heap_remove(id);
  for (const Use& use : bundle.uses) {
    // Out of the link's list in constant time: the last member takes this one's place.
    auto& list = members_[static_cast<std::size_t>(use.link)];
    const Member moved = list.back();
    list[use.slot] = moved;
    list.pop_back();
    if (moved.id != id) {
      for (Use& other : bundles_[static_cast<std::size_t>(moved.id)].uses) {
        if (other.link == use.link) other.slot = use.slot;
      }
    }
  }
  index_erase(id);
  bundle.uses.clear();
  free_bundles_.push_back(id);
}

double FlowNetwork::even_limit(const Bundle& bundle) const {
  double limit = bundle.cap;
  for (const Use& use : bundle.uses) {
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
  Bundle& bundle = bundles_[static_cast<std::size_t>(id)];
  const double limit = even_limit(bundle);
  if (limit == bundle.limit) return;
  const auto count = static_cast<double>(bundle.flows.size());
  for (const Use& use : bundle.uses) {
    const auto l = static_cast<std::size_t>(use.link);
    members_[l][use.slot].limit = limit;
    if (fair_[l] == 0) continue;
    least_[l] = std::min(least_[l], limit);
    demand_[l] += count * (demand_on(limit, use.weight, use.link) -
                           demand_on(bundle.limit, use.weight, use.link));
    mark_dirty(use.link);
  }
  bundle.limit = limit;
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
    // An even link whose load is back where it was (a threadblock's step ended and its next
    // began on the same links in the same instant) moves no flow's limit: its share is the
    // same, and what moved elsewhere is that link's to settle.
    if (load_before_[l] == load_[l]) continue;
    // Nor does one whose share, before the instant and after it, is no less than any flow's
    // cap: it limits none of its flows, before or after.
    const double heaviest = std::max(load_before_[l], load_[l]);
    if (heaviest <= 0 || capacity_[l] / heaviest >= max_cap_) continue;
    // A flow limited below the lesser of the link's shares, before and after, is limited
    // elsewhere either way.
    const double lesser = capacity_[l] / heaviest;
    for (const Member& member : members_[l]) {
      if (member.limit >= lesser) pending_.push_back(member.id);
    }
  }
  // In the order the links name them: a bundle's member elsewhere changes only when it is
  // re-limited itself, so these are the bundles, and the order, that re-limiting link by link
  // reached. On many GPUs each is a cache miss for the bundle and another for its links: fetched
  // ahead (its links once the bundle is in), they overlap (64 H100 nodes' alltoall through rail
  // peers at 64 MB: 11 % less time; fetching ahead for the new rates too gained nothing).
  for (std::size_t k = 0; k < pending_.size(); ++k) {
    if (k + 2 * kAhead < pending_.size()) {
      __builtin_prefetch(&bundles_[static_cast<std::size_t>(pending_[k + 2 * kAhead])]);
    }
    if (k + kAhead < pending_.size()) {
      __builtin_prefetch(bundles_[static_cast<std::size_t>(pending_[k + kAhead])].uses.data());
    }
    relimit(pending_[k]);
  }
  pending_.clear();
  for (const int id : joined_) {
    // A bundle whose flows all ended in the instant they joined it is gone.
    if (bundles_[static_cast<std::size_t>(id)].flows.empty()) continue;
    relimit(id);
    touch(id);
  }
  changed_.clear();
  joined_.clear();
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
  // The reading is most of a large allgather's prediction (1,024 H100 GPUs): demand_on
  // written out with the capacity read once, and each member's side of the hint chosen
  // without a branch (a sum gains +0.0 and a bound its own value on the other side, which moves
  // neither: every sum is the same).
  for (const Member& member : members_[l]) {
    const auto count = static_cast<double>(member.count);
    const double limit = member.limit;
    demand += count * std::min(member.weight * limit, capacity);
    least = std::min(least, limit);
    const bool below = limit < hint;
    below_hint += below ? limit * member.weight * count : 0.0;
    highest_below = std::max(highest_below, below ? limit : 0.0);
    above_hint += below ? 0.0 : member.weight * count;
    lowest_above = std::min(lowest_above, below ? kUnbound : limit);
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
  for (const Member& member : members_[l]) {
    fill_.emplace_back(member.limit, member.weight * static_cast<double>(member.count));
  }
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
    Bundle& bundle = bundles_[static_cast<std::size_t>(id)];
    double rate = bundle.limit;
    for (const Use& use : bundle.uses) {
      const auto l = static_cast<std::size_t>(use.link);
      if (fair_[l] != 0) rate = std::min(rate, level_[l]);
    }
    // A bundle whose rate stays keeps its end; its bytes are settled only when its rate changes
    // (a flow that joined it moved its end already).
    if (heap_slot_[static_cast<std::size_t>(id)] >= 0 && rate == bundle.rate) continue;
    settle(bundle, now);
    bundle.rate = rate;
    reschedule(id);
  }
  dirty_.clear();
  touched_.clear();
}

void FlowNetwork::place(std::size_t slot, HeapEntry entry) {
  heap_[slot] = entry;
  heap_slot_[static_cast<std::size_t>(entry.bundle)] = static_cast<int>(slot);
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
  const HeapEntry key = key_of(id);
  const int slot = heap_slot_[static_cast<std::size_t>(id)];
  if (slot < 0) {
    heap_.push_back(key);
    sift_up(heap_.size() - 1);
    return;
  }
  // A later key leaves the entry where it is: it stays a bound from below, mended only if it
  // comes to the top (mend_top). A bundle is mostly re-rated several times, slower each time a
  // flow joins its links, before it is the earliest, and sifting it down each time was wasted.
  const auto at = static_cast<std::size_t>(slot);
  if (key.before(heap_[at])) {
    heap_[at] = key;
    sift_up(at);
  }
}

void FlowNetwork::mend_top() {
  while (!heap_.empty()) {
    HeapEntry& top = heap_.front();
    const HeapEntry key = key_of(top.bundle);
    if (key.end == top.end && key.flow == top.flow) return;
    top = key;
    sift_down(0);
  }
}

void FlowNetwork::heap_remove(int id) {
  const int slot = heap_slot_[static_cast<std::size_t>(id)];
  if (slot < 0) return;
  heap_slot_[static_cast<std::size_t>(id)] = -1;
  const HeapEntry last = heap_.back();
  heap_.pop_back();
  if (last.bundle == id) return;
  const auto at = static_cast<std::size_t>(slot);
  place(at, last);
  sift_up(at);
  sift_down(static_cast<std::size_t>(heap_slot_[static_cast<std::size_t>(last.bundle)]));
}

int FlowNetwork::start(double now, double bytes, std::span<const LinkUse> uses, double cap) {
  begin(now);
  cap = cap > 0 ? cap : std::numeric_limits<double>::max();
  max_cap_ = std::max(max_cap_, cap);
  const int b = bundle_of(uses, cap);
  Bundle& bundle = bundles_[static_cast<std::size_t>(b)];
  settle(bundle, now);
  int id = 0;
  if (free_ids_.empty()) {
    id = static_cast<int>(flows_.size());
    flows_.emplace_back();
  } else {
    id = free_ids_.back();
    free_ids_.pop_back();
  }
  Flow& flow = flows_[static_cast<std::size_t>(id)];
  flow.bundle = b;
  flow.target = bundle.served + std::max(0.0, bytes);
  bundle.flows.push_back({flow.target, id});
  std::push_heap(bundle.flows.begin(), bundle.flows.end(), Waiting::later);
  bundle.first = bundle.flows.front();
  for (const Use& use : bundle.uses) {
    const auto l = static_cast<std::size_t>(use.link);
    mark_changed(use.link);
    load_[l] += use.weight;
    ++members_[l][use.slot].count;
    // It asks what its bundle's flows ask; a new bundle's limit is 0 until relimit.
    if (fair_[l] != 0) demand_[l] += demand_on(bundle.limit, use.weight, use.link);
  }
  // Running already: the new flow may be its first to end.
  if (heap_slot_[static_cast<std::size_t>(b)] >= 0 && bundle.first.id == id) {
    reschedule(b);
  }
  joined_.push_back(b);
  return id;
}

std::optional<std::pair<double, int>> FlowNetwork::next_end() {
  if (open_) resolve();
  mend_top();
  if (heap_.empty()) return std::nullopt;
  return std::pair{heap_.front().end, heap_.front().flow};
}

bool FlowNetwork::open_and_quiet(double now) {
  if (!open_ || now != now_) return false;
  mend_top();
  return heap_.empty() || heap_.front().end > now;
}

void FlowNetwork::finish(double now, int id) {
  begin(now);
  Flow& flow = flows_[static_cast<std::size_t>(id)];
  const int b = flow.bundle;
  Bundle& bundle = bundles_[static_cast<std::size_t>(b)];
  // Mostly its bundle's first; a flow ended early is looked for.
  if (bundle.first.id == id) {
    std::pop_heap(bundle.flows.begin(), bundle.flows.end(), Waiting::later);
    bundle.flows.pop_back();
  } else {
    std::erase_if(bundle.flows, [id](const Waiting& w) { return w.id == id; });
    std::make_heap(bundle.flows.begin(), bundle.flows.end(), Waiting::later);
  }
  if (!bundle.flows.empty()) bundle.first = bundle.flows.front();
  flow.bundle = -1;
  free_ids_.push_back(id);
  settle(bundle, now);
  for (const Use& use : bundle.uses) {
    const auto l = static_cast<std::size_t>(use.link);
    mark_changed(use.link);
    --members_[l][use.slot].count;
    const bool alone = bundle.flows.empty() && members_[l].size() == 1;
    load_[l] = alone ? 0 : std::max(0.0, load_[l] - use.weight);
    if (fair_[l] != 0) demand_[l] -= demand_on(bundle.limit, use.weight, use.link);
  }
  if (bundle.flows.empty()) {
    drop_bundle(b);
  } else {
    reschedule(b);  // its next flow ends later: the heap's key stays a bound until mended
  }
}

}  // namespace weft::predict::detail
