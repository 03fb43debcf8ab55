// Symbolic contents: fingerprints and spelled-out multisets.
#include <catch2/catch.hpp>

#include "weft/dsl/contents.h"

namespace dsl = weft::dsl;
using weft::ChunkId;

TEST_CASE("fingerprints tell sets and multiplicities apart", "[dsl][contents]") {
  dsl::ContentStore store;
  const auto a = dsl::ContentStore::leaf({0, 1});
  const auto b = dsl::ContentStore::leaf({1, 1});
  const auto c = dsl::ContentStore::leaf({2, 1});
  const auto ab = store.combine(a, b);
  const auto ab_c = store.combine(ab, c);
  const auto c_ba = store.combine(c, store.combine(b, a));
  CHECK(store.fingerprint(ab_c) == store.fingerprint(c_ba));
  CHECK_FALSE(store.fingerprint(ab) == store.fingerprint(ab_c));
  const auto aa = store.combine(a, a);
  CHECK(store.fingerprint(aa).count == 2);
  CHECK_FALSE(store.fingerprint(aa) == store.fingerprint(ab));
  CHECK(store.fingerprint(dsl::kEmptySlot).count == 0);
}

TEST_CASE("expanding a content counts each chunk", "[dsl][contents]") {
  dsl::ContentStore store;
  const auto a = dsl::ContentStore::leaf({3, 0});
  const auto b = dsl::ContentStore::leaf({1, 2});
  auto x = store.combine(a, b);
  // x ⊕ x ⊕ x ⊕ x: shared nodes must not be expanded into 2^k copies.
  for (int k = 0; k < 40; ++k) x = store.combine(x, x);
  const std::vector<dsl::Contribution> expanded = store.expand(x);
  REQUIRE(expanded.size() == 2);
  CHECK(expanded[0].chunk == ChunkId{1, 2});
  CHECK(expanded[0].times == INT32_MAX);  // clamped
  CHECK(store.expand(a) == std::vector<dsl::Contribution>{{{3, 0}, 1}});
  CHECK(store.expand(dsl::kEmptySlot).empty());
  CHECK(dsl::to_string(store.expand(store.combine(a, store.combine(a, b)))) == "{r1c2, r3c0×2}");
}
