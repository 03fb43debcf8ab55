// Small helpers shared by the library's algorithms.
#pragma once

#include <algorithm>

#include "weft/dsl/buffer.h"
#include "weft/dsl/registry.h"

namespace weft::algorithms::detail {

// A channel hint when the algorithm was asked for several channels; none otherwise, so that the
// compiler may add channels itself when the limits profile needs them.
inline dsl::Hints on_channel(int channel, int channels) {
  dsl::Hints hints;
  if (channels > 1) hints.channel = channel % channels;
  return hints;
}

inline bool in_place_or(const dsl::AlgorithmParams& params, bool fallback) {
  return params.in_place.value_or(fallback);
}

inline int chunks_or(const dsl::AlgorithmParams& params, int fallback) {
  return params.chunks > 0 ? params.chunks : fallback;
}

// The all-pairs algorithms' default chunks per rank block: one per rank, at most 8.
inline int allpairs_chunks(int ranks) {
  return std::clamp(ranks, 1, 8);
}

}  // namespace weft::algorithms::detail
