// Helpers shared by the CPU executor tests: loading small hand-written algorithms, reading and
// writing single elements of rank buffers, and the options most tests run with.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "weft/cpu/cpu_executor.h"
#include "weft/ir/validate.h"
#include "weft/ir/xml.h"

namespace weft::cpu::testing {

// `text` with `from`, which must occur exactly once, replaced by `to`: a test variant of an
// algorithm is a known one with one named edit.
inline std::string replaced(std::string_view text, std::string_view from, std::string_view to) {
  std::string out(text);
  const std::size_t at = out.find(from);
  REQUIRE(at != std::string::npos);
  REQUIRE(out.find(from, at + 1) == std::string::npos);
  out.replace(at, from.size(), to);
  return out;
}

// Reads and validates (weft profile); the test stops with the diagnostics when that fails.
inline ir::Algorithm load(std::string_view xml) {
  ir::LoadResult loaded = ir::load_xml_string(xml, ir::weft_limits(), "<test>");
  INFO(loaded.diagnostics.str());
  REQUIRE(loaded.ok());
  return *loaded.algorithm;
}

// Reads without validating: for IR that validation would reject but the executor must survive.
inline ir::Algorithm read_unvalidated(std::string_view xml) {
  ir::ReadResult read = ir::read_xml_string(xml, "<test>");
  INFO(read.diagnostics.str());
  REQUIRE(read.ok());
  return *read.algorithm;
}

inline RunOptions options(std::size_t chunk_elements, std::size_t tile_elements, int fifo_depth,
                          std::uint64_t seed = 1) {
  RunOptions o;
  o.chunk_elements = chunk_elements;
  o.tile_elements = tile_elements;
  o.fifo_depth = fifo_depth;
  o.seed = seed;
  return o;
}

// int32 element `element` of chunk `chunk` in a byte buffer of chunks of `chunk_elements`.
inline std::int32_t int32_at(const std::vector<std::byte>& bytes, std::size_t chunk_elements,
                             int chunk, std::size_t element) {
  std::int32_t value = 0;
  const std::size_t index = static_cast<std::size_t>(chunk) * chunk_elements + element;
  REQUIRE((index + 1) * sizeof value <= bytes.size());
  std::memcpy(&value, bytes.data() + index * sizeof value, sizeof value);
  return value;
}

// int32 buffers of `chunks` chunks whose element e of chunk c on rank r is 1000·r + 100·c + e,
// so that any misplaced value says where it came from.
inline std::vector<std::byte> labelled_int32(int rank, int chunks, std::size_t chunk_elements) {
  std::vector<std::byte> bytes(static_cast<std::size_t>(chunks) * chunk_elements * 4);
  for (int c = 0; c < chunks; ++c) {
    for (std::size_t e = 0; e < chunk_elements; ++e) {
      const auto value = static_cast<std::int32_t>(1000 * rank + 100 * c + static_cast<int>(e));
      std::memcpy(bytes.data() + (static_cast<std::size_t>(c) * chunk_elements + e) * 4, &value, 4);
    }
  }
  return bytes;
}

inline std::int32_t label(int rank, int chunk, std::size_t element) {
  return static_cast<std::int32_t>(1000 * rank + 100 * chunk + static_cast<int>(element));
}

// The bit pattern the executor leaves in never-written int32 elements.
inline constexpr std::int32_t kInt32Poison = static_cast<std::int32_t>(0xA5A5A5A5u);

// True when some blocked threadblock's description contains every one of `parts`.
inline bool blocked_mentions(const RunResult& result, int rank, int threadblock,
                             std::string_view waiting_for) {
  for (const auto& tb : result.blocked) {
    if (tb.rank == rank && tb.threadblock == threadblock &&
        tb.waiting_for.find(waiting_for) != std::string::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace weft::cpu::testing
