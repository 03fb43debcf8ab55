// The edit distance behind every "did you mean": insertions, deletions and changes each count one.
#include <catch2/catch.hpp>

#include "weft/ir/edit_distance.h"

using weft::ir::edit_distance;

TEST_CASE("edit distance counts insertions, deletions and changes", "[ir][text]") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("fuse", "fuse") == 0);
  CHECK(edit_distance("", "emit") == 4);
  CHECK(edit_distance("--rank", "--ranks") == 1);    // one inserted
  CHECK(edit_distance("compiel", "compile") == 2);   // two changed (no transposition)
  CHECK(edit_distance("schedule", "schedul") == 1);  // one deleted
  CHECK(edit_distance("verify", "lower") == edit_distance("lower", "verify"));
}
