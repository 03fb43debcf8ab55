// Data races by happens-before (docs/architecture.md §2.4–2.6), checked as the scheduler runs. The
// order that holds on every GPU is: program order within a threadblock (tile after tile); a step's
// dependency (the waiting execution follows the depended-on step's execution in the same tile);
// a message's receive follows its send; and with FIFO depth D > 0 the send of message k+D on a
// connection follows the receive of message k (the receiver frees the slot). Each of these pairs
// is fixed by the plan, S, T and D alone, never by the interleaving, so the relation, and whether
// two accesses race, is the same in every run: one run decides race freedom for its S, T, D and
// call mode.
//
// Nor does race freedom depend on S or T. A location is one tile of a chunk, so only accesses of
// one tile can race. The edges among one tile's step executions are those of a one-tile run (its
// messages are the same pairs, its FIFO edges the same ones shifted by the tiles before), and
// the other tiles only add order to them (program order from an earlier tile, a FIFO edge from
// an earlier tile's receive): a one-tile run without races has none at any tile count. And the
// first k tiles of a run are a k-tile run, since no edge leads back to an earlier tile: a race
// at k tiles is one at more. So verify() checks a call mode's races at its fewest tiles only.
//
// Memory is shared only within a rank, but messages carry order across ranks and back (tb A of
// rank 0 sends to rank 1, which sends to tb B of rank 0: B follows A), so a threadblock's clock
// must know about threadblocks of other ranks too. It need not know about all of them: every
// edge above joins two threadblocks that share a connection or a dependency, so happens-before
// never leaves a component of the graph those make (union-find over connections and
// dependencies). Two threadblocks of different components are never ordered, and a clock holds
// entries only for its own component: a dense array indexed by the position in the component
// when the component is small (a ring channel: its ranks' threadblocks), otherwise a sorted list
// of the entries actually known (a large component in which order travels only a few hops, like
// a hierarchical alltoall's). Both are exact vector clocks of the component, so the verdicts are
// those of clocks over every threadblock; only the cost changes, from threadblocks² to about
// threadblocks × what each one can learn.
//
// Per location (rank, buffer after in-place aliasing, chunk, tile) the last write and the reads
// since are kept as epochs, FastTrack-style, so an access costs O(1) unless reads of one location
// are concurrent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "weft/cpu/cpu_executor.h"
#include "weft/cpu/light_queue.h"
#include "weft/cpu/plan.h"

namespace weft::cpu::detail {

// The threadblocks happens-before can join (union-find over connections and dependencies).
struct Components {
  std::vector<std::uint32_t> of;     // per threadblock: its component
  std::vector<std::uint32_t> index;  // per threadblock: its position in its component
  std::vector<std::uint32_t> width;  // per component: its threadblocks
};
Components find_components(const Plan& plan, const ModeLayout& layout);

// The detector with clocks of type `ClockT` and positions in a component of type `IndexT`.
template <typename ClockT, typename IndexT>
class BasicRaceDetector {
 public:
  BasicRaceDetector(const Plan& plan, const ModeLayout& layout, int tiles, int fifo_depth,
                    Components components);

  void on_step(int g, int tile, int step);

  std::size_t race_count() const { return race_count_; }
  const std::vector<Race>& races() const { return races_; }
  // Per threadblock its component, where the scheduler should run the components one after
  // another; null where it need not (RaceDetector::groups).
  const std::vector<std::uint32_t>* groups() const { return grouped_ ? &component_ : nullptr; }

 private:
  using Clock = ClockT;
  // One access: a threadblock (global number) and its own clock then; clock 0 means none.
  struct Epoch {
    std::uint32_t threadblock = 0;
    Clock clock = 0;
  };
  struct Location {
    Epoch write;
    Epoch read;                      // the last read, while every read so far is ordered before it
    std::int32_t shared_reads = -1;  // otherwise an index into shared_reads_
  };
  // A sparse clock's entry: a threadblock by its position in the component, and its clock.
  struct Entry {
    IndexT index = 0;
    Clock clock = 0;
  };
  // A copy of a threadblock's clock kept for later joins, in its component's representation,
  // shared by every snapshot taken until the threadblock learns something new (refs counts them,
  // and the threadblock itself while the copy is its current one).
  struct Stored {
    std::vector<Clock> dense;
    std::vector<Entry> sparse;
    std::uint32_t refs = 0;
  };
  // A threadblock's clock at one execution: the shared copy of what it knew from others then,
  // and its own clock, which moves on every step without a copy.
  struct Held {
    std::uint32_t slot = 0;  // indexes stored_
    Clock own = 0;
  };
  // A stored clock of a dependency target's execution.
  struct Snapshot {
    int tile = 0;
    Held held;
    int remaining = 0;  // dependency targets: waiters that have not joined it yet
  };
  void build_components(Components components);
  // Every threadblock of component `c` has run its last step: nothing will join their clocks
  // or read them again (known() of another component's threadblock is 0 without them).
  void release_component(std::uint32_t c);
  bool dense(int g) const { return dense_base_[static_cast<std::size_t>(g)] != kSparse; }
  Clock* dense_clock(int g) { return clocks_.data() + dense_base_[static_cast<std::size_t>(g)]; }
  // What `g` knows of `h`'s clock (both of one rank): 0 when nothing orders any of h's steps
  // before g's current one.
  Clock known(int g, int h) const;
  void tick(int g, Clock clock);
  Held snapshot(int g);
  void release(std::uint32_t slot);
  // g no longer shares its stored copy: it has learnt something new, or its component is done.
  void drop_copy(std::size_t g);
  void join(int g, int owner, Held held);
  void join_dependency(int g, int target, int owner, int tile);
  std::size_t location(int rank, std::uint8_t slot, int chunk, int tile) const;
  void read(int g, int step, int rank, std::uint8_t slot, int chunk, int tile);
  void write(int g, int step, int rank, std::uint8_t slot, int chunk, int tile);
  void found(int rank, std::uint8_t slot, int chunk, int tile, Epoch earlier, bool earlier_writes,
             int g, int step, bool writes);

