// What the proxies say to each other about a message: the sender's proxy puts the message into
// the receiver's proxy memory, then signals this descriptor into the receiver's inbox (slot k mod
// depth for message k of the connection). The receiver's proxy believes a descriptor only after
// checking it against the connection it expects (docs/architecture.md §6): the connection, the
// slot, the message's number and its size must all be what that connection allows, so that a
// faulty or foreign peer cannot make it deliver bytes outside a slot or out of turn.
//
// Each of the four 8-byte words carries the message's flag (device::ll_flag) in its high half, as
// an LL line does: a network writes 8-byte words whole but need not write a put's words in
// order, and a descriptor whose words are not all of one message is not read.
//
// A message of at most kInlinePayload bytes travels inside its inbox entry instead, after the
// descriptor, 4 bytes to a word beside the same flag: one put, no fence, where a larger message
// takes a put, a fence and a second put (on TCP the fence and the second message are about a
// third of a small message's time). Its words are believed, as the descriptor's, only once all
// carry the message's flag.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "weft/ir/ir.h"
#include "weft/program/status.h"

namespace weft::proxy {

// Words 4 and 5 may carry an acknowledgement on the way back (piggybacked): the position, in
// the receiver's list of connections it sends on (proxy_layout.h, ProxyLayout::sends), of one
// it sends to this entry's sender on, plus one (0: none), and that connection's head, modulo
// 2^32. A separate put is then not needed for it.
struct WireDescriptor {
  std::uint64_t words[6] = {};
};
static_assert(sizeof(WireDescriptor) == 48);

inline constexpr std::size_t kInlinePayload = 256;
inline constexpr std::size_t kInlineWords = kInlinePayload / 4;

// One inbox entry (and one of the sender's sources of its puts): the descriptor, then the
// payload of an inline message.
struct WireEntry {
  WireDescriptor descriptor;
  std::uint64_t payload[kInlineWords] = {};
};
static_assert(sizeof(WireEntry) == 48 + 8 * kInlineWords);

// The bytes of an entry a put of `bytes` inline bytes covers.
inline constexpr std::size_t inline_entry_bytes(std::size_t bytes) {
  return sizeof(WireDescriptor) + 8 * ((bytes + 3) / 4);
}

// What a descriptor says.
struct Announced {
  ir::Connection connection;
  std::uint32_t slot = 0;
  std::uint32_t bytes = 0;
  bool inline_payload = false;  // the message is in the entry (WireEntry::payload)
  // A piggybacked acknowledgement: the receiver's send position (ProxyLayout::sends), or -1,
  // and the head, modulo 2^32.
  int acknowledged_send = -1;
  std::uint32_t head = 0;
};

// Message `message` (k) of `connection`, `bytes` long, in slot k mod depth; `inline_payload`:
// it travels in the entry (bytes ≤ kInlinePayload).
WireDescriptor make_descriptor(std::uint64_t message, const ir::Connection& connection,
                               std::uint32_t slot, std::uint32_t bytes,
                               bool inline_payload = false);
// Adds an acknowledgement to a descriptor of message `message`: the head of the receiver's
// send position `send` (ProxyLayout::sends).
void piggyback(WireDescriptor& descriptor, std::uint64_t message, int send, std::uint64_t head);
// Message k's bytes into `entry`'s payload words, each beside the message's flag.
void pack_inline(WireEntry& entry, std::uint64_t message, std::span<const std::byte> payload);
// The payload of inline message k of `bytes` bytes out of `words` (as they were read), into
// `out`; false while some word still carries another flag (the put is still landing).
bool unpack_inline(std::span<const std::uint64_t> words, std::uint64_t message, std::size_t bytes,
                   std::byte* out);

// The inbox entry `seen`, where message `message` of `connection` is expected: nothing yet (the
// slot's last message's descriptor, or parts of it and of this one), this message as it was
// announced, or an error that names what is wrong with it (another connection, slot or message,
// more bytes than a slot holds).
gpu::Result<std::optional<Announced>> read_descriptor(const WireDescriptor& seen,
                                                      std::uint64_t message,
                                                      const ir::Connection& connection, int depth,
                                                      std::size_t slot_bytes);

}  // namespace weft::proxy
