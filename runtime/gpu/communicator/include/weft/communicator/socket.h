// Private to the GPU runtime: blocking-with-deadline TCP helpers for the socket bootstrap. Every
// operation takes a deadline so that a peer that never comes or stops answering is an error,
// not a hang.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "weft/communicator/bootstrap.h"
#include "weft/program/status.h"

namespace weft::gpu::detail {

using Deadline = std::chrono::steady_clock::time_point;

// Milliseconds left until `deadline` (0 when past), as poll() takes them.
int remaining_ms(Deadline deadline);

class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& other) noexcept : fd_(other.release()) {}
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket();

  bool valid() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  int release();

  // `what` names the peer in messages ("rank 3").
  Status send_all(std::span<const std::byte> data, Deadline deadline, const std::string& what);
  Status recv_all(std::span<std::byte> data, Deadline deadline, const std::string& what);
  // What has arrived, up to data.size() bytes, without waiting (0 when nothing has). An error
  // when the other side closed or the connection failed.
  Result<std::size_t> recv_some(std::span<std::byte> data, const std::string& what);

 private:
  int fd_ = -1;
};

// Listens on `address` (empty host: every interface); reports the bound port.
Result<Socket> listen_on(const SocketAddress& address, std::uint16_t* bound_port);
// Accepts one connection before `deadline`.
Result<Socket> accept_one(Socket& listener, Deadline deadline);
// One connection waiting on a non-blocking listener, without waiting: `socket` when there was
// one, `none` when there was not, `out_of_descriptors` when the process or the system has no
// descriptor (or memory) for it (EMFILE, ENFILE, ENOBUFS, ENOMEM: the connection stays queued,
// and the listener stays readable), `error` otherwise.
struct Accepted {
  Socket socket;
  bool none = false;
  bool out_of_descriptors = false;
  Status error;
};
Accepted accept_pending(Socket& listener);
// Connects, retrying while the listener is not up yet, until `deadline`.
Result<Socket> connect_to(const SocketAddress& address, Deadline deadline);
// Ends this side's sending and reads (and drops) whatever the other side still sends until it
// closes or `deadline`: closing with unread data would reset the connection and could destroy
// what was just sent before the other side read it.
void finish_sending(Socket& socket, Deadline deadline);
// The user id of the process at the other end of a local socket (SO_PEERCRED).
Result<std::uint32_t> peer_uid(const Socket& socket);

// Rank 0's side of one accepted connection of the socket rendezvous (bootstrap_socket.cpp): on a
// local socket the other end's user is checked, rank 0 sends a fresh nonce, and the connection
// must answer within options.hello_timeout with a well-formed hello that proves the secret over
// both nonces (rendezvous_proof.h); only then does rank 0 send its own proof.
struct Admission {
  Socket socket;  // valid when admitted
  std::int32_t rank = -1;
  std::int32_t size = 0;
  std::string dropped;  // why the connection was not admitted; empty when it was
};
Admission admit(Socket socket, const SocketBootstrapOptions& options, Deadline deadline);

// A participant's side of the same, on a connection to rank 0: the other end's user on a local
// socket, rank 0's nonce, this participant's hello and proof, and rank 0's proof. `retry` is set
// when rank 0 closed the connection before saying anything (it was out of room for connections,
// during a flood): connecting again may succeed.
Status introduce(Socket& socket, const SocketBootstrapOptions& options, Deadline deadline,
                 bool* retry);

}  // namespace weft::gpu::detail
