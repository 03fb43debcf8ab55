#include "weft/dsl/contents.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <unordered_map>

#include <fmt/format.h>

namespace weft::dsl {

namespace {

std::uint64_t mix(std::uint64_t x) {
  // splitmix64's finaliser: distinct chunks get unrelated hashes, so sums of different sets
  // collide only by chance (about 2^-64 per comparison).
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

ChunkId decode_leaf(ContentId content) {
  const std::int64_t code = -content - 2;
  return ChunkId{static_cast<int>(code / ContentStore::kMaxChunkIndex),
                 static_cast<int>(code % ContentStore::kMaxChunkIndex)};
}

}  // namespace

Fingerprint fingerprint_of(ChunkId chunk) {
  const auto key = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(chunk.rank)) << 32) |
                   static_cast<std::uint32_t>(chunk.chunk);
  return Fingerprint{mix(key), 1};
}

ContentId ContentStore::leaf(ChunkId chunk) {
  return -(static_cast<std::int64_t>(chunk.rank) * kMaxChunkIndex + chunk.chunk) - 2;
}

ContentId ContentStore::combine(ContentId a, ContentId b) {
  Fingerprint fp = fingerprint(a);
  fp += fingerprint(b);
  nodes_.push_back(Node{fp, a, b});
  return static_cast<ContentId>(nodes_.size() - 1);
}

Fingerprint ContentStore::fingerprint(ContentId content) const {
  if (content == kEmptySlot) return {};
  if (content < 0) return fingerprint_of(decode_leaf(content));
  return nodes_[static_cast<std::size_t>(content)].fingerprint;
}

std::vector<Contribution> ContentStore::expand(ContentId content) const {
  if (content == kEmptySlot) return {};
  // Nodes are created after their operands, so visiting reachable nodes from the highest index
  // down passes each node's multiplicity to its operands before they are visited: linear in the
  // reachable nodes even when a content is reduced into itself many times.
  std::vector<ContentId> reachable;
  std::unordered_map<ContentId, std::uint64_t> times;
  std::vector<ContentId> stack{content};
  times[content] = 0;
  while (!stack.empty()) {
    const ContentId top = stack.back();
    stack.pop_back();
    reachable.push_back(top);
    if (top < 0) continue;
    const Node& node = nodes_[static_cast<std::size_t>(top)];
    for (const ContentId child : {node.left, node.right}) {
      if (times.emplace(child, 0).second) stack.push_back(child);
    }
  }
  std::sort(reachable.begin(), reachable.end(), std::greater<>());
  times[content] = 1;
  std::vector<Contribution> result;
  for (const ContentId id : reachable) {
    const std::uint64_t n = times[id];
    if (id >= 0) {
      const Node& node = nodes_[static_cast<std::size_t>(id)];
      times[node.left] += n;
      times[node.right] += n;
    } else {
      const auto clamped = static_cast<int>(std::min<std::uint64_t>(n, INT32_MAX));
      result.push_back({decode_leaf(id), clamped});
    }
  }
  std::sort(result.begin(), result.end(),
            [](const Contribution& a, const Contribution& b) { return a.chunk < b.chunk; });
  return result;
}

std::string to_string(const std::vector<Contribution>& contributions) {
  std::string text = "{";
  for (std::size_t k = 0; k < contributions.size(); ++k) {
    const Contribution& c = contributions[k];
    text += fmt::format("{}r{}c{}", k ? ", " : "", c.chunk.rank, c.chunk.chunk);
    if (c.times != 1) text += fmt::format("×{}", c.times);
  }
  return text + "}";
}

std::string to_string(const std::vector<ChunkId>& chunks) {
  std::string text = "{";
  for (std::size_t k = 0; k < chunks.size(); ++k) {
    text += fmt::format("{}r{}c{}", k ? ", " : "", chunks[k].rank, chunks[k].chunk);
  }
  return text + "}";
}

}  // namespace weft::dsl
