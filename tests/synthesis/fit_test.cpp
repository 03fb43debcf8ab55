// Sketches fitted to a threadblock budget (weft/synthesis/fit.h): a sketch's connections bound
// its threadblocks from below, a fold keeps its routes on fewer channels, and under a budget the
// synthesis chooses only what fits while the wider sketches still say what they would gain.
#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "support.h"
#include "weft/compiler/compiler.h"
#include "weft/synthesis/families.h"
#include "weft/synthesis/fit.h"
#include "weft/synthesis/synthesize.h"
#include "weft/tuning/contenders.h"

namespace weft::synthesis {
namespace {

using test::line_rate_topology;

// The variant compiled as synthesis compiles it (the critical path places it, no judge).
CompiledVariant compiled(const Variant& v) {
  dsl::Options options;
  options.protocol = v.protocol;
  options.limits = "weft";
  options.fusion = v.sketch.fusion;
  const dsl::Program program = to_program(v.sketch, options, false);
  compiler::CompileOptions compile;
  compile.judge.enabled = false;
  compiler::CompileResult result = compiler::compile_unverified(program, compile);
  if (!result.algorithm || !result.errors.empty()) return {std::nullopt, result.error_text()};
  return {std::move(result.algorithm), {}};
}

std::vector<Variant> simple_variants(const predict::Topology& machine, ir::Collective c) {
  std::vector<Variant> out;
  for (Variant& v : variants(machine, c, plan_node(machine, c), 64)) {
    if (v.protocol == ir::Protocol::Simple) out.push_back(std::move(v));
  }
  return out;
}

}  // namespace

TEST_CASE("A sketch's connections bound its threadblocks from below, folded or not",
          "[synthesis][budget]") {
  const predict::Topology node = line_rate_topology("h100-nvswitch");
  const predict::Topology two_nodes = line_rate_topology("a100-nvswitch", 2, 4);
  for (const auto& [machine, collective] :
       {std::pair{&node, ir::Collective::AllGather}, std::pair{&node, ir::Collective::AllReduce},
        std::pair{&two_nodes, ir::Collective::ReduceScatter},
        std::pair{&two_nodes, ir::Collective::AllToAll}}) {
    for (const Variant& v : simple_variants(*machine, collective)) {
      INFO(v.sketch.name);
      const CompiledVariant c = compiled(v);
      REQUIRE(c.algorithm);
      CHECK(least_threadblocks(v.sketch) <= tuning::busiest_threadblocks(*c.algorithm));
      if (v.sketch.channels < 2) continue;
      const int half = v.sketch.channels / 2;
      const Sketch folded = fold_channels(v.sketch, half);
      CHECK(folded.channels == half);
      REQUIRE(folded.routes.size() == v.sketch.routes.size());
      for (std::size_t r = 0; r < folded.routes.size(); ++r) {
        REQUIRE(folded.routes[r].hops.size() == v.sketch.routes[r].hops.size());
        for (std::size_t h = 0; h < folded.routes[r].hops.size(); ++h) {
          const Hop& hop = folded.routes[r].hops[h];
          CHECK(hop.from == v.sketch.routes[r].hops[h].from);
          CHECK(hop.to == v.sketch.routes[r].hops[h].to);
          CHECK(hop.channel == v.sketch.routes[r].hops[h].channel % half);
        }
      }
      CHECK(least_threadblocks(folded) == least_threadblocks(v.sketch, half));
      // Folding merges connections: never more of them.
      CHECK(least_threadblocks(folded) <= least_threadblocks(v.sketch));
    }
  }
}

TEST_CASE("A sketch over the budget is fitted on the most channels that fit, or not at all",
          "[synthesis][budget]") {
  const predict::Topology node = line_rate_topology("h100-nvswitch");
  const std::vector<Variant> offered = simple_variants(node, ir::Collective::AllGather);
  const auto rings = std::find_if(offered.begin(), offered.end(), [](const Variant& v) {
    return v.sketch.name.rfind("synth_rings_l8", 0) == 0;
  });
  REQUIRE(rings != offered.end());
  const CompiledVariant wide = compiled(*rings);
  REQUIRE(wide.algorithm);
  const int threadblocks = tuning::busiest_threadblocks(*wide.algorithm);
  REQUIRE(threadblocks > 32);

  int compiles = 0;
  const CompileVariant counted = [&compiles](const Variant& v) {
    ++compiles;
    return compiled(v);
  };
  int hint = 0;
  const std::optional<FittedVariant> fitted = fit_variant(*rings, threadblocks, 32, counted, &hint);
  REQUIRE(fitted);
  CHECK(fitted->variant.sketch.name == rings->sketch.name + "_t32");
  CHECK(tuning::busiest_threadblocks(fitted->algorithm) <= 32);
  CHECK(rings->sketch.channels % fitted->variant.sketch.channels == 0);
  CHECK(hint == fitted->variant.sketch.channels);
  // Twice the channels would not fit (or are the sketch's own).
  if (fitted->variant.sketch.channels * 2 < rings->sketch.channels) {
    Variant twice = *rings;
    twice.sketch = fold_channels(rings->sketch, fitted->variant.sketch.channels * 2);
    const CompiledVariant c = compiled(twice);
    REQUIRE(c.algorithm);
    CHECK(tuning::busiest_threadblocks(*c.algorithm) > 32);
  }
  // The same sketch on another protocol: one compile, at the channels found.
  compiles = 0;
  Variant ll128 = *rings;
  ll128.protocol = ir::Protocol::LL128;
  CHECK(fit_variant(ll128, threadblocks, 32, counted, &hint));
  CHECK(compiles == 1);

  // Within the budget already: nothing to fit. Below what one channel's connections take (a rank
  // sends to seven peers of its node): no fold fits, and none is compiled.
  compiles = 0;
  CHECK_FALSE(fit_variant(*rings, threadblocks, threadblocks, counted));
  CHECK_FALSE(fit_variant(*rings, threadblocks, least_threadblocks(rings->sketch, 1) - 1, counted));
  CHECK(compiles == 0);
}

TEST_CASE("The families are asked again for the budget's channels and half of them",
          "[synthesis][budget]") {
  CHECK(budget_channels(32, 64) == std::vector<int>{32, 16});
  CHECK(budget_channels(64, 64) == std::vector<int>{32});
  CHECK(budget_channels(1, 64) == std::vector<int>{1});
  CHECK(budget_channels(0, 64).empty());
}

TEST_CASE("Under a threadblock budget only what fits is chosen, proved and written",
          "[synthesis][budget]") {
  const predict::Topology node = line_rate_topology("h100-nvswitch");
  SynthesisRequest request;
  request.collective = ir::Collective::AllGather;
  request.sizes = {1 << 20, 64ull << 20};
  request.max_threadblocks = 32;
  request.prove_all = true;
  const Synthesis s = synthesize(node, request);
  REQUIRE(s.synthesized > 0);
  const tuning::Tuning& t = s.tuning;
  std::size_t over = 0;
  std::size_t fitted = 0;
  std::size_t proved = 0;
  for (std::size_t k = 0; k < s.synthesized; ++k) {
    const tuning::Contender& c = t.contenders[k];
    INFO(c.name);
    CHECK(c.over_budget == (c.threadblocks > 32));
    over += c.over_budget ? 1 : 0;
    if (c.name.find("_t32 ") != std::string::npos) {
      ++fitted;
      CHECK(c.threadblocks <= 32);
    }
    proved += c.over_budget ? 0 : 1;
  }
  CHECK(over > 0);            // the families' widest sketches take 64 threadblocks here
  CHECK(fitted > 0);          // and their routes come folded beside them
  CHECK(s.proved == proved);  // every sketch within the budget; none over it
  for (const tuning::Band& band : t.bands) {
    const tuning::Contender& winner = t.contenders[static_cast<std::size_t>(band.contender)];
    CHECK(!winner.over_budget);
    CHECK(winner.threadblocks <= 32);
  }
  const std::string report = bound_report(s);
  CHECK_THAT(report, Catch::Contains("| with more threadblocks |"));
  CHECK_THAT(bound_table(s), Catch::Contains("over budget"));
}

}  // namespace weft::synthesis
