// The contest behind `weftc tune` and `weftc synthesize` (weft/tuning/contest.h): what it writes
// is proved and what loses is not; a winner that does not prove gives way to the next; only the
// field that brings a floor is pruned, where it lies in the list; and it refuses what would make
// pruning read past its candidates.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "pair.h"

#include "weft/ir/validate.h"
#include "weft/predict/topology.h"
#include "weft/tuning/bands.h"
#include "weft/tuning/contest.h"

using namespace weft;
using namespace weft::tuning;

namespace {

using test::pair_allreduce;
using test::two_gpus;

// An entry of the same algorithm under `name`, whose proof counts its calls and fails where
// `proves` is false.
Entry entry(const std::string& name, bool proves, int& proofs) {
  Entry e;
  e.candidate = {name, pair_allreduce()};
  e.prove = [name, proves, &proofs](const Candidate& c) -> std::optional<std::string> {
    ++proofs;
    CHECK(c.name == name);  // handed the candidate it proves
    if (proves) return std::nullopt;
    return name + ": verification failed";
  };
  return e;
}

ContestRequest request() {
  ContestRequest r;
  r.collective = ir::Collective::AllReduce;
  r.sizes = {1024, 1 << 20};
  r.with_nccl = false;
  return r;
}

}  // namespace

TEST_CASE("contest: a winner that does not prove gives way; only what is written is proved",
          "[tuning][contest]") {
  int proofs = 0;
  Field files;
  files.source = "files";
  // The same schedule three times: they tie, and the first of a tie wins its band.
  files.entries.push_back(entry("first", false, proofs));
  files.entries.push_back(entry("second", true, proofs));
  files.entries.push_back(entry("third", true, proofs));
  files.rejected.push_back("other.xml: broadcast on 4 ranks, not allreduce on 2 ranks");
  const Contest contest = run_contest({files}, two_gpus(), request());
  CHECK(proofs == 2);  // the first, which failed, then the second; never the third
  REQUIRE(contest.candidates.size() == 2);
  CHECK(contest.candidates[0].name == "second");
  CHECK(contest.proved == std::vector<bool>{true, false});
  REQUIRE(contest.rejected.size() == 1);
  CHECK(contest.rejected[0] ==
        std::vector<std::string>{"other.xml: broadcast on 4 ranks, not allreduce on 2 ranks",
                                 "first: verification failed"});
  REQUIRE(contest.tuning.bands.size() == 1);
  CHECK(
      contest.tuning.contenders[static_cast<std::size_t>(contest.tuning.bands[0].contender)].name ==
      "second");
  CHECK(contest.tuning.info.rejected == contest.all_rejected());
}

TEST_CASE("contest: each report states the winner's threadblocks per rank", "[tuning][contest]") {
  int proofs = 0;
  Field files;
  files.entries.push_back(entry("mine", true, proofs));
  ContestRequest r = request();
  r.with_nccl = true;
  const Contest contest = run_contest({files}, two_gpus(), r);
  std::size_t most = 0;
  for (const ir::Gpu& gpu : pair_allreduce().gpus) most = std::max(most, gpu.threadblocks.size());
  REQUIRE(most > 0);
  CHECK(contest.tuning.contenders[0].threadblocks == static_cast<int>(most));
  CHECK(threadblocks_text(contest.tuning.contenders[0]) == std::to_string(most));
  CHECK(threadblocks_text(contest.tuning.contenders.back()) == "-");  // NCCL's: its own choice
  const Tuning& t = contest.tuning;
  const std::string report = report_markdown(t.sizes, t.contenders, t.bands, t.info);
  CHECK(report.find("| winner | threadblocks per rank |") != std::string::npos);
  const std::string table = bands_table(t);
  CHECK(table.find("tbs/rank") != std::string::npos);
  for (const Band& band : t.bands) {
    const Contender& winner = t.contenders[static_cast<std::size_t>(band.contender)];
    CHECK(report.find("| " + winner.name + " | " + threadblocks_text(winner) + " |") !=
          std::string::npos);
  }
}

TEST_CASE("contest: prove_all proves every candidate before predicting", "[tuning][contest]") {
  int proofs = 0;
  Field files;
  files.entries.push_back(entry("first", false, proofs));
  files.entries.push_back(entry("second", true, proofs));
  files.entries.push_back(entry("third", true, proofs));
  ContestRequest r = request();
  r.prove_all = true;
  const Contest contest = run_contest({files}, two_gpus(), r);
  CHECK(proofs == 3);
  CHECK(contest.candidates.size() == 2);
  CHECK(contest.proved_count() == 2);
}

TEST_CASE("contest: only the field with a floor is pruned, where it lies in the list",
          "[tuning][contest]") {
  int proofs = 0;
  Field files;
  files.source = "files";
  files.entries.push_back(entry("mine", true, proofs));
  Field sketches;
  sketches.source = "synthesis";
  sketches.entries.push_back(entry("sketch a", true, proofs));
  sketches.entries.push_back(entry("sketch b", true, proofs));
  // A floor no time is below: past the field's first prediction at a size, it rules the rest of
  // the field out there; the files' candidate before it is predicted everywhere.
  sketches.floor_us = [](const Candidate&, std::uint64_t) { return 1e30; };
  const Contest contest = run_contest({files, sketches}, two_gpus(), request());
  REQUIRE(contest.tuning.contenders.size() == 3);
  CHECK(contest.field_sizes == std::vector<std::size_t>{1, 2});
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(std::isfinite(contest.tuning.contenders[0].time_us[i]));
    CHECK(std::isfinite(contest.tuning.contenders[1].time_us[i]));
    CHECK(!std::isfinite(contest.tuning.contenders[2].time_us[i]));
  }
}

TEST_CASE("contest: refuses two floors and a twin outside its field", "[tuning][contest]") {
  int proofs = 0;
  Field a;
  a.source = "a";
  a.entries.push_back(entry("x", true, proofs));
  a.floor_us = [](const Candidate&, std::uint64_t) { return 0.0; };
  Field b = a;
  b.source = "b";
  CHECK_THROWS_WITH(run_contest({a, b}, two_gpus(), request()),
                    Catch::Contains("two sources with a lower bound (a and b)"));
  a.entries[0].twin = 1;  // its field has one entry
  CHECK_THROWS_WITH(run_contest({a}, two_gpus(), request()), Catch::Contains("x's twin 1"));
}
