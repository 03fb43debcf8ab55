// Private to weft_gpu: the torn-line probe. LL128 is correct only if a 128-byte line one warp
// stores is seen whole by a warp of another SM that loads it; NVIDIA documents that for NVLink,
// not for two SMs of one GPU. The probe makes writer CTAs rewrite lines (every word of a line the
// same value, round after round, with divergent warps) while reader CTAs on other SMs load them
// as the LL128 receiver does and count lines whose words disagree.
#pragma once

#include <cstdint>

#include "weft/program/status.h"

namespace weft::gpu {

struct Ll128ProbeOptions {
  std::uint32_t lines = 4096;  // 512 KB
  std::uint32_t rounds = 64;   // each writer rewrites every line this often
  std::uint32_t ctas = 0;      // 0: one per SM, half writers, half readers
  bool jitter = true;          // lanes wait a little before some stores and loads (divergence)
};

struct Ll128ProbeResult {
  std::uint64_t lines_read = 0;
  std::uint64_t torn = 0;  // lines whose words did not all equal their flag
};

Result<Ll128ProbeResult> probe_ll128(int device, const Ll128ProbeOptions& options);

}  // namespace weft::gpu
