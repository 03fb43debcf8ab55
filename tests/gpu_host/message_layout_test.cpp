// The arithmetic the kernel uses to place a message in a FIFO slot (kernel/message_layout.h) and
// to encode dependency flags, checked on the host: every element of every piece lands in exactly
// one payload word, messages fit their slot, and flags only grow.
#include <catch2/catch.hpp>

#include <map>
#include <tuple>

#include "weft/program/call_plan.h"
#include "weft/program/device_abi.h"
#include "weft/program/device_program.h"
#include "weft/program/message_layout.h"

namespace weft::gpu::device {
namespace {

struct Geometry {
  ir::Protocol proto;
  std::size_t slot_bytes;
  int max_count;
  std::size_t element_bytes;
  std::size_t max_tile_bytes;
  std::size_t chunk_elements;
};

TEST_CASE("every element of a message sits in exactly one payload word", "[message]") {
  const Geometry cases[] = {
      {ir::Protocol::LL, 1024, 1, 4, 0, 37},     {ir::Protocol::LL, 1024, 3, 1, 0, 1000},
      {ir::Protocol::LL, 4096, 7, 2, 24, 77},    {ir::Protocol::LL128, 1024, 2, 8, 0, 501},
      {ir::Protocol::LL128, 2048, 5, 4, 40, 33}, {ir::Protocol::LL128, 1024, 72, 4, 0, 19},
      {ir::Protocol::LL128, 4096, 3, 1, 0, 999}, {ir::Protocol::Simple, 1024, 72, 1, 0, 3},
  };
  for (const Geometry& g : cases) {
    const ProtocolOptions options{g.slot_bytes, 4};
    const std::size_t tile = tile_elements(g.proto, options, g.max_count, g.element_bytes,
                                           g.max_tile_bytes, g.chunk_elements);
    REQUIRE(tile > 0);
    const std::size_t stride = piece_stride_bytes(g.proto, tile, g.element_bytes);
    const std::size_t per_message = pieces_per_message(g.proto, options, stride);
    const auto element = static_cast<std::uint32_t>(g.element_bytes);
    // The last tile may be shorter; check a full one and the ragged one.
    const std::size_t tiles = (g.chunk_elements + tile - 1) / tile;
    for (std::size_t len : {tile, g.chunk_elements - (tiles - 1) * tile}) {
      for (std::uint32_t n = 1; n <= std::min<std::size_t>(per_message, g.max_count); ++n) {
        INFO("proto " << ir::to_string(g.proto) << " T " << tile << " len " << len << " n " << n
                      << " element " << g.element_bytes);
        // The lines a message uses fit its slot.
        if (g.proto == ir::Protocol::LL)
          CHECK(ll_lines(n, stride, len, element) * 16 <= g.slot_bytes);
        if (g.proto == ir::Protocol::LL128) {
          CHECK(ll128_lines(n, stride, len, element) * 128 <= g.slot_bytes);
        }
        // Piece by piece (as the kernel walks them), every element lands in one word exactly, and
        // pieces do not overlap in the payload.
        std::map<std::pair<std::uint32_t, std::uint64_t>, int> seen;
        std::map<std::uint64_t, std::uint32_t> owner;  // payload word → piece
        const std::uint64_t words = piece_words(len, element);
        for (std::uint32_t q = 0; q < n; ++q) {
          for (std::uint64_t w = 0; w < words; ++w) {
            const WordContents c = word_contents(w, len, element);
            CHECK(c.count * g.element_bytes <= 8);
            for (std::uint32_t k = 0; k < c.count; ++k) ++seen[{q, c.element + k}];
            const std::uint64_t at = q * stride / 8 + w;
            CHECK(owner.emplace(at, q).second);
          }
          if (g.proto == ir::Protocol::LL128) {
            // Every line belongs to one piece: piece q's words start on a line.
            CHECK((q * stride / 8) % kLL128DataWords == 0);
            CHECK(ll128_piece_lines(len, element) * kLL128DataWords >= words);
          }
        }
        CHECK(seen.size() == n * len);
        for (const auto& [where, times] : seen) {
          CHECK(times == 1);
          CHECK(where.first < n);
          CHECK(where.second < len);
        }
      }
    }
  }
}

TEST_CASE("LL128 lanes cover a line's payload words in order, skipping the flag", "[message]") {
  std::uint64_t expected = 0;
  for (std::uint64_t line = 0; line < 3; ++line) {
    for (std::uint32_t part = 0; part < 8; ++part) {
      for (std::uint32_t w = 0; w < 2; ++w) {
        if (part == 7 && w == 1) continue;  // the flag
        CHECK(ll128_payload_word(line, part, w) == expected++);
      }
    }
  }
}

TEST_CASE("LL flags never repeat on a slot within 2^32 - 1 messages and are never 0", "[message]") {
  // Around the 32-bit wrap: 0 is skipped (a line nobody wrote is zero), and consecutive
  // messages of one slot (depth apart) never share a flag.
  const std::uint64_t wrap = std::uint64_t{1} << 32;
  for (std::uint64_t k = wrap - 70; k < wrap + 70; ++k) {
    CHECK(ll_flag(k) != 0u);
    for (const std::uint64_t depth : {2u, 4u, 8u, 64u}) CHECK(ll_flag(k) != ll_flag(k + depth));
  }
  CHECK(ll_flag(0) == 1u);
  CHECK(ll_flag(wrap - 2) == 0xffffffffu);
  CHECK(ll_flag(wrap - 1) == 1u);  // 2^32 − 1 messages later the flags start again at 1
}

TEST_CASE("dependency flags grow with launch, tile and step", "[message]") {
  // A threadblock of 5 flat steps over 3 launches of 4 tiles: every publish exceeds the last,
  // and a waiter's target for (launch, tile, step) is met exactly by that publish or a later one.
  const std::uint64_t steps = 5;
  std::uint64_t previous = 0;
  std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t>> published;
  for (std::uint64_t launch = 1; launch <= 3; ++launch) {
    for (std::uint64_t tile = 0; tile < 4; ++tile) {
      for (std::uint64_t step = 0; step < steps; ++step) {
        const std::uint64_t flag = dependency_flag(launch, tile, steps, step);
        CHECK(flag > previous);
        previous = flag;
        published.emplace_back(launch, tile, step, flag);
      }
    }
  }
  for (const auto& [launch, tile, step, flag] : published) {
    for (const auto& [l2, t2, s2, f2] : published) {
      const bool later_or_same = std::tie(l2, t2, s2) >= std::tie(launch, tile, step);
      CHECK((f2 >= flag) == later_or_same);
    }
  }
  // The previous launch's last flag never satisfies the next launch's first wait.
  CHECK(dependency_flag(1, 1000, steps, steps - 1) < dependency_flag(2, 0, steps, 0));
}

TEST_CASE("dependency waits stay ordered when launch << 32 wraps", "[message]") {
  // Launches 2^32 − 2 .. 2^32 + 1 (half a day of 10 µs calls): launch << 32 wraps to 0, and a
  // plain >= would take the last launch's flags as the next launch's completions.
  const std::uint64_t steps = 5;
  const std::uint64_t first = (std::uint64_t{1} << 32) - 2;
  std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> order;  // launch, tile, step
  for (std::uint64_t launch = first; launch < first + 4; ++launch) {
    for (std::uint64_t tile = 0; tile < 3; ++tile) {
      for (std::uint64_t step = 0; step < steps; ++step) order.emplace_back(launch, tile, step);
    }
  }
  const auto flag = [&](const auto& at) {
    return dependency_flag(std::get<0>(at), std::get<1>(at), steps, std::get<2>(at));
  };
  bool wrapped = false;
  for (std::size_t a = 0; a < order.size(); ++a) {
    for (std::size_t b = 0; b < order.size(); ++b) {
      // Seen = what a publisher at b stored; target = a waiter's need at a.
      CHECK(flag_reached(flag(order[b]), flag(order[a])) == (b >= a));
      wrapped = wrapped || ((flag(order[b]) < flag(order[a])) != (b < a));
    }
  }
  CHECK(wrapped);  // the range really crosses the wrap
  // Zeroed flags hold the first launch's waiters.
  CHECK_FALSE(flag_reached(0, dependency_flag(1, 0, steps, 0)));
}

}  // namespace
}  // namespace weft::gpu::device
