#include <cstring>

#include <catch2/catch.hpp>

#include "weft/plugin/standalone_id.h"

using weft::plugin::decode_standalone_id;
using weft::plugin::encode_standalone_id;
using weft::plugin::StandaloneId;

namespace {

StandaloneId sample(std::string address) {
  StandaloneId id;
  id.address = std::move(address);
  for (std::size_t k = 0; k < id.secret.size(); ++k)
    id.secret[k] = static_cast<std::uint8_t>(k * 17 + 3);
  return id;
}

}  // namespace

TEST_CASE("standalone id: the rendezvous address and secret survive the 128-byte id") {
  for (const char* address : {"127.0.0.1:43210", "unix:weft-0123456789abcdef"}) {
    const auto id = encode_standalone_id(sample(address));
    REQUIRE(id.has_value());
    CHECK(decode_standalone_id(*id) == std::optional<StandaloneId>(sample(address)));
  }
}

TEST_CASE("standalone id: other ids, oversized addresses and damaged secrets are refused") {
  weft::plugin::UniqueIdBytes nccl_like{};
  for (std::size_t k = 0; k < nccl_like.size(); ++k) nccl_like[k] = static_cast<char>(k * 7 + 1);
  CHECK_FALSE(decode_standalone_id(nccl_like).has_value());
  CHECK_FALSE(encode_standalone_id(sample(std::string(100, 'h'))).has_value());
  CHECK_FALSE(encode_standalone_id(sample("")).has_value());
  CHECK_FALSE(encode_standalone_id(sample("a#b:1")).has_value());
  // The prefix with garbage after the text is not ours either.
  auto id = *encode_standalone_id(sample("host:1"));
  id[100] = 'x';
  CHECK_FALSE(decode_standalone_id(id).has_value());
  // A secret that is not 32 hex digits.
  auto damaged = *encode_standalone_id(sample("host:1"));
  damaged[std::strlen(damaged.data()) - 1] = 'z';
  CHECK_FALSE(decode_standalone_id(damaged).has_value());
  auto short_secret = *encode_standalone_id(sample("host:1"));
  short_secret[std::strlen(short_secret.data()) - 1] = '\0';
  CHECK_FALSE(decode_standalone_id(short_secret).has_value());
}

TEST_CASE("standalone id: local rendezvous addresses are fresh local socket names") {
  // What ncclGetUniqueId writes when WEFT_STANDALONE_ADDR is not set.
  const auto fresh_a = weft::gpu::make_local_rendezvous();
  const auto fresh_b = weft::gpu::make_local_rendezvous();
  REQUIRE(fresh_a.ok());
  REQUIRE(fresh_b.ok());
  const std::string a = weft::gpu::to_string(fresh_a.value().address);
  const std::string b = weft::gpu::to_string(fresh_b.value().address);
  CHECK(a.rfind("unix:weft-", 0) == 0);
  CHECK(a.size() == 26);
  CHECK(a != b);
}
