// The socket rendezvous: participant 0 listens, the others connect and introduce themselves; an
// allgather sends each record to participant 0, which returns the assembled set to everyone.
//
// A connection is admitted by mutual proof without disclosure (rendezvous_proof.h): rank 0 sends
// a fresh nonce, the participant answers with its own nonce, its rank and an HMAC over both
// nonces keyed with the secret; only when that is right does rank 0 send its own proof, which
// the participant checks before it sends anything of the job. A connection that does not know
// the secret receives a random nonce and nothing else.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "weft/communicator/bootstrap.h"
#include "weft/communicator/rendezvous_proof.h"
#include "weft/communicator/socket.h"

namespace weft::gpu {

namespace {

using detail::Deadline;
using detail::Socket;

constexpr std::uint32_t kMagic = 0x57454654;  // "WEFT"
// 3: challenge and response (rank 0's nonce, the participant's proof, rank 0's proof); 2 sent
// the secret itself, rank 0 first.
constexpr std::uint32_t kVersion = 3;
constexpr std::uint64_t kMaxRecordBytes = std::uint64_t{64} << 20;
constexpr std::uint64_t kRefused = ~std::uint64_t{0};
// Instead of a record length: rank 0 gave up; a message of at most kMaxAbortBytes follows.
constexpr std::uint64_t kAborted = ~std::uint64_t{1};
constexpr std::uint32_t kMaxAbortBytes = 4096;
// Connections rank 0 greets at once. While that many are being greeted rank 0 accepts no more
// (the rest wait in the listener's queue, in the order they came, and hold no descriptor of
// rank 0's), and a connection that has not given its whole hello within kGreetingGrace makes
// room: a participant answers rank 0's nonce within a round trip. A connection is never evicted
// sooner, so that a real rank accepted in the middle of a flood keeps its place until its answer
// has been read, and a flood only makes the queue longer.
constexpr std::size_t kMaxGreetings = 128;
constexpr auto kGreetingGrace = std::chrono::milliseconds(250);
// Dropped connections logged one by one; after these, one line per interval with their count.
constexpr int kDropsLoggedEach = 5;
constexpr auto kDropLogInterval = std::chrono::seconds(1);

// What rank 0 sends first on every connection it keeps (after the peer-user check on a local
// socket): a fresh nonce, nothing derived from the secret.
struct RootChallenge {
  std::uint32_t magic = kMagic;
  std::uint32_t version = kVersion;
  detail::Nonce nonce{};
};

// What a participant answers: who it is, its own nonce, and its proof over both nonces.
struct Hello {
  std::uint32_t magic = kMagic;
  std::uint32_t version = kVersion;
  std::int32_t rank = 0;
  std::int32_t size = 0;
  detail::Nonce nonce{};
  detail::Proof proof{};
};

// On a local socket, the other end must run as this process's user.
Status check_same_user(const Socket& socket, const SocketAddress& address, const char* other) {
  if (address.local_name.empty()) return {};
  auto uid = detail::peer_uid(socket);
  if (!uid.ok()) return uid.status();
  if (uid.value() != static_cast<std::uint32_t>(::geteuid())) {
    return Status::error(ErrorCode::SystemError,
                         fmt::format("{} runs as user {}, not as this job's user {}", other,
                                     uid.value(), ::geteuid()));
  }
  return {};
}

Deadline earlier(Deadline a, Deadline b) {
  return a < b ? a : b;
}

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
    if (reply == kAborted) return Status::error(ErrorCode::SystemError, read_abort(root, deadline));
    if (reply != bytes_per_rank) {
      return Status::error(ErrorCode::Mismatch,
                           "socket bootstrap: participants used different record sizes");
    }
    return root.recv_all(data, deadline, peer_name(0));
  }

