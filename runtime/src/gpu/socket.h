// Private to the GPU runtime: blocking-with-deadline TCP helpers for the socket bootstrap. Every
// operation takes a deadline so that a peer that never comes or stops answering is an error,
// not a hang.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "weft/runtime/gpu/bootstrap.h"
#include "weft/runtime/gpu/status.h"

namespace weft::gpu::detail {

using Deadline = std::chrono::steady_clock::time_point;

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

 private:
  int fd_ = -1;
};

// Listens on `address` (empty host: every interface); reports the bound port.
Result<Socket> listen_on(const SocketAddress& address, std::uint16_t* bound_port);
// Accepts one connection before `deadline`.
Result<Socket> accept_one(Socket& listener, Deadline deadline);
// Connects, retrying while the listener is not up yet, until `deadline`.
Result<Socket> connect_to(const SocketAddress& address, Deadline deadline);

}  // namespace weft::gpu::detail
