// Private to the GPU runtime, host-only (unit-tested without a GPU): how a loaded algorithm sits
// in device memory, and the CTA descriptors the kernel reads. Given device addresses (which the
// CUDA code allocates and the transport exchanges), everything here is plain arithmetic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "weft/program/connection_layout.h"
#include "weft/program/device_abi.h"
#include "weft/program/device_program.h"
#include "weft/program/status.h"

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

// A connection whose other end is on another host goes through this process's proxy
// (docs/architecture.md §6): the kernel's end of it is in the proxy's memory, not in the peer's
// region. Device addresses, as the kernel uses them.
struct ProxiedSend {
  int channel = 0;
  int receiver = 0;
  char* fifo = nullptr;                  // staging slots, depth × slot bytes
  std::uint64_t* tail = nullptr;         // messages posted (the proxy polls it)
  const std::uint64_t* head = nullptr;   // messages the receiver consumed (the proxy raises it)
  std::uint64_t* descriptors = nullptr;  // message k's bytes at k mod depth
};

struct ProxiedReceive {
  int channel = 0;
  int sender = 0;
  const char* fifo = nullptr;           // the proxy delivers each message into its slot
  const std::uint64_t* tail = nullptr;  // the proxy raises it once a message is whole
  std::uint64_t* head = nullptr;        // messages consumed (the proxy forwards it)
};

struct LocalRankMemory {
  int rank = 0;
  const RankProgram* program = nullptr;
  std::uintptr_t private_base = 0;
  // regions[peer]: peer's shared region as this rank addresses it (its own included). For a peer
  // reached through the proxy only its arrival table is there, in the proxy's memory.
  std::vector<std::uintptr_t> regions;
  // The connections of this rank that go through the proxy; every other connection is in the
  // peers' regions.
  std::vector<ProxiedSend> proxied_sends;
  std::vector<ProxiedReceive> proxied_receives;
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
