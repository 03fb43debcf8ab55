// The socket rendezvous against processes that are not of the job: strangers without the secret,
// silent and malformed clients, a squatter on rank 0's address. Each either leaves the real ranks
// completing with their own data or fails with a clear error naming the cause; none is accepted.
// Loopback and local sockets only; every wait is bounded.
#include <atomic>
#include <cstring>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "weft/gpu/bootstrap.h"
#include "weft/gpu/socket.h"

namespace weft::gpu {
namespace {

using namespace std::chrono_literals;

// The hello's wire format (bootstrap_socket.cpp), as a stranger would send it.
constexpr std::uint32_t kMagic = 0x57454654;
constexpr std::uint32_t kVersion = 2;
struct WireRootHello {
  std::uint32_t magic;
  std::uint32_t version;
  RendezvousSecret secret;
};
struct WireHello {
  std::uint32_t magic = kMagic;
  std::uint32_t version = kVersion;
  std::int32_t rank = 0;
  std::int32_t size = 0;
  RendezvousSecret secret{};
};

template <class T>
std::span<std::byte> bytes_of(T& value) {
  return std::as_writable_bytes(std::span<T>(&value, 1));
}

RendezvousSecret fresh_secret() {
  auto secret = make_rendezvous_secret();
  REQUIRE(secret.ok());
  return secret.value();
}

SocketAddress fresh_local_address() {
  const RendezvousSecret name = fresh_secret();
  SocketAddress address;
  address.local_name = "weft-test-";
  for (int k = 0; k < 8; ++k) address.local_name += "0123456789abcdef"[name[k] & 15];
  return address;
}

struct Outcome {
  std::vector<Status> statuses;
  std::vector<bool> own_data;  // every rank saw every rank's own record
};

// `size` real ranks meet at `address` with `secret`; `meddle` runs once rank 0 listens (given a
// deadline-bounded way to reach it) and before the others connect.
Outcome run_job(int size, SocketAddress address, RendezvousSecret secret,
                const std::function<void(const SocketAddress&)>& meddle,
                std::chrono::milliseconds timeout = 10s,
                std::chrono::milliseconds hello_timeout = 5s, int absent_rank = -1) {
  Outcome outcome;
  outcome.statuses.resize(static_cast<std::size_t>(size));
  outcome.own_data.assign(static_cast<std::size_t>(size), false);
  std::promise<SocketAddress> listening;
  auto root_address = listening.get_future().share();
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    if (r == absent_rank) continue;  // played by the test itself
    threads.emplace_back([&, r] {
      SocketBootstrapOptions options;
      options.rank = r;
      options.size = size;
      options.timeout = timeout;
      options.hello_timeout = hello_timeout;
      options.secret = secret;
      if (r == 0) {
        options.root = address;
        options.on_listening = [&](std::uint16_t port) {
          SocketAddress bound = address;
          if (bound.local_name.empty()) bound.port = port;
          meddle(bound);
          listening.set_value(bound);
        };
      } else {
        options.root = root_address.get();
      }
      auto bootstrap = make_socket_bootstrap(options);
      if (!bootstrap.ok()) {
        outcome.statuses[static_cast<std::size_t>(r)] = bootstrap.status();
        return;
      }
      std::vector<std::int32_t> records(static_cast<std::size_t>(size), -1);
      records[static_cast<std::size_t>(r)] = 1000 + r;
      outcome.statuses[static_cast<std::size_t>(r)] = bootstrap.value()->allgather(
          std::as_writable_bytes(std::span(records)), sizeof(std::int32_t));
      bool own = true;
      for (int k = 0; k < size; ++k) own = own && records[static_cast<std::size_t>(k)] == 1000 + k;
      outcome.own_data[static_cast<std::size_t>(r)] = own;
    });
  }
  for (auto& t : threads) t.join();
  return outcome;
}

void require_completed(const Outcome& outcome) {
  for (std::size_t r = 0; r < outcome.statuses.size(); ++r) {
    INFO("rank " << r << ": " << outcome.statuses[r].str());
    CHECK(outcome.statuses[r].ok());
    CHECK(outcome.own_data[r]);
  }
}

TEST_CASE("rendezvous: a stranger without the secret claiming a rank is dropped", "[bootstrap]") {
  for (const bool local : {true, false}) {
    SocketAddress address = local ? fresh_local_address() : SocketAddress{"127.0.0.1", 0};
    std::atomic<bool> admitted{false};
    std::thread stranger;
    const Outcome outcome = run_job(3, address, fresh_secret(), [&](const SocketAddress& at) {
      // Connected here, before the real ranks, so rank 0 meets the stranger first.
      auto socket = detail::connect_to(at, std::chrono::steady_clock::now() + 5s);
      if (!socket.ok()) return;
      stranger = std::thread([&admitted, connection = std::move(socket.value())]() mutable {
        const auto deadline = std::chrono::steady_clock::now() + 5s;
        WireRootHello root{};
        if (!connection.recv_all(bytes_of(root), deadline, "rank 0").ok()) return;
        // It learns nothing it can use: rank 0's proof does not let it prove itself.
        WireHello hello;
        hello.rank = 1;
        hello.size = 3;
        if (!connection.send_all(bytes_of(hello), deadline, "rank 0").ok()) return;
        // Admitted, it would next receive the job's records; dropped, the connection closes.
        std::byte any{};
        admitted = connection.recv_all(std::span(&any, 1), deadline, "rank 0").ok();
      });
    });
    if (stranger.joinable()) stranger.join();
    INFO((local ? "local socket" : "TCP"));
    require_completed(outcome);
    CHECK_FALSE(admitted);
  }
}

TEST_CASE("rendezvous: silent and malformed clients are dropped and the job goes on",
          "[bootstrap]") {
  std::vector<detail::Socket> silent;
  std::atomic<int> connected{0};
  const SocketAddress address = fresh_local_address();
  const Outcome outcome = run_job(
      2, address, fresh_secret(),
      [&](const SocketAddress& at) {
        const auto deadline = std::chrono::steady_clock::now() + 5s;
        // Two that never say anything, one that sends garbage: queued before the real rank 1.
        for (int k = 0; k < 2; ++k) {
          auto socket = detail::connect_to(at, deadline);
          if (!socket.ok()) return;
          silent.push_back(std::move(socket.value()));
          ++connected;
        }
        auto garbage = detail::connect_to(at, deadline);
        if (!garbage.ok()) return;
        std::array<std::byte, 64> noise{};
        noise.fill(std::byte{0x41});
        if (garbage.value().send_all(noise, deadline, "rank 0").ok()) ++connected;
        silent.push_back(std::move(garbage.value()));
      },
      10s, 300ms);
  CHECK(connected == 3);
  require_completed(outcome);
}

TEST_CASE("rendezvous: connections that say nothing delay nobody: they are greeted side by side",
          "[bootstrap]") {
  std::vector<detail::Socket> silent;
  const auto started = std::chrono::steady_clock::now();
  const Outcome outcome = run_job(
      3, fresh_local_address(), fresh_secret(),
      [&](const SocketAddress& at) {
        for (int k = 0; k < 4; ++k) {
          auto socket = detail::connect_to(at, std::chrono::steady_clock::now() + 5s);
          if (socket.ok()) silent.push_back(std::move(socket.value()));
        }
      },
      20s, /*hello_timeout=*/10s);
  const auto took = std::chrono::steady_clock::now() - started;
  CHECK(silent.size() == 4);
  require_completed(outcome);
  // Served one after the other, the four would hold the job for 40 s.
  CHECK(took < 8s);
}

TEST_CASE("rendezvous: a participant told the wrong rank count fails, clearly", "[bootstrap]") {
  const SocketAddress address = fresh_local_address();
  const RendezvousSecret secret = fresh_secret();
  std::thread confused;
  Status confused_status;
  const Outcome outcome = run_job(
      3, address, secret,
      [&](const SocketAddress& at) {
        confused = std::thread([&, at] {
          SocketBootstrapOptions options;
          options.rank = 2;
          options.size = 5;  // holds the secret, but believes in another job size
          options.root = at;
          options.secret = secret;
          options.timeout = 3s;
          auto bootstrap = make_socket_bootstrap(options);
          confused_status = bootstrap.ok() ? Status{} : bootstrap.status();
        });
      },
      3s, 5s, /*absent_rank=*/2);
  confused.join();
  CHECK_FALSE(outcome.statuses[0].ok());
  CHECK_THAT(outcome.statuses[0].message, Catch::Contains("rank 2 expects 5 participants"));
  CHECK_FALSE(outcome.statuses[1].ok());
  CHECK_FALSE(confused_status.ok());
}

TEST_CASE("rendezvous: two holders of the secret claiming one rank fail, clearly", "[bootstrap]") {
  const RendezvousSecret secret = fresh_secret();
  std::thread duplicate;
  const Outcome outcome = run_job(
      3, fresh_local_address(), secret,
      [&](const SocketAddress& at) {
        duplicate = std::thread([&, at] {
          SocketBootstrapOptions options;
          options.rank = 1;  // the real rank 1 comes too
          options.size = 3;
          options.root = at;
          options.secret = secret;
          options.timeout = 3s;
          (void)make_socket_bootstrap(options);
        });
      },
      3s, 5s, /*absent_rank=*/2);
  duplicate.join();
  CHECK_FALSE(outcome.statuses[0].ok());
  CHECK_THAT(outcome.statuses[0].message, Catch::Contains("rank 1 connected twice"));
  CHECK_FALSE(outcome.statuses[1].ok());
}

TEST_CASE("rendezvous: rank 0 tells the ranks it accepted why it gives up", "[bootstrap]") {
  const SocketAddress address = fresh_local_address();
  const RendezvousSecret secret = fresh_secret();
  std::promise<void> listening;
  Status rank1;
  std::thread peer([&] {
    listening.get_future().wait();
    SocketBootstrapOptions options;
    options.rank = 1;
    options.size = 3;
    options.root = address;
    options.secret = secret;
    options.timeout = 5s;
    auto bootstrap = make_socket_bootstrap(options);
    rank1 = bootstrap.ok() ? Status{} : bootstrap.status();
  });
  SocketBootstrapOptions root;
  root.rank = 0;
  root.size = 3;  // rank 2 never comes
  root.root = address;
  root.secret = secret;
  root.timeout = 700ms;
  root.on_listening = [&](std::uint16_t) { listening.set_value(); };
  auto started = make_socket_bootstrap(root);
  peer.join();
  REQUIRE_FALSE(started.ok());
  CHECK_THAT(started.status().message, Catch::Contains("ranks 2 did not connect"));
  REQUIRE_FALSE(rank1.ok());
  CHECK_THAT(rank1.message,
             Catch::Contains("rank 0 gave up:") && Catch::Contains("ranks 2 did not connect"));
}

TEST_CASE("rendezvous: a squatter on rank 0's address is not taken for rank 0", "[bootstrap]") {
  const SocketAddress address = fresh_local_address();
  // The squatter holds the name first and answers like a rank 0, without the secret.
  auto listener = detail::listen_on(address, nullptr);
  REQUIRE(listener.ok());
  std::atomic<bool> squatter_heard_hello{false};
  std::thread squatter([&] {
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    auto client = detail::accept_one(listener.value(), deadline);
    if (!client.ok()) return;
    WireRootHello fake{kMagic, kVersion, {}};
    (void)client.value().send_all(bytes_of(fake), deadline, "rank 1");
    WireHello heard{};
    // Whatever it waits for, the peer's secret never comes.
    squatter_heard_hello = client.value().recv_all(bytes_of(heard), deadline, "rank 1").ok();
  });
  SocketBootstrapOptions peer;
  peer.rank = 1;
  peer.size = 2;
  peer.root = address;
  peer.secret = fresh_secret();
  peer.timeout = 5s;
  auto joined = make_socket_bootstrap(peer);
  squatter.join();
  CHECK_FALSE(squatter_heard_hello);
  REQUIRE_FALSE(joined.ok());
  CHECK_THAT(joined.status().message, Catch::Contains("is not this job's rank 0"));

  // The real rank 0, arriving second, says the address is taken instead of waiting.
  SocketBootstrapOptions root;
  root.rank = 0;
  root.size = 2;
  root.root = address;
  root.timeout = 1s;
  auto started = make_socket_bootstrap(root);
  REQUIRE_FALSE(started.ok());
  CHECK_THAT(started.status().message, Catch::Contains("bind unix:" + address.local_name));
}

TEST_CASE("rendezvous: local socket names and secrets", "[bootstrap]") {
  auto local = parse_socket_address("unix:weft-0123abcd");
  REQUIRE(local.ok());
  CHECK(local.value().local_name == "weft-0123abcd");
  CHECK(to_string(local.value()) == "unix:weft-0123abcd");
  CHECK_FALSE(parse_socket_address("unix:").ok());
  CHECK_FALSE(parse_socket_address("unix:has space").ok());
  CHECK(listens_on_every_interface(parse_socket_address(":29500").value()));
  CHECK(listens_on_every_interface(parse_socket_address("0.0.0.0:29500").value()));
  CHECK_FALSE(listens_on_every_interface(parse_socket_address("127.0.0.1:29500").value()));
  CHECK(fresh_secret() != fresh_secret());
}

TEST_CASE("rendezvous: the text a job hands out, address and secret", "[bootstrap]") {
  auto fresh = make_local_rendezvous();
  REQUIRE(fresh.ok());
  const std::string text = format_rendezvous(fresh.value().address, fresh.value().secret);
  CHECK(text.rfind("unix:weft-", 0) == 0);
  CHECK(text.size() == 26 + 1 + 32);
  auto parsed = parse_rendezvous(text);
  REQUIRE(parsed.ok());
  CHECK(parsed.value().address.local_name == fresh.value().address.local_name);
  CHECK(parsed.value().secret == fresh.value().secret);
  // A bare address: no secret.
  auto bare = parse_rendezvous("127.0.0.1:29500");
  REQUIRE(bare.ok());
  CHECK(bare.value().address.port == 29500);
  CHECK(bare.value().secret == RendezvousSecret{});
  CHECK_FALSE(parse_rendezvous("127.0.0.1:29500#00ff").ok());
  CHECK_FALSE(parse_rendezvous("unix:weft-1#" + std::string(32, 'G')).ok());
  CHECK_FALSE(parse_rendezvous("nohost#" + std::string(32, '0')).ok());
}

}  // namespace
}  // namespace weft::gpu
