// The proxy (docs/architecture.md §6): its memory layout, the descriptors the proxies exchange,
// who crosses whom, and whole calls between participants of this process that stand for hosts
// (tests/proxy/across_hosts.h), with the faults a network brings: a peer that cannot be reached,
// that refuses the connection, or that sends a descriptor out of range.
#include <algorithm>
#include <chrono>
#include <cstring>

#include <catch2/catch.hpp>

#include "across_hosts.h"
#include "builtin_algorithms.h"
#include "skip.h"
#include "weft/program/connection_layout.h"
#include "weft/program/device_abi.h"
#include "weft/program/message_layout.h"
#include "weft/proxy/participants.h"
#include "weft/proxy/peer_record.h"
#include "weft/proxy/proxy_layout.h"
#include "weft/proxy/wire.h"

namespace weft::proxy {
namespace {

using testing::CallSpec;
using testing::Outcome;
using testing::run_across;
using testing::Side;

gpu::RuntimeOptions call_options() {
  gpu::RuntimeOptions o;
  o.timeout_s = 60;       // generous: hundreds of threads share two cores
  o.max_tile_bytes = 64;  // many tiles, so many messages per call
  return o;
}

std::vector<gpu::RegionLayout> region_layouts(const ir::Algorithm& algo,
                                              const gpu::ProtocolOptions& options) {
  std::vector<gpu::RegionLayout> layouts;
  for (int rank = 0; rank < algo.ngpus; ++rank) {
    layouts.push_back(gpu::layout_region(algo, rank, options));
  }
  return layouts;
}

bool skip_without_ucx() {
  if (gpu::Status s = testing::ucx_available(); !s.ok()) {
    test_support::skip_test_case("no UCX: " + s.message);
    return true;
  }
  return false;
}

TEST_CASE(
    "Proxy layout: every crossing connection has its stages, apart, aligned, each line its own",
    "[proxy]") {
  const ir::Algorithm ring = perf::ring_allreduce(4, ir::Protocol::LL, 2);
  const gpu::ProtocolOptions options{32 * 1024, 8};
  const auto layouts = region_layouts(ring, options);
  const std::vector<int> owner = {0, 0, 1, 1};
  const auto crosses = [&](int a, int b) { return owner[a] != owner[b]; };
  const ProxyLayout a = layout_proxy(layouts, owner, 0, crosses, ir::Protocol::LL);
  const ProxyLayout b = layout_proxy(layouts, owner, 1, crosses, ir::Protocol::LL);
  // A ring of 4 on two channels crosses between ranks 1 and 2, and 3 and 0, each way per channel.
  std::size_t crossing = 0;
  for (const auto& layout : layouts) {
    for (const auto& send : layout.sends) {
      if (crosses(send.connection.sender, send.connection.receiver)) ++crossing;
    }
  }
  CHECK(a.sends.size() + b.sends.size() == crossing);
  CHECK(a.receives.size() + b.receives.size() == crossing);
  CHECK(a.lands_apart);
  CHECK(a.local_ranks == std::vector<int>{0, 1});
  CHECK(a.remote_ranks == std::vector<int>{2, 3});
  // Every send of one side is a receive of the other.
  for (const SendStage& send : a.sends) CHECK(b.find_receive(send.connection) != nullptr);
  for (const SendStage& send : b.sends) CHECK(a.find_receive(send.connection) != nullptr);
  // No two stages overlap, FIFOs start on 256 bytes, counters on their own 128-byte lines.
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  const std::size_t fifo = options.slot_bytes * static_cast<std::size_t>(options.fifo_depth);
  for (const SendStage& s : a.sends) {
    CHECK(s.fifo % 256 == 0);
    spans.push_back({s.fifo, s.fifo + fifo});
    for (std::size_t word : {s.tail, s.head, s.ack_inbox}) {
      CHECK(word % 128 == 0);
      spans.push_back({word, word + 128});
    }
    spans.push_back({s.descriptors, s.descriptors + 8 * 8});
    spans.push_back({s.outgoing, s.outgoing + 8 * kWireEntryBytes});
  }
  for (const ReceiveStage& r : a.receives) {
    CHECK(r.landing != r.fifo);
    spans.push_back({r.fifo, r.fifo + fifo});
    spans.push_back({r.landing, r.landing + fifo});
    for (std::size_t word : {r.tail, r.head, r.ack_source}) spans.push_back({word, word + 128});
    spans.push_back({r.inbox, r.inbox + 8 * kWireEntryBytes});
  }
  for (int remote : a.remote_ranks)
    spans.push_back({a.arrival_out(remote), a.arrival_out(remote) + 32});
  for (int local : a.local_ranks) {
    spans.push_back({a.arrival_in(local, 0), a.arrival_in(local, 0) + 32});
  }
  std::sort(spans.begin(), spans.end());
  for (std::size_t k = 1; k < spans.size(); ++k) {
    INFO("span " << k << " starts at " << spans[k].first << ", the one before ends at "
                 << spans[k - 1].second);
    CHECK(spans[k].first >= spans[k - 1].second);
  }
  CHECK(spans.back().second <= a.total_bytes);
  CHECK(a.arrival_out(0) == kNoOffset);    // a local rank has no outgoing table
  CHECK(a.arrival_in(2, 0) == kNoOffset);  // nor a remote one an incoming one
  // Simple lands in the FIFO itself: its kernel reads a slot only after the tail.
  const ProxyLayout simple = layout_proxy(layouts, owner, 0, crosses, ir::Protocol::Simple);
  for (const ReceiveStage& r : simple.receives) CHECK(r.landing == r.fifo);
  CHECK(simple.total_bytes < a.total_bytes);
}

TEST_CASE("Proxy layout: participants of one host cross nobody; their ranks are not remote",
          "[proxy]") {
  const ir::Algorithm ring = perf::ring_allreduce(4, ir::Protocol::Simple);
  const auto layouts = region_layouts(ring, {256 * 1024, 4});
  Participants who;
  who.hosts = {"a", "a", "b", "b"};
  who.owner = {0, 1, 2, 3};
  const auto crosses = [&](int x, int y) { return who.crosses(x, y); };
  const ProxyLayout first = layout_proxy(layouts, who.owner, 0, crosses, ir::Protocol::Simple);
  CHECK(first.remote_ranks == std::vector<int>{2, 3});
  // Ring 0→1→2→3→0: rank 0 receives from 3 (host b) and sends to 1 (host a).
  REQUIRE(first.receives.size() == 1);
  CHECK(first.receives[0].connection.sender == 3);
  CHECK(first.sends.empty());
  CHECK_FALSE(who.crosses(0, 1));
  CHECK(who.crosses(1, 2));
  who.every_process = true;  // host mode: each process's memory is its own
  CHECK(who.crosses(0, 1));
  CHECK(who.where(2) == "host 'b' (process 2 there)");
}

TEST_CASE("Wire descriptors: read only whole and only as announced; anything else named",
          "[proxy]") {
  const ir::Connection c{3, 5, 1};
  const int depth = 4;
  const std::size_t slot = 4096;
  // Message 6 goes in slot 2; the slot last held message 2.
  const WireDescriptor now = make_descriptor(6, c, 2, 1000);
  const WireDescriptor before = make_descriptor(2, c, 2, 640);
  auto read = read_descriptor(now, 6, c, depth, slot);
  REQUIRE(read.ok());
  REQUIRE(read.value());
  CHECK(read.value()->bytes == 1000);
  CHECK(read.value()->slot == 2);
  CHECK(read.value()->connection == c);
  // The slot's last message, a slot never written, or half of each: nothing yet.
  CHECK_FALSE(read_descriptor(before, 6, c, depth, slot).value());
  CHECK_FALSE(read_descriptor(WireDescriptor{}, 2, c, depth, slot).value());
  WireDescriptor torn = before;
  torn.words[0] = now.words[0];
  torn.words[3] = now.words[3];
  CHECK_FALSE(read_descriptor(torn, 6, c, depth, slot).value());
  // Out of range or out of turn: refused, saying what.
  const auto refused = [&](const WireDescriptor& d) {
    auto r = read_descriptor(d, 6, c, depth, slot);
    REQUIRE_FALSE(r.ok());
    return r.status().message;
  };
  CHECK_THAT(refused(make_descriptor(6, c, 9, 1000)),
             Catch::Contains("names slot 9; the FIFO has 4 slots"));
  CHECK_THAT(refused(make_descriptor(6, c, 2, 5000)),
             Catch::Contains("announces 5000 bytes; a slot holds 4096"));
  CHECK_THAT(refused(make_descriptor(6, ir::Connection{3, 4, 1}, 2, 10)),
             Catch::Contains("names channel 3, rank 4 → rank 1 instead"));
  CHECK_THAT(refused(make_descriptor(7, c, 2, 10)), Catch::Contains("neither message 6's"));
}

TEST_CASE("Wire entries: a small message inline, an acknowledgement on the way back", "[proxy]") {
  const ir::Connection c{0, 2, 5};
  // Message 9 of 37 bytes, inline, in slot 1 of 4; it carries the head 70 of the receiver's
  // send position 3.
  WireEntry entry;
  entry.descriptor = make_descriptor(9, c, 1, 37, true);
  piggyback(entry.descriptor, 9, 3, 70);
  std::vector<std::byte> payload(37);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::byte>(i * 7);
  pack_inline(entry, 9, payload);
  auto read = read_descriptor(entry.descriptor, 9, c, 4, 4096);
  REQUIRE(read.ok());
  REQUIRE(read.value());
  CHECK(read.value()->inline_payload);
  CHECK(read.value()->acknowledged_send == 3);
  CHECK(read.value()->head == 70);
  std::vector<std::byte> out(37);
  CHECK(unpack_inline(entry.payload, 9, 37, out.data()));
  CHECK(out == payload);
  // A word of the payload still of another message: not yet.
  entry.payload[5] = 0;
  CHECK_FALSE(unpack_inline(entry.payload, 9, 37, out.data()));
  // Without piggyback, no acknowledgement; more inline bytes than an entry holds: refused.
  auto plain = read_descriptor(make_descriptor(9, c, 1, 37, true), 9, c, 4, 4096);
  CHECK(plain.value()->acknowledged_send == -1);
  auto big = read_descriptor(make_descriptor(9, c, 1, 300, true), 9, c, 4, 4096);
  REQUIRE_FALSE(big.ok());
  CHECK_THAT(big.status().message, Catch::Contains("300 inline bytes; an entry holds 256"));
}

TEST_CASE("Peer records: what a proxy sends at connect reads back; a cut one is refused",
          "[proxy]") {
  PeerRecord ready;
  ready.state = EngineState::Ready;
  ready.address = {std::byte{1}, std::byte{2}, std::byte{3}};
  ready.hello_key = {std::byte{9}, std::byte{8}};
  auto back = decode_peer_record(encode_peer_record(ready), 3);
  REQUIRE(back.ok());
  CHECK(back.value().address == ready.address);
  CHECK(back.value().hello_key == ready.hello_key);
  PeerRecord failed;
  failed.state = EngineState::Failed;
  failed.failure = "UCX is not installed here";
  CHECK(decode_peer_record(encode_peer_record(failed), 3).value().failure == failed.failure);
  auto bytes = encode_peer_record(ready);
  bytes.resize(5);
  auto cut = decode_peer_record(bytes, 3);
  REQUIRE_FALSE(cut.ok());
  CHECK_THAT(cut.status().message, Catch::Contains("participant 3 sent a malformed"));
}

TEST_CASE("Host ids: WEFT_HOSTID names the host; a bad one is refused naming the variable",
          "[proxy]") {
  const auto with = [](const char* value) {
    return host_id([value](const char* name) {
      return std::string_view(name) == "WEFT_HOSTID" ? value : nullptr;
    });
  };
  CHECK(with("node-7.cluster:a").value() == "node-7.cluster:a");
  CHECK_FALSE(with(nullptr).value().empty());  // the hostname
  for (const char* bad : {"", "has space", "semi;colon"}) {
    auto r = with(bad);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message, Catch::Contains("WEFT_HOSTID"));
  }
  CHECK_FALSE(with(std::string(64, 'x').c_str()).ok());
}

TEST_CASE("Message sizes: what a sender leaves for the proxy covers every piece it wrote",
          "[proxy]") {
  using gpu::device::message_bytes;
  // Simple: up to the last piece's end.
  CHECK(message_bytes(gpu::device::kSimple, 3, 1024, 100, 4, 65536, false) == 2 * 1024 + 400);
  // LL: 16-byte lines of 8 payload bytes; the whole slot when the message rewrites it.
  CHECK(message_bytes(gpu::device::kLL, 2, 512, 10, 4, 32768, false) == (64 + 5) * 16);
  CHECK(message_bytes(gpu::device::kLL, 2, 512, 10, 4, 32768, true) == 32768);
  // LL128: 128-byte lines of 120 payload bytes.
  CHECK(message_bytes(gpu::device::kLL128, 2, 240, 31, 8, 131072, false) == (2 + 3) * 128);
}

// ---- whole calls across "hosts" -------------------------------------------------------------

TEST_CASE("Across hosts in host mode: a ring's messages cross through the proxies, every protocol",
          "[proxy][across]") {
  if (skip_without_ucx()) return;
  for (const ir::Protocol protocol :
       {ir::Protocol::Simple, ir::Protocol::LL, ir::Protocol::LL128}) {
    const ir::Algorithm ring = perf::ring_allreduce(4, protocol, 2);
    const std::vector<Side> sides = {{"a", {0, 1}, {}, {}}, {"b", {2, 3}, {}, {}}};
    const auto outcomes = run_across(sides, ring, call_options(), CallSpec{});
    for (std::size_t p = 0; p < outcomes.size(); ++p) {
      INFO(ir::to_string(protocol) << ", participant " << p << ": " << outcomes[p].status.str());
      CHECK(outcomes[p].status.ok());
      CHECK(outcomes[p].ran);
      CHECK(outcomes[p].wrong == 0);
      CHECK_THAT(outcomes[p].network, Catch::Contains("UCX"));
    }
  }
}

TEST_CASE("Across hosts in host mode: all-pairs allreduce in place, every rank its own host",
          "[proxy][across]") {
  if (skip_without_ucx()) return;
  const ir::Algorithm pairs = perf::allpairs_allreduce(4, ir::Protocol::Simple);
  std::vector<Side> sides;
  for (int r = 0; r < 4; ++r) sides.push_back(Side{"h" + std::to_string(r), {r}, {}, {}});
  CallSpec spec;
  spec.in_place = true;
  spec.dtype = DataType::Half;
  spec.calls = 3;
  const auto outcomes = run_across(sides, pairs, call_options(), spec);
  for (const Outcome& out : outcomes) {
    INFO(out.status.str());
    CHECK(out.status.ok());
    CHECK(out.wrong == 0);
  }
}

// A faulty peer: its proxy's descriptors are changed just before they go out.
std::vector<Outcome> run_with_tampering(std::function<void(WireDescriptor&)> tamper,
                                        ir::Protocol protocol = ir::Protocol::Simple) {
  const ir::Algorithm ring = perf::ring_allreduce(4, protocol);
  std::vector<Side> sides = {{"a", {0, 1}, {}, {}}, {"b", {2, 3}, {}, {}}};
  sides[1].proxy.tamper = std::move(tamper);
  gpu::RuntimeOptions options = call_options();
  options.timeout_s = 30;
  return run_across(sides, ring, options, CallSpec{});
}

TEST_CASE(
    "A descriptor from a peer that names a slot out of range is refused, naming the peer "
    "and the step",
    "[proxy][across][fault]") {
  if (skip_without_ucx()) return;
  const auto started = std::chrono::steady_clock::now();
  const auto outcomes = run_with_tampering([](WireDescriptor& d) {
    // Slot 9 of a FIFO of 4, the message's flag kept (it passes for a whole descriptor).
    d.words[1] = (d.words[1] & 0xffffffff00000000ull) | 9u;
  });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // Rank 0 (host a) receives from rank 3 (host b): its proxy refuses and the call ends.
  const std::string& message = outcomes[0].status.message;
  INFO(outcomes[0].status.str());
  CHECK_FALSE(outcomes[0].status.ok());
  CHECK_THAT(message, Catch::Contains("rank 3 on host 'b'"));
  CHECK_THAT(message, Catch::Contains("names slot 9; the FIFO has 4 slots"));
  CHECK_THAT(message, Catch::Contains("the call ended at gpu"));
  CHECK_THAT(message, Catch::Contains("/ step"));
  CHECK(seconds < 30);  // well within WEFT_TIMEOUT_S: the refusal ends the waits
}

TEST_CASE("A descriptor from a peer that announces more than a slot holds is refused",
          "[proxy][across][fault]") {
  if (skip_without_ucx()) return;
  const auto outcomes = run_with_tampering(
      [](WireDescriptor& d) { d.words[0] = (d.words[0] & 0xffffffff00000000ull) | 0x7fffffffu; },
      ir::Protocol::LL);
  INFO(outcomes[0].status.str());
  CHECK_FALSE(outcomes[0].status.ok());
  CHECK_THAT(outcomes[0].status.message,
             Catch::Contains("announces 2147483647 bytes; a slot holds"));
  CHECK_THAT(outcomes[0].status.message, Catch::Contains("refused"));
}

TEST_CASE("UCX that cannot reach a peer: every participant fails at once, naming it and its host",
          "[proxy][across][fault]") {
  if (skip_without_ucx()) return;
  const ir::Algorithm ring = perf::ring_allreduce(2, ir::Protocol::Simple);
  // Host a's UCX may use only TCP, host b's only shared memory: no transport in common.
  std::vector<Side> sides = {{"a", {0}, {}, {}}, {"b", {1}, {}, {}}};
  sides[0].proxy.engine.ucx_settings = {{"TLS", "tcp"}};
  sides[1].proxy.engine.ucx_settings = {{"TLS", "sm"}};
  const auto started = std::chrono::steady_clock::now();
  const auto outcomes = run_across(sides, ring, call_options(), CallSpec{});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  for (const Outcome& out : outcomes) {
    INFO(out.status.str());
    CHECK_FALSE(out.status.ok());
    CHECK_FALSE(out.ran);
  }
  CHECK_THAT(outcomes[0].status.message, Catch::Contains("UCX cannot reach participant 1"));
  CHECK_THAT(outcomes[0].status.message, Catch::Contains("(host 'b')"));
  CHECK_THAT(outcomes[0].status.message, Catch::Contains("UCX_TLS"));
  CHECK(seconds < 20);
}

TEST_CASE("Without UCX at run time every participant fails at once, saying what is missing",
          "[proxy][across][fault]") {
  const ir::Algorithm ring = perf::ring_allreduce(2, ir::Protocol::Simple);
  std::vector<Side> sides = {{"a", {0}, {}, {}}, {"b", {1}, {}, {}}};
  // WEFT_UCX_LIB naming a library that is not there stands for a machine without UCX.
  sides[1].proxy.engine.library = "/nonexistent/libucp.so.0";
  const auto outcomes = run_across(sides, ring, call_options(), CallSpec{});
  for (const Outcome& out : outcomes) {
    INFO(out.status.str());
    CHECK_FALSE(out.status.ok());
    CHECK_FALSE(out.ran);
  }
  CHECK_THAT(outcomes[1].status.message, Catch::Contains("UCX is not installed here") &&
                                             Catch::Contains("/nonexistent/libucp.so.0"));
  // The other participant names who could not start its engine, and why.
  CHECK_THAT(outcomes[0].status.message,
             Catch::Contains("participant 1 on host 'b' could not start its network engine") &&
                 Catch::Contains("UCX is not installed here"));
}

// Stands for a peer whose process ended after it sent its address: its record carries the
// address of an engine that is already gone, so its port refuses connections.
class DeadAddressBootstrap final : public gpu::Bootstrap {
 public:
  DeadAddressBootstrap(std::shared_ptr<gpu::Bootstrap> inner, std::vector<std::byte> record)
      : inner_(std::move(inner)), record_(std::move(record)) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  gpu::Status allgather(std::span<std::byte> data, std::size_t bytes_per_rank) override {
    ++calls_;
    auto* mine = data.data() + bytes_per_rank * static_cast<std::size_t>(rank());
    // The transport's calls: the participants' records, then the engine records' lengths and
    // the engine records themselves (proxy.cpp), then the verdicts.
    if (calls_ == 2) {
      std::uint64_t length = 0;
      std::memcpy(&length, mine, sizeof(length));
      same_length_ = length == record_.size();
    } else if (calls_ == 3 && same_length_) {
      std::memcpy(mine, record_.data(), record_.size());
    }
    return inner_->allgather(data, bytes_per_rank);
  }
  bool replaced() const { return same_length_; }

