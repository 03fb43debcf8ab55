#include <cstdint>

#include "weft/program/device_program.h"

namespace weft::gpu {

namespace {
// FNV-1a over fixed-width integers: stable across processes and builds, which std::hash is not.
class Hasher {
 public:
  void add(std::int64_t value) {
    auto bits = static_cast<std::uint64_t>(value);
    for (int byte = 0; byte < 8; ++byte) {
      hash_ ^= bits & 0xff;
      hash_ *= 0x100000001b3ULL;
      bits >>= 8;
    }
  }
  std::uint64_t value() const { return hash_; }

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};
}  // namespace

std::uint64_t fingerprint(const ir::Algorithm& algo) {
  Hasher h;
  h.add(static_cast<int>(algo.collective));
  h.add(static_cast<int>(algo.protocol));
  h.add(algo.nchannels);
  h.add(algo.nchunksperloop);
  h.add(algo.ngpus);
  h.add(algo.inplace);
  h.add(algo.outofplace);
  h.add(static_cast<std::int64_t>(algo.min_bytes));
  h.add(static_cast<std::int64_t>(algo.max_bytes));
  h.add(algo.root);
  h.add(static_cast<std::int64_t>(algo.gpus.size()));
  for (const auto& gpu : algo.gpus) {
    h.add(gpu.id);
    h.add(gpu.input_chunks);
    h.add(gpu.output_chunks);
    h.add(gpu.scratch_chunks);
    h.add(static_cast<std::int64_t>(gpu.threadblocks.size()));
    for (const auto& tb : gpu.threadblocks) {
      h.add(tb.id);
      h.add(tb.send);
      h.add(tb.recv);
      h.add(tb.channel);
      h.add(static_cast<std::int64_t>(tb.steps.size()));
      for (const auto& step : tb.steps) {
        h.add(static_cast<int>(step.type));
        h.add(static_cast<int>(step.srcbuf));
        h.add(step.srcoff);
        h.add(static_cast<int>(step.dstbuf));
        h.add(step.dstoff);
        h.add(step.count);
        h.add(step.depid);
        h.add(step.deps);
        h.add(step.hasdep);
      }
    }
  }
  return h.value();
}

}  // namespace weft::gpu
