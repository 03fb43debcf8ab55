#include <cstring>

#include <catch2/catch.hpp>

#include "weft/plugin/standalone_id.h"

using weft::plugin::decode_standalone_id;
using weft::plugin::encode_standalone_id;

TEST_CASE("standalone id: the rendezvous address survives the 128-byte id") {
  const auto id = encode_standalone_id("127.0.0.1:43210");
  REQUIRE(id.has_value());
  CHECK(decode_standalone_id(*id) == std::optional<std::string>("127.0.0.1:43210"));
}

TEST_CASE("standalone id: other ids and oversized addresses are refused") {
  weft::plugin::UniqueIdBytes nccl_like{};
  for (std::size_t k = 0; k < nccl_like.size(); ++k) nccl_like[k] = static_cast<char>(k * 7 + 1);
  CHECK_FALSE(decode_standalone_id(nccl_like).has_value());
  CHECK_FALSE(encode_standalone_id(std::string(200, 'h')).has_value());
  CHECK_FALSE(encode_standalone_id("").has_value());
  // The prefix with garbage after the text is not ours either.
  auto id = *encode_standalone_id("host:1");
  id[100] = 'x';
  CHECK_FALSE(decode_standalone_id(id).has_value());
}

TEST_CASE("standalone id: a local rendezvous address has a real port") {
  std::string error;
  const std::string address = weft::plugin::pick_local_rendezvous_address(&error);
  INFO(error);
  REQUIRE_FALSE(address.empty());
  CHECK(address.rfind("127.0.0.1:", 0) == 0);
  CHECK(std::stoi(address.substr(10)) > 0);
}
