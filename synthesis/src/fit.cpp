#include "weft/synthesis/fit.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_set>

#include <fmt/format.h>

#include "weft/tuning/contenders.h"

namespace weft::synthesis {

namespace {

// Every rank's distinct connections one way, as (channel, peer) keys.
class Connections {
 public:
  explicit Connections(int ranks)
      : sends_(static_cast<std::size_t>(ranks)), receives_(static_cast<std::size_t>(ranks)) {}
  // Data moving from rank `from` to rank `to` on `channel`.
  void add(int from, int to, int channel) {
    sends_[static_cast<std::size_t>(from)].insert(key(channel, to));
    receives_[static_cast<std::size_t>(to)].insert(key(channel, from));
  }
  int most() const {
    std::size_t most = 0;
    for (std::size_t r = 0; r < sends_.size(); ++r) {
      most = std::max({most, sends_[r].size(), receives_[r].size()});
    }
    return static_cast<int>(most);
  }

 private:
  static std::uint64_t key(int channel, int peer) {
    return static_cast<std::uint64_t>(static_cast<std::uint32_t>(channel)) << 32 |
           static_cast<std::uint32_t>(peer);
  }
  std::vector<std::unordered_set<std::uint64_t>> sends_;
  std::vector<std::unordered_set<std::uint64_t>> receives_;
};

}  // namespace

int least_threadblocks(const Sketch& sketch, int folded) {
  const int channels = folded >= 1 && folded < sketch.channels ? folded : sketch.channels;
  Connections connections(sketch.ranks);
  const bool backwards = sketch.collective == ir::Collective::ReduceScatter ||
                         sketch.collective == ir::Collective::AllReduce;
  for (const Route& route : sketch.routes) {
    for (const Hop& hop : route.hops) {
      // Backwards a hop's partial moves from its `to` to its `from` (to_program); allreduce's
      // gather then runs it forwards on channels after the scatter's.
      const int channel = hop.channel % channels;
      if (backwards) connections.add(hop.to, hop.from, channel);
      if (!backwards || sketch.collective == ir::Collective::AllReduce) {
        connections.add(hop.from, hop.to, channel + (backwards ? channels : 0));
      }
    }
  }
  return connections.most();
}

Sketch fold_channels(const Sketch& sketch, int channels) {
  Sketch out = sketch;
  if (channels < 1 || channels >= sketch.channels) return out;
  out.channels = channels;
  for (Route& route : out.routes) {
    for (Hop& hop : route.hops) hop.channel %= channels;
  }
  return out;
}

std::optional<FittedVariant> fit_variant(const Variant& variant, int threadblocks, int budget,
                                         const CompileVariant& compile, int* hint) {
  if (budget < 1 || threadblocks <= budget) return std::nullopt;
  const auto folded_to = [&](int channels) {
    Variant folded = variant;
    folded.sketch = fold_channels(variant.sketch, channels);
    folded.sketch.name = fmt::format("{}_t{}", variant.sketch.name, budget);
    return folded;
  };
  // A compiled fold within the budget, or nothing.
  const auto try_fold = [&](Variant folded) -> std::optional<FittedVariant> {
    CompiledVariant c = compile(folded);
    if (!c.algorithm || tuning::busiest_threadblocks(*c.algorithm) > budget) return std::nullopt;
    return FittedVariant{std::move(folded), std::move(*c.algorithm)};
  };
  // The same sketch on another protocol: its threadblocks are the same, so one compile (or none,
  // where no fold fitted).
  if (hint != nullptr && *hint < 0) return std::nullopt;
  if (hint != nullptr && *hint > 0) {
    if (auto fitted = try_fold(folded_to(*hint))) return fitted;
  }
  // The folds whose connections alone fit, most channels first: the only ones worth a compile.
  // Folding merges connections, so where one channel's do not fit, no fold does (on a thousand
  // GPUs a rank's rail peers alone are past any budget, and a compile takes minutes). Only onto
  // a divisor of the channels, so that every channel takes as many of the old ones: other folds
  // fitted no better on the suite's machines, and cost compiles.
  std::vector<int> folds;
  const bool any = least_threadblocks(variant.sketch, 1) <= budget;
  for (int channels = variant.sketch.channels - 1; any && channels >= 1; --channels) {
    if (variant.sketch.channels % channels == 0 &&
        least_threadblocks(variant.sketch, channels) <= budget) {
      folds.push_back(channels);
    }
  }
  // Threadblocks grow with the channels, though not in proportion (a channel's routes may use
  // fewer connections than another's): the most channels that fit, by halving the range.
  std::optional<FittedVariant> best;
  std::size_t low = 0;  // folds[low..high) not yet ruled out; fewer channels further on
  std::size_t high = folds.size();
  int found = 0;
  while (low < high) {
    const std::size_t mid = low + (high - low) / 2;
    if (auto fitted = try_fold(folded_to(folds[mid]))) {
      best = std::move(fitted);
      found = folds[mid];
      high = mid;
    } else {
      low = mid + 1;
    }
  }
  if (hint != nullptr) *hint = best ? found : -1;
  return best;
}

std::vector<int> budget_channels(int budget, int most_channels) {
  std::vector<int> out;
  for (const int channels : {budget, budget / 2}) {
    if (channels >= 1 && channels < most_channels &&
        std::find(out.begin(), out.end(), channels) == out.end()) {
      out.push_back(channels);
    }
  }
  return out;
}

}  // namespace weft::synthesis
