// Symbolic buffer contents: which input chunks have been reduced into a slot. A copy shares its
// source's contents, a reduce makes a union node over two contents, so recording an operation
// costs O(1) per chunk whatever the rank count; sets are only spelled out when a report needs
// them. Comparison uses a fingerprint (a sum of per-chunk 64-bit hashes, and a count), which also
// tells a chunk reduced twice from one reduced once.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "weft/ir/collective_spec.h"

namespace weft::dsl {

struct Fingerprint {
  std::uint64_t hash = 0;
  std::uint64_t count = 0;
  friend bool operator==(const Fingerprint&, const Fingerprint&) = default;
  Fingerprint& operator+=(const Fingerprint& other) {
    hash += other.hash;
    count += other.count;
    return *this;
  }
};

Fingerprint fingerprint_of(ChunkId chunk);

// -1: the slot holds nothing; other negative values: a single input chunk; non-negative: a union
// node of the store.
using ContentId = std::int64_t;
inline constexpr ContentId kEmptySlot = -1;

// One contribution of a spelled-out content: `times` is 1 unless the chunk was reduced in more
// than once.
struct Contribution {
  ChunkId chunk;
  int times = 1;
  friend bool operator==(const Contribution&, const Contribution&) = default;
};

class ContentStore {
 public:
  // Ranks and input chunk indices a leaf can encode.
  static constexpr std::int64_t kMaxChunkIndex = std::int64_t{1} << 24;

  static ContentId leaf(ChunkId chunk);
  ContentId combine(ContentId a, ContentId b);  // both non-empty

  Fingerprint fingerprint(ContentId content) const;
  // Sorted by chunk; empty for an empty slot.
  std::vector<Contribution> expand(ContentId content) const;

  std::size_t nodes() const { return nodes_.size(); }

 private:
  struct Node {
    Fingerprint fingerprint;
    ContentId left;
    ContentId right;
  };
  std::vector<Node> nodes_;
};

// "{r0c1, r2c1}" ("r0c1×2" for a chunk reduced in twice).
std::string to_string(const std::vector<Contribution>& contributions);
std::string to_string(const std::vector<ChunkId>& chunks);

}  // namespace weft::dsl
