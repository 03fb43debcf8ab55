// Where the proxy's end of each connection that crosses hosts sits in a participant's proxy
// memory (docs/architecture.md §6). Memory the kernel and the proxy thread both reach (host
// memory mapped for the GPU; host memory in host mode), registered with the engine so that the
// peers' proxies put into it. Every participant computes every participant's layout from the
// algorithm alone, as connection_layout.h does for the regions, so only one key per participant
// is exchanged and a put names an offset the receiver can check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "weft/ir/ir.h"
#include "weft/program/connection_layout.h"

namespace weft::proxy {

// The sender's end of a connection whose receiver is on another host.
struct SendStage {
  ir::Connection connection;
  std::size_t fifo = 0;         // depth slots: the kernel writes its messages here
  std::size_t tail = 0;         // messages posted (kernel → proxy)
  std::size_t head = 0;         // messages the receiver consumed (proxy → kernel)
  std::size_t descriptors = 0;  // depth words: message k's bytes at k mod depth (kernel → proxy)
  std::size_t ack_inbox = 0;    // the receiver's proxy puts the receiver's head here
  std::size_t outgoing = 0;     // depth wire descriptors, the sources of this proxy's signals
};

// The receiver's end of a connection whose sender is on another host.
struct ReceiveStage {
  ir::Connection connection;
  std::size_t fifo = 0;  // depth slots: the kernel reads its messages here
  // Where the sender's proxy puts message k (slot k mod depth): the FIFO itself for Simple,
  // whose kernel reads a slot only after its tail; for LL and LL128, whose kernel polls the
  // slot's lines, a copy that this proxy moves into the FIFO a line at a time, data before flag.
  std::size_t landing = 0;
  std::size_t tail = 0;        // messages delivered (proxy → kernel)
  std::size_t head = 0;        // messages consumed (kernel → proxy)
  std::size_t inbox = 0;       // depth wire descriptors, put by the sender's proxy
  std::size_t ack_source = 0;  // the head as last forwarded, the source of that put
};

struct ProxyLayout {
  int participant = -1;
  int nranks = 0;
  std::size_t slot_bytes = 0;
  int depth = 0;
  bool lands_apart = false;            // LL and LL128 (ReceiveStage::landing)
  std::vector<SendStage> sends;        // by connection
  std::vector<ReceiveStage> receives;  // by connection
  std::vector<int> local_ranks;        // the participant's ranks, ascending
  std::vector<int> remote_ranks;       // the ranks it reaches through the proxy, ascending
  // Arrival tables (kernel/device_abi.h): per remote rank, nranks words, where the local rank r
  // writes word r when it enters a launch, as it does in a region reached directly; and per
  // local rank, nranks words, where remote rank q's proxy puts q's word.
  std::size_t arrivals_out = 0;
  std::size_t arrivals_in = 0;
  std::size_t total_bytes = 0;

  const SendStage* find_send(const ir::Connection& connection) const;
  const ReceiveStage* find_receive(const ir::Connection& connection) const;
  // The offset of remote rank q's outgoing table, or of the word `from` of local rank r's
  // incoming one; npos when q is not remote or r not local.
  std::size_t arrival_out(int remote_rank) const;
  std::size_t arrival_in(int local_rank, int from) const;
};

inline constexpr std::size_t kNoOffset = static_cast<std::size_t>(-1);

// The bytes of one inbox entry: a wire descriptor and an inline message's payload (wire.h).
inline constexpr std::size_t kWireEntryBytes = 48 + 8 * 64;

// `participant`'s layout. `layouts` holds every rank's region layout (its connections, slot size
// and depth), `owner` every rank's participant, and `crosses(a, b)` says whether ranks a and b
// of different participants are joined through the proxies (another host; in host mode,
// another process).
ProxyLayout layout_proxy(std::span<const gpu::RegionLayout> layouts, std::span<const int> owner,
                         int participant, const std::function<bool(int, int)>& crosses,
                         ir::Protocol protocol);

}  // namespace weft::proxy