  // Rank 0's reason, after kAborted.
  static std::string read_abort(Socket& root, Deadline deadline) {
    std::uint32_t length = 0;
    if (!root.recv_all(bytes_of(length), deadline, peer_name(0)).ok() || length > kMaxAbortBytes) {
      return "socket bootstrap: rank 0 gave up (its reason did not arrive)";
    }
    std::string reason(length, '\0');
    if (!root.recv_all(std::as_writable_bytes(std::span<char>(reason)), deadline, peer_name(0))
             .ok()) {
      return "socket bootstrap: rank 0 gave up (its reason did not arrive)";
    }
    return "socket bootstrap: rank 0 gave up: " + reason;
  }

  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  std::vector<Socket> peers_;  // root: index = peer rank; others: [0] = root
  bool broken_ = false;
};

// Tells the peers rank 0 already accepted why it gives up, so they do not report only a closed
// connection; best effort, briefly.
void tell_peers(std::vector<Socket>& peers, const std::string& reason) {
  const Deadline deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  const std::string text = reason.substr(0, kMaxAbortBytes);
  const auto length = static_cast<std::uint32_t>(text.size());
  for (std::size_t r = 1; r < peers.size(); ++r) {
    Socket& peer = peers[r];
    if (!peer.valid()) continue;
    // The peer sends its first record before it reads; those bytes stay unread.
    if (peer.send_all(bytes_of(kAborted), deadline, peer_name(static_cast<int>(r))).ok() &&
        peer.send_all(bytes_of(length), deadline, peer_name(static_cast<int>(r))).ok()) {
      (void)peer.send_all(std::as_bytes(std::span<const char>(text)), deadline,
                          peer_name(static_cast<int>(r)));
    }
    detail::finish_sending(peer, deadline);
  }
}

std::string missing_ranks(const std::vector<Socket>& peers) {
  // Named up to a point: thousands of absent ranks make a message nobody reads.
  constexpr int kNamed = 16;
  std::string missing;
  int absent = 0;
  for (std::size_t r = 1; r < peers.size(); ++r) {
    if (peers[r].valid()) continue;
    if (++absent <= kNamed) {
      missing += missing.empty() ? "" : ", ";
      missing += fmt::format("{}", r);
    }
  }
  if (absent > kNamed) missing += fmt::format(" and {} more", absent - kNamed);
  return missing;
}

// One connection rank 0 has accepted and is greeting: the other end's user is checked and rank
// 0's nonce sent at once, then its hello is read as it arrives, while rank 0 serves the other
// connections too: a connection that says nothing delays nobody.
class Greeting {
 public:
  Greeting(Socket socket, const SocketBootstrapOptions& options)
      : socket_(std::move(socket)),
        options_(&options),
        accepted_(std::chrono::steady_clock::now()),
        deadline_(accepted_ + options.hello_timeout) {
    if (auto s = check_same_user(socket_, options.root, "a connecting process"); !s.ok()) {
      dropped_ = s.message;
      return;
    }
    auto nonce = detail::make_nonce();
    if (!nonce.ok()) {
      dropped_ = nonce.status().message;
      return;
    }
    challenge_.nonce = nonce.value();
    // A few bytes into a new connection's empty buffer: they go at once.
    if (auto s = socket_.send_all(bytes_of(challenge_), deadline_, "a connecting process");
        !s.ok()) {
      dropped_ = s.message;
    }
  }

  bool done() const { return !dropped_.empty() || received_ == sizeof(Hello); }
  // Nothing has arrived on it yet.
  bool silent() const { return received_ == 0; }
  std::chrono::steady_clock::time_point accepted() const { return accepted_; }
  Deadline deadline() const { return deadline_; }
  int fd() const { return socket_.fd(); }

  // Takes what has arrived; called when the connection is readable.
  void read() {
    auto got = socket_.recv_some(std::as_writable_bytes(std::span(hello_bytes_)).subspan(received_),
                                 "a connecting process");
    if (!got.ok()) {
      dropped_ = got.status().message;
      return;
    }
    const std::size_t before = received_;
    received_ += got.value();
    // The magic and the version, as soon as they are in: anything else is dropped at once.
    constexpr std::size_t kHead = 2 * sizeof(std::uint32_t);
    if (before < kHead && received_ >= kHead) {
      std::uint32_t head[2];
      std::memcpy(head, hello_bytes_.data(), sizeof(head));
      if (head[0] != kMagic || head[1] != kVersion) dropped_ = not_a_hello();
    }
  }

