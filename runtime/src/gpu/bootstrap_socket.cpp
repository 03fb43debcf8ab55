// The socket rendezvous: participant 0 listens, the others connect and introduce themselves; an
// allgather sends each record to participant 0, which returns the assembled set to everyone.
#include <charconv>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "socket.h"
#include "weft/runtime/gpu/bootstrap.h"

namespace weft::gpu {

namespace {

using detail::Deadline;
using detail::Socket;

constexpr std::uint32_t kMagic = 0x57454654;  // "WEFT"
constexpr std::uint32_t kVersion = 1;
constexpr std::uint64_t kMaxRecordBytes = std::uint64_t{64} << 20;
constexpr std::uint64_t kRefused = ~std::uint64_t{0};

struct Hello {
  std::uint32_t magic = kMagic;
  std::uint32_t version = kVersion;
  std::int32_t rank = 0;
  std::int32_t size = 0;
};

template <class T>
std::span<const std::byte> bytes_of(const T& value) {
  return std::as_bytes(std::span<const T>(&value, 1));
}
template <class T>
std::span<std::byte> bytes_of(T& value) {
  return std::as_writable_bytes(std::span<T>(&value, 1));
}

std::string peer_name(int rank) {
  return fmt::format("bootstrap rank {}", rank);
}

class SocketBootstrap final : public Bootstrap {
 public:
  SocketBootstrap(int rank, int size, std::chrono::milliseconds timeout, std::vector<Socket> peers)
      : rank_(rank), size_(size), timeout_(timeout), peers_(std::move(peers)) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  Status allgather(std::span<std::byte> data, std::size_t bytes_per_rank) override {
    if (data.size() != bytes_per_rank * static_cast<std::size_t>(size_)) {
      return Status::error(ErrorCode::InvalidArgument,
                           fmt::format("allgather: buffer of {} bytes is not {} × {}", data.size(),
                                       size_, bytes_per_rank));
    }
    if (bytes_per_rank > kMaxRecordBytes) {
      return Status::error(ErrorCode::InvalidArgument,
                           fmt::format("allgather: {}-byte records exceed the {}-byte limit",
                                       bytes_per_rank, kMaxRecordBytes));
    }
    if (broken_)
      return Status::error(ErrorCode::InvalidUsage, "socket bootstrap: an earlier exchange failed");
    const Deadline deadline = std::chrono::steady_clock::now() + timeout_;
    Status status = rank_ == 0 ? gather_at_root(data, bytes_per_rank, deadline)
                               : exchange_with_root(data, bytes_per_rank, deadline);
    if (!status.ok()) broken_ = true;
    return status;
  }

 private:
  Status gather_at_root(std::span<std::byte> data, std::size_t bytes_per_rank, Deadline deadline) {
    std::string mismatch;
    for (int peer = 1; peer < size_; ++peer) {
      Socket& socket = peers_[static_cast<std::size_t>(peer)];
      std::uint64_t length = 0;
      if (auto s = socket.recv_all(bytes_of(length), deadline, peer_name(peer)); !s.ok()) return s;
      if (length != bytes_per_rank) {
        mismatch =
            fmt::format("rank {} sent {}-byte records, rank 0 {}", peer, length, bytes_per_rank);
        // Drain nothing more: refuse the exchange below.
        break;
      }
      auto record = data.subspan(static_cast<std::size_t>(peer) * bytes_per_rank, bytes_per_rank);
      if (auto s = socket.recv_all(record, deadline, peer_name(peer)); !s.ok()) return s;
    }
    const std::uint64_t reply = mismatch.empty() ? bytes_per_rank : kRefused;
    for (int peer = 1; peer < size_; ++peer) {
      Socket& socket = peers_[static_cast<std::size_t>(peer)];
      if (auto s = socket.send_all(bytes_of(reply), deadline, peer_name(peer)); !s.ok()) return s;
      if (!mismatch.empty()) continue;
      if (auto s = socket.send_all(data, deadline, peer_name(peer)); !s.ok()) return s;
    }
    if (!mismatch.empty())
      return Status::error(ErrorCode::Mismatch, "socket bootstrap: " + mismatch);
    return {};
  }

