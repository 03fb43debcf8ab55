// Where a rank's connection state lives in its shared region (docs/architecture.md §5,
// "Connections"). A sender writes the message into a FIFO slot in the receiver's region and, for
// Simple, bumps the receiver's `tail` counter there; the receiver acknowledges consumed messages by
// writing the `head` counter in the sender's region. So every poll reads local memory and every
// remote access is a write. Each rank computes every rank's layout from the algorithm alone, so the
// only thing exchanged between ranks is one base address per region. A region opens with its
// arrival table, which every rank writes when a launch begins (so that timeouts start once all have
// arrived).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "weft/ir/ir.h"
#include "weft/program/options.h"

namespace weft::gpu {

// Counters get a 128-byte line each: a poller must not share a line with another writer.
inline constexpr std::size_t kCounterStride = 128;
// FIFOs start on this boundary (LL128 lines are 128 bytes; Simple copies 16-byte vectors).
inline constexpr std::size_t kFifoAlignment = 256;

struct ReceiveEntry {
  ir::Connection connection;    // receiver == the layout's rank
  std::size_t tail_offset = 0;  // uint64: messages posted by the sender (Simple)
  std::size_t fifo_offset = 0;  // depth × slot_bytes
};

struct SendEntry {
  ir::Connection connection;    // sender == the layout's rank
  std::size_t head_offset = 0;  // uint64: messages the receiver has consumed
};

struct RegionLayout {
  int rank = 0;
  // The arrival table (one uint64 per rank, kernel/device_abi.h) opens every region.
  std::size_t arrival_offset = 0;
  int nranks = 0;
  std::size_t slot_bytes = 0;
  int depth = 0;
  std::vector<ReceiveEntry> receives;  // sorted by (channel, sender)
  std::vector<SendEntry> sends;        // sorted by (channel, receiver)
  std::size_t total_bytes = 0;

  const ReceiveEntry* find_receive(int channel, int sender) const;
  const SendEntry* find_send(int channel, int receiver) const;
};

// The connections are the threadblocks' declared peers (send/recv attributes), so sender and
// receiver derive the same set. `proto` picks slot size and depth from `options`.
RegionLayout layout_region(const ir::Algorithm& algo, int rank, const ProtocolOptions& options);

}  // namespace weft::gpu