  void expire() {
    dropped_ = fmt::format("it sent no complete hello within {} ms ({} of {} bytes)",
                           options_->hello_timeout.count(), received_, sizeof(Hello));
  }
  void evict(std::size_t greeting) {
    dropped_ = fmt::format(
        "evicted after {} ms: {} connections were being greeted at once (the most rank 0 greets) "
        "and it had {} within {} ms",
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                              accepted_)
            .count(),
        greeting, silent() ? "said nothing" : "not finished its hello", kGreetingGrace.count());
  }

  detail::Admission finish() {
    detail::Admission admission;
    if (!dropped_.empty()) {
      admission.dropped = std::move(dropped_);
      return admission;
    }
    Hello hello;
    std::memcpy(&hello, hello_bytes_.data(), sizeof(Hello));
    admission.rank = hello.rank;
    admission.size = hello.size;
    if (hello.magic != kMagic || hello.version != kVersion) {
      admission.dropped = not_a_hello();
      return admission;
    }
    const auto expected = detail::prove(options_->secret, detail::Prover::Peer, challenge_.nonce,
                                        hello.nonce, hello.rank, hello.size);
    if (!expected || !detail::same_proof(*expected, hello.proof)) {
      admission.dropped = fmt::format(
          "it claimed rank {} without proving the rendezvous secret (not a participant of this "
          "job)",
          hello.rank);
      return admission;
    }
    const auto mine = detail::prove(options_->secret, detail::Prover::Root, challenge_.nonce,
                                    hello.nonce, hello.rank, hello.size);
    if (!mine) {
      admission.dropped = "libcrypto could not compute rank 0's proof";
      return admission;
    }
    if (auto s = socket_.send_all(bytes_of(*mine), deadline_, peer_name(hello.rank)); !s.ok()) {
      admission.dropped = s.message;
      return admission;
    }
    admission.socket = std::move(socket_);
    return admission;
  }

 private:
  static std::string not_a_hello() {
    return fmt::format("it sent something that is not a Weft rendezvous hello (version {})",
                       kVersion);
  }

  Socket socket_;
  const SocketBootstrapOptions* options_;
  std::chrono::steady_clock::time_point accepted_;
  Deadline deadline_;
  RootChallenge challenge_;
  std::array<std::byte, sizeof(Hello)> hello_bytes_{};
  std::size_t received_ = 0;
  std::string dropped_;
};

// Why connections were dropped, for the log: the first few one by one, then a count per
// interval, so that a flood of thousands writes a few lines, not thousands.
class DropLog {
 public:
  DropLog(const SocketBootstrapOptions& options, std::string where)
      : options_(&options), where_(std::move(where)) {}

  void dropped(const std::string& why) {
    ++total_;
    if (total_ == 1) first_ = why;
    if (!options_->on_dropped) return;
    if (total_ <= kDropsLoggedEach) {
      options_->on_dropped(
          fmt::format("socket bootstrap at {}: dropped a connection: {}", where_, why));
      if (total_ == kDropsLoggedEach) since_ = std::chrono::steady_clock::now();
      return;
    }
    ++unlogged_;
    latest_ = why;
    if (std::chrono::steady_clock::now() - since_ >= kDropLogInterval) flush();
  }
  // The count not yet logged, if any.
  void flush() {
    if (unlogged_ > 0 && options_->on_dropped) {
      options_->on_dropped(fmt::format(
          "socket bootstrap at {}: dropped {} more connection{} in {} ms (the latest because {})",
          where_, unlogged_, unlogged_ == 1 ? "" : "s",
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                since_)
              .count(),
          latest_));
    }
    unlogged_ = 0;
    since_ = std::chrono::steady_clock::now();
  }
  int total() const { return total_; }
  const std::string& first() const { return first_; }

 private:
  const SocketBootstrapOptions* options_;
  std::string where_;
  int total_ = 0;
  int unlogged_ = 0;
  std::string first_;
  std::string latest_;
  std::chrono::steady_clock::time_point since_{};
};

