// Links shared by concurrent transfers, as fluid flows (docs/architecture.md §7). A flow moves
// bytes over a set of links, each with a weight (a step that reads and writes its GPU's memory
// crosses the memory link twice), at most `cap` bytes per microsecond (what its threadblock can
// move).
//
// Two ways a link shares its bandwidth:
//  even   the link splits its bandwidth evenly among the weight on it (NVLink, PCIe, NICs,
//         the network: a link's flows there are alike, a channel's threadblocks on one NVLink);
//  fair   max-min fair against what the flows' other links allow them (a GPU's memory): a flow
//         that an even link or its cap holds back takes only what it can use, and the rest
//         goes to the others. A GPU's memory carries every one of its flows at once, fast and
//         slow alike (those that wait on a NIC and those that run on NVLink); an even split
//         there held the NVLink flows to the NIC flows' share, and a reduce-scatter across nodes
//         was predicted 10 % slower than the allgather on the same links.
// A flow's limit is the least of its cap and its even links' shares; a fair link's level is the
// water-filling of its capacity over its flows' limits (none while their limits fit); the flow
// runs at the least of its limit and its fair links' levels. Every link's flows together stay
// within its capacity.
//
// When a flow starts or ends, only the flows that share a link with it, and the flows of fair
// links whose level moves, change rate: a flow whose rate stays keeps its end. The starts and
// ends of one instant are settled together when the next end is asked for: a step's end is
// mostly followed by its threadblock's next start at the same time, and the flows of a busy GPU
// were re-rated (and their ends moved in the heap) once for each.
//
// Flows over the same links with the same weights and cap always run at the same rate, so they
// run as one bundle: the links, the water levels and the heap see bundles, not flows. A bundle
// counts the bytes each of its flows has been served since it formed; a flow ends when that count
// reaches the bytes it had been served when it joined plus its own (its target), so a new rate
// moves one bundle, not each of its flows. Large synthesized schedules run thousands of flows at
// once, some thirty to a bundle on average on eight A100 nodes (a rank's threadblocks towards one
// peer, across the tiles in flight): re-rating each flow of a link whose share moved was most of
// their prediction's time.
//
// Bundles' ends are kept in an indexed four-ary heap, one entry per running bundle that a new
// rate moves in place (a queue of superseded entries grew with every re-rating, and on a link
// shared by hundreds of flows, popping them was most of a prediction's time); a bundle keeps its
// own flows by target.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace weft::predict::detail {

struct LinkUse {
  int link = 0;
  double weight = 1;
};

class FlowNetwork {
 public:
  // Per link: bytes per microsecond it carries (GB/s × 1000), and whether it is shared max-min
  // fair (true) or evenly (false, the default for links `fair` leaves out).
  explicit FlowNetwork(std::vector<double> capacity, std::vector<bool> fair = {});

  // A flow of `bytes` over `uses` (each link at most once) at most `cap` bytes per microsecond,
  // from `now`. Returns its id. A flow with no links runs at `cap`. Starts and finishes may come
  // in any order within one instant; `now` never goes back.
  int start(double now, double bytes, std::span<const LinkUse> uses, double cap);
  // The earliest end among running flows: (time, id). Settles the rates first.
  std::optional<std::pair<double, int>> next_end();
  // Ends flow `id` at `now` (its next_end()).
  void finish(double now, int id);
  // Whether `now` is the instant open for starts and finishes and no flow ends by then, so that
  // more of it may join without settling the rates first. A flow's end moves with its rate but
  // stays after `now` while bytes are left, so the ends before settling answer.
  bool open_and_quiet(double now);

 private:
  // A running bundle on a link, with its flows' weight there, how many it runs and its limit:
  // the water level reads them for every bundle of a link, and looking them up in the bundle was
  // most of that.
  struct Member {
    int id = 0;
    double weight = 1;  // of each of its flows
    int count = 0;
    double limit = 0;
  };
  // A flow waiting in its bundle to be served `target` bytes (the bundle's count). Bundles keep
  // them in std heaps ordered by `later`, so the first by (target, id) is on top.
  struct Waiting {
    double target = 0;
    int id = 0;
    static bool later(const Waiting& x, const Waiting& y) {
      return x.target != y.target ? x.target > y.target : x.id > y.id;
    }
  };
  // A bundle's link, with its place in members_[link] in what would be LinkUse's padding: a
  // bundle re-limited reads its links and writes its limit into each link's member, and with the
  // places in a list of their own that was one more cache miss per bundle (64 H100 nodes'
  // alltoall through rail peers, 1 GB: 84 → 69 s).
  struct Use {
    int link = 0;
    std::uint32_t slot = 0;
    double weight = 1;
  };
  struct Bundle {
    std::vector<Use> uses;
    std::uint64_t key = 0;  // hash of its uses and cap (bundle_of)
    double cap = 0;
    double limit = 0;   // its cap and its even links' shares
    double rate = 0;    // bytes per microsecond, for each of its flows
    double served = 0;  // bytes per flow since it formed, at `updated`
    double updated = 0;
    double end = 0;              // when its first flow ends at its rate
    std::vector<Waiting> flows;  // a heap by Waiting::later
    // Its top, kept beside the bundle's rate and end: a new rate reads it, and in the heap's
    // own storage that was one more cache miss per bundle re-rated.
    Waiting first;
    int next_same_slot = -1;  // the next running bundle in its slot of the index
    bool indexed = false;     // running: in the index
  };
  struct Flow {
    int bundle = -1;  // -1: not running
    double target = 0;
  };