  static constexpr std::size_t kSparse = static_cast<std::size_t>(-1);

  const Plan& plan_;
  const ModeLayout& layout_;
  int tiles_;
  int fifo_depth_;

  std::vector<std::uint32_t> component_;     // per threadblock
  std::vector<std::uint32_t> index_;         // per threadblock: its position in its component
  std::vector<std::uint32_t> width_;         // per component: its threadblocks
  std::vector<std::uint64_t> left_;          // per component: step executions still to run
  std::vector<std::uint32_t> member_start_;  // per component: where its threadblocks start in
  std::vector<std::uint32_t> members_;       // the threadblocks, component by component
  bool grouped_ = false;                     // groups()
  std::vector<std::size_t> dense_base_;      // per threadblock: its clock in clocks_, or kSparse
  std::vector<Clock> clocks_;                // dense clocks, their component's width each
  std::vector<std::vector<Entry>> sparse_;   // per threadblock of a sparse component, by index
  std::vector<Entry> merged_;                // scratch of sparse joins

  std::vector<Stored> stored_;
  std::vector<std::uint32_t> free_slots_;
  // Per threadblock: the stored copy of its clock its next snapshot shares, or kNoCopy once it
  // has learnt something since (a join). Sends between receives share one copy: a root sending
  // its pieces to every peer, or a step that sends, frees a FIFO slot and is waited on.
  std::vector<std::uint32_t> copy_of_;
  static constexpr std::uint32_t kNoCopy = static_cast<std::uint32_t>(-1);

  std::vector<int> target_of_step_;  // per ModeLayout step: index of its dependency target, or -1
  std::vector<int> waiters_;         // per target: steps that depend on it
  std::vector<LightQueue<Snapshot>> target_snapshots_;  // per target, consecutive tiles

  std::vector<LightQueue<Held>> sent_;      // per connection: senders' clocks in flight
  std::vector<LightQueue<Held>> received_;  // per connection: receivers' clocks, for D
  std::vector<std::uint64_t> sends_;        // per connection: messages sent so far
  std::vector<std::uint64_t> receives_;     // per connection: messages received so far

  std::vector<std::size_t> location_base_;  // per rank and slot
  std::vector<Location> locations_;
  std::vector<std::vector<Epoch>> shared_reads_;
  std::vector<std::int32_t> free_shared_reads_;

  std::vector<Race> races_;
  std::size_t race_count_ = 0;
};

// The detector the scheduler runs: clocks and positions of 16 bits where every clock value and
// every component fits them (a step execution's clock is at most its threadblock's steps times
// the tiles), else of 32. The narrow one holds every sparse entry, stored copy and dense table in
// half the memory: at a thousand GPUs the clocks are most of a proof's memory.
class RaceDetector {
 public:
  // Empty when runs of `tiles` tiles can be checked; otherwise why not.
  static std::string cannot_check(const Plan& plan, int tiles);

  RaceDetector(const Plan& plan, const ModeLayout& layout, int tiles, int fifo_depth);

  // Threadblock `g` runs its step `step` of tile `tile`: called once per step execution, in the
  // order the scheduler runs them, before the next one.
  void on_step(int g, int tile, int step) {
    if (narrow_) {
      narrow_->on_step(g, tile, step);
    } else {
      wide_->on_step(g, tile, step);
    }
  }

  std::size_t race_count() const { return narrow_ ? narrow_->race_count() : wide_->race_count(); }
  // Where some component's clocks are sparse (their memory not bounded by the dense tables'),
  // per threadblock its component, for the scheduler to run one component after another: whether
  // a run has a race does not depend on the interleaving, and a finished component's clocks are
  // let go, so only one component's clocks and copies in flight are held at a time (on 512 GPUs
  // a synthesized allreduce's 64 components held every one of the call's network messages in
  // flight at once, each with a clock copy). Null otherwise: small runs keep the seeded order,
  // the same with the race check as without.
  const std::vector<std::uint32_t>* groups() const {
    return narrow_ ? narrow_->groups() : wide_->groups();
  }
  const std::vector<Race>& races() const { return narrow_ ? narrow_->races() : wide_->races(); }

 private:
  std::optional<BasicRaceDetector<std::uint16_t, std::uint16_t>> narrow_;
  std::optional<BasicRaceDetector<std::uint32_t, std::uint32_t>> wide_;
};

}  // namespace weft::cpu::detail
