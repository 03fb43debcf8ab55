#include "weft/proxy/proxy_layout.h"

#include <algorithm>

namespace weft::proxy {

namespace {

// Counters and words each get a line of their own: a poller must not share a line with a
// writer of something else (connection_layout.h's rule).
constexpr std::size_t kLine = gpu::kCounterStride;
constexpr std::size_t kFifoAlignment = gpu::kFifoAlignment;

std::size_t align_up(std::size_t value, std::size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

std::size_t index_in(const std::vector<int>& sorted, int value) {
  const auto it = std::lower_bound(sorted.begin(), sorted.end(), value);
  return it != sorted.end() && *it == value ? static_cast<std::size_t>(it - sorted.begin())
                                            : kNoOffset;
}

}  // namespace

const SendStage* ProxyLayout::find_send(const ir::Connection& connection) const {
  const auto it = std::lower_bound(
      sends.begin(), sends.end(), connection,
      [](const SendStage& stage, const ir::Connection& c) { return stage.connection < c; });
  return it != sends.end() && it->connection == connection ? &*it : nullptr;
}

const ReceiveStage* ProxyLayout::find_receive(const ir::Connection& connection) const {
  const auto it = std::lower_bound(
      receives.begin(), receives.end(), connection,
      [](const ReceiveStage& stage, const ir::Connection& c) { return stage.connection < c; });
  return it != receives.end() && it->connection == connection ? &*it : nullptr;
}

std::size_t ProxyLayout::arrival_out(int remote_rank) const {
  const std::size_t index = index_in(remote_ranks, remote_rank);
  if (index == kNoOffset) return kNoOffset;
  return arrivals_out + index * align_up(static_cast<std::size_t>(nranks) * 8, kLine);
}

std::size_t ProxyLayout::arrival_in(int local_rank, int from) const {
  const std::size_t index = index_in(local_ranks, local_rank);
  if (index == kNoOffset || from < 0 || from >= nranks) return kNoOffset;
  return arrivals_in + index * align_up(static_cast<std::size_t>(nranks) * 8, kLine) +
         static_cast<std::size_t>(from) * 8;
}

ProxyLayout layout_proxy(std::span<const gpu::RegionLayout> layouts, std::span<const int> owner,
                         int participant, const std::function<bool(int, int)>& crosses,
                         ir::Protocol protocol) {
  ProxyLayout layout;
  layout.participant = participant;
  layout.nranks = static_cast<int>(layouts.size());
  layout.lands_apart = protocol != ir::Protocol::Simple;
  for (const gpu::RegionLayout& region : layouts) {
    if (region.slot_bytes != 0) {
      layout.slot_bytes = region.slot_bytes;
      layout.depth = region.depth;
      break;
    }
  }
  for (int rank = 0; rank < layout.nranks; ++rank) {
    if (owner[static_cast<std::size_t>(rank)] == participant) layout.local_ranks.push_back(rank);
  }
  for (int rank = 0; rank < layout.nranks; ++rank) {
    if (owner[static_cast<std::size_t>(rank)] == participant) continue;
    const bool reached = std::any_of(layout.local_ranks.begin(), layout.local_ranks.end(),
                                     [&](int local) { return crosses(local, rank); });
    if (reached) layout.remote_ranks.push_back(rank);
  }
  for (int rank : layout.local_ranks) {
    const gpu::RegionLayout& region = layouts[static_cast<std::size_t>(rank)];
    for (const gpu::SendEntry& send : region.sends) {
      if (crosses(rank, send.connection.receiver)) layout.sends.push_back({send.connection});
    }
    for (const gpu::ReceiveEntry& receive : region.receives) {
      if (crosses(receive.connection.sender, rank)) layout.receives.push_back({receive.connection});
    }
  }
  const auto by_connection = [](const auto& a, const auto& b) {
    return a.connection < b.connection;
  };
  std::sort(layout.sends.begin(), layout.sends.end(), by_connection);
  std::sort(layout.receives.begin(), layout.receives.end(), by_connection);

  const auto depth = static_cast<std::size_t>(layout.depth);
  const std::size_t fifo_bytes = align_up(layout.slot_bytes * depth, kFifoAlignment);
  const std::size_t words = align_up(depth * 8, kLine);
  const std::size_t wire = align_up(depth * kWireEntryBytes, kLine);
  std::size_t offset = 0;
  // The FIFOs first, on their alignment; then the counters, a line each.
  for (SendStage& stage : layout.sends) {
    stage.fifo = offset;
    offset += fifo_bytes;
  }
  for (ReceiveStage& stage : layout.receives) {
    stage.fifo = offset;
    offset += fifo_bytes;
    if (layout.lands_apart) {
      stage.landing = offset;
      offset += fifo_bytes;
    } else {
      stage.landing = stage.fifo;
    }
  }
  for (SendStage& stage : layout.sends) {
    stage.tail = offset;
    stage.head = offset + kLine;
    stage.ack_inbox = offset + 2 * kLine;
    offset += 3 * kLine;
    stage.descriptors = offset;
    offset += words;
    stage.outgoing = offset;
    offset += wire;
  }
  for (ReceiveStage& stage : layout.receives) {
    stage.tail = offset;
    stage.head = offset + kLine;
    stage.ack_source = offset + 2 * kLine;
    offset += 3 * kLine;
    stage.inbox = offset;
    offset += wire;
  }
  const std::size_t table = align_up(static_cast<std::size_t>(layout.nranks) * 8, kLine);
  layout.arrivals_out = offset;
  offset += table * layout.remote_ranks.size();
  layout.arrivals_in = offset;
  offset += table * layout.local_ranks.size();
  layout.total_bytes = align_up(std::max<std::size_t>(offset, kLine), kFifoAlignment);
  return layout;
}

}  // namespace weft::proxy
