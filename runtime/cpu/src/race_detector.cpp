#include "race_detector.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include <fmt/format.h>

namespace weft::cpu::detail {

namespace {

constexpr std::size_t kRacesKept = 10;

// The inner loop of a dense join. Blocks of a fixed 8 entries, so that the compiler vectorises
// them at -O2 too (its cheapest cost model takes only loops of known length).
template <typename Clock>
void max_into(Clock* into, const Clock* from, std::size_t width) {
  constexpr std::size_t kBlock = 8;
  std::size_t h = 0;
  for (; h + kBlock <= width; h += kBlock) {
    Clock block[kBlock];
    for (std::size_t k = 0; k < kBlock; ++k) {
      block[k] = into[h + k] < from[h + k] ? from[h + k] : into[h + k];
    }
    std::memcpy(into + h, block, sizeof block);
  }
  for (; h < width; ++h) into[h] = into[h] < from[h] ? from[h] : into[h];
}

ir::BufferKind buffer_of(std::uint8_t slot) {
  switch (slot) {
    case kInputSlot:
      return ir::BufferKind::Input;
    case kOutputSlot:
      return ir::BufferKind::Output;
    case kScratchSlot:
      return ir::BufferKind::Scratch;
    default:
      return ir::BufferKind::None;
  }
}

}  // namespace

std::string RaceDetector::cannot_check(const Plan& plan, int tiles) {
  // Clocks count a threadblock's step executions in 32 bits.
  constexpr std::uint64_t kMaxExecutions = std::numeric_limits<std::uint32_t>::max();
  for (const PlanThreadblock& tb : plan.threadblocks) {
    if (static_cast<std::uint64_t>(tb.step_count) * static_cast<std::uint64_t>(tiles) >=
        kMaxExecutions) {
      return fmt::format(
          "{}: {} steps in {} tiles are too many step executions for the race check (under 2^32 "
          "per threadblock); run with fewer tiles or without the race check",
          ir::element_path(tb.rank, tb.id), tb.step_count, tiles);
    }
  }
  return {};
}

template <typename ClockT, typename IndexT>
BasicRaceDetector<ClockT, IndexT>::BasicRaceDetector(const Plan& plan, const ModeLayout& layout,
                                                     int tiles, int fifo_depth,
                                                     Components components)
    : plan_(plan), layout_(layout), tiles_(tiles), fifo_depth_(fifo_depth) {
  build_components(std::move(components));
  copy_of_.assign(plan_.threadblocks.size(), kNoCopy);

  // Dependency targets: a snapshot of the target's clock is kept per tile until every step that
  // waits on it has joined it, because the target may run on before its waiters do.
  target_of_step_.assign(layout_.steps.size(), -1);
  for (const PlanStep& step : layout_.steps) {
    if (step.dep_threadblock < 0) continue;
    const std::size_t at =
        plan_.threadblocks[static_cast<std::size_t>(step.dep_threadblock)].first_step +
        static_cast<std::size_t>(step.dep_step);
    int& target = target_of_step_[at];
    if (target < 0) {
      target = static_cast<int>(waiters_.size());
      waiters_.push_back(0);
    }
    ++waiters_[static_cast<std::size_t>(target)];
  }
  target_snapshots_.resize(waiters_.size());

  sent_.resize(plan_.connections.size());
  received_.resize(plan_.connections.size());
  sends_.assign(plan_.connections.size(), 0);
  receives_.assign(plan_.connections.size(), 0);

  std::size_t next = 0;
  location_base_.reserve(static_cast<std::size_t>(plan_.ngpus) * 3);
  for (const auto& extents : layout_.extents) {
    for (int chunks : extents) {
      location_base_.push_back(next);
      next += static_cast<std::size_t>(chunks) * static_cast<std::size_t>(tiles_);
    }
  }
  locations_.resize(next);
}

Components find_components(const Plan& plan, const ModeLayout& layout) {
  const std::size_t count = plan.threadblocks.size();
  // Union-find over the edges happens-before can use: both ends of a connection (messages and
  // back-pressure), a dependency's waiter and target.
  std::vector<std::uint32_t> parent(count);
  for (std::size_t g = 0; g < count; ++g) parent[g] = static_cast<std::uint32_t>(g);
  auto root = [&](std::uint32_t g) {
    while (parent[g] != g) {
      parent[g] = parent[parent[g]];
      g = parent[g];
    }
    return g;
  };
  auto unite = [&](int a, int b) {
    if (a < 0 || b < 0) return;
    const std::uint32_t ra = root(static_cast<std::uint32_t>(a));
    const std::uint32_t rb = root(static_cast<std::uint32_t>(b));
    if (ra != rb) parent[std::max(ra, rb)] = std::min(ra, rb);
  };
  for (const PlanConnection& c : plan.connections) {
    unite(c.sender_threadblock, c.receiver_threadblock);
  }
  for (std::size_t g = 0; g < count; ++g) {
    const PlanThreadblock& tb = plan.threadblocks[g];
    for (int s = 0; s < tb.step_count; ++s) {
      const int d = layout.steps[tb.first_step + static_cast<std::size_t>(s)].dep_threadblock;
      if (d >= 0) unite(static_cast<int>(g), d);
    }
  }
  Components out;
  out.of.assign(count, 0);
  out.index.assign(count, 0);
  std::vector<std::uint32_t> number(count, std::numeric_limits<std::uint32_t>::max());
  for (std::size_t g = 0; g < count; ++g) {
    const std::uint32_t r = root(static_cast<std::uint32_t>(g));
    if (number[r] == std::numeric_limits<std::uint32_t>::max()) {
      number[r] = static_cast<std::uint32_t>(out.width.size());
      out.width.push_back(0);
    }
    out.of[g] = number[r];
    out.index[g] = out.width[number[r]]++;
  }
  return out;
}

template <typename ClockT, typename IndexT>
void BasicRaceDetector<ClockT, IndexT>::build_components(Components components) {
  const std::size_t count = plan_.threadblocks.size();
  component_ = std::move(components.of);
  index_ = std::move(components.index);
  width_ = std::move(components.width);

  // Dense clocks cost width² per component: worth it while small (joins are then a vectorised
  // max), and bounded in all so that many mid-sized components cannot add up to gigabytes.
  constexpr std::size_t kDenseWidth = 2048;
  constexpr std::size_t kDenseBudget = std::size_t{1} << 26;  // clock entries
  std::vector<std::size_t> base(width_.size(), kSparse);
  std::size_t used = 0;
  for (std::size_t c = 0; c < width_.size(); ++c) {
    const std::size_t w = width_[c];
    if (w <= kDenseWidth && used + w * w <= kDenseBudget) {
      base[c] = used;
      used += w * w;
    }
  }
  clocks_.assign(used, 0);
  grouped_ = width_.size() > 1 &&
             std::any_of(base.begin(), base.end(), [](std::size_t b) { return b == kSparse; });
  dense_base_.assign(count, kSparse);
  sparse_.resize(count);
  for (std::size_t g = 0; g < count; ++g) {
    const std::size_t b = base[component_[g]];
    if (b != kSparse)
      dense_base_[g] = b + static_cast<std::size_t>(index_[g]) * width_[component_[g]];
  }

  // Each component's threadblocks, and the step executions they make in all.
  left_.assign(width_.size(), 0);
  member_start_.assign(width_.size() + 1, 0);
  for (std::size_t g = 0; g < count; ++g) {
    left_[component_[g]] += static_cast<std::uint64_t>(plan_.threadblocks[g].step_count) *
                            static_cast<std::uint64_t>(tiles_);
    ++member_start_[component_[g] + 1];
  }
  for (std::size_t c = 0; c < width_.size(); ++c) member_start_[c + 1] += member_start_[c];
  members_.resize(count);
  std::vector<std::uint32_t> next(member_start_.begin(), member_start_.end() - 1);
  for (std::size_t g = 0; g < count; ++g) {
    members_[next[component_[g]]++] = static_cast<std::uint32_t>(g);
  }
}

template <typename ClockT, typename IndexT>
void BasicRaceDetector<ClockT, IndexT>::release_component(std::uint32_t c) {
  for (std::uint32_t k = member_start_[c]; k < member_start_[c + 1]; ++k) {
    const std::uint32_t g = members_[k];
    std::vector<Entry>().swap(sparse_[g]);
    drop_copy(g);
  }
}

template <typename ClockT, typename IndexT>
typename BasicRaceDetector<ClockT, IndexT>::Clock BasicRaceDetector<ClockT, IndexT>::known(
    int g, int h) const {
  const auto ug = static_cast<std::size_t>(g);
  const auto uh = static_cast<std::size_t>(h);
  if (component_[ug] != component_[uh]) return 0;
  if (dense_base_[ug] != kSparse) return clocks_[dense_base_[ug] + index_[uh]];
  const auto& entries = sparse_[ug];
  const auto it = std::lower_bound(entries.begin(), entries.end(), index_[uh],
                                   [](const Entry& e, std::uint32_t i) { return e.index < i; });
  return it != entries.end() && it->index == index_[uh] ? it->clock : 0;
}

template <typename ClockT, typename IndexT>
void BasicRaceDetector<ClockT, IndexT>::tick(int g, Clock clock) {
  const auto ug = static_cast<std::size_t>(g);
  if (dense(g)) {
    dense_clock(g)[index_[ug]] = clock;
    return;
  }
  auto& entries = sparse_[ug];
  const auto it = std::lower_bound(entries.begin(), entries.end(), index_[ug],
                                   [](const Entry& e, std::uint32_t i) { return e.index < i; });
  if (it != entries.end() && it->index == index_[ug]) {
    it->clock = clock;
  } else {
    entries.insert(it, {static_cast<IndexT>(index_[ug]), clock});
  }
}

template <typename ClockT, typename IndexT>
typename BasicRaceDetector<ClockT, IndexT>::Held BasicRaceDetector<ClockT, IndexT>::snapshot(
    int g) {
  const auto ug = static_cast<std::size_t>(g);
  const Clock own = known(g, g);
  std::uint32_t& copy = copy_of_[ug];
  if (copy != kNoCopy) {
    ++stored_[copy].refs;
    return {copy, own};
  }
  std::uint32_t slot = 0;
  if (free_slots_.empty()) {
    slot = static_cast<std::uint32_t>(stored_.size());
    stored_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  // Assigning keeps the stored vectors' capacity: recycled slots do not allocate again.
  Stored& s = stored_[slot];
  if (dense(g)) {
    const Clock* now = dense_clock(g);
    s.dense.assign(now, now + width_[component_[ug]]);
  } else {
    s.sparse = sparse_[ug];
  }
  s.refs = 2;  // this snapshot, and the threadblock's until it learns something new
  copy = slot;
  return {slot, own};
}

template <typename ClockT, typename IndexT>
void BasicRaceDetector<ClockT, IndexT>::release(std::uint32_t slot) {
  if (--stored_[slot].refs == 0) free_slots_.push_back(slot);
}

template <typename ClockT, typename IndexT>
void BasicRaceDetector<ClockT, IndexT>::drop_copy(std::size_t g) {
  if (copy_of_[g] == kNoCopy) return;
  release(copy_of_[g]);
  copy_of_[g] = kNoCopy;
}

template <typename ClockT, typename IndexT>
void BasicRaceDetector<ClockT, IndexT>::join(int g, int owner, Held held) {
  // Edges join threadblocks of one component only, so the copy holds a clock of g's component.
  // Already ordered after the owner's event: every clock this one has joined was complete, so
  // it already holds everything that event knew. Otherwise g's own clock learns the owner's
  // event at least, so its stored copy no longer matches it.
  const Stored& from = stored_[held.slot];
  const std::uint32_t o = index_[static_cast<std::size_t>(owner)];
  if (known(g, owner) >= held.own) return;
  const auto ug = static_cast<std::size_t>(g);
  drop_copy(ug);
  // The copy holds what the owner knew when it was taken, its own clock then included; the
  // owner's clock at the event (`own`) may be later.
  if (dense(g)) {
    Clock* now = dense_clock(g);
    max_into(now, from.dense.data(), from.dense.size());
    now[o] = std::max(now[o], held.own);
    return;
  }
  auto& mine = sparse_[ug];
  merged_.clear();
  auto a = mine.begin();
  auto b = from.sparse.begin();
  while (a != mine.end() && b != from.sparse.end()) {
    if (a->index < b->index) {
      merged_.push_back(*a++);
    } else if (b->index < a->index) {
      merged_.push_back(*b++);
    } else {
      merged_.push_back({a->index, std::max(a->clock, b->clock)});
      ++a;
      ++b;
    }
  }
  merged_.insert(merged_.end(), a, mine.end());
  merged_.insert(merged_.end(), b, from.sparse.end());
  const auto it = std::lower_bound(merged_.begin(), merged_.end(), o,
                                   [](const Entry& e, std::uint32_t i) { return e.index < i; });
  if (it != merged_.end() && it->index == o) {
    it->clock = std::max(it->clock, held.own);
  } else {
    merged_.insert(it, {static_cast<IndexT>(o), held.own});
  }
  mine.swap(merged_);
}

template <typename ClockT, typename IndexT>
void BasicRaceDetector<ClockT, IndexT>::join_dependency(int g, int target, int owner, int tile) {
  auto& snapshots = target_snapshots_[static_cast<std::size_t>(target)];
  // The scheduler let this step run, so the target has run this tile and its snapshot is kept.
  if (snapshots.empty() || tile < snapshots.front().tile ||
      tile - snapshots.front().tile >= static_cast<int>(snapshots.size())) {
    return;
  }
  Snapshot& s = snapshots[static_cast<std::size_t>(tile - snapshots.front().tile)];
  join(g, owner, s.held);
  --s.remaining;
  while (!snapshots.empty() && snapshots.front().remaining == 0) {
    release(snapshots.front().held.slot);
    snapshots.pop_front();
  }
}

template <typename ClockT, typename IndexT>
std::size_t BasicRaceDetector<ClockT, IndexT>::location(int rank, std::uint8_t slot, int chunk,
                                                        int tile) const {
  return location_base_[static_cast<std::size_t>(rank) * 3 + slot] +
         static_cast<std::size_t>(chunk) * static_cast<std::size_t>(tiles_) +
         static_cast<std::size_t>(tile);
}

template <typename ClockT, typename IndexT>
void BasicRaceDetector<ClockT, IndexT>::read(int g, int step, int rank, std::uint8_t slot,
                                             int chunk, int tile) {
  Location& l = locations_[location(rank, slot, chunk, tile)];
  const auto me = static_cast<std::uint32_t>(g);
  const Epoch epoch{me, known(g, g)};
  // Ordered before this access: the same threadblock's, or one this threadblock has learnt of.
  auto before = [&](const Epoch& e) {
    return e.threadblock == me || e.clock <= known(g, static_cast<int>(e.threadblock));
  };
  if (l.write.clock != 0 && !before(l.write)) {
    found(rank, slot, chunk, tile, l.write, true, g, step, false);
  }
  if (l.shared_reads < 0) {
    if (l.read.clock == 0 || before(l.read)) {
      l.read = epoch;
      return;
    }
    // Two unordered reads: keep both until a write is checked against them.
    if (free_shared_reads_.empty()) {
      l.shared_reads = static_cast<std::int32_t>(shared_reads_.size());
      shared_reads_.emplace_back();
    } else {
      l.shared_reads = free_shared_reads_.back();
      free_shared_reads_.pop_back();
    }
    shared_reads_[static_cast<std::size_t>(l.shared_reads)] = {l.read, epoch};
    l.read = {};
    return;
  }
  // Reads ordered before this one add nothing a later write would not see through this one.
  auto& reads = shared_reads_[static_cast<std::size_t>(l.shared_reads)];
  std::erase_if(reads, before);
  reads.push_back(epoch);
  if (reads.size() == 1) {
    l.read = epoch;
    reads.clear();
    free_shared_reads_.push_back(l.shared_reads);
    l.shared_reads = -1;
  }
}

template <typename ClockT, typename IndexT>
void BasicRaceDetector<ClockT, IndexT>::write(int g, int step, int rank, std::uint8_t slot,
                                              int chunk, int tile) {
  Location& l = locations_[location(rank, slot, chunk, tile)];
  const auto me = static_cast<std::uint32_t>(g);
  auto unordered = [&](const Epoch& e) {
    return e.clock != 0 && e.threadblock != me &&
           e.clock > known(g, static_cast<int>(e.threadblock));
  };
  if (unordered(l.write)) found(rank, slot, chunk, tile, l.write, true, g, step, true);
  if (l.shared_reads >= 0) {
    auto& reads = shared_reads_[static_cast<std::size_t>(l.shared_reads)];
    for (const Epoch& e : reads) {
      if (unordered(e)) found(rank, slot, chunk, tile, e, false, g, step, true);
    }
    reads.clear();
    free_shared_reads_.push_back(l.shared_reads);
    l.shared_reads = -1;
  } else if (unordered(l.read)) {
    found(rank, slot, chunk, tile, l.read, false, g, step, true);
  }
  // Every earlier access is now either ordered before this write or reported: later accesses
  // need only be checked against it.
  l.write = {me, known(g, g)};
  l.read = {};
}

template <typename ClockT, typename IndexT>
void BasicRaceDetector<ClockT, IndexT>::found(int rank, std::uint8_t slot, int chunk, int tile,
                                              Epoch earlier, bool earlier_writes, int g, int step,
                                              bool writes) {
  ++race_count_;
  if (races_.size() >= kRacesKept) return;
  const PlanThreadblock& first = plan_.threadblocks[earlier.threadblock];
  const PlanThreadblock& second = plan_.threadblocks[static_cast<std::size_t>(g)];
  // The epoch is the execution's position (tile × steps + step) plus one.
  const int first_step =
      static_cast<int>((earlier.clock - 1) % static_cast<Clock>(first.step_count));
  // Keep distinct pairs of steps: the same pair races again in every chunk and tile it touches,
  // in either order.
  auto is = [](const RaceAccess& access, int threadblock, int s, bool w) {
    return access.threadblock == threadblock && access.step == s && access.writes == w;
  };
  for (const Race& r : races_) {
    if (r.rank != rank) continue;
    if ((is(r.earlier, first.id, first_step, earlier_writes) &&
         is(r.later, second.id, step, writes)) ||
        (is(r.later, first.id, first_step, earlier_writes) &&
         is(r.earlier, second.id, step, writes))) {
      return;
    }
  }
  auto type_of = [&](const PlanThreadblock& tb, int s) {
    return std::string(
        ir::to_string(layout_.steps[tb.first_step + static_cast<std::size_t>(s)].type));
  };
  Race race;
  race.rank = rank;
  race.buffer = buffer_of(slot);
  race.chunk = chunk;
  race.tile = tile;
  race.earlier = {first.id, first_step, type_of(first, first_step), earlier_writes};
  race.later = {second.id, step, type_of(second, step), writes};
  races_.push_back(std::move(race));
}

template <typename ClockT, typename IndexT>
void BasicRaceDetector<ClockT, IndexT>::on_step(int g, int tile, int step) {
  const PlanThreadblock& tb = plan_.threadblocks[static_cast<std::size_t>(g)];
  const std::size_t at = tb.first_step + static_cast<std::size_t>(step);
  const PlanStep& s = layout_.steps[at];
  // At most steps × tiles, which the clock's type holds (RaceDetector's choice, cannot_check).
  tick(g, static_cast<Clock>(static_cast<std::uint64_t>(tile) *
                                 static_cast<std::uint64_t>(tb.step_count) +
                             static_cast<std::uint64_t>(step) + 1));

  if (s.dep_threadblock >= 0) {
    const std::size_t target_at =
        plan_.threadblocks[static_cast<std::size_t>(s.dep_threadblock)].first_step +
        static_cast<std::size_t>(s.dep_step);
    join_dependency(g, target_of_step_[target_at], s.dep_threadblock, tile);
  }
  const bool receives = ir::receives(s.type);
  const bool sends = ir::sends(s.type);
  if (receives) {
    const auto c = static_cast<std::size_t>(tb.recv_connection);
    if (!sent_[c].empty()) {
      const Held held = sent_[c].front();
      sent_[c].pop_front();
      join(g, plan_.connections[c].sender_threadblock, held);
      release(held.slot);
    }
  }
  if (sends) {
    const auto c = static_cast<std::size_t>(tb.send_connection);
    // Message k + D waits for the receive of message k to free its slot.
    if (fifo_depth_ > 0 && sends_[c] >= static_cast<std::uint64_t>(fifo_depth_) &&
        !received_[c].empty()) {
      const Held held = received_[c].front();
      received_[c].pop_front();
      join(g, plan_.connections[c].receiver_threadblock, held);
      release(held.slot);
    }
    ++sends_[c];
  }

  // What the executor's step touches (schedule.cpp): the source of every step that reads one,
  // the destination of a local reduce before it is overwritten, and every destination written.
  if (ir::reads_source(s.type)) {
    for (int j = 0; j < s.count; ++j) read(g, step, tb.rank, s.src_slot, s.src_chunk + j, tile);
  }
  if (s.type == ir::StepType::Reduce) {
    for (int j = 0; j < s.count; ++j) read(g, step, tb.rank, s.dst_slot, s.dst_chunk + j, tile);
  }
  if (ir::writes_destination(s.type)) {
    for (int j = 0; j < s.count; ++j) write(g, step, tb.rank, s.dst_slot, s.dst_chunk + j, tile);
  }

  if (sends) sent_[static_cast<std::size_t>(tb.send_connection)].push_back(snapshot(g));
  if (receives && fifo_depth_ > 0) {
    // Kept only for a send that will wait on it: message k + D, if the connection carries it.
    const auto c = static_cast<std::size_t>(tb.recv_connection);
    const std::uint64_t total = static_cast<std::uint64_t>(plan_.connections[c].sends_per_tile) *
                                static_cast<std::uint64_t>(tiles_);
    if (receives_[c]++ + static_cast<std::uint64_t>(fifo_depth_) < total) {
      received_[c].push_back(snapshot(g));
    }
  }
  const int target = target_of_step_[at];
  if (target >= 0) {
    target_snapshots_[static_cast<std::size_t>(target)].push_back(
        {tile, snapshot(g), waiters_[static_cast<std::size_t>(target)]});
  }
  const std::uint32_t c = component_[static_cast<std::size_t>(g)];
  if (--left_[c] == 0) release_component(c);
}

template class BasicRaceDetector<std::uint16_t, std::uint16_t>;
template class BasicRaceDetector<std::uint32_t, std::uint32_t>;

RaceDetector::RaceDetector(const Plan& plan, const ModeLayout& layout, int tiles, int fifo_depth) {
  Components components = find_components(plan, layout);
  constexpr std::uint64_t kNarrow = std::numeric_limits<std::uint16_t>::max();
  bool narrow = std::all_of(components.width.begin(), components.width.end(),
                            [](std::uint32_t w) { return w <= kNarrow; });
  for (const PlanThreadblock& tb : plan.threadblocks) {
    narrow =
        narrow &&
        static_cast<std::uint64_t>(tb.step_count) * static_cast<std::uint64_t>(tiles) < kNarrow;
  }
  if (narrow) {
    narrow_.emplace(plan, layout, tiles, fifo_depth, std::move(components));
  } else {
    wide_.emplace(plan, layout, tiles, fifo_depth, std::move(components));
  }
}

}  // namespace weft::cpu::detail
