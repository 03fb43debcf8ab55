#include "weft/program/connection_layout.h"

#include <algorithm>

namespace weft::gpu {

namespace {
std::size_t align_up(std::size_t value, std::size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}
}  // namespace

const ReceiveEntry* RegionLayout::find_receive(int channel, int sender) const {
  for (const auto& entry : receives) {
    if (entry.connection.channel == channel && entry.connection.sender == sender) return &entry;
  }
  return nullptr;
}

const SendEntry* RegionLayout::find_send(int channel, int receiver) const {
  for (const auto& entry : sends) {
    if (entry.connection.channel == channel && entry.connection.receiver == receiver) {
      return &entry;
    }
  }
  return nullptr;
}

RegionLayout layout_region(const ir::Algorithm& algo, int rank, const ProtocolOptions& options) {
  RegionLayout layout;
  layout.rank = rank;
  layout.slot_bytes = options.slot_bytes;
  layout.depth = options.fifo_depth;
  const auto gpu = std::find_if(algo.gpus.begin(), algo.gpus.end(),
                                [rank](const ir::Gpu& g) { return g.id == rank; });
  if (gpu == algo.gpus.end()) return layout;

  for (const auto& tb : gpu->threadblocks) {
    if (tb.recv >= 0) layout.receives.push_back({{tb.channel, tb.recv, rank}, 0, 0});
    if (tb.send >= 0) layout.sends.push_back({{tb.channel, rank, tb.send}, 0});
  }
  const auto by_connection = [](const auto& a, const auto& b) {
    return a.connection < b.connection;
  };
  std::sort(layout.receives.begin(), layout.receives.end(), by_connection);
  std::sort(layout.sends.begin(), layout.sends.end(), by_connection);
  // Validation rejects two threadblocks on one connection; a duplicate here would be harmless
  // for the layout but is removed so that both sides count alike.
  const auto same = [](const auto& a, const auto& b) { return a.connection == b.connection; };
  layout.receives.erase(std::unique(layout.receives.begin(), layout.receives.end(), same),
                        layout.receives.end());
  layout.sends.erase(std::unique(layout.sends.begin(), layout.sends.end(), same),
                     layout.sends.end());

  layout.nranks = algo.ngpus;
  layout.arrival_offset = 0;
  std::size_t offset = align_up(
      static_cast<std::size_t>(std::max(algo.ngpus, 1)) * sizeof(std::uint64_t), kCounterStride);
  for (auto& entry : layout.receives) {
    entry.tail_offset = offset;
    offset += kCounterStride;
  }
  for (auto& entry : layout.sends) {
    entry.head_offset = offset;
    offset += kCounterStride;
  }
  offset = align_up(offset, kFifoAlignment);
  const std::size_t fifo_bytes =
      align_up(options.slot_bytes * static_cast<std::size_t>(options.fifo_depth), kFifoAlignment);
  for (auto& entry : layout.receives) {
    entry.fifo_offset = offset;
    offset += fifo_bytes;
  }
  layout.total_bytes = std::max<std::size_t>(offset, kFifoAlignment);
  return layout;
}

}  // namespace weft::gpu
