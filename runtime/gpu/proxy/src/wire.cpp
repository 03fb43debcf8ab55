#include "weft/proxy/wire.h"

#include <algorithm>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "weft/program/device_abi.h"

namespace weft::proxy {

namespace {

std::uint64_t word(std::uint32_t flag, std::uint32_t value) {
  return (static_cast<std::uint64_t>(flag) << 32) | value;
}
std::uint32_t flag_of(std::uint64_t w) {
  return static_cast<std::uint32_t>(w >> 32);
}
std::uint32_t value_of(std::uint64_t w) {
  return static_cast<std::uint32_t>(w);
}

// The slot word's top bit says the payload is inline; slots are far below it.
constexpr std::uint32_t kInlineBit = 0x80000000u;

}  // namespace

WireDescriptor make_descriptor(std::uint64_t message, const ir::Connection& connection,
                               std::uint32_t slot, std::uint32_t bytes, bool inline_payload) {
  const std::uint32_t flag = gpu::device::ll_flag(message);
  WireDescriptor d;
  d.words[0] = word(flag, bytes);
  d.words[1] = word(flag, slot | (inline_payload ? kInlineBit : 0u));
  d.words[2] = word(flag, static_cast<std::uint32_t>(connection.channel));
  d.words[3] = word(flag, (static_cast<std::uint32_t>(connection.sender) << 16) |
                              (static_cast<std::uint32_t>(connection.receiver) & 0xffffu));
  d.words[4] = word(flag, 0);
  d.words[5] = word(flag, 0);
  return d;
}

void piggyback(WireDescriptor& descriptor, std::uint64_t message, int send, std::uint64_t head) {
  const std::uint32_t flag = gpu::device::ll_flag(message);
  descriptor.words[4] = word(flag, static_cast<std::uint32_t>(send) + 1u);
  descriptor.words[5] = word(flag, static_cast<std::uint32_t>(head));
}

gpu::Result<std::optional<Announced>> read_descriptor(const WireDescriptor& seen,
                                                      std::uint64_t message,
                                                      const ir::Connection& connection, int depth,
                                                      std::size_t slot_bytes) {
  const std::uint32_t now = gpu::device::ll_flag(message);
  const auto d = static_cast<std::uint64_t>(depth);
  // The slot's previous message, or none (0: never written).
  const std::uint32_t before = message >= d ? gpu::device::ll_flag(message - d) : 0u;
  int current = 0;
  for (std::uint64_t w : seen.words) {
    const std::uint32_t flag = flag_of(w);
    if (flag == now) {
      ++current;
    } else if (flag != before) {
      return gpu::Status::error(
          gpu::ErrorCode::SystemError,
          fmt::format("a descriptor for channel {}, rank {} → rank {} in slot {} carries flag "
                      "{:#x}, neither message {}'s ({:#x}) nor the slot's last one's ({:#x})",
                      connection.channel, connection.sender, connection.receiver, message % d, flag,
                      message, now, before));
    }
  }
  if (current < 6) return std::optional<Announced>{};
  Announced a;
  a.bytes = value_of(seen.words[0]);
  a.slot = value_of(seen.words[1]) & ~kInlineBit;
  a.inline_payload = (value_of(seen.words[1]) & kInlineBit) != 0;
  a.connection.channel = static_cast<int>(value_of(seen.words[2]));
  a.connection.sender = static_cast<int>(value_of(seen.words[3]) >> 16);
  a.connection.receiver = static_cast<int>(value_of(seen.words[3]) & 0xffffu);
  a.acknowledged_send = static_cast<int>(value_of(seen.words[4])) - 1;
  a.head = value_of(seen.words[5]);
  const std::string what = fmt::format("message {} of channel {}, rank {} → rank {}", message,
                                       connection.channel, connection.sender, connection.receiver);
  if (a.connection != connection) {
    return gpu::Status::error(
        gpu::ErrorCode::SystemError,
        fmt::format("the descriptor for {} names channel {}, rank {} → rank {} instead", what,
                    a.connection.channel, a.connection.sender, a.connection.receiver));
  }
  if (a.slot >= static_cast<std::uint32_t>(depth) || a.slot != message % d) {
    return gpu::Status::error(
        gpu::ErrorCode::SystemError,
        fmt::format("the descriptor for {} names slot {}; the FIFO has {} slots and the message "
                    "belongs in slot {}",
                    what, a.slot, depth, message % d));
  }
  if (a.bytes > slot_bytes) {
    return gpu::Status::error(
        gpu::ErrorCode::SystemError,
        fmt::format("the descriptor for {} announces {} bytes; a slot holds {}", what, a.bytes,
                    slot_bytes));
  }
  if (a.inline_payload && a.bytes > kInlinePayload) {
    return gpu::Status::error(
        gpu::ErrorCode::SystemError,
        fmt::format("the descriptor for {} announces {} inline bytes; an entry holds {}", what,
                    a.bytes, kInlinePayload));
  }
  return std::optional<Announced>{a};
}

void pack_inline(WireEntry& entry, std::uint64_t message, std::span<const std::byte> payload) {
  const std::uint32_t flag = gpu::device::ll_flag(message);
  for (std::size_t w = 0; w * 4 < payload.size() && w < kInlineWords; ++w) {
    std::uint32_t data = 0;
    std::memcpy(&data, payload.data() + 4 * w, std::min<std::size_t>(4, payload.size() - 4 * w));
    entry.payload[w] = word(flag, data);
  }
}

bool unpack_inline(std::span<const std::uint64_t> words, std::uint64_t message, std::size_t bytes,
                   std::byte* out) {
  const std::uint32_t flag = gpu::device::ll_flag(message);
  const std::size_t count = (bytes + 3) / 4;
  if (count > words.size()) return false;
  for (std::size_t w = 0; w < count; ++w) {
    if (flag_of(words[w]) != flag) return false;
  }
  for (std::size_t w = 0; w < count; ++w) {
    const std::uint32_t data = value_of(words[w]);
    std::memcpy(out + 4 * w, &data, std::min<std::size_t>(4, bytes - 4 * w));
  }
  return true;
}

}  // namespace weft::proxy
