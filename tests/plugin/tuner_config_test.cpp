#include <array>

#include <catch2/catch.hpp>

#include "plugin_test_support.h"
#include "weft/tuning/tuner_config.h"

namespace {

using weft::tuning::apply_tuner_rules;
using weft::tuning::parse_tuner_config;
using weft::tuning::TunerQuery;

constexpr int kAllReduce = 4;  // ncclFunc_t
constexpr int kAllGather = 2;
constexpr int kTree = 0, kRing = 1, kNvls = 4;
constexpr int kLL = 0, kLL128 = 1, kSimple = 2;

// NCCL's float[7][3] cost table with every pair allowed at some cost.
std::array<float, 21> full_table() {
  std::array<float, 21> table{};
  for (std::size_t k = 0; k < table.size(); ++k) table[k] = 10.0f + static_cast<float>(k);
  return table;
}

TunerQuery allreduce_query(std::size_t bytes, std::size_t ranks = 8, std::size_t nodes = 1) {
  TunerQuery q;
  q.collective = kAllReduce;
  q.bytes = bytes;
  q.ranks = ranks;
  q.nodes = nodes;
  return q;
}

}  // namespace

TEST_CASE("tuner config: NCCL example tuner's format is read") {
  const auto config = parse_tuner_config(
      "# collective,min,max,algo,proto,channels,nNodes,nRanks,numPipeOps,regBuff\n"
      "allreduce,0,65536,tree,ll,4,1,-1\n"
      "\n"
      "  AllGather , 1024 , -1 , ring , simple , -1 , -1 , 8 , 1 , 0  # trailing comment\n",
      "t.csv");
  CHECK(config.problems.empty());
  REQUIRE(config.rules.size() == 2);
  CHECK(config.rules[0].collective == kAllReduce);
  CHECK(config.rules[0].max_bytes == 65536);
  CHECK(config.rules[0].algorithm == kTree);
  CHECK(config.rules[0].protocol == kLL);
  CHECK(config.rules[0].channels == 4);
  CHECK(config.rules[0].line == 2);
  CHECK(config.rules[1].collective == kAllGather);
  CHECK(config.rules[1].max_bytes == UINT64_MAX);
  CHECK(config.rules[1].ranks == 8);
  CHECK(config.rules[1].pipe_ops == 1);
  CHECK(config.rules[1].reg_buff == 0);
}

TEST_CASE("tuner config: bad lines are reported with file:line and skipped") {
  const auto config = parse_tuner_config(
      "allreduce,0,100,tree,ll\n"             // too few fields
      "allreduce,0,100,hypercube,ll,1,1,1\n"  // unknown algorithm
      "allreduce,0,100,ring,ll256,1,1,1\n"    // unknown protocol
      "allreduce,x,100,ring,ll,1,1,1\n"       // bad number
      "allreduce,200,100,ring,ll,1,1,1\n"     // empty band
      "allreduce,0,100,ring,ll,-1,-1,-1\n",   // good
      "bad.csv");
  CHECK(config.rules.size() == 1);
  REQUIRE(config.problems.size() == 5);
  CHECK(config.problems[0].rfind("bad.csv:1:", 0) == 0);
  CHECK(config.problems[1].find("hypercube") != std::string::npos);
  CHECK(config.problems[2].find("ll256") != std::string::npos);
  CHECK(config.problems[3].rfind("bad.csv:4:", 0) == 0);
  CHECK(config.problems[4].rfind("bad.csv:5:", 0) == 0);
}

TEST_CASE("tuner config: the first matching rule forces its pair and channels") {
  const auto config = parse_tuner_config(
      "allreduce,0,1023,tree,ll,2,-1,-1\n"
      "allreduce,1024,-1,ring,ll128,-1,1,8\n"
      "allreduce,1024,-1,nvls,simple,16,-1,-1\n",
      "t.csv");
  REQUIRE(config.rules.size() == 3);

  auto table = full_table();
  int channels = 0;
  CHECK(apply_tuner_rules(config.rules, allreduce_query(512), table.data(), 7, 3, &channels) == 0);
  CHECK(table[kTree * 3 + kLL] == 0.0f);
  CHECK(channels == 2);

  table = full_table();
  channels = 0;
  CHECK(apply_tuner_rules(config.rules, allreduce_query(4096), table.data(), 7, 3, &channels) == 1);
  CHECK(table[kRing * 3 + kLL128] == 0.0f);
  CHECK(channels == 0);  // −1: NCCL keeps its choice

  // 16 ranks miss rule 1 (nRanks 8); rule 2 applies.
  table = full_table();
  CHECK(apply_tuner_rules(config.rules, allreduce_query(4096, 16), table.data(), 7, 3, &channels) ==
        2);
  CHECK(table[kNvls * 3 + kSimple] == 0.0f);
  CHECK(channels == 16);
}

TEST_CASE("tuner config: a pair NCCL disallows is never forced; the next rule is tried") {
  const auto config = parse_tuner_config(
      "allreduce,0,-1,nvls,simple,-1,-1,-1\n"
      "allreduce,0,-1,ring,simple,-1,-1,-1\n",
      "t.csv");
  auto table = full_table();
  table[kNvls * 3 + kSimple] = -1.0f;
  int channels = 0;
  CHECK(apply_tuner_rules(config.rules, allreduce_query(64), table.data(), 7, 3, &channels) == 1);
  CHECK(table[kNvls * 3 + kSimple] == -1.0f);
  CHECK(table[kRing * 3 + kSimple] == 0.0f);
}

TEST_CASE("tuner config: no matching rule changes nothing") {
  const auto config = parse_tuner_config("allgather,0,-1,ring,simple,4,-1,-1\n", "t.csv");
  auto table = full_table();
  const auto before = table;
  int channels = 0;
  CHECK(apply_tuner_rules(config.rules, allreduce_query(64), table.data(), 7, 3, &channels) == -1);
  CHECK(table == before);
  CHECK(channels == 0);
  // A table smaller than the rule's indices is left alone too.
  const auto pat = parse_tuner_config("allreduce,0,-1,pat,simple,4,-1,-1\n", "t.csv");
  CHECK(apply_tuner_rules(pat.rules, allreduce_query(64), table.data(), 6, 3, &channels) == -1);
  CHECK(table == before);
}

TEST_CASE("tuner config: a missing file is one problem and no rules") {
  const auto config = weft::tuning::read_tuner_config("/nonexistent/weft-tuner.csv");
  CHECK(config.rules.empty());
  REQUIRE(config.problems.size() == 1);
  CHECK(config.problems[0].find("/nonexistent/weft-tuner.csv") != std::string::npos);
}
