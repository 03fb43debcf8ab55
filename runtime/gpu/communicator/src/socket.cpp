#include "weft/communicator/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <thread>

#include <fmt/format.h>

namespace weft::gpu::detail {

namespace {

Status system_error(const std::string& what) {
  return Status::error(ErrorCode::SystemError, fmt::format("{}: {}", what, std::strerror(errno)));
}

// Waits for `events` on `fd`; false when the deadline passed.
Result<bool> wait_for(int fd, short events, Deadline deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, remaining_ms(deadline));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return system_error("poll");
  }
}

Status set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL, 0);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) return system_error("fcntl");
  return {};
}

// Where to bind or connect: an IPv4 address, or a name in Linux's abstract namespace of local
// sockets (no file to create, clean up or squat; gone with the last descriptor).
struct Endpoint {
  sockaddr_storage storage{};
  socklen_t length = 0;
  int family = AF_INET;
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
};

Result<Endpoint> resolve(const SocketAddress& address, bool passive) {
  Endpoint endpoint;
  if (!address.local_name.empty()) {
    sockaddr_un local{};
    local.sun_family = AF_UNIX;
    // sun_path[0] = 0 selects the abstract namespace; the name follows, without a terminator.
    if (address.local_name.size() + 1 > sizeof(local.sun_path)) {
      return Status::error(ErrorCode::InvalidArgument,
                           fmt::format("local socket name '{}' is too long", address.local_name));
    }
    std::memcpy(local.sun_path + 1, address.local_name.data(), address.local_name.size());
    std::memcpy(&endpoint.storage, &local, sizeof(local));
    endpoint.length =
        static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + address.local_name.size());
    endpoint.family = AF_UNIX;
    return endpoint;
  }
  sockaddr_in out{};
  out.sin_family = AF_INET;
  out.sin_port = htons(address.port);
  if (address.host.empty() || address.host == "*") {
    out.sin_addr.s_addr = htonl(passive ? INADDR_ANY : INADDR_LOOPBACK);
  } else {
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int rc = ::getaddrinfo(address.host.c_str(), nullptr, &hints, &found);
    if (rc != 0 || found == nullptr) {
      return Status::error(ErrorCode::SystemError, fmt::format("cannot resolve host '{}': {}",
                                                               address.host, ::gai_strerror(rc)));
    }
    out.sin_addr = reinterpret_cast<const sockaddr_in*>(found->ai_addr)->sin_addr;
    ::freeaddrinfo(found);
  }
  std::memcpy(&endpoint.storage, &out, sizeof(out));
  endpoint.length = sizeof(out);
  return endpoint;
}

void set_no_delay(int fd, int family) {
  if (family != AF_INET) return;
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

}  // namespace

int remaining_ms(Deadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(std::min<long long>(left.count(), 1 << 30));
}

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

Socket::~Socket() {
  if (fd_ >= 0) ::close(fd_);
}

int Socket::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

Status Socket::send_all(std::span<const std::byte> data, Deadline deadline,
                        const std::string& what) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      return system_error(fmt::format("sending to {}", what));
    }
    auto ready = wait_for(fd_, POLLOUT, deadline);
    if (!ready.ok()) return ready.status();
    if (!ready.value()) {
      return Status::error(
          ErrorCode::SystemError,
          fmt::format("timed out sending to {} ({} of {} bytes sent)", what, done, data.size()));
    }
  }
  return {};
}

Status Socket::recv_all(std::span<std::byte> data, Deadline deadline, const std::string& what) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::recv(fd_, data.data() + done, data.size() - done, 0);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n == 0) {
      return Status::error(ErrorCode::SystemError,
                           fmt::format("{} closed the connection ({} of {} bytes received)", what,
                                       done, data.size()));
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      return system_error(fmt::format("receiving from {}", what));
    }
    auto ready = wait_for(fd_, POLLIN, deadline);
    if (!ready.ok()) return ready.status();
    if (!ready.value()) {
      return Status::error(ErrorCode::SystemError,
                           fmt::format("timed out waiting for {} ({} of {} bytes received)", what,
                                       done, data.size()));
    }
  }
  return {};
}

