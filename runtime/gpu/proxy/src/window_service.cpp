// What the proxy's thread does for one window on each pass (window_state.h, proxy.h).
#include <atomic>
#include <cstring>
#include <span>

#include <fmt/format.h>

#include "weft/program/message_layout.h"
#include "weft/proxy/participants.h"
#include "weft/proxy/proxy.h"
#include "window_state.h"

namespace weft::proxy {

namespace {

std::uint64_t acquire(const std::uint64_t* word) {
  return std::atomic_ref<const std::uint64_t>(*word).load(std::memory_order_acquire);
}
void release(std::uint64_t* word, std::uint64_t value) {
  std::atomic_ref<std::uint64_t>(*word).store(value, std::memory_order_release);
}

// Arrival words are looked at once every this many passes: they only decide which of the
// kernel's timeouts applies, never when a step may run.
constexpr std::uint32_t kArrivalPasses = 32;

std::string connection_text(const ir::Connection& c) {
  return fmt::format("channel {}, rank {} → rank {}", c.channel, c.sender, c.receiver);
}

}  // namespace

std::string WindowState::peer_name(int participant, int rank) const {
  return fmt::format("rank {} on {} (participant {})", rank, participants->where(rank),
                     participant);
}

Status WindowState::towards(const Status& failure, int participant, int rank) const {
  return Status::error(failure.code, fmt::format("{} (sending to {})", failure.message,
                                                 peer_name(participant, rank)));
}

void WindowState::note_lost(Status status, int participant) {
  Status& lost = proxy->lost_[static_cast<std::size_t>(participant)];
  if (lost.ok()) lost = std::move(status);
}

bool WindowState::busy_with(int participant) const {
  for (const Send& send : sends) {
    if (send.peer == participant && acquire(host_word(send.stage->tail)) != send.acknowledged) {
      return true;
    }
  }
  for (const Receive& receive : receives) {
    if (receive.peer == participant &&
        acquire(host_word(receive.stage->head)) != receive.delivered) {
      return true;
    }
  }
  return false;
}

Status WindowState::service(Engine& engine, bool& busy, std::uint32_t pass) {
  for (Send& send : sends) {
    if (Status s = forward(engine, send, busy); !s.ok()) return s;
    if (Status s = raise_head(send, busy); !s.ok()) return s;
  }
  for (Receive& receive : receives) {
    if (Status s = deliver(receive, busy); !s.ok()) return s;
    if (Status s = acknowledge(engine, receive, busy); !s.ok()) return s;
  }
  if (pass % kArrivalPasses == 0) return arrivals(engine, busy);
  return {};
}

// The kernel posted messages [forwarded, tail): each goes to the receiver's proxy memory, then,
// after all of them, their descriptors (the first one a signal: it lands after every message).
Status WindowState::forward(Engine& engine, Send& send, bool& busy) {
  const SendStage& stage = *send.stage;
  const std::uint64_t posted = acquire(host_word(stage.tail));
  if (posted == send.forwarded) return {};
  const auto depth = static_cast<std::uint64_t>(mine.depth);
  if (posted < send.forwarded || posted - send.acknowledged > depth) {
    return Status::error(
        ErrorCode::InternalError,
        fmt::format("proxy: the kernel posted message {} on {} with {} "
                    "acknowledged (a FIFO of {})",
                    posted, connection_text(stage.connection), send.acknowledged, depth));
  }
  // A peer that left while nothing was in flight (Proxy::run): this message cannot reach it.
  if (const Status& lost = proxy->lost_[static_cast<std::size_t>(send.peer)]; !lost.ok()) {
    return lost;
  }
  const std::uint64_t first = send.forwarded;
  for (std::uint64_t k = first; k < posted; ++k) {
    const std::uint64_t slot = k % depth;
    const std::uint64_t bytes = host_word(stage.descriptors)[slot];
    if (bytes > mine.slot_bytes) {
      return Status::error(
          ErrorCode::InternalError,
          fmt::format("proxy: the kernel announced {} bytes for message {} on "
                      "{}; a slot holds {}",
                      bytes, k, connection_text(stage.connection), mine.slot_bytes));
    }
    if (bytes <= kInlinePayload) continue;  // it travels in its entry, below
    const std::size_t at = static_cast<std::size_t>(slot) * mine.slot_bytes;
    if (Status s = engine.put(send.memory, send.landing + at, host(stage.fifo + at),
                              static_cast<std::size_t>(bytes));
        !s.ok()) {
      return towards(s, send.peer, stage.connection.receiver);
    }
  }
  // The entries, in order: a small message whole in its own (one put, which needs no fence:
  // nothing it carries waits for an earlier put), the others' descriptors after a fence (the
  // first of them a signal: it lands after every message put above).
  bool fenced = false;
  for (std::uint64_t k = first; k < posted; ++k) {
    const std::uint64_t slot = k % depth;
    const auto bytes = static_cast<std::uint32_t>(host_word(stage.descriptors)[slot]);
    const bool inline_payload = bytes <= kInlinePayload;
    const std::size_t offset = static_cast<std::size_t>(slot) * kWireEntryBytes;
    auto* entry = reinterpret_cast<WireEntry*>(host(stage.outgoing + offset));
    entry->descriptor = make_descriptor(k, stage.connection, static_cast<std::uint32_t>(slot),
                                        bytes, inline_payload);
    if (inline_payload) {
      const std::size_t at = static_cast<std::size_t>(slot) * mine.slot_bytes;
      pack_inline(*entry, k,
                  std::span<const std::byte>(
                      reinterpret_cast<const std::byte*>(host(stage.fifo + at)), bytes));
    }
    // An acknowledgement owed to the same peer goes along instead of in a put of its own.
    for (Receive& receive : receives) {
      if (receive.peer != send.peer) continue;
      const std::uint64_t head = acquire(host_word(receive.stage->head));
      if (head == receive.acknowledged || head > receive.delivered) continue;
      piggyback(entry->descriptor, k, receive.ack_position, head);
      receive.acknowledged = head;
      receive.ack_waited = false;
      break;
    }
    if (tamper) tamper(entry->descriptor);
    const std::size_t target = send.inbox + offset;
    Status s;
    if (inline_payload) {
      s = engine.put(send.memory, target, entry, inline_entry_bytes(bytes));
    } else if (!fenced) {
      s = engine.signal(send.memory, target, entry, sizeof(WireDescriptor));
      fenced = true;
    } else {
      s = engine.put(send.memory, target, entry, sizeof(WireDescriptor));
    }
    if (!s.ok()) return towards(s, send.peer, stage.connection.receiver);
  }
  send.forwarded = posted;
  busy = true;
  return {};
}

// The receiver's head, put here by its proxy, becomes the kernel's head.
Status WindowState::raise_head(Send& send, bool& busy) {
  return apply_acknowledgement(send, acquire(host_word(send.stage->ack_inbox)),
                               send.stage->connection.receiver, busy);
}

// An older head than one already applied (the word and the descriptors race) changes nothing;
// one beyond what was sent is refused.
Status WindowState::apply_acknowledgement(Send& send, std::uint64_t head, int peer_rank,
                                          bool& busy) {
  const SendStage& stage = *send.stage;
  if (head <= send.acknowledged) return {};
  if (head > send.forwarded) {
    return Status::error(
        ErrorCode::SystemError,
        fmt::format("{} acknowledged {} messages on {}, of which {} were sent; refused",
                    peer_name(send.peer, peer_rank), head, connection_text(stage.connection),
                    send.forwarded));
  }
  release(host_word(stage.head), head);
  send.acknowledged = head;
  busy = true;
  return {};
}

// Announced messages, in order: checked, moved into the FIFO where they landed apart, then
// their tail raised.
Status WindowState::deliver(Receive& receive, bool& busy) {
  const ReceiveStage& stage = *receive.stage;
  const auto depth = static_cast<std::uint64_t>(mine.depth);
  for (;;) {
    const std::uint64_t k = receive.delivered;
    const std::uint64_t slot = k % depth;
    const auto* entry = host_word(stage.inbox + static_cast<std::size_t>(slot) * kWireEntryBytes);
    WireDescriptor seen;
    for (int w = 0; w < 6; ++w) seen.words[w] = acquire(entry + w);
    auto announced = read_descriptor(seen, k, stage.connection, mine.depth, mine.slot_bytes);
    if (!announced.ok()) {
      return Status::error(
          ErrorCode::SystemError,
          fmt::format("{} sent a descriptor that is refused: {} (a peer that runs another "
                      "algorithm or options, or a faulty one)",
                      peer_name(receive.peer, stage.connection.sender),
                      announced.status().message));
    }
    if (!announced.value()) return {};
    const std::size_t bytes = announced.value()->bytes;
    const std::size_t at = static_cast<std::size_t>(slot) * mine.slot_bytes;
    const char* landed = host(stage.landing + at);
    alignas(8) std::byte small[kInlinePayload];
    if (announced.value()->inline_payload) {
      std::uint64_t words[kInlineWords];
      const std::size_t count = (bytes + 3) / 4;
      for (std::size_t w = 0; w < count; ++w) words[w] = acquire(entry + 6 + w);
      if (!unpack_inline(std::span<const std::uint64_t>(words, count), k, bytes, small)) {
        return {};  // its words are still landing
      }
      landed = reinterpret_cast<const char*>(small);
      // Simple reads the slot only after its tail: a plain copy. LL and LL128 below.
      if (!mine.lands_apart) std::memcpy(host(stage.fifo + at), small, bytes);
    }
    if (mine.lands_apart) {
      const std::size_t line =
          protocol == ir::Protocol::LL128 ? gpu::device::kLL128LineWords * 8 : std::size_t{16};
      if (bytes % line != 0) {
        return Status::error(
            ErrorCode::SystemError,
            fmt::format("{} announced message {} on {} as {} bytes, not whole {}-byte lines; "
                        "refused",
                        peer_name(receive.peer, stage.connection.sender), k,
                        connection_text(stage.connection), bytes, line));
      }
      const auto* from = reinterpret_cast<const std::uint64_t*>(landed);
      auto* to = reinterpret_cast<std::uint64_t*>(host(stage.fifo + at));
      const std::size_t words = bytes / 8;
      if (protocol == ir::Protocol::LL128) {
        // A line's flag (its last word) after its data, as the sending warp stores it.
        for (std::size_t w = 0; w < words; ++w) {
          const bool flag = w % gpu::device::kLL128LineWords == gpu::device::kLL128LineWords - 1;
          std::atomic_ref<std::uint64_t>(to[w]).store(
              from[w], flag ? std::memory_order_release : std::memory_order_relaxed);
        }
      } else {
        // LL: each 8-byte word carries its own flag.
        for (std::size_t w = 0; w < words; ++w) {
          std::atomic_ref<std::uint64_t>(to[w]).store(from[w], std::memory_order_relaxed);
        }
      }
    }
    release(host_word(stage.tail), k + 1);
    receive.delivered = k + 1;
    busy = true;
    if (const int position = announced.value()->acknowledged_send; position >= 0) {
      // The piggybacked head: of one of this participant's sends to the same peer.
      if (static_cast<std::size_t>(position) >= sends.size() ||
          sends[static_cast<std::size_t>(position)].peer != receive.peer) {
        return Status::error(
            ErrorCode::SystemError,
            fmt::format("{} acknowledged on a descriptor a connection it does not receive on "
                        "(position {}); refused",
                        peer_name(receive.peer, stage.connection.sender), position));
      }
      Send& send = sends[static_cast<std::size_t>(position)];
      // The head modulo 2^32, within a FIFO's depth of what was acknowledged (either way: a
      // word put since may have brought a newer one): made whole; an older one changes nothing.
      const auto ahead = static_cast<std::int32_t>(announced.value()->head -
                                                   static_cast<std::uint32_t>(send.acknowledged));
      if (ahead > 0) {
        const std::uint64_t head = send.acknowledged + static_cast<std::uint64_t>(ahead);
        if (Status s = apply_acknowledgement(send, head, stage.connection.sender, busy); !s.ok()) {
          return s;
        }
      }
    }
  }
}

// The kernel's head (messages it consumed) goes back to the sender's proxy.
Status WindowState::acknowledge(Engine& engine, Receive& receive, bool& busy) {
  const ReceiveStage& stage = *receive.stage;
  const std::uint64_t head = acquire(host_word(stage.head));
  if (head == receive.acknowledged) return {};
  // A pass's grace: the kernel that consumed a message often posts one back to the same peer
  // at once, and the acknowledgement then rides on its descriptor (forward).
  if (!receive.ack_waited) {
    receive.ack_waited = true;
    busy = true;
    return {};
  }
  receive.ack_waited = false;
  if (head < receive.acknowledged || head > receive.delivered) {
    return Status::error(ErrorCode::InternalError,
                         fmt::format("proxy: the kernel acknowledged {} messages on {} with {} "
                                     "delivered",
                                     head, connection_text(stage.connection), receive.delivered));
  }
  *host_word(stage.ack_source) = head;
  if (Status s = engine.put(receive.memory, receive.ack_inbox, host_word(stage.ack_source),
                            sizeof(std::uint64_t));
      !s.ok()) {
    // A sender that is gone needs no acknowledgement; whether anything was lost with it is
    // the proxy's peer check's to say (Proxy::run), or the kernel's wait for its next message.
    note_lost(towards(s, receive.peer, stage.connection.sender), receive.peer);
  }
  receive.acknowledged = head;
  busy = true;
  return {};
}

Status WindowState::arrivals(Engine& engine, bool& busy) {
  for (ArrivalOut& out : arrivals_out) {
    const std::uint64_t launch = acquire(host_word(out.source));
    if (launch == out.sent) continue;
    if (Status s = engine.put(out.memory, out.target, host_word(out.source), sizeof(launch));
        !s.ok()) {
      note_lost(towards(s, out.peer, out.rank), out.peer);
    }
    out.sent = launch;
    busy = true;
  }
  for (ArrivalIn& in : arrivals_in) {
    const std::uint64_t launch = acquire(host_word(in.source));
    if (launch == in.applied) continue;
    if (Status s = runtime->post_word(in.region_word, launch); !s.ok()) return s;
    in.applied = launch;
    busy = true;
  }
  return {};
}

}  // namespace weft::proxy