  Status exchange_with_root(std::span<std::byte> data, std::size_t bytes_per_rank,
                            Deadline deadline) {
    Socket& root = peers_[0];
    const std::uint64_t length = bytes_per_rank;
    if (auto s = root.send_all(bytes_of(length), deadline, peer_name(0)); !s.ok()) return s;
    auto mine = data.subspan(static_cast<std::size_t>(rank_) * bytes_per_rank, bytes_per_rank);
    if (auto s = root.send_all(mine, deadline, peer_name(0)); !s.ok()) return s;
    std::uint64_t reply = 0;
    if (auto s = root.recv_all(bytes_of(reply), deadline, peer_name(0)); !s.ok()) return s;
    if (reply != bytes_per_rank) {
      return Status::error(ErrorCode::Mismatch,
                           "socket bootstrap: participants used different record sizes");
    }
    return root.recv_all(data, deadline, peer_name(0));
  }

  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  std::vector<Socket> peers_;  // root: index = peer rank; others: [0] = root
  bool broken_ = false;
};

Result<std::unique_ptr<Bootstrap>> start_root(const SocketBootstrapOptions& options) {
  std::uint16_t port = 0;
  auto listener = detail::listen_on(options.root, &port);
  if (!listener.ok()) return listener.status();
  if (options.on_listening) options.on_listening(port);
  const Deadline deadline = std::chrono::steady_clock::now() + options.timeout;
  std::vector<Socket> peers(static_cast<std::size_t>(options.size));
  int joined = 1;
  while (joined < options.size) {
    auto accepted = detail::accept_one(listener.value(), deadline);
    if (!accepted.ok()) {
      // Named up to a point: thousands of absent ranks make a message nobody reads.
      constexpr int kNamed = 16;
      std::string missing;
      int absent = 0;
      for (int r = 1; r < options.size; ++r) {
        if (peers[static_cast<std::size_t>(r)].valid()) continue;
        if (++absent <= kNamed) {
          missing += missing.empty() ? "" : ", ";
          missing += fmt::format("{}", r);
        }
      }
      if (absent > kNamed) missing += fmt::format(" and {} more", absent - kNamed);
      return Status::error(ErrorCode::SystemError,
                           fmt::format("socket bootstrap on port {}: ranks {} did not connect "
                                       "within {} ms",
                                       port, missing, options.timeout.count()));
    }
    Socket socket = std::move(accepted.value());
    Hello hello;
    if (auto s = socket.recv_all(bytes_of(hello), deadline, "a connecting peer"); !s.ok()) {
      continue;  // not one of ours (a port scanner, a crashed peer): keep waiting
    }
    if (hello.magic != kMagic || hello.version != kVersion) continue;
    if (hello.size != options.size) {
      return Status::error(ErrorCode::Mismatch,
                           fmt::format("socket bootstrap: rank {} expects {} participants, rank 0 "
                                       "expects {}",
                                       hello.rank, hello.size, options.size));
    }
    if (hello.rank <= 0 || hello.rank >= options.size ||
        peers[static_cast<std::size_t>(hello.rank)].valid()) {
      return Status::error(ErrorCode::Mismatch,
                           fmt::format("socket bootstrap: rank {} connected twice or is out of "
                                       "range",
                                       hello.rank));
    }
    peers[static_cast<std::size_t>(hello.rank)] = std::move(socket);
    ++joined;
  }
  auto bootstrap =
      std::make_unique<SocketBootstrap>(0, options.size, options.timeout, std::move(peers));
  // Everyone has arrived once this exchange completes.
  if (auto s = bootstrap->barrier(); !s.ok()) return s;
  return std::unique_ptr<Bootstrap>(std::move(bootstrap));
}

Result<std::unique_ptr<Bootstrap>> start_peer(const SocketBootstrapOptions& options) {
  const Deadline deadline = std::chrono::steady_clock::now() + options.timeout;
  auto socket = detail::connect_to(options.root, deadline);
  if (!socket.ok()) {
    return Status::error(socket.status().code, fmt::format("socket bootstrap, rank {}: {}",
                                                           options.rank, socket.status().message));
  }
  Hello hello;
  hello.rank = options.rank;
  hello.size = options.size;
  if (auto s = socket.value().send_all(bytes_of(hello), deadline, peer_name(0)); !s.ok()) return s;
  std::vector<Socket> peers;
  peers.push_back(std::move(socket.value()));
  auto bootstrap = std::make_unique<SocketBootstrap>(options.rank, options.size, options.timeout,
                                                     std::move(peers));
  if (auto s = bootstrap->barrier(); !s.ok()) return s;
  return std::unique_ptr<Bootstrap>(std::move(bootstrap));
}

}  // namespace

Result<SocketAddress> parse_socket_address(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return Status::error(ErrorCode::InvalidArgument, fmt::format("'{}' is not host:port", text));
  }
  const std::string_view port_text = text.substr(colon + 1);
  unsigned port = 0;
  const auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() ||
      port > 65535) {
    return Status::error(
        ErrorCode::InvalidArgument,
        fmt::format("'{}': port '{}' is not a number in [0, 65535]", text, port_text));
  }
  return SocketAddress{std::string(text.substr(0, colon)), static_cast<std::uint16_t>(port)};
}

Result<std::unique_ptr<Bootstrap>> make_socket_bootstrap(const SocketBootstrapOptions& options) {
  if (options.size < 1 || options.rank < 0 || options.rank >= options.size) {
    return Status::error(
        ErrorCode::InvalidArgument,
        fmt::format("socket bootstrap: rank {} of {} participants", options.rank, options.size));
  }
  if (options.size > kMaxSocketParticipants) {
    return Status::error(ErrorCode::InvalidArgument,
                         fmt::format("socket bootstrap: {} participants, more than the {} one "
                                     "rendezvous takes",
                                     options.size, kMaxSocketParticipants));
  }
  if (options.size == 1) return make_single_participant_bootstrap();
  if (options.rank != 0 && options.root.port == 0) {
    return Status::error(ErrorCode::InvalidArgument,
                         "socket bootstrap: the others need rank 0's port (0 is only for rank 0)");
  }
  return options.rank == 0 ? start_root(options) : start_peer(options);
}

}  // namespace weft::gpu