Result<std::size_t> Socket::recv_some(std::span<std::byte> data, const std::string& what) {
  for (;;) {
    const ssize_t n = ::recv(fd_, data.data(), data.size(), 0);
    if (n > 0) return static_cast<std::size_t>(n);
    if (n == 0) {
      if (data.empty()) return std::size_t{0};
      return Status::error(ErrorCode::SystemError, fmt::format("{} closed the connection", what));
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return std::size_t{0};
    return system_error(fmt::format("receiving from {}", what));
  }
}

Result<Socket> listen_on(const SocketAddress& address, std::uint16_t* bound_port) {
  auto where = resolve(address, /*passive=*/true);
  if (!where.ok()) return where.status();
  Socket socket(::socket(where.value().family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!socket.valid()) return system_error("socket");
  if (where.value().family == AF_INET) {
    const int one = 1;
    ::setsockopt(socket.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  }
  if (::bind(socket.fd(), where.value().get(), where.value().length) != 0) {
    return system_error(fmt::format("bind {}", to_string(address)));
  }
  // The kernel's most (net.core.somaxconn): connections that arrive while rank 0 is busy, or
  // behind a flood of others, wait in the queue instead of having their handshakes dropped and
  // retried a second or more later.
  if (::listen(socket.fd(), SOMAXCONN) != 0) return system_error("listen");
  if (auto s = set_nonblocking(socket.fd()); !s.ok()) return s;
  if (where.value().family == AF_INET) {
    sockaddr_in bound{};
    socklen_t length = sizeof(bound);
    if (::getsockname(socket.fd(), reinterpret_cast<sockaddr*>(&bound), &length) != 0) {
      return system_error("getsockname");
    }
    if (bound_port != nullptr) *bound_port = ntohs(bound.sin_port);
  } else if (bound_port != nullptr) {
    *bound_port = 0;
  }
  return socket;
}

Result<Socket> accept_one(Socket& listener, Deadline deadline) {
  for (;;) {
    Accepted accepted = accept_pending(listener);
    if (accepted.socket.valid()) return std::move(accepted.socket);
    if (!accepted.none) return accepted.error;
    auto ready = wait_for(listener.fd(), POLLIN, deadline);
    if (!ready.ok()) return ready.status();
    if (!ready.value()) return Status::error(ErrorCode::SystemError, "timed out accepting peers");
  }
}

Accepted accept_pending(Socket& listener) {
  Accepted accepted;
  for (;;) {
    sockaddr_storage from{};
    socklen_t length = sizeof(from);
    const int fd = ::accept4(listener.fd(), reinterpret_cast<sockaddr*>(&from), &length,
                             SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) {
      set_no_delay(fd, from.ss_family);
      accepted.socket = Socket(fd);
      return accepted;
    }
    switch (errno) {
      case EINTR:
      case ECONNABORTED:
        continue;
      case EAGAIN:
        accepted.none = true;
        return accepted;
      case EMFILE:
      case ENFILE:
      case ENOBUFS:
      case ENOMEM:
        accepted.out_of_descriptors = true;
        accepted.error = system_error("accept");
        return accepted;
      default:
        accepted.error = system_error("accept");
        return accepted;
    }
  }
}

Result<Socket> connect_to(const SocketAddress& address, Deadline deadline) {
  auto where = resolve(address, /*passive=*/false);
  if (!where.ok()) return where.status();
  std::string last = "no attempt";
  for (;;) {
    Socket socket(::socket(where.value().family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!socket.valid()) return system_error("socket");
    if (auto s = set_nonblocking(socket.fd()); !s.ok()) return s;
    int rc = ::connect(socket.fd(), where.value().get(), where.value().length);
    if (rc != 0 && errno == EINPROGRESS) {
      auto ready = wait_for(socket.fd(), POLLOUT, deadline);
      if (!ready.ok()) return ready.status();
      int error = ETIMEDOUT;
      socklen_t length = sizeof(error);
      if (ready.value()) ::getsockopt(socket.fd(), SOL_SOCKET, SO_ERROR, &error, &length);
      rc = error == 0 ? 0 : -1;
      errno = error;
    }
    if (rc == 0) {
      set_no_delay(socket.fd(), where.value().family);
      return socket;
    }
    last = std::strerror(errno);
    if (std::chrono::steady_clock::now() >= deadline) break;
    // The listener may not be up yet: try again shortly.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Status::error(
      ErrorCode::SystemError,
      fmt::format("cannot connect to {} before the timeout: {}", to_string(address), last));
}

void finish_sending(Socket& socket, Deadline deadline) {
  if (!socket.valid()) return;
  ::shutdown(socket.fd(), SHUT_WR);
  char sink[4096];
  for (;;) {
    const ssize_t n = ::recv(socket.fd(), sink, sizeof sink, 0);
    if (n == 0) return;
    if (n > 0) continue;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return;
    auto ready = wait_for(socket.fd(), POLLIN, deadline);
    if (!ready.ok() || !ready.value()) return;
  }
}

Result<std::uint32_t> peer_uid(const Socket& socket) {
  ucred credentials{};
  socklen_t length = sizeof(credentials);
  if (::getsockopt(socket.fd(), SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
    return system_error("getsockopt(SO_PEERCRED)");
  }
  return static_cast<std::uint32_t>(credentials.uid);
}

}  // namespace weft::gpu::detail