// A descriptor held back for the moment rank 0 has none left: closing it makes room to accept
// one queued connection and close it at once, so a flood that exhausts rank 0's descriptors
// is drained instead of leaving the listener readable forever (a busy loop) with the real ranks
// queued behind it.
class ReserveDescriptor {
 public:
  ReserveDescriptor() { take(); }
  bool held() const { return reserve_.valid(); }
  void release() { reserve_ = Socket(); }
  void take() {
    if (!reserve_.valid()) reserve_ = Socket(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  }

 private:
  Socket reserve_;
};

}  // namespace

namespace detail {

Admission admit(Socket socket, const SocketBootstrapOptions& options, Deadline deadline) {
  Greeting greeting(std::move(socket), options);
  while (!greeting.done()) {
    const Deadline until = earlier(deadline, greeting.deadline());
    if (std::chrono::steady_clock::now() >= until) {
      greeting.expire();
      break;
    }
    pollfd waiting{greeting.fd(), POLLIN, 0};
    if (::poll(&waiting, 1, detail::remaining_ms(until)) > 0) greeting.read();
  }
  return greeting.finish();
}

Status introduce(Socket& socket, const SocketBootstrapOptions& options, Deadline deadline,
                 bool* retry) {
  if (retry != nullptr) *retry = false;
  const std::string rank0 = to_string(options.root);
  // Rank 0 first: the right user, then its nonce; this rank's proof is over that nonce, and only
  // rank 0's proof in turn lets this rank send anything of the job.
  if (auto s = check_same_user(socket, options.root, "the process at the rendezvous"); !s.ok()) {
    return s;
  }
  RootChallenge challenge;
  if (auto s = socket.recv_all(bytes_of(challenge), deadline, peer_name(0)); !s.ok()) {
    if (retry != nullptr) *retry = true;
    return s;
  }
  if (challenge.magic != kMagic || challenge.version != kVersion) {
    return Status::error(ErrorCode::SystemError,
                         fmt::format("the process at {} is not this job's rank 0 (it does not "
                                     "speak Weft's rendezvous, version {})",
                                     rank0, kVersion));
  }
  Hello hello;
  hello.rank = options.rank;
  hello.size = options.size;
  auto nonce = make_nonce();
  if (!nonce.ok()) return nonce.status();
  hello.nonce = nonce.value();
  const auto proof =
      prove(options.secret, Prover::Peer, challenge.nonce, hello.nonce, options.rank, options.size);
  const auto expected =
      prove(options.secret, Prover::Root, challenge.nonce, hello.nonce, options.rank, options.size);
  if (!proof || !expected) {
    return Status::error(ErrorCode::SystemError, "libcrypto could not compute the proof");
  }
  hello.proof = *proof;
  // From here a closed connection may be rank 0 making room in a flood (or a process that is not
  // this job's rank 0): the caller tries again until its deadline.
  if (auto s = socket.send_all(bytes_of(hello), deadline, peer_name(0)); !s.ok()) {
    if (retry != nullptr) *retry = true;
    return s;
  }
  Proof root_proof{};
  if (auto s = socket.recv_all(bytes_of(root_proof), deadline, peer_name(0)); !s.ok()) {
    if (retry != nullptr) *retry = true;
    return Status::error(s.code,
                         fmt::format("the process at {} did not admit rank {}: it is not this "
                                     "job's rank 0, or this rank's id is of another job ({})",
                                     rank0, options.rank, s.message));
  }
  if (!same_proof(root_proof, *expected)) {
    return Status::error(ErrorCode::SystemError,
                         fmt::format("the process at {} is not this job's rank 0 (it does not "
                                     "hold the rendezvous secret)",
                                     rank0));
  }
  return {};
}

}  // namespace detail

