// Private to the GPU runtime, host-only (unit-tested without a GPU): how a loaded algorithm sits
// in device memory, and the CTA descriptors the kernel reads. Given device addresses (which the
// CUDA code allocates and the transport exchanges), everything here is plain arithmetic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "weft/gpu/connection_layout.h"
#include "weft/gpu/device_abi.h"
#include "weft/gpu/device_program.h"
#include "weft/gpu/status.h"

namespace weft::gpu {

// One local rank's private device block: its flat program, the threadblocks' progress flags and
// their persistent state. Only the rank's own CTAs touch it.
struct PrivateLayout {
  std::size_t regions_offset = 0;  // every rank's region as this rank addresses it
  std::size_t steps_offset = 0;
  std::size_t dependencies_offset = 0;
  std::size_t sources_offset = 0;
  std::size_t flags_offset = 0;
  std::size_t states_offset = 0;
  std::size_t total_bytes = 0;
};

PrivateLayout layout_private(const RankProgram& program, int nranks);

// The bytes to copy to the start of the private block (program arrays and the regions'
// addresses at their offsets; flags and states are zero, as the kernel's first launch expects).
std::vector<std::byte> pack_private(const RankProgram& program, const PrivateLayout& layout,
                                    std::span<const std::uintptr_t> regions);

struct LocalRankMemory {
  int rank = 0;
  const RankProgram* program = nullptr;
  std::uintptr_t private_base = 0;
  // regions[peer]: peer's shared region as this rank addresses it (its own included).
  std::vector<std::uintptr_t> regions;
};

// One descriptor per threadblock with at least one step, local ranks in order. `layouts` holds
// every rank's region layout (indexed by rank). Fails with InvalidAlgorithm naming the
// threadblock when a connection it uses has no counterpart on the peer.
Result<std::vector<device::CtaDescriptor>> build_cta_descriptors(
    std::span<const LocalRankMemory> ranks, std::span<const RegionLayout> layouts);

// "rank 1 / tb 0 / step 3, tile 5: timed out after 5.0 s waiting for ..." from the kernel's
// error record.
std::string describe_failure(const device::ErrorReport& report);

}  // namespace weft::gpu
