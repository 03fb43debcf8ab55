// The threadblock budget (weft/tuning/threadblock_budget.h, TuneRequest::max_threadblocks): NCCL's
// channel ceiling per GPU generation by default; a candidate over the budget is predicted but
// wins no band, prunes nothing that may win, and the reports say what it would have gained.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "pair.h"

#include "weft/ir/validate.h"
#include "weft/predict/presets.h"
#include "weft/predict/topology.h"
#include "weft/predict/topology_builder.h"
#include "weft/tuning/bands.h"
#include "weft/tuning/contest.h"
#include "weft/tuning/threadblock_budget.h"
#include "weft/tuning/tune.h"

using namespace weft;
using namespace weft::tuning;

namespace {

using test::pair_allreduce;

// The pair's allreduce with as many idle threadblocks again on every rank: the same schedule, as
// fast, on twice the threadblocks.
ir::Algorithm doubled(ir::Algorithm algo) {
  for (ir::Gpu& gpu : algo.gpus) {
    const std::size_t n = gpu.threadblocks.size();
    for (std::size_t t = 0; t < n; ++t) {
      ir::Threadblock idle;
      idle.id = static_cast<int>(n + t);
      gpu.threadblocks.push_back(idle);
    }
  }
  return algo;
}

// Two GPUs of the preset, with their compute capability changed where `sm` is given.
predict::Topology machine(const char* preset, std::optional<int> sm = std::nullopt) {
  std::optional<predict::MachineDescription> m = predict::preset_machine(preset);
  REQUIRE(m);
  if (sm) m->info.gpu_sm = *sm;
  return predict::build_topology(*m, 1, 2);
}

Contender contender(const std::string& name, int threadblocks, bool over, std::vector<double> t) {
  Contender c;
  c.name = name;
  c.threadblocks = threadblocks;
  c.over_budget = over;
  c.time_us = std::move(t);
  return c;
}

}  // namespace

TEST_CASE("threadblock budget: NCCL's channel ceiling for the GPU's generation by default",
          "[tuning][budget]") {
  CHECK(nccl_channel_ceiling(70) == 32);   // Volta: NCCL's MAXCHANNELS
  CHECK(nccl_channel_ceiling(80) == 32);   // Ampere
  CHECK(nccl_channel_ceiling(90) == 32);   // Hopper
  CHECK(nccl_channel_ceiling(100) == 16);  // Blackwell: NCCL 2.28's default
  CHECK(nccl_channel_ceiling(120) == 16);
  CHECK(nccl_channel_ceiling(0) == 32);  // unknown: the ceiling before Blackwell
  CHECK(gpu_generation(90) == "Hopper");
  CHECK(gpu_generation(0) == "an unknown GPU");

  const ThreadblockBudget h100 = threadblock_budget(machine("h100-nvswitch"), 0);
  CHECK(h100.threadblocks == 32);
  CHECK_THAT(h100.source, Catch::Contains("NCCL's channel ceiling on Hopper"));
  const ThreadblockBudget a100 = threadblock_budget(machine("a100-nvswitch"), 0);
  CHECK(a100.threadblocks == 32);
  CHECK_THAT(a100.source, Catch::Contains("Ampere"));
  const ThreadblockBudget blackwell = threadblock_budget(machine("h100-nvswitch", 100), 0);
  CHECK(blackwell.threadblocks == 16);
  CHECK_THAT(blackwell.source, Catch::Contains("Blackwell"));
  const ThreadblockBudget unknown = threadblock_budget(machine("h100-nvswitch", 0), 0);
  CHECK(unknown.threadblocks == 32);
  CHECK_THAT(unknown.source, Catch::Contains("an unknown GPU"));
  const ThreadblockBudget asked = threadblock_budget(machine("h100-nvswitch"), 8);
  CHECK(asked.threadblocks == 8);
  CHECK(asked.source == "--max-threadblocks");
}

TEST_CASE("threadblock budget: a candidate over it is predicted but wins no band",
          "[tuning][budget]") {
  const ir::Algorithm base = pair_allreduce();
  const int threadblocks = busiest_threadblocks(base);
  REQUIRE(threadblocks > 0);
  REQUIRE(busiest_threadblocks(doubled(base)) == 2 * threadblocks);
  // Over the budget first in the list: without a budget the first of a tie wins its band.
  const std::vector<Candidate> candidates{{"wide", doubled(base)}, {"narrow", base}};
  TuneRequest request;
  request.collective = ir::Collective::AllReduce;
  request.sizes = {1024, 1 << 20};
  request.with_nccl = false;
  request.max_threadblocks = threadblocks;
  const predict::Topology topology = machine("h100-nvswitch");
  const Tuning tuning = tune(candidates, topology, request);
  REQUIRE(tuning.contenders.size() == 2);
  CHECK(tuning.contenders[0].over_budget);
  CHECK(!tuning.contenders[1].over_budget);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(std::isfinite(tuning.contenders[0].time_us[i]));  // predicted all the same
  }
  REQUIRE(tuning.bands.size() == 1);
  CHECK(tuning.bands[0].contender == 1);
  CHECK(tuning.bands[0].runner_up == -1);  // nor is it the runner-up
  bool noted = false;
  for (const std::string& note : tuning.info.notes) {
    noted = noted || note.find("over the threadblock budget") != std::string::npos;
  }
  CHECK(noted);

  request.max_threadblocks = 0;  // no budget: the first of the tie wins
  const Tuning free = tune(candidates, topology, request);
  REQUIRE(free.bands.size() == 1);
  CHECK(free.bands[0].contender == 0);
  CHECK(!free.contenders[0].over_budget);
}