namespace {

Result<std::unique_ptr<Bootstrap>> start_root(const SocketBootstrapOptions& options) {
  std::uint16_t port = 0;
  auto listener = detail::listen_on(options.root, &port);
  if (!listener.ok()) return listener.status();
  if (options.on_listening) options.on_listening(port);
  SocketAddress bound = options.root;
  if (bound.local_name.empty()) bound.port = port;
  const Deadline deadline = std::chrono::steady_clock::now() + options.timeout;
  std::vector<Socket> peers(static_cast<std::size_t>(options.size));
  std::vector<Greeting> greetings;
  DropLog drops(options, to_string(bound));
  ReserveDescriptor reserve;
  // After running out of descriptors with none in reserve: the listener is left alone until
  // then, instead of polled readable again at once.
  Deadline accept_again = std::chrono::steady_clock::now();
  int joined = 1;
  const auto fail = [&](ErrorCode code, std::string reason) -> Status {
    drops.flush();
    tell_peers(peers, reason);
    return Status::error(code, std::move(reason));
  };
  while (joined < options.size) {
    // Connections whose greeting is over: admitted, or dropped while the job goes on.
    for (std::size_t k = 0; k < greetings.size();) {
      if (!greetings[k].done()) {
        ++k;
        continue;
      }
      detail::Admission admission = greetings[k].finish();
      greetings.erase(greetings.begin() + static_cast<std::ptrdiff_t>(k));
      if (!admission.dropped.empty()) {
        // Not one of ours (another user, a port scanner, a stranger without the secret, a
        // crashed peer).
        drops.dropped(admission.dropped);
        continue;
      }
      // A participant of this job that disagrees is a mistake in the job: say it to everyone.
      if (admission.size != options.size) {
        return fail(ErrorCode::Mismatch,
                    fmt::format("socket bootstrap: rank {} expects {} participants, rank 0 "
                                "expects {}",
                                admission.rank, admission.size, options.size));
      }
      if (admission.rank <= 0 || admission.rank >= options.size ||
          peers[static_cast<std::size_t>(admission.rank)].valid()) {
        return fail(ErrorCode::Mismatch,
                    fmt::format("socket bootstrap: rank {} connected twice or is out of range",
                                admission.rank));
      }
      peers[static_cast<std::size_t>(admission.rank)] = std::move(admission.socket);
      ++joined;
    }
    if (joined == options.size) break;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      std::string reason =
          fmt::format("socket bootstrap at {}: ranks {} did not connect within {} ms",
                      to_string(bound), missing_ranks(peers), options.timeout.count());
      if (drops.total() > 0) {
        reason += fmt::format(" ({} connection{} dropped, the first because {})", drops.total(),
                              drops.total() == 1 ? "" : "s", drops.first());
      }
      return fail(ErrorCode::SystemError, std::move(reason));
    }
    Deadline wake = deadline;
    bool expired = false;
    const bool full = greetings.size() >= kMaxGreetings;
    for (Greeting& greeting : greetings) {
      if (now >= greeting.deadline()) {
        greeting.expire();
        expired = true;
      } else if (full && now >= greeting.accepted() + kGreetingGrace) {
        // Its hello, had it sent one, was read in an earlier round: room for the queue.
        greeting.evict(greetings.size());
        expired = true;
      }
      wake = earlier(wake, greeting.deadline());
      if (full) wake = earlier(wake, greeting.accepted() + kGreetingGrace);
    }
    if (expired) continue;
    // One wait for the listener (while there is room) and every connection being greeted.
    const bool listening = now >= accept_again && !full;
    if (now < accept_again) wake = earlier(wake, accept_again);
    std::vector<pollfd> waiting;
    waiting.push_back({listener.value().fd(), static_cast<short>(listening ? POLLIN : 0), 0});
    for (const Greeting& greeting : greetings) waiting.push_back({greeting.fd(), POLLIN, 0});
    if (::poll(waiting.data(), waiting.size(), detail::remaining_ms(wake)) <= 0) continue;
    for (std::size_t k = 0; k < greetings.size(); ++k) {
      if (waiting[k + 1].revents != 0) greetings[k].read();
    }
    if (!listening || waiting[0].revents == 0) continue;
    // The connections waiting to be accepted, as many as there is room for, without waiting
    // for more.
    while (greetings.size() < kMaxGreetings) {
      detail::Accepted accepted = detail::accept_pending(listener.value());
      if (accepted.socket.valid()) {
        greetings.emplace_back(std::move(accepted.socket), options);
        continue;
      }
      if (accepted.out_of_descriptors && reserve.held()) {
        // Close one queued connection unread with the descriptor held back, then take it again.
        reserve.release();
        detail::Accepted refused = detail::accept_pending(listener.value());
        const bool closed = refused.socket.valid();
        refused.socket = Socket();
        reserve.take();
        if (closed) {
          drops.dropped(fmt::format("rank 0 is out of descriptors ({}); closed unread",
                                    accepted.error.message));
          continue;
        }
      }
      if (accepted.out_of_descriptors) {
        // No descriptor at all, even in reserve: leave the listener for a moment.
        accept_again = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
      } else if (!accepted.none) {
        drops.dropped(accepted.error.message);
      }
      break;
    }
  }
  drops.flush();
  auto bootstrap =
      std::make_unique<SocketBootstrap>(0, options.size, options.timeout, std::move(peers));
  // Everyone has arrived once this exchange completes.
  if (auto s = bootstrap->barrier(); !s.ok()) return s;
  return std::unique_ptr<Bootstrap>(std::move(bootstrap));
}

