// Where connection state lives (RegionLayout), the private block (PrivateLayout), and the CTA
// descriptors built from both with made-up device addresses.
#include <catch2/catch.hpp>

#include <cstring>
#include <set>

#include "builtin_algorithms.h"
#include "weft/program/connection_layout.h"
#include "weft/program/device_program.h"
#include "weft/program/launch_plan.h"

namespace weft::gpu::testing {
namespace {

using namespace weft::perf;

ProtocolOptions protocol(std::size_t slot = 4096, int depth = 4) {
  return {slot, depth};
}

TEST_CASE("a ring rank has one receive and one send connection per channel", "[layout]") {
  const ir::Algorithm ring = ring_allreduce(4, ir::Protocol::Simple, 3);
  const RegionLayout layout = layout_region(ring, 1, protocol());
  REQUIRE(layout.receives.size() == 3);
  REQUIRE(layout.sends.size() == 3);
  for (int c = 0; c < 3; ++c) {
    const ReceiveEntry* in = layout.find_receive(c, 0);
    const SendEntry* out = layout.find_send(c, 2);
    REQUIRE(in != nullptr);
    REQUIRE(out != nullptr);
    CHECK(in->connection == ir::Connection{c, 0, 1});
    CHECK(out->connection == ir::Connection{c, 1, 2});
  }
  CHECK(layout.find_receive(0, 2) == nullptr);
  CHECK(layout.find_send(0, 0) == nullptr);
}

TEST_CASE("counters sit on their own lines and FIFOs do not overlap", "[layout]") {
  const ir::Algorithm pairs = allpairs_chain_allreduce(8, ir::Protocol::LL, false);
  const ProtocolOptions options = protocol(4096, 3);
  const RegionLayout layout = layout_region(pairs, 3, options);
  REQUIRE(layout.receives.size() == 7);
  REQUIRE(layout.sends.size() == 7);
  std::set<std::size_t> counters;
  for (const auto& r : layout.receives) counters.insert(r.tail_offset);
  for (const auto& s : layout.sends) counters.insert(s.head_offset);
  // The arrival table opens the region, before every counter.
  CHECK(layout.arrival_offset == 0);
  CHECK(layout.nranks == 8);
  for (std::size_t offset : counters) CHECK(offset >= layout.nranks * sizeof(std::uint64_t));
  CHECK(counters.size() == 14);
  for (std::size_t offset : counters) CHECK(offset % kCounterStride == 0);
  std::size_t previous_end = *counters.rbegin() + sizeof(std::uint64_t);
  for (const auto& r : layout.receives) {
    CHECK(r.fifo_offset % kFifoAlignment == 0);
    CHECK(r.fifo_offset >= previous_end);
    previous_end =
        r.fifo_offset + options.slot_bytes * static_cast<std::size_t>(options.fifo_depth);
  }
  CHECK(layout.total_bytes >= previous_end);
  CHECK(layout.slot_bytes == 4096);
  CHECK(layout.depth == 3);
}

TEST_CASE("every rank derives the same view of a connection", "[layout]") {
  const ir::Algorithm pairs = allpairs_allreduce(4, ir::Protocol::Simple);
  std::vector<RegionLayout> layouts;
  for (int r = 0; r < 4; ++r) layouts.push_back(layout_region(pairs, r, protocol()));
  for (int s = 0; s < 4; ++s) {
    for (int r = 0; r < 4; ++r) {
      if (s == r) continue;
      CHECK(layouts[static_cast<std::size_t>(s)].find_send(0, r) != nullptr);
      CHECK(layouts[static_cast<std::size_t>(r)].find_receive(0, s) != nullptr);
    }
  }
}

TEST_CASE("the private block holds the program at its offsets and zero flags", "[layout]") {
  const ir::Algorithm pairs = allpairs_chain_allreduce(4, ir::Protocol::Simple, true);
  auto program = flatten_rank(pairs, 2);
  REQUIRE(program.ok());
  const PrivateLayout layout = layout_private(program.value(), 4);
  CHECK(layout.regions_offset == 0);
  CHECK(layout.steps_offset >= 4 * sizeof(char*));
  CHECK(layout.dependencies_offset >=
        layout.steps_offset + program.value().steps.size() * sizeof(DeviceStep));
  CHECK(layout.flags_offset % 256 == 0);
  CHECK(layout.states_offset >=
        layout.flags_offset + program.value().threadblocks.size() * device::kFlagStrideWords * 8);
  const std::vector<std::uintptr_t> regions{0x1000, 0x2000, 0x3000, 0x4000};
  const auto bytes = pack_private(program.value(), layout, regions);
  REQUIRE(bytes.size() == layout.total_bytes);
  std::uintptr_t third = 0;
  std::memcpy(&third, bytes.data() + layout.regions_offset + 2 * sizeof(char*), sizeof third);
  CHECK(third == 0x3000);
  DeviceStep first;
  std::memcpy(&first, bytes.data() + layout.steps_offset, sizeof first);
  CHECK(first.type == program.value().steps[0].type);
  for (std::size_t b = layout.flags_offset; b < layout.total_bytes; ++b) {
    REQUIRE(bytes[b] == std::byte{0});
  }
}

// Fake device addresses: region of rank p as seen from rank r, private blocks far away.
std::uintptr_t region_address(int p) {
  return 0x100000000ULL * static_cast<std::uintptr_t>(p + 1);
}
std::uintptr_t private_address(int r) {
  return 0x7000000000ULL + 0x10000000ULL * static_cast<std::uintptr_t>(r);
}

TEST_CASE(
    "CTA descriptors point senders at the receiver's FIFO and receivers at the sender's "
    "head",
    "[layout]") {
  const int n = 4;
  const ir::Algorithm ring = ring_allreduce(n, ir::Protocol::Simple, 2);
  std::vector<RegionLayout> layouts;
  for (int r = 0; r < n; ++r) layouts.push_back(layout_region(ring, r, protocol()));
  std::vector<RankProgram> programs;
  std::vector<LocalRankMemory> memories;
  for (int r = 0; r < n; ++r) programs.push_back(flatten_rank(ring, r).value());
  for (int r = 0; r < n; ++r) {
    LocalRankMemory m;
    m.rank = r;
    m.program = &programs[static_cast<std::size_t>(r)];
    m.private_base = private_address(r);
    for (int p = 0; p < n; ++p) m.regions.push_back(region_address(p));
    memories.push_back(m);
  }
  auto ctas = build_cta_descriptors(memories, layouts);
  REQUIRE(ctas.ok());
  REQUIRE(ctas.value().size() == static_cast<std::size_t>(n * 2));
  for (const device::CtaDescriptor& d : ctas.value()) {
    const int next = (d.rank + 1) % n;
    const int prev = (d.rank + n - 1) % n;
    CHECK(d.local_index == d.rank);
    const ReceiveEntry* remote =
        layouts[static_cast<std::size_t>(next)].find_receive(d.channel, d.rank);
    REQUIRE(remote != nullptr);
    CHECK(reinterpret_cast<std::uintptr_t>(d.send_fifo) ==
          region_address(next) + remote->fifo_offset);
    CHECK(reinterpret_cast<std::uintptr_t>(d.send_tail) ==
          region_address(next) + remote->tail_offset);
    const SendEntry* own_send =
        layouts[static_cast<std::size_t>(d.rank)].find_send(d.channel, next);
    CHECK(reinterpret_cast<std::uintptr_t>(d.send_head) ==
          region_address(d.rank) + own_send->head_offset);
    const ReceiveEntry* own_receive =
        layouts[static_cast<std::size_t>(d.rank)].find_receive(d.channel, prev);
    CHECK(reinterpret_cast<std::uintptr_t>(d.recv_fifo) ==
          region_address(d.rank) + own_receive->fifo_offset);
    const SendEntry* sender = layouts[static_cast<std::size_t>(prev)].find_send(d.channel, d.rank);
    CHECK(reinterpret_cast<std::uintptr_t>(d.recv_head) ==
          region_address(prev) + sender->head_offset);
    const PrivateLayout priv = layout_private(programs[static_cast<std::size_t>(d.rank)], n);
    CHECK(reinterpret_cast<std::uintptr_t>(d.flags) == private_address(d.rank) + priv.flags_offset);
    CHECK(d.nranks == n);
    CHECK(reinterpret_cast<std::uintptr_t>(d.peer_regions) ==
          private_address(d.rank) + priv.regions_offset);
    CHECK(reinterpret_cast<std::uintptr_t>(d.state) ==
          private_address(d.rank) + priv.states_offset +
              static_cast<std::size_t>(d.threadblock) * sizeof(device::ThreadblockState));
  }
}

TEST_CASE("threadblocks without steps get no CTA; local ones get no connection", "[layout]") {
  ir::Algorithm ring = ring_allgather(2, ir::Protocol::Simple);
  ir::Threadblock idle;
  idle.id = 2;
  ring.gpus[0].threadblocks.push_back(idle);
  std::vector<RegionLayout> layouts{layout_region(ring, 0, protocol()),
                                    layout_region(ring, 1, protocol())};
  const RankProgram program = flatten_rank(ring, 0).value();
  LocalRankMemory m{0,  &program, private_address(0), {region_address(0), region_address(1)},
                    {}, {}};
  auto ctas = build_cta_descriptors(std::span(&m, 1), layouts);
  REQUIRE(ctas.ok());
  REQUIRE(ctas.value().size() == 2);
  const device::CtaDescriptor& copy = ctas.value()[1];
  CHECK(copy.threadblock == 1);
  CHECK(copy.send_fifo == nullptr);
  CHECK(copy.recv_head == nullptr);
}

TEST_CASE("a send with no receiving threadblock on the peer is refused", "[layout]") {
  ir::Algorithm ring = ring_allreduce(2, ir::Protocol::Simple);
  std::vector<RegionLayout> layouts{layout_region(ring, 0, protocol()),
                                    layout_region(ring, 1, protocol())};
  // Rank 1 forgets its receiving side: rank 0's sends have nowhere to go.
  layouts[1].receives.clear();
  const RankProgram program = flatten_rank(ring, 0).value();
  LocalRankMemory m{0,  &program, private_address(0), {region_address(0), region_address(1)},
                    {}, {}};
  auto ctas = build_cta_descriptors(std::span(&m, 1), layouts);
  REQUIRE_FALSE(ctas.ok());
  CHECK(ctas.status().code == ErrorCode::InvalidAlgorithm);
  CHECK_THAT(ctas.status().message, Catch::Contains("gpu 0 / tb 0") && Catch::Contains("rank 1"));
}

TEST_CASE("kernel failures read as rank, threadblock, step and what was awaited", "[layout]") {
  device::ErrorReport r;
  r.valid = 1;
  r.rank = 3;
  r.threadblock = 2;
  r.ir_step = 7;
  r.flat_step = 5;
  r.tile = 11;
  r.launch = 4;
  r.waited_ns = 2'500'000'000;
  SECTION("a dependency") {
    r.kind = static_cast<std::uint32_t>(device::WaitKind::Dependency);
    r.dep_threadblock = 1;
    r.dep_ir_step = 9;
    r.dep_step = 6;
    const std::string text = describe_failure(r);
    CHECK_THAT(text, Catch::Contains("gpu 3 / tb 2 / step 7") && Catch::Contains("tile 11") &&
                         Catch::Contains("2.500 s") && Catch::Contains("tb 1") &&
                         Catch::Contains("step 9"));
  }
  SECTION("a message") {
    r.kind = static_cast<std::uint32_t>(device::WaitKind::Message);
    r.peer = 2;
    r.channel = 1;
    r.expected = 12;
    r.observed = 11;
    CHECK_THAT(describe_failure(r), Catch::Contains("message 12 from rank 2 on channel 1"));
  }
  SECTION("FIFO space") {
    r.kind = static_cast<std::uint32_t>(device::WaitKind::Space);
    r.peer = 0;
    CHECK_THAT(describe_failure(r), Catch::Contains("free FIFO slot towards rank 0"));
  }
  SECTION("an LL line") {
    r.kind = static_cast<std::uint32_t>(device::WaitKind::LineFlag);
    r.peer = 1;
    r.part = 2;
    CHECK_THAT(describe_failure(r),
               Catch::Contains("LL/LL128") && Catch::Contains("message 3 of the step"));
  }
}

TEST_CASE("a connection to another host takes the proxy's ends, and only that one", "[layout]") {
  // Ring of 2 on one channel: rank 0 sends to 1 and receives from 1; the proxy carries both.
  const ir::Algorithm ring = ring_allreduce(2, ir::Protocol::LL);
  std::vector<RegionLayout> layouts{layout_region(ring, 0, protocol()),
                                    layout_region(ring, 1, protocol())};
  const RankProgram program = flatten_rank(ring, 0).value();
  char staging[64] = {};
  std::uint64_t words[6] = {};
  ProxiedSend send;
  send.channel = 0;
  send.receiver = 1;
  send.fifo = staging;
  send.tail = &words[0];
  send.head = &words[1];
  send.descriptors = &words[2];
  ProxiedReceive receive;
  receive.channel = 0;
  receive.sender = 1;
  receive.fifo = staging + 32;
  receive.tail = &words[3];
  receive.head = &words[4];
  LocalRankMemory m{0,      &program, private_address(0), {region_address(0), region_address(1)},
                    {send}, {receive}};
  auto ctas = build_cta_descriptors(std::span(&m, 1), layouts);
  REQUIRE(ctas.ok());
  bool sent = false, received = false;
  for (const device::CtaDescriptor& d : ctas.value()) {
    if (d.send_peer == 1 && d.send_fifo != nullptr) {
      CHECK(d.send_fifo == staging);
      CHECK(d.send_tail == &words[0]);
      CHECK(d.send_head == &words[1]);
      CHECK(d.send_descriptors == &words[2]);
      sent = true;
    }
    if (d.recv_peer == 1 && d.recv_fifo != nullptr) {
      CHECK(d.recv_fifo == staging + 32);
      CHECK(d.recv_tail == &words[3]);
      CHECK(d.recv_head == &words[4]);
      received = true;
    }
  }
  CHECK(sent);
  CHECK(received);
  // Without the proxy's ends the same connections are the regions', and no descriptor ring.
  LocalRankMemory direct{0,  &program, private_address(0), {region_address(0), region_address(1)},
                         {}, {}};
  auto plain = build_cta_descriptors(std::span(&direct, 1), layouts);
  REQUIRE(plain.ok());
  for (const device::CtaDescriptor& d : plain.value()) CHECK(d.send_descriptors == nullptr);
}

}  // namespace
}  // namespace weft::gpu::testing
