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
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "weft/gpu/status.h"
#include "weft/ir/ir.h"

namespace weft::proxy {

struct WireDescriptor {
  std::uint64_t words[4] = {};
};
static_assert(sizeof(WireDescriptor) == 32);

// What a descriptor says.
struct Announced {
  ir::Connection connection;
  std::uint32_t slot = 0;
  std::uint32_t bytes = 0;
};

// Message `message` (k) of `connection`, `bytes` long, in slot k mod depth.
WireDescriptor make_descriptor(std::uint64_t message, const ir::Connection& connection,
                               std::uint32_t slot, std::uint32_t bytes);

// The inbox entry `seen`, where message `message` of `connection` is expected: nothing yet (the
// slot's last message's descriptor, or parts of it and of this one), this message as it was
// announced, or an error that names what is wrong with it (another connection, slot or message,
// more bytes than a slot holds).
gpu::Result<std::optional<Announced>> read_descriptor(const WireDescriptor& seen,
                                                      std::uint64_t message,
                                                      const ir::Connection& connection, int depth,
                                                      std::size_t slot_bytes);

}  // namespace weft::proxy
