// Tiles, pieces, messages per step, scratch and device-memory traffic of a call.
#include <catch2/catch.hpp>

#include "builtin_algorithms.h"
#include "weft/program/call_plan.h"

namespace weft::gpu::testing {
namespace {

using namespace weft::perf;

CallShape allreduce(int n, std::size_t count, DataType dtype = DataType::Float) {
  CallShape c;
  c.collective = ir::Collective::AllReduce;
  c.nranks = n;
  c.count = count;
  c.dtype = dtype;
  return c;
}

TEST_CASE("payload per slot follows the protocol's line format", "[plan]") {
  CHECK(slot_payload_bytes(ir::Protocol::Simple, 4096) == 4096);
  CHECK(slot_payload_bytes(ir::Protocol::LL, 4096) == 2048);
  CHECK(slot_payload_bytes(ir::Protocol::LL128, 4096) == 32 * 120);
}

TEST_CASE("tiles fill the slot with max_count aligned pieces", "[plan]") {
  const ProtocolOptions simple{4096, 4};
  CHECK(tile_elements(ir::Protocol::Simple, simple, 1, 4, 0, 0) == 1024);
  CHECK(tile_elements(ir::Protocol::Simple, simple, 3, 4, 0, 0) == 1364 / 16 * 16 / 4);
  CHECK(tile_elements(ir::Protocol::LL, simple, 2, 8, 0, 0) == 128);
  CHECK(tile_elements(ir::Protocol::LL128, simple, 1, 2, 0, 0) == 3840 / 2);
  // Capped by the chunk and by WEFT_TILE_BYTES, never below one element.
  CHECK(tile_elements(ir::Protocol::Simple, simple, 1, 4, 0, 37) == 37);
  CHECK(tile_elements(ir::Protocol::Simple, simple, 1, 4, 64, 0) == 16);
  CHECK(tile_elements(ir::Protocol::Simple, simple, 1, 8, 3, 0) == 1);
  // More pieces than fit: 16 bytes per piece, the step is sent as several messages.
  CHECK(tile_elements(ir::Protocol::Simple, simple, 1000, 4, 0, 0) == 4);
  for (int count : {1, 2, 3, 7, 71, 1000, 65535}) {
    for (std::size_t element : {1, 2, 4, 8}) {
      for (ir::Protocol proto : {ir::Protocol::Simple, ir::Protocol::LL, ir::Protocol::LL128}) {
        const std::size_t tile = tile_elements(proto, simple, count, element, 0, 0);
        REQUIRE(tile > 0);
        const std::size_t stride = piece_stride_bytes(proto, tile, element);
        // LL128 pieces start on a line (120 payload bytes), the others on 16 bytes.
        const std::size_t alignment = proto == ir::Protocol::LL128 ? 120 : 16;
        CHECK(stride % 8 == 0);  // no 8-byte word straddles two pieces
        CHECK(stride % alignment == 0);
        CHECK(stride >= tile * element);
        const std::size_t per_message = pieces_per_message(proto, simple, stride);
        CHECK(per_message >= 1);
        CHECK(per_message * stride <= slot_payload_bytes(proto, simple.slot_bytes));
        if (count * alignment <= slot_payload_bytes(proto, simple.slot_bytes)) {
          CHECK(per_message >= static_cast<std::size_t>(count));  // one message per step
        }
      }
    }
  }
}

TEST_CASE("plan_call cuts a call into tiles", "[plan]") {
  RuntimeOptions options;
  options.simple = {4096, 4};
  const ir::Algorithm ring = ring_allreduce(4, ir::Protocol::Simple);
  auto plan = plan_call(ring, allreduce(4, 4 * 1000), options, 1, 8);
  REQUIRE(plan.ok());
  CHECK(plan.value().chunk_elements == 1000);
  CHECK(plan.value().tile_elements == 1000);
  CHECK(plan.value().tiles == 1);
  options.max_tile_bytes = 256;
  plan = plan_call(ring, allreduce(4, 4 * 1000), options, 1, 8);
  REQUIRE(plan.ok());
  CHECK(plan.value().tile_elements == 64);
  CHECK(plan.value().tiles == 16);  // 15 full tiles and one of 40
  CHECK(plan.value().piece_stride_bytes == 256);
  CHECK(plan.value().scratch_bytes == std::vector<std::size_t>(4, 0));
}

TEST_CASE("plan_call refuses what does not apply or cannot be flagged", "[plan]") {
  RuntimeOptions options;
  const ir::Algorithm ring = ring_allreduce(4, ir::Protocol::Simple);
  auto plan = plan_call(ring, allreduce(4, 1001), options, 1, 8);
  REQUIRE_FALSE(plan.ok());
  CHECK(plan.status().code == ErrorCode::NotApplicable);
  CHECK_THAT(plan.status().message, Catch::Contains("divisible"));
  // 2^30 one-element tiles of 8 steps overflow the 32-bit (tile, step) part of a flag.
  options.max_tile_bytes = 1;
  plan = plan_call(ring, allreduce(4, std::size_t{4} << 30, DataType::Int8), options, 1, 8);
  REQUIRE_FALSE(plan.ok());
  CHECK(plan.status().code == ErrorCode::InvalidArgument);
  CHECK_THAT(plan.status().message, Catch::Contains("2^32"));
}

TEST_CASE("a step split into several messages needs room for two such steps", "[plan]") {
  RuntimeOptions options;
  options.ll = {1024, 4};  // 512 payload bytes: 32 pieces of 16 bytes per message
  const ir::Algorithm ring = ring_allreduce(2, ir::Protocol::LL);
  auto plan = plan_call(ring, allreduce(2, 2 * 100), options, 72, 8);
  REQUIRE(plan.ok());
  REQUIRE(plan.value().pieces_per_message == 32);
  CHECK(check_fifo_depth(ir::Protocol::LL, options.ll, plan.value(), 1).ok());
  CHECK(check_fifo_depth(ir::Protocol::LL, options.ll, plan.value(), 64).ok());       // 2 messages
  const Status s = check_fifo_depth(ir::Protocol::LL, options.ll, plan.value(), 65);  // 3
  CHECK(s.code == ErrorCode::InvalidArgument);
  CHECK_THAT(s.message, Catch::Contains("cnt 65 goes as 3 messages") &&
                            Catch::Contains("WEFT_FIFO_DEPTH to at least 6") &&
                            Catch::Contains("WEFT_LL_SLOT_BYTES"));
  CHECK(check_fifo_depth(ir::Protocol::LL, {1024, 6}, plan.value(), 65).ok());
}

TEST_CASE("scratch follows the rank's s_chunks", "[plan]") {
  ir::Algorithm ring = ring_allreduce(2, ir::Protocol::Simple);
  ring.gpus[1].scratch_chunks = 3;
  auto plan = plan_call(ring, allreduce(2, 2 * 10, DataType::Double), RuntimeOptions{}, 1, 4);
  REQUIRE(plan.ok());
  CHECK(plan.value().scratch_bytes == std::vector<std::size_t>{0, 3 * 10 * 8});
}

TEST_CASE("device-memory traffic counts every read and write, FIFO staging included", "[plan]") {
  const int n = 4;
  const ir::Algorithm ring = ring_allreduce(n, ir::Protocol::Simple);
  std::vector<RankProgram> programs;
  for (int r = 0; r < n; ++r) programs.push_back(flatten_rank(ring, r).value());
  // Per rank: s (2) + (n−2) rrs (3) + rrcs (4) + (n−2) rcs (3) + r (2), per chunk.
  const std::uint64_t per_rank = 2 + 3 * (n - 2) + 4 + 3 * (n - 2) + 2;
  CHECK(device_memory_traffic(programs, 100, 4) ==
        static_cast<std::uint64_t>(n) * per_rank * 100 * 4);
}

}  // namespace
}  // namespace weft::gpu::testing
