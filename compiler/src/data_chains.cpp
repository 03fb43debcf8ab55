#include "weft/compiler/data_chains.h"

#include <algorithm>
#include <cstdint>
#include <map>

#include "flat_map.h"
#include "fusion_candidate.h"
#include "slot_space.h"

namespace weft::compiler {

namespace {

using ir::StepType;

// For each receive, the send fusion would join to it (fuse.cpp's test, without the per-channel
// pairing of connections that this plan is about to make room for); -1 where none.
std::vector<int> next_hops(const InstructionDag& dag, std::span<const char> keep_apart) {
  const detail::SlotSpace slots(dag);
  const auto& in = dag.instructions;
  std::vector<int> last_writer(slots.size(), -1);
  std::vector<int> next(dag.size(), -1);
  for (std::size_t k = 0; k < dag.size(); ++k) {
    const Instruction& send = in[k];
    if (send.type == StepType::Send && (keep_apart.empty() || !keep_apart[k])) {
      const int w = detail::joinable_receive(dag, slots, last_writer, next, send);
      if (w >= 0) next[static_cast<std::size_t>(w)] = static_cast<int>(k);
    }
    if (writes_destination(send)) {
      for (int j = 0; j < send.count; ++j) {
        last_writer[slots.slot(send.rank, send.dstbuf, send.dstoff + j)] = static_cast<int>(k);
      }
    }
  }
  return next;
}

std::uint64_t connection_key(int sender, int receiver, int channel) {
  return (static_cast<std::uint64_t>(sender) << 40) | (static_cast<std::uint64_t>(receiver) << 16) |
         static_cast<std::uint64_t>(channel);
}

}  // namespace

std::optional<InstructionDag> channel_per_data_chain(const InstructionDag& dag, int max_channels,
                                                     std::span<const char> keep_apart) {
  const std::size_t n = dag.size();
  const auto& in = dag.instructions;
  const std::vector<int> next = next_hops(dag, keep_apart);

  // Every edge of a chain (a message, or a receive to the send it will fuse with) points to a
  // later instruction, and every instruction has at most one edge in: one forward sweep finds
  // each chain's root, its first instruction.
  std::vector<int> root(n, -1);
  for (std::size_t k = 0; k < n; ++k) {
    if (in[k].send_to < 0 && in[k].recv_from < 0) continue;
    if (root[k] < 0) root[k] = static_cast<int>(k);
    if (in[k].send_to >= 0) root[static_cast<std::size_t>(in[k].send_to)] = root[k];
    if (next[k] >= 0) root[static_cast<std::size_t>(next[k])] = root[k];
  }

  // Per chain: its hint, and the pairs of ranks its messages pass.
  std::vector<int> hint(n, -1);
  int max_hint = -1;
  std::vector<std::vector<std::uint64_t>> pairs(n);
  bool unhinted = false;
  for (std::size_t k = 0; k < n; ++k) {
    if (root[k] < 0) continue;
    const auto r = static_cast<std::size_t>(root[k]);
    if (in[k].channel >= 0) {
      if (hint[r] >= 0 && hint[r] != in[k].channel) return std::nullopt;
      hint[r] = in[k].channel;
      max_hint = std::max(max_hint, in[k].channel);
    }
    if (in[k].send_to >= 0) pairs[r].push_back(connection_key(in[k].rank, in[k].send_peer, 0));
  }
  for (std::size_t r = 0; r < n; ++r) {
    if (root[r] == static_cast<int>(r) && hint[r] < 0) unhinted = true;
    std::sort(pairs[r].begin(), pairs[r].end());
    pairs[r].erase(std::unique(pairs[r].begin(), pairs[r].end()), pairs[r].end());
  }
  const int base = max_hint + 1;
  if (!unhinted || base >= max_channels) return std::nullopt;

  // Chains in program order of their first step, each on the lowest channel where no other chain
  // holds one of its pairs; chains over the same pairs share one.
  std::vector<int> channel(n, -1);
  std::map<std::vector<std::uint64_t>, int> by_pairs;
  detail::FlatMap holder;  // (sender, receiver, channel) → the chain holding that connection
  int highest = base;
  for (std::size_t r = 0; r < n; ++r) {
    if (root[r] != static_cast<int>(r) || hint[r] >= 0) continue;
    const auto& mine = pairs[r];
    const auto same = by_pairs.find(mine);
    int chosen = same != by_pairs.end() ? same->second : -1;
    if (chosen < 0) {
      std::size_t fewest = mine.size() + 1;
      for (int c = base; c < max_channels && fewest > 0; ++c) {
        std::size_t taken = 0;
        for (const std::uint64_t p : mine)
          taken += holder.find(p | static_cast<std::uint64_t>(c)) ? 1 : 0;
        if (taken < fewest) {
          fewest = taken;
          chosen = c;
        }
      }
      by_pairs.emplace(mine, chosen);
    }
    for (const std::uint64_t p : mine)
      holder.at_or(p | static_cast<std::uint64_t>(chosen), static_cast<int>(r));
    channel[r] = chosen;
    highest = std::max(highest, chosen);
  }
  if (highest == base) return std::nullopt;

  InstructionDag out = dag;
  for (std::size_t k = 0; k < n; ++k) {
    if (root[k] < 0) continue;
    // A hinted chain's unhinted steps take its hint too: fusion may leave them a chain of their
    // own, which must not fall into the unhinted class, now the lowest channel of this plan.
    const auto r = static_cast<std::size_t>(root[k]);
    out.instructions[k].channel = hint[r] >= 0 ? hint[r] : channel[r];
  }
  return out;
}

}  // namespace weft::compiler
