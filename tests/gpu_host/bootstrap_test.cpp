// Bootstraps: the in-process rendezvous among threads and the socket rendezvous over loopback.
#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <thread>
#include <vector>

#include "weft/communicator/bootstrap.h"

namespace weft::gpu {
namespace {

using namespace std::chrono_literals;

// Each participant contributes `bytes` bytes derived from (round, rank); returns what it saw.
Status exchange(Bootstrap& b, int round, std::size_t bytes, std::vector<std::byte>& out) {
  out.assign(static_cast<std::size_t>(b.size()) * bytes, std::byte{0});
  for (std::size_t k = 0; k < bytes; ++k) {
    out[static_cast<std::size_t>(b.rank()) * bytes + k] =
        static_cast<std::byte>((round * 31 + b.rank() * 7 + static_cast<int>(k)) & 0xff);
  }
  return b.allgather(out, bytes);
}

bool holds_everyone(const std::vector<std::byte>& data, int size, int round, std::size_t bytes) {
  for (int r = 0; r < size; ++r) {
    for (std::size_t k = 0; k < bytes; ++k) {
      if (data[static_cast<std::size_t>(r) * bytes + k] !=
          static_cast<std::byte>((round * 31 + r * 7 + static_cast<int>(k)) & 0xff)) {
        return false;
      }
    }
  }
  return true;
}

TEST_CASE("in-process allgather over many rounds and record sizes", "[bootstrap]") {
  const int size = 5;
  auto rendezvous = InProcessRendezvous::create(size, 10s);
  std::vector<std::unique_ptr<Bootstrap>> members;
  for (int r = 0; r < size; ++r) {
    auto joined = rendezvous->join(r);
    REQUIRE(joined.ok());
    members.push_back(std::move(joined.value()));
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      std::vector<std::byte> data;
      for (int round = 0; round < 50; ++round) {
        const std::size_t bytes = 1 + static_cast<std::size_t>(round % 7) * 13;
        if (!exchange(*members[static_cast<std::size_t>(r)], round, bytes, data).ok() ||
            !holds_everyone(data, size, round, bytes)) {
          ++failures;
        }
        if (!members[static_cast<std::size_t>(r)]->barrier().ok()) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(failures == 0);
}

TEST_CASE("in-process rendezvous refuses a rank twice or out of range", "[bootstrap]") {
  auto rendezvous = InProcessRendezvous::create(2);
  REQUIRE(rendezvous->join(0).ok());
  CHECK(rendezvous->join(0).status().code == ErrorCode::InvalidUsage);
  CHECK(rendezvous->join(2).status().code == ErrorCode::InvalidArgument);
}

TEST_CASE("an in-process participant that never comes is named after the timeout", "[bootstrap]") {
  auto rendezvous = InProcessRendezvous::create(3, 200ms);
  auto zero = rendezvous->join(0);
  auto one = rendezvous->join(1);
  REQUIRE(zero.ok());
  REQUIRE(one.ok());
  auto other = std::async(std::launch::async, [&] {
    std::vector<std::byte> data;
    return exchange(*one.value(), 0, 4, data);
  });
  std::vector<std::byte> data;
  const Status status = exchange(*zero.value(), 0, 4, data);
  CHECK_FALSE(status.ok());
  // Rank 1's thread may itself arrive after the timeout on a loaded machine; rank 2 must be named.
  CHECK_THAT(status.message, Catch::Matches(".*ranks (1, )?2 never arrived.*"));
  CHECK_FALSE(other.get().ok());
}

TEST_CASE("a participant whose deadline fires later still names the missing rank", "[bootstrap]") {
  // Rank 1 enters first, so its deadline fires first; rank 0 learns of the failure from rank 1
  // (while waiting, or on entering after it) and must still say which rank never came.
  auto rendezvous = InProcessRendezvous::create(3, 200ms);
  auto zero = rendezvous->join(0);
  auto one = rendezvous->join(1);
  REQUIRE(zero.ok());
  REQUIRE(one.ok());
  auto first = std::async(std::launch::async, [&] {
    std::vector<std::byte> data;
    return exchange(*one.value(), 0, 4, data);
  });
  std::this_thread::sleep_for(100ms);
  std::vector<std::byte> data;
  const Status later = exchange(*zero.value(), 0, 4, data);
  const Status earlier = first.get();
  CHECK_FALSE(earlier.ok());
  CHECK_FALSE(later.ok());
  // Usually rank 1 fails first; on a loaded machine its thread may start late, so either may.
  CHECK_THAT(earlier.message, Catch::Matches(".*rank [01]: ranks ([01], )?2 never arrived.*"));
  CHECK_THAT(later.message, Catch::Matches(".*rank [01]: ranks ([01], )?2 never arrived.*"));
}

TEST_CASE("in-process participants that disagree on the record size fail", "[bootstrap]") {
  auto rendezvous = InProcessRendezvous::create(2, 2s);
  auto zero = rendezvous->join(0);
  auto one = rendezvous->join(1);
  auto other = std::async(std::launch::async, [&] {
    std::vector<std::byte> data;
    return exchange(*one.value(), 0, 8, data);
  });
  std::vector<std::byte> data;
  const Status mine = exchange(*zero.value(), 0, 4, data);
  const Status theirs = other.get();
  CHECK_FALSE(mine.ok());
  CHECK_FALSE(theirs.ok());
  CHECK((mine.code == ErrorCode::Mismatch || theirs.code == ErrorCode::Mismatch));
}

TEST_CASE("socket addresses parse as host:port", "[bootstrap]") {
  auto a = parse_socket_address("node7:29500");
  REQUIRE(a.ok());
  CHECK(a.value().host == "node7");
  CHECK(a.value().port == 29500);
  auto any = parse_socket_address(":0");
  REQUIRE(any.ok());
  CHECK(any.value().host.empty());
  CHECK_FALSE(parse_socket_address("node7").ok());
  CHECK_FALSE(parse_socket_address("node7:http").ok());
  CHECK_FALSE(parse_socket_address("node7:70000").ok());
}

TEST_CASE("a socket rendezvous of an absurd size is refused before it allocates", "[bootstrap]") {
  SocketBootstrapOptions options;
  options.root = {"127.0.0.1", 0};
  options.size = 2147483647;
  auto bootstrap = make_socket_bootstrap(options);
  REQUIRE_FALSE(bootstrap.ok());
  CHECK(bootstrap.status().code == ErrorCode::InvalidArgument);
  CHECK_THAT(bootstrap.status().message, Catch::Contains("more than the 4096"));
}

TEST_CASE("socket rendezvous over loopback: allgather and barrier among threads", "[bootstrap]") {
  const int size = 4;
  std::promise<std::uint16_t> port_promise;
  auto port_future = port_promise.get_future().share();
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      SocketBootstrapOptions options;
      options.rank = r;
      options.size = size;
      options.timeout = 10s;
      if (r == 0) {
        options.root = {"127.0.0.1", 0};
        options.on_listening = [&](std::uint16_t port) { port_promise.set_value(port); };
      } else {
        options.root = {"127.0.0.1", port_future.get()};
      }
      auto bootstrap = make_socket_bootstrap(options);
      if (!bootstrap.ok()) {
        ++failures;
        return;
      }
      std::vector<std::byte> data;
      for (int round = 0; round < 20; ++round) {
        const std::size_t bytes = 1 + static_cast<std::size_t>(round) * 97;
        if (!exchange(*bootstrap.value(), round, bytes, data).ok() ||
            !holds_everyone(data, size, round, bytes)) {
          ++failures;
        }
      }
      if (!bootstrap.value()->barrier().ok()) ++failures;
    });
  }
  for (auto& t : threads) t.join();
  CHECK(failures == 0);
}

TEST_CASE("socket rendezvous names the ranks that never connected", "[bootstrap]") {
  SocketBootstrapOptions options;
  options.rank = 0;
  options.size = 3;
  options.root = {"127.0.0.1", 0};
  options.timeout = 300ms;
  auto bootstrap = make_socket_bootstrap(options);
  REQUIRE_FALSE(bootstrap.ok());
  CHECK(bootstrap.status().code == ErrorCode::SystemError);
  CHECK_THAT(bootstrap.status().message, Catch::Contains("ranks 1, 2 did not connect"));
}

TEST_CASE("a socket peer with no root gives up after its timeout", "[bootstrap]") {
  // Find a port nobody listens on: bind, learn it, close.
  std::uint16_t port = 0;
  {
    SocketBootstrapOptions probe;
    probe.size = 2;
    probe.root = {"127.0.0.1", 0};
    probe.timeout = 1ms;
    probe.on_listening = [&](std::uint16_t p) { port = p; };
    (void)make_socket_bootstrap(probe);
  }
  REQUIRE(port != 0);
  SocketBootstrapOptions options;
  options.rank = 1;
  options.size = 2;
  options.root = {"127.0.0.1", port};
  options.timeout = 200ms;
  auto bootstrap = make_socket_bootstrap(options);
  REQUIRE_FALSE(bootstrap.ok());
  CHECK_THAT(bootstrap.status().message, Catch::Contains("rank 1") && Catch::Contains("connect"));
}

TEST_CASE("socket options are checked", "[bootstrap]") {
  SocketBootstrapOptions options;
  options.rank = 2;
  options.size = 2;
  CHECK(make_socket_bootstrap(options).status().code == ErrorCode::InvalidArgument);
  options.rank = 1;
  options.root = {"127.0.0.1", 0};
  CHECK(make_socket_bootstrap(options).status().code == ErrorCode::InvalidArgument);
  options.rank = 0;
  options.size = 1;
  auto single = make_socket_bootstrap(options);
  REQUIRE(single.ok());
  CHECK(single.value()->size() == 1);
}

}  // namespace
}  // namespace weft::gpu
