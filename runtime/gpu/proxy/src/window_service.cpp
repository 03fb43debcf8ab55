// What the proxy's thread does for one window on each pass (window_state.h, proxy.h).
#include <atomic>
#include <cstring>

#include <fmt/format.h>

#include "weft/gpu/message_layout.h"
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
  return Status::error(failure.code,
                       fmt::format("{} (sending to {})", failure.message, peer_name(participant, rank)));
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
    return Status::error(ErrorCode::InternalError,
                         fmt::format("proxy: the kernel posted message {} on {} with {} "
                                     "acknowledged (a FIFO of {})",
                                     posted, connection_text(stage.connection),
                                     send.acknowledged, depth));
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
      return Status::error(ErrorCode::InternalError,
                           fmt::format("proxy: the kernel announced {} bytes for message {} on "
                                       "{}; a slot holds {}",
                                       bytes, k, connection_text(stage.connection),
                                       mine.slot_bytes));
    }
    const std::size_t at = static_cast<std::size_t>(slot) * mine.slot_bytes;
    if (Status s = engine.put(send.memory, send.landing + at, host(stage.fifo + at),
                              static_cast<std::size_t>(bytes));
        !s.ok()) {
      return towards(s, send.peer, stage.connection.receiver);
    }
  }
  for (std::uint64_t k = first; k < posted; ++k) {
    const std::uint64_t slot = k % depth;
    auto* descriptor = reinterpret_cast<WireDescriptor*>(
        host(stage.outgoing + static_cast<std::size_t>(slot) * kWireDescriptorBytes));
    *descriptor = make_descriptor(k, stage.connection, static_cast<std::uint32_t>(slot),
                                  static_cast<std::uint32_t>(host_word(stage.descriptors)[slot]));
    if (tamper) tamper(*descriptor);
    const std::size_t target = send.inbox + static_cast<std::size_t>(slot) * kWireDescriptorBytes;
    Status s = k == first ? engine.signal(send.memory, target, descriptor, sizeof(*descriptor))
                          : engine.put(send.memory, target, descriptor, sizeof(*descriptor));
    if (!s.ok()) return towards(s, send.peer, stage.connection.receiver);
  }
  send.forwarded = posted;
  busy = true;
  return {};
}

// The receiver's head, put here by its proxy, becomes the kernel's head.
Status WindowState::raise_head(Send& send, bool& busy) {
  const SendStage& stage = *send.stage;
  const std::uint64_t head = acquire(host_word(stage.ack_inbox));
  if (head == send.acknowledged) return {};
  if (head < send.acknowledged || head > send.forwarded) {
    return Status::error(
        ErrorCode::SystemError,
        fmt::format("{} acknowledged {} messages on {}, of which {} were sent and {} "
                    "acknowledged before; refused",
                    peer_name(send.peer, stage.connection.receiver), head,
                    connection_text(stage.connection), send.forwarded, send.acknowledged));
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
    const auto* entry = host_word(stage.inbox + static_cast<std::size_t>(slot) *
                                                    kWireDescriptorBytes);
    WireDescriptor seen;
    for (int w = 0; w < 4; ++w) seen.words[w] = acquire(entry + w);
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
    if (mine.lands_apart) {
      const std::size_t line = protocol == ir::Protocol::LL128
                                   ? gpu::device::kLL128LineWords * 8
                                   : std::size_t{16};
      if (bytes % line != 0) {
        return Status::error(
            ErrorCode::SystemError,
            fmt::format("{} announced message {} on {} as {} bytes, not whole {}-byte lines; "
                        "refused",
                        peer_name(receive.peer, stage.connection.sender), k,
                        connection_text(stage.connection), bytes, line));
      }
      const auto* from = reinterpret_cast<const std::uint64_t*>(host(stage.landing + at));
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
  }
}

// The kernel's head (messages it consumed) goes back to the sender's proxy.
Status WindowState::acknowledge(Engine& engine, Receive& receive, bool& busy) {
  const ReceiveStage& stage = *receive.stage;
  const std::uint64_t head = acquire(host_word(stage.head));
  if (head == receive.acknowledged) return {};
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