  void settle(Bundle& bundle, double now);
  // Its first flow's end at its rate, moved in the heap where it came earlier.
  void reschedule(int id);
  // The running bundle of these uses and cap, or a new one.
  int bundle_of(std::span<const LinkUse> uses, double cap);
  void drop_bundle(int id);
  // Opens the instant `now` for starts and finishes (settling an earlier one first).
  void begin(double now);
  // A link whose load moves in this instant: its load before is kept, for relimit_links.
  void mark_changed(int link);
  double even_limit(const Bundle& bundle) const;
  // What a flow of this limit and weight asks of fair link `link` (up to the whole link).
  double demand_on(double limit, double weight, int link) const;
  // After loads changed on the links marked: new limits for the bundles of the even links among
  // them, and for the bundles flows joined.
  void relimit_links();
  void relimit(int id);
  void touch(int id);
  void mark_dirty(int link);
  double water_level(int link);
  // New limits (relimit_links), new levels for the fair links marked, then new rates for every
  // bundle touched, at the open instant.
  void resolve();

  // The heap of running bundles by their first flow's (end, id): the order the simulator has
  // always broken ties in, so the earliest end is unique. An entry holds that key, or a bound
  // from below where it has moved later since (mend_top): comparisons read the heap alone.
  struct HeapEntry {
    double end = 0;
    int flow = 0;
    int bundle = 0;
    bool before(const HeapEntry& other) const {
      return end != other.end ? end < other.end : flow < other.flow;
    }
  };
  HeapEntry key_of(int bundle) const;
  // Four children per entry: half the depth of a binary heap, and the children of one entry
  // share a cache line or two.
  static constexpr std::size_t kArity = 4;
  void place(std::size_t slot, HeapEntry entry);
  void sift_up(std::size_t slot);
  void sift_down(std::size_t slot);
  void heap_update(int id);
  // Until the top entry's key is its bundle's: keys of bundles whose first end moved later are
  // only bounds from below (heap_update), and the earliest end must be exact.
  void mend_top();
  void heap_remove(int id);

  std::vector<double> capacity_;
  std::vector<char> fair_;
  std::vector<double> load_;                  // per link: weight of running flows
  std::vector<double> share_;                 // per even link: its capacity over its load
  std::vector<std::vector<Member>> members_;  // per link: running bundles on it
  std::vector<double> demand_;                // per fair link: what its flows' limits ask of it
  std::vector<double> level_;                 // per fair link: the water level (infinite: unbound)
  std::vector<double> least_;                 // per fair link: at most its flows' least limit
  std::vector<std::uint32_t> dirty_stamp_;    // per link: the pass that marked it
  std::vector<int> dirty_;                    // fair links whose demand moved in this pass
  std::vector<std::uint32_t> changed_stamp_;  // per link: the pass that changed its load
  std::vector<double> load_before_;           // per link changed: its load when the pass began
  std::vector<int> changed_;                  // links whose load moved in this pass
  std::vector<int> joined_;                   // bundles flows joined in this pass
  std::vector<Flow> flows_;
  std::vector<int> free_ids_;
  std::vector<Bundle> bundles_;
  std::vector<int> free_bundles_;
  // Running bundles by key: a slot per power of two, each the head of a chain through the
  // bundles (Bundle::next_same_slot). Bundles form and dissolve at nearly every step; a node-based
  // map allocated and freed one each time, a tenth of a small prediction's time.
  std::vector<int> index_slots_;
  std::size_t indexed_ = 0;
  std::size_t slot_of(std::uint64_t key) const {
    return static_cast<std::size_t>(key ^ (key >> 32)) & (index_slots_.size() - 1);
  }
  void index_insert(int id);
  void index_erase(int id);
  std::vector<HeapEntry> heap_;
  std::vector<int> heap_slot_;              // per bundle: its place in heap_, or -1 when not in it
  std::vector<std::uint32_t> limit_stamp_;  // per bundle: the pass that re-limited it
  std::vector<std::uint32_t> touch_stamp_;  // per bundle: the pass that touched it
  std::vector<int> touched_;                // bundles whose rate may have moved in this pass
  std::vector<int> pending_;                // scratch: bundles to re-limit (relimit_links)
  std::vector<std::pair<double, double>> fill_;  // scratch: (limit, weight) for water-filling
  std::uint32_t pass_ = 0;
  bool open_ = false;   // starts or finishes wait for resolve()
  double now_ = 0;      // the open instant
  double max_cap_ = 0;  // the largest cap of any flow started
};

}  // namespace weft::predict::detail
