// ExpectedOutputs: the collective spec's shared contributor lists.
#include <algorithm>

#include "weft/ir/collective_spec.h"

namespace weft {

ExpectedOutputs::ExpectedOutputs(std::initializer_list<std::vector<std::vector<ChunkId>>> ranks)
    : ExpectedOutputs(std::vector<std::vector<std::vector<ChunkId>>>(ranks)) {}

ExpectedOutputs::ExpectedOutputs(const std::vector<std::vector<std::vector<ChunkId>>>& ranks) {
  for (const auto& outputs : ranks) {
    add_rank(static_cast<int>(outputs.size()));
    for (std::size_t c = 0; c < outputs.size(); ++c) {
      set(this->ranks() - 1, static_cast<int>(c), outputs[c]);
    }
  }
}

void ExpectedOutputs::set_ranks(int ranks) {
  chunk_lists_.resize(static_cast<std::size_t>(std::max(ranks, 0)));
}

void ExpectedOutputs::add_rank(int chunks) {
  chunk_lists_.emplace_back(static_cast<std::size_t>(std::max(chunks, 0)), kUnspecified);
}

void ExpectedOutputs::set_chunks(int rank, int chunks) {
  chunk_lists_[static_cast<std::size_t>(rank)].resize(static_cast<std::size_t>(std::max(chunks, 0)),
                                                      kUnspecified);
}

int ExpectedOutputs::add_list(const ChunkId* ids, std::size_t count) {
  ids_.insert(ids_.end(), ids, ids + count);
  list_begin_.push_back(ids_.size());
  return lists() - 1;
}

void ExpectedOutputs::set(int rank, int chunk, const std::vector<ChunkId>& ids) {
  set_list(rank, chunk, ids.empty() ? kUnspecified : add_list(ids));
}

std::span<const ChunkId> ExpectedOutputs::items(int list) const {
  if (list < 0) return {};
  const auto k = static_cast<std::size_t>(list);
  return {ids_.data() + list_begin_[k], list_begin_[k + 1] - list_begin_[k]};
}

std::span<const ChunkId> ExpectedOutputs::at(int rank, int chunk) const {
  return items(list(rank, chunk));
}

bool ExpectedOutputs::operator==(const ExpectedOutputs& other) const {
  if (ranks() != other.ranks()) return false;
  for (int r = 0; r < ranks(); ++r) {
    if (chunks(r) != other.chunks(r)) return false;
    for (int c = 0; c < chunks(r); ++c) {
      const auto mine = at(r, c);
      const auto theirs = other.at(r, c);
      if (!std::equal(mine.begin(), mine.end(), theirs.begin(), theirs.end())) return false;
    }
  }
  return true;
}

}  // namespace weft