Result<std::unique_ptr<Bootstrap>> start_peer(const SocketBootstrapOptions& options) {
  const Deadline deadline = std::chrono::steady_clock::now() + options.timeout;
  const auto failed = [&](const Status& s) {
    return Status::error(s.code,
                         fmt::format("socket bootstrap, rank {}: {}", options.rank, s.message));
  };
  int closed = 0;
  Status first_closed;
  // Once rank 0 has closed a connection before its proof, that first refusal says more than the
  // last attempt, which the deadline may have cut short (in connecting as well as in talking).
  const auto gave_up = [&](const Status& last) {
    if (closed == 0) return failed(last);
    return failed(Status::error(first_closed.code,
                                fmt::format("{} ({} connections closed before rank 0's proof until "
                                            "the deadline: a flood at rank 0, or not this job's "
                                            "rank 0)",
                                            first_closed.message, closed)));
  };
  for (;;) {
    auto socket = detail::connect_to(options.root, deadline);
    if (!socket.ok()) return gave_up(socket.status());
    bool retry = false;
    const Status introduced = detail::introduce(socket.value(), options, deadline, &retry);
    if (!introduced.ok()) {
      // Closed before rank 0's proof: it made room during a flood (or is not this job's rank
      // 0, which the deadline then says). Again, backing off a little each time.
      if (retry && std::chrono::steady_clock::now() + std::chrono::milliseconds(20) < deadline) {
        if (closed++ == 0) first_closed = introduced;
        std::this_thread::sleep_for(std::chrono::milliseconds(std::min(10 * closed, 200)));
        continue;
      }
      return gave_up(introduced);
    }
    std::vector<Socket> peers;
    peers.push_back(std::move(socket.value()));
    auto bootstrap = std::make_unique<SocketBootstrap>(options.rank, options.size, options.timeout,
                                                       std::move(peers));
    if (auto s = bootstrap->barrier(); !s.ok()) return s;
    return std::unique_ptr<Bootstrap>(std::move(bootstrap));
  }
}

}  // namespace