TEST_CASE("threadblock budget: over-budget candidates prune nothing that may win",
          "[tuning][budget]") {
  const ir::Algorithm base = pair_allreduce();
  const int threadblocks = busiest_threadblocks(base);
  // Both prunable, predicted backwards, and a floor no time is below: whatever is predicted
  // first at a size rules the others of the field out there. The wide one comes last (it would
  // be predicted first), but within the budget the narrow one is predicted first.
  const std::vector<Candidate> candidates{{"narrow", base}, {"wide", doubled(base)}};
  TuneRequest request;
  request.collective = ir::Collective::AllReduce;
  request.sizes = {1024, 1 << 20};
  request.with_nccl = false;
  request.prunable = 2;
  request.prunable_backwards = true;
  request.floor_us = [](const Candidate&, std::uint64_t) { return 1e30; };
  request.max_threadblocks = threadblocks;
  const Tuning tuning = tune(candidates, machine("h100-nvswitch"), request);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(std::isfinite(tuning.contenders[0].time_us[i]));
    CHECK(!std::isfinite(tuning.contenders[1].time_us[i]));  // could not beat it: not predicted
  }
  REQUIRE(!tuning.bands.empty());
  CHECK(tuning.bands[0].contender == 0);

  request.max_threadblocks = 0;  // no budget: the wide one, predicted first, rules out the other
  const Tuning free = tune(candidates, machine("h100-nvswitch"), request);
  CHECK(!std::isfinite(free.contenders[0].time_us[0]));
  CHECK(std::isfinite(free.contenders[1].time_us[0]));
}

TEST_CASE("threadblock budget: the reports say what more threadblocks would gain",
          "[tuning][budget]") {
  std::vector<Contender> contenders{contender("fitted", 32, false, {10.0, 100.0, 1000.0}),
                                    contender("wide", 128, true, {12.0, 96.0, 1000.2}),
                                    contender("wider", 256, true, {11.0, 98.0, 1002.0})};
  const std::vector<std::uint64_t> sizes{1024, 1 << 20, 1 << 30};
  const std::vector<Band> bands = choose_bands(sizes, contenders);
  REQUIRE(bands.size() == 1);
  CHECK(bands[0].contender == 0);
  // Slower at the first size; 1.04× faster at the second; within half a percent at the third.
  CHECK(over_budget_gain(contenders, 0, 0).contender == -1);
  const OverBudgetGain gain = over_budget_gain(contenders, 1, 0);
  CHECK(gain.contender == 1);
  CHECK(gain.speedup == Approx(100.0 / 96.0));
  CHECK(over_budget_text(contenders, gain) == "1.04× at 128 tbs");
  CHECK(over_budget_gain(contenders, 2, 0).contender == -1);
  CHECK(over_budget_text(contenders, over_budget_gain(contenders, 2, 0)) == "-");
  CHECK(over_budget_gain(contenders, bands[0]).contender == 1);

  Tuning tuning;
  tuning.sizes = sizes;
  tuning.contenders = contenders;
  tuning.bands = bands;
  CHECK_THAT(bands_table(tuning),
             Catch::Contains("more tbs would gain") && Catch::Contains("1.04× at 128 tbs"));
  ReportInfo info;
  info.ranks = 2;
  const std::string report = report_markdown(sizes, contenders, bands, info);
  CHECK_THAT(report, Catch::Contains("| with more threadblocks |") &&
                         Catch::Contains("| 1.04× at 128 tbs |") &&
                         Catch::Contains("| wide | 128 (over budget) |"));
}

TEST_CASE("threadblock budget: the contest proves nothing over it, even with prove_all",
          "[tuning][budget]") {
  const ir::Algorithm base = pair_allreduce();
  int proofs = 0;
  Field files;
  files.source = "files";
  for (const auto& [name, algo] :
       {std::pair<std::string, ir::Algorithm>{"wide", doubled(base)}, {"narrow", base}}) {
    Entry e;
    e.candidate = {name, algo};
    e.prove = [&proofs](const Candidate& c) -> std::optional<std::string> {
      ++proofs;
      CHECK(c.name == "narrow");
      return std::nullopt;
    };
    files.entries.push_back(std::move(e));
  }
  ContestRequest request;
  request.collective = ir::Collective::AllReduce;
  request.sizes = {1024, 1 << 20};
  request.with_nccl = false;
  request.prove_all = true;
  request.max_threadblocks = busiest_threadblocks(base);
  const Contest contest = run_contest({files}, machine("h100-nvswitch"), request);
  CHECK(proofs == 1);
  CHECK(contest.proved == std::vector<bool>{false, true});
  REQUIRE(contest.tuning.bands.size() == 1);
  CHECK(contest.tuning.bands[0].contender == 1);
}