 private:
  std::shared_ptr<gpu::Bootstrap> inner_;
  std::vector<std::byte> record_;
  int calls_ = 0;
  bool same_length_ = false;
};

TEST_CASE("A connection refused: a peer whose engine is gone fails the others at once, named",
          "[proxy][across][fault]") {
  if (skip_without_ucx()) return;
  const ir::Algorithm ring = perf::ring_allreduce(2, ir::Protocol::Simple);
  // An engine's address and hello key, as a proxy sends them, then the engine closed.
  std::vector<std::byte> record;
  {
    EngineOptions tcp;
    tcp.ucx_settings = {{"TLS", "tcp"}};
    auto engine = make_ucx_engine(tcp);
    REQUIRE(engine.ok());
    std::vector<std::uint64_t> words(2);
    auto registered = engine.value()->register_memory(words.data(), sizeof(std::uint64_t) * 2);
    REQUIRE(registered.ok());
    PeerRecord dead;
    dead.state = EngineState::Ready;
    dead.address = engine.value()->address();
    dead.hello_key = registered.value().key;
    record = encode_peer_record(dead);
  }
  std::vector<Side> sides = {{"a", {0}, {}, {}}, {"b", {1}, {}, {}}};
  for (Side& side : sides) side.proxy.engine.ucx_settings = {{"TLS", "tcp"}};
  std::shared_ptr<DeadAddressBootstrap> wrapped;
  sides[1].wrap = [&](std::shared_ptr<gpu::Bootstrap> inner) -> std::shared_ptr<gpu::Bootstrap> {
    wrapped = std::make_shared<DeadAddressBootstrap>(std::move(inner), record);
    return wrapped;
  };
  const auto started = std::chrono::steady_clock::now();
  const auto outcomes = run_across(sides, ring, call_options(), CallSpec{});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  REQUIRE(wrapped);
  REQUIRE(wrapped->replaced());
  INFO(outcomes[0].status.str());
  CHECK_FALSE(outcomes[0].status.ok());
  CHECK_THAT(outcomes[0].status.message,
             Catch::Contains("the proxy could not reach the other hosts"));
  CHECK_THAT(outcomes[0].status.message, Catch::Contains("refuses connections"));
  CHECK_THAT(outcomes[0].status.message, Catch::Contains("participant 1"));
  CHECK_THAT(outcomes[0].status.message, Catch::Contains("host 'b'"));
  INFO(outcomes[1].status.str());
  CHECK_FALSE(outcomes[1].status.ok());
  CHECK(seconds < 60);
}

}  // namespace
}  // namespace weft::proxy