Result<SocketAddress> parse_socket_address(std::string_view text) {
  constexpr std::string_view kLocal = "unix:";
  if (text.substr(0, kLocal.size()) == kLocal) {
    const std::string_view name = text.substr(kLocal.size());
    if (name.empty() || name.size() > 100 ||
        name.find_first_not_of(
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") !=
            std::string_view::npos) {
      return Status::error(ErrorCode::InvalidArgument,
                           fmt::format("'{}': a local socket name is 1 to 100 letters, digits, "
                                       "'-', '_' or '.'",
                                       text));
    }
    SocketAddress address;
    address.local_name = std::string(name);
    return address;
  }
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

std::string to_string(const SocketAddress& address) {
  if (!address.local_name.empty()) return "unix:" + address.local_name;
  return fmt::format("{}:{}", address.host, address.port);
}

bool listens_on_every_interface(const SocketAddress& address) {
  return address.local_name.empty() &&
         (address.host.empty() || address.host == "*" || address.host == "0.0.0.0");
}

Result<RendezvousSecret> make_rendezvous_secret() {
  RendezvousSecret secret{};
  if (auto s = detail::fill_random(secret); !s.ok()) return s;
  return secret;
}

std::string secret_to_hex(const RendezvousSecret& secret) {
  std::string text;
  for (const std::uint8_t b : secret) text += fmt::format("{:02x}", b);
  return text;
}

std::optional<RendezvousSecret> secret_from_hex(std::string_view digits) {
  const auto value = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  if (digits.size() != 2 * kRendezvousSecretBytes) return std::nullopt;
  RendezvousSecret secret{};
  for (std::size_t k = 0; k < kRendezvousSecretBytes; ++k) {
    const int high = value(digits[2 * k]);
    const int low = value(digits[2 * k + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    secret[k] = static_cast<std::uint8_t>(high << 4 | low);
  }
  return secret;
}

std::string format_rendezvous(const SocketAddress& address, const RendezvousSecret& secret) {
  return to_string(address) + '#' + secret_to_hex(secret);
}

Result<RendezvousPoint> parse_rendezvous(std::string_view text) {
  RendezvousPoint rendezvous;
  const std::size_t mark = text.find('#');
  auto address = parse_socket_address(text.substr(0, mark));
  if (!address.ok()) return address.status();
  rendezvous.address = address.value();
  if (mark == std::string_view::npos) return rendezvous;
  const auto secret = secret_from_hex(text.substr(mark + 1));
  if (!secret) {
    return Status::error(ErrorCode::InvalidArgument,
                         "rendezvous: the secret after '#' is not 32 lowercase hex digits");
  }
  rendezvous.secret = *secret;
  return rendezvous;
}

Result<RendezvousPoint> make_local_rendezvous() {
  auto name = make_rendezvous_secret();
  if (!name.ok()) return name.status();
  auto secret = make_rendezvous_secret();
  if (!secret.ok()) return secret.status();
  RendezvousPoint rendezvous;
  rendezvous.address.local_name = "weft-" + secret_to_hex(name.value()).substr(0, 16);
  rendezvous.secret = secret.value();
  return rendezvous;
}

Result<std::optional<std::chrono::milliseconds>> bootstrap_timeout_from_env(
    const EnvLookup& lookup) {
  const char* value = lookup ? lookup("WEFT_BOOTSTRAP_TIMEOUT_S") : nullptr;
  if (value == nullptr) return std::optional<std::chrono::milliseconds>{};
  double seconds = 0;
  const std::string_view text(value);
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec != std::errc() || end != text.data() + text.size() || !(seconds >= 0.1) ||
      seconds > 86400) {
    return Status::error(
        ErrorCode::InvalidArgument,
        fmt::format("WEFT_BOOTSTRAP_TIMEOUT_S='{}' is not a number of seconds in [0.1, 86400]",
                    value));
  }
  return std::optional{std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000.0))};
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
  if (options.rank != 0 && options.root.local_name.empty() && options.root.port == 0) {
    return Status::error(ErrorCode::InvalidArgument,
                         "socket bootstrap: the others need rank 0's port (0 is only for rank 0)");
  }
  return options.rank == 0 ? start_root(options) : start_peer(options);
}

}  // namespace weft::gpu
