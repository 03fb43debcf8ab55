// Links shared by concurrent transfers, as fluid flows (docs/architecture.md §7). A flow moves
// bytes over a set of links, each with a weight (a step that reads and writes its GPU's memory
// crosses the memory link twice). Every link splits its bandwidth evenly among the weight on it,
// and a flow runs at the smallest share it gets on any of its links, capped by what its threadblock
// can move. When a flow starts or ends, only the flows that share a link with it change rate, so an
// event costs O(flows on its links), not O(all flows).
//
// Even split is not max-min fairness: bandwidth a flow cannot use because another link limits it
// is not handed to the others. On the machines modelled here a link's flows are alike (a
// channel's threadblocks on one NVLink, ranks on one emulated HBM), where the two agree.
#pragma once

#include <cstdint>
#include <optional>
#include <queue>
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
    std::uint32_t version = 0;
    bool active = false;
  };
  struct End {
    double time = 0;
    int flow = 0;
    std::uint32_t version = 0;
    bool operator>(const End& other) const {
      return time != other.time ? time > other.time : flow > other.flow;
    }
  };

  void settle(Flow& flow, double now);
  void rerate(int id, double now);
  void touch_links(std::span<const LinkUse> uses, double now);
  void rerate_links(std::span<const LinkUse> uses, double now, int skip);

  std::vector<double> capacity_;
  std::vector<double> load_;               // per link: weight of running flows
  std::vector<std::vector<int>> members_;  // per link: running flows on it
  std::vector<Flow> flows_;
  std::vector<int> free_ids_;
  std::priority_queue<End, std::vector<End>, std::greater<>> ends_;
  std::vector<std::uint32_t> stamp_;  // per flow: last rerate pass that saw it
  std::uint32_t pass_ = 0;
};

}  // namespace weft::predict::detail
