// Links shared by concurrent transfers, as fluid flows (docs/architecture.md §7). A flow moves
// bytes over a set of links, each with a weight (a step that reads and writes its GPU's memory
// crosses the memory link twice). Every link splits its bandwidth evenly among the weight on it,
// and a flow runs at the smallest share it gets on any of its links, capped by what its threadblock
// can move. When a flow starts or ends, only the flows that share a link with it change rate, so an
// event costs O(flows on its links), not O(all flows).
//
// Ends are kept in an indexed binary heap, one entry per running flow that a new rate moves in
// place: a queue of superseded entries grew with every re-rating and, on a link shared by
// hundreds of flows (a node's NICs at 32 GPUs), popping them was most of a prediction's time.
//
// Even split is not max-min fairness: bandwidth a flow cannot use because another link limits it
// is not handed to the others. On the machines modelled here a link's flows are alike (a
// channel's threadblocks on one NVLink, ranks on one emulated HBM), where the two agree.
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
  // Per link: bytes per microsecond it carries (GB/s × 1000).
  explicit FlowNetwork(std::vector<double> capacity);

  // A flow of `bytes` over `uses` (each link at most once) at most `cap` bytes per microsecond,
  // from `now`. Returns its id. A flow with no links runs at `cap`.
  int start(double now, double bytes, std::span<const LinkUse> uses, double cap);
  // The earliest end among running flows: (time, id).
  std::optional<std::pair<double, int>> next_end();
  // Ends flow `id` at `now` (its next_end()).
  void finish(double now, int id);

 private:
  struct Flow {
    std::vector<LinkUse> uses;
    double remaining = 0;  // bytes at `updated`
    double rate = 0;       // bytes per microsecond
    double cap = 0;
    double updated = 0;
    double end = 0;      // when it ends at its rate
    int heap_slot = -1;  // its place in heap_, or -1 when not running
  };

  void settle(Flow& flow, double now);
  void rerate(int id, double now);
  // Re-rates the flows on `uses` after a flow started on them or ended (`started` false).
  void rerate_links(std::span<const LinkUse> uses, double now, int skip, bool started);

  // The heap of running flows by (end, id): the same order the simulator has always broken ties
  // in, so the earliest end is unique.
  bool earlier(int a, int b) const;
  void place(std::size_t slot, int id);
  void sift_up(std::size_t slot);
  void sift_down(std::size_t slot);
  void heap_update(int id);
  void heap_remove(int id);

  std::vector<double> capacity_;
  std::vector<double> load_;               // per link: weight of running flows
  std::vector<std::vector<int>> members_;  // per link: running flows on it
  std::vector<Flow> flows_;
  std::vector<int> free_ids_;
  std::vector<int> heap_;
  std::vector<std::uint32_t> stamp_;  // per flow: last rerate pass that saw it
  std::uint32_t pass_ = 0;
  double max_cap_ = 0;  // the largest cap of any flow started
};

}  // namespace weft::predict::detail
