// WEFT_* environment parsing: good values apply, bad ones are refused naming the variable.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "weft/program/options.h"

namespace weft::gpu {
namespace {

EnvLookup fake(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const char* name) -> const char* {
    auto it = values.find(name);
    return it == values.end() ? nullptr : it->second.c_str();
  };
}

TEST_CASE("defaults hold when nothing is set", "[options]") {
  auto options = runtime_options_from_env(fake({}));
  REQUIRE(options.ok());
  CHECK(options.value().timeout_s == 5.0);
  CHECK(options.value().simple.fifo_depth >= kMinFifoDepth);
  CHECK(options.value().ll.fifo_depth >= kMinFifoDepth);
  CHECK(options.value().threads == 512);
  CHECK(options.value().step == StepVariant::Lean);
  CHECK(check(options.value()).ok());
}

TEST_CASE("every variable is read", "[options]") {
  auto options = runtime_options_from_env(fake({{"WEFT_TIMEOUT_S", "0.25"},
                                                {"WEFT_FIFO_DEPTH", "3"},
                                                {"WEFT_SIMPLE_SLOT_BYTES", "1M"},
                                                {"WEFT_LL_SLOT_BYTES", "8192"},
                                                {"WEFT_LL128_SLOT_BYTES", "64k"},
                                                {"WEFT_NTHREADS", "256"},
                                                {"WEFT_TILE_BYTES", "512"},
                                                {"WEFT_STEP", "full"}}));
  INFO(options.status().str());
  REQUIRE(options.ok());
  const RuntimeOptions& o = options.value();
  CHECK(o.timeout_s == 0.25);
  CHECK(o.simple.fifo_depth == 3);
  CHECK(o.ll128.fifo_depth == 3);
  CHECK(o.simple.slot_bytes == 1 << 20);
  CHECK(o.ll.slot_bytes == 8192);
  CHECK(o.ll128.slot_bytes == 64 * 1024);
  CHECK(o.threads == 256);
  CHECK(o.max_tile_bytes == 512);
  CHECK(o.step == StepVariant::Full);
  CHECK(&o.configured(ir::Protocol::LL) == &o.ll);
  CHECK(o.protocol(ir::Protocol::LL).slot_bytes == o.ll.slot_bytes);
}

TEST_CASE("the overlap step and Simple's slices: read, and the FIFO cut into the slices",
          "[options]") {
  auto options = runtime_options_from_env(fake({{"WEFT_STEP", "overlap"},
                                                {"WEFT_SIMPLE_SLICES", "4"},
                                                {"WEFT_FIFO_DEPTH", "3"},
                                                {"WEFT_SIMPLE_SLOT_BYTES", "512K"}}));
  INFO(options.status().str());
  REQUIRE(options.ok());
  const RuntimeOptions& o = options.value();
  CHECK(o.step == StepVariant::Overlap);
  CHECK(std::string(to_string(o.step)) == "overlap");
  CHECK(o.simple_slices == 4);
  // As set, and as laid out: the same memory in four times as many slots.
  CHECK(o.configured(ir::Protocol::Simple).slot_bytes == 512 * 1024);
  CHECK(o.configured(ir::Protocol::Simple).fifo_depth == 3);
  CHECK(o.protocol(ir::Protocol::Simple).slot_bytes == 128 * 1024);
  CHECK(o.protocol(ir::Protocol::Simple).fifo_depth == 12);
  // LL and LL128 have no slices.
  CHECK(o.protocol(ir::Protocol::LL).fifo_depth == 3);
  CHECK(o.protocol(ir::Protocol::LL128).slot_bytes == o.ll128.slot_bytes);
  // A slice must still be a slot: 1 KB at least, whole 128-byte lines.
  auto small = runtime_options_from_env(fake(
      {{"WEFT_STEP", "overlap"}, {"WEFT_SIMPLE_SLICES", "8"}, {"WEFT_SIMPLE_SLOT_BYTES", "4K"}}));
  REQUIRE_FALSE(small.ok());
  CHECK_THAT(small.status().message,
             Catch::Contains("WEFT_SIMPLE_SLICES='8'") && Catch::Contains("4096-byte Simple slot"));
  auto uneven =
      runtime_options_from_env(fake({{"WEFT_STEP", "overlap"}, {"WEFT_SIMPLE_SLICES", "3"}}));
  REQUIRE_FALSE(uneven.ok());
  CHECK_THAT(uneven.status().message, Catch::Contains("262144-byte"));
  // Slices are the overlap step's: with another step they are refused, not ignored.
  auto lean = runtime_options_from_env(fake({{"WEFT_SIMPLE_SLICES", "2"}}));
  REQUIRE_FALSE(lean.ok());
  CHECK_THAT(lean.status().message,
             Catch::Contains("WEFT_SIMPLE_SLICES='2'") && Catch::Contains("WEFT_STEP=overlap"));
}

TEST_CASE("bad values are refused with the variable, the value and the range", "[options]") {
  const std::pair<const char*, const char*> bad[] = {
      {"WEFT_TIMEOUT_S", "0"},
      {"WEFT_TIMEOUT_S", "-1"},
      {"WEFT_TIMEOUT_S", "soon"},
      {"WEFT_TIMEOUT_S", "1e9"},
      // Below the floor of a millisecond: could only fail healthy calls.
      {"WEFT_TIMEOUT_S", "1e-320"},
      {"WEFT_ARRIVAL_TIMEOUT_S", "0.0001"},
      {"WEFT_FIFO_DEPTH", "1"},
      {"WEFT_FIFO_DEPTH", "two"},
      {"WEFT_SIMPLE_SLOT_BYTES", "100"},
      {"WEFT_LL_SLOT_BYTES", "1000"},
      {"WEFT_LL128_SLOT_BYTES", "1T"},
      {"WEFT_NTHREADS", "100"},
      {"WEFT_NTHREADS", "1024"},
      {"WEFT_TILE_BYTES", "-5"},
      {"WEFT_STEP", "fast"},
      {"WEFT_STEP", "Lean"},
      {"WEFT_SIMPLE_SLICES", "0"},
      {"WEFT_SIMPLE_SLICES", "17"},
      {"WEFT_SIMPLE_SLICES", "two"}};
  for (const auto& [name, value] : bad) {
    auto options = runtime_options_from_env(fake({{name, value}}));
    INFO(name << "=" << value);
    REQUIRE_FALSE(options.ok());
    CHECK(options.status().code == ErrorCode::InvalidArgument);
    CHECK_THAT(options.status().message, Catch::Contains(name) && Catch::Contains(value));
  }
}

TEST_CASE("byte sizes take K, M and G suffixes and reject overflow", "[options]") {
  CHECK(parse_byte_size("4096") == std::size_t{4096});
  CHECK(parse_byte_size("64K") == std::size_t{65536});
  CHECK(parse_byte_size("2m") == std::size_t{2} << 20);
  CHECK(parse_byte_size("1G") == std::size_t{1} << 30);
  CHECK_FALSE(parse_byte_size(""));
  CHECK_FALSE(parse_byte_size("K"));
  CHECK_FALSE(parse_byte_size("12Q"));
  CHECK_FALSE(parse_byte_size("99999999999999999999G"));
  CHECK_FALSE(parse_byte_size("-1"));
}

TEST_CASE("check() guards options built in code", "[options]") {
  RuntimeOptions o;
  o.threads = 96;
  CHECK(check(o).ok());
  o.threads = 100;
  CHECK_FALSE(check(o).ok());
  o = RuntimeOptions{};
  o.ll.fifo_depth = 1;
  CHECK_FALSE(check(o).ok());
  o = RuntimeOptions{};
  o.timeout_s = 0;
  CHECK_FALSE(check(o).ok());
  o = RuntimeOptions{};
  o.simple_slices = 0;
  CHECK_FALSE(check(o).ok());
  o.simple_slices = 2;
  CHECK_FALSE(check(o).ok());  // not the overlap step
  o.step = StepVariant::Overlap;
  CHECK(check(o).ok());
}

}  // namespace
}  // namespace weft::gpu
