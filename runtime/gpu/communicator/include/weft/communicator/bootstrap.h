// Bootstrap: how the participants of a communicator find each other before any GPU memory is
// shared. A participant is one Communicator object (one process in the usual multi-process set-up;
// several threads of one process for in-process multi-GPU runs). The only collective a transport
// needs is an allgather of small byte records, so that is the whole interface: the NCCL shim
// implements it with ncclAllGather, standalone programs use the socket rendezvous below.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "weft/program/options.h"
#include "weft/program/status.h"

namespace weft::gpu {

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;

  // This participant's index and the number of participants.
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Collective: every participant calls it, in the same order, with the same `bytes_per_rank`.
  // `data` holds size() × bytes_per_rank bytes; on entry this participant's record is at
  // data[rank() × bytes_per_rank]; on success every record is filled in. Never blocks forever:
  // an implementation gives up after its timeout and says which peer it was waiting for.
  virtual Status allgather(std::span<std::byte> data, std::size_t bytes_per_rank) = 0;

  // Collective: returns once every participant has entered.
  virtual Status barrier();
};

// ---- In-process: participants are threads of one process ----------------------------------

// The meeting point of `size` in-process participants. Create one, share it (it is thread-safe),
// and give each thread its own Bootstrap from join(rank).
class InProcessRendezvous : public std::enable_shared_from_this<InProcessRendezvous> {
 public:
  static std::shared_ptr<InProcessRendezvous> create(
      int size, std::chrono::milliseconds timeout = std::chrono::seconds(60));
  virtual ~InProcessRendezvous() = default;
  virtual int size() const = 0;
  // One Bootstrap per rank; join(rank) may be called once per rank.
  virtual Result<std::unique_ptr<Bootstrap>> join(int rank) = 0;
};

// A bootstrap for a communicator that is the only participant (emulation: all ranks local).
std::unique_ptr<Bootstrap> make_single_participant_bootstrap();

// ---- Socket rendezvous: participants are processes, possibly on several hosts ---------------

struct SocketAddress {
  std::string host;  // name or dotted IPv4 address
  std::uint16_t port = 0;
  // When set: a local socket of this name in Linux's abstract namespace instead of TCP. Only
  // processes of this host can reach it, and both ends check that the other runs as the same
  // user (SO_PEERCRED).
  std::string local_name{};
};
// "host:port" (or ":port" for every local interface when listening), or "unix:NAME" for a local
// socket. Fails with InvalidArgument naming the text.
Result<SocketAddress> parse_socket_address(std::string_view text);
// The address as parse_socket_address reads it.
std::string to_string(const SocketAddress& address);
// True when listening there would accept connections from other hosts' processes too: an
// empty host, "*" or 0.0.0.0.
bool listens_on_every_interface(const SocketAddress& address);

// The secret a rendezvous is joined with: 128 bits from the operating system's random source,
// carried in the unique id and proved by every participant in its hello.
inline constexpr std::size_t kRendezvousSecretBytes = 16;
using RendezvousSecret = std::array<std::uint8_t, kRendezvousSecretBytes>;
Result<RendezvousSecret> make_rendezvous_secret();

// A rendezvous as text, what the NCCL shim's unique id and the C API's weftCommInitRank carry:
// "ADDRESS#SECRET", the secret as 32 lowercase hex digits. Reading also takes a bare address,
// which means no secret (all zero: anyone who reaches the address can join).
struct RendezvousPoint {
  SocketAddress address;
  RendezvousSecret secret{};
};
std::string format_rendezvous(const SocketAddress& address, const RendezvousSecret& secret);
// The secret as 32 lowercase hex digits, and back (nothing for anything else).
std::string secret_to_hex(const RendezvousSecret& secret);
std::optional<RendezvousSecret> secret_from_hex(std::string_view digits);
Result<RendezvousPoint> parse_rendezvous(std::string_view text);
// A fresh local rendezvous: a random local socket name (not the secret: local socket names are
// visible to every user in /proc/net/unix) and a fresh secret.
Result<RendezvousPoint> make_local_rendezvous();

// The most participants a socket rendezvous takes: rank 0 holds a connection and a record for
// each, and CUDA IPC keeps them on one host. Larger counts are refused before anything is
// allocated for them.
inline constexpr int kMaxSocketParticipants = 4096;

struct SocketBootstrapOptions {
  SocketAddress root;  // participant 0 listens here; the others connect to it
  int rank = 0;
  int size = 1;
  // How long to wait for peers to appear, and for any one exchange.
  std::chrono::milliseconds timeout = std::chrono::seconds(60);
  // Participant 0 only: called with the port it listens on once it does (useful with port 0,
  // which picks a free port), before it waits for the others.
  std::function<void(std::uint16_t)> on_listening;
  // Every participant proves it in its hello; participant 0 drops a connection that does not
  // (or whose hello is malformed, late, of another size or for a rank taken), and goes on.
  RendezvousSecret secret{};
  // How long participant 0 waits for one connection's hello before dropping it.
  std::chrono::milliseconds hello_timeout = std::chrono::seconds(5);
  // Participant 0 only: told why each dropped connection was dropped (for the log).
  std::function<void(const std::string&)> on_dropped;
};

// WEFT_BOOTSTRAP_TIMEOUT_S: how long a socket rendezvous waits for its participants, seconds in
// [0.1, 86400] (default 60), read the same way by the NCCL shim, the C API and weft-perf.
// Nothing when unset; InvalidArgument naming the variable and its value when malformed.
Result<std::optional<std::chrono::milliseconds>> bootstrap_timeout_from_env(
    const EnvLookup& lookup);

// Participant 0 accepts size−1 connections; each exchange goes through it (a star: the records
// are small and this runs a few times per algorithm load, never per call). Collects every peer or
// fails naming the ones that did not come.
Result<std::unique_ptr<Bootstrap>> make_socket_bootstrap(const SocketBootstrapOptions& options);

}  // namespace weft::gpu
