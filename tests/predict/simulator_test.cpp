// The simulator against NCCL's own model and against physics (docs/architecture.md §7): NCCL's
// ring, written as a Weft algorithm with NCCL's channel count, predicted by simulation, agrees with
// tuning.cc's formula; a large ring converges to 2(N−1)/N·S over its bottleneck; all-pairs beats
// the ring on small calls and loses on large ones on NVSwitch machines; across nodes the
// hierarchical allreduce beats a flat ring on large calls; steps that share a link, however they
// are cut, are served their own bytes.
#include <catch2/catch.hpp>

#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include "weft/algorithms/library.h"
#include "weft/compiler/compiler.h"
#include "weft/dsl/registry.h"
#include "weft/predict/nccl_model.h"
#include "weft/predict/simulator.h"
#include "weft/predict/topology.h"
#include "weft/predict/topology_builder.h"

namespace {

using namespace weft;

// Compiled and proved (one seed per case: what the tests here need is the IR).
ir::Algorithm compiled(const dsl::Program& program) {
  compiler::CompileOptions options;
  options.verify.seeds = 1;
  compiler::CompileResult result = compiler::compile(program, options);
  INFO(result.error_text());
  REQUIRE(result.ok());
  return std::move(*result.algorithm);
}

ir::Algorithm library_algorithm(const std::string& name, dsl::AlgorithmParams params) {
  dsl::Registry registry;
  algorithms::register_library(registry);
  const dsl::AlgorithmInfo* info = registry.find(name);
  REQUIRE(info != nullptr);
  params.limits = "weft";
  return compiled(info->build(params));
}

// NCCL's tree within one node, as NCCL builds it there: a chain per channel. Partial sums flow
// from the last rank to rank 0, which then holds the total and passes it back down; each chunk
// streams through the chain tile by tile, both directions at once. As in NCCL, where a channel's
// block splits its threads between the two directions, each direction has its own threadblock
// (k up, channels + k down), so that the last rank sends up while it receives down.
ir::Algorithm nccl_tree_chain(int ranks, ir::Protocol protocol, int channels) {
  dsl::AlgorithmParams params;
  params.ranks = ranks;
  params.protocol = protocol;
  params.limits = "weft";
  dsl::Program p("nccl_tree_chain", dsl::Collective::allreduce(ranks, channels, true),
                 params.options());
  for (int k = 0; k < channels; ++k) {
    for (int v = ranks - 1; v >= 1; --v) {
      p.chunk(v - 1, dsl::output, k).reduce(p.chunk(v, dsl::output, k), {k, k, k});
    }
    for (int v = 0; v + 1 < ranks; ++v) {
      p.chunk(v, dsl::output, k).copy(v + 1, dsl::output, k, {k, channels + k, channels + k});
    }
  }
  return compiled(p);
}

predict::Topology topology(const std::string& name, int nodes = 1, int gpus_per_node = 0) {
  predict::TopologyRequest request;
  request.source = name;
  request.nodes = nodes;
  request.gpus_per_node = gpus_per_node;
  predict::TopologyResult loaded = predict::load_topology(request);
  INFO(loaded.diagnostics.str());
  REQUIRE(loaded.topology.has_value());
  return std::move(*loaded.topology);
}

// NCCL's algorithms as NCCL runs them: its kernel's hops, with no floor of a Weft step under them
// (ProtocolCosts::step_latency_us), so that simulating them reproduces NCCL's model.
predict::Topology nccl_kernel(const std::string& name) {
  predict::Topology t = topology(name);
  predict::CostParameters costs = t.costs();
  for (predict::ProtocolCosts& p : costs.protocols) p.step_latency_us = 0;
  t.set_costs(costs);
  return t;
}

double simulate(const ir::Algorithm& algo, const predict::Topology& topo, std::uint64_t bytes) {
  const predict::Simulator simulator(algo, topo);
  REQUIRE(simulator.error().empty());
  predict::SimulationOptions options;
  options.bytes = bytes;
  const predict::SimulationResult r = simulator.run(options);
  INFO(r.error);
  REQUIRE(r.ok());
  return r.time_us;
}

double nccl_time(const predict::Topology& topo, const std::string& algorithm, ir::Protocol proto,
                 std::uint64_t bytes) {
  for (const predict::NcclPrediction& p :
       predict::predict_nccl(topo, ir::Collective::AllReduce, bytes)) {
    if (p.algorithm == algorithm && p.protocol == proto) return p.time_us;
  }
  FAIL("NCCL's model has no " << algorithm << " " << ir::to_string(proto));
  return 0;
}

}  // namespace

TEST_CASE("NCCL's ring, simulated with NCCL's channels, agrees with NCCL's model within 25%") {
  for (const char* preset : {"h100-nvswitch", "a100-nvswitch"}) {
    const predict::Topology topo = nccl_kernel(preset);
    const int channels = predict::nccl_ring_graph(topo).channels;
    for (const ir::Protocol proto : {ir::Protocol::Simple, ir::Protocol::LL, ir::Protocol::LL128}) {
      dsl::AlgorithmParams params;
      params.ranks = 8;
      params.protocol = proto;
      params.instances = channels;  // one ring per NCCL channel, as NCCL runs it
      const ir::Algorithm ring = library_algorithm("allreduce_ring", params);
      // Sizes from 1 KB to 1 GB that split into the ring's 8 × channels chunks of whole floats.
      const std::uint64_t unit = 4ull * 8 * static_cast<std::uint64_t>(channels);
      for (std::uint64_t target = 1024; target <= (1ull << 30); target *= 32) {
        const std::uint64_t bytes = std::max<std::uint64_t>(unit, target / unit * unit);
        const double weft = simulate(ring, topo, bytes);
        const double nccl = nccl_time(topo, "Ring", proto, bytes);
        INFO(preset << " " << ir::to_string(proto) << " " << channels << " channels, " << bytes
                    << " bytes: simulated " << weft << " us, NCCL's model " << nccl << " us");
        // NCCL adds its latency and its transfer time; the simulator overlaps them where a
        // message streams while the previous hop's is still arriving. Where the two terms are
        // alike (LL around 1 MB) that alone differs by up to 30%; everywhere else within 25%.
        const bool mid_ll = proto == ir::Protocol::LL && target == (1ull << 20);
        CHECK(weft / nccl == Approx(1.0).margin(mid_ll ? 0.30 : 0.25));
      }
    }
  }
}

TEST_CASE("NCCL's tree, simulated as its one-node chain, stays within its bounds of NCCL's model") {
  // NCCL runs a tree channel in one block whose threads split between the two directions; the
  // chain with a threadblock per direction gets the same budget at half the channels. Where the
  // two still differ is what NCCL's tree model has and a simulation of the steps does not: its
  // own per-hop latencies (LL128: 1.25 us against the ring's 1.9, which the simulator uses), its
  // empirical mid-size corrections (treeCorrection) and LL's 1/3.8 of the bandwidth against the
  // ring's 1/2. The bounds pin today's agreement; the ring above is the calibration.
  struct Bounds {
    ir::Protocol protocol;
    double low, high;  // simulated time / NCCL's model
  };
  for (const char* preset : {"h100-nvswitch", "a100-nvswitch"}) {
    const predict::Topology topo = nccl_kernel(preset);
    const int channels = predict::nccl_ring_graph(topo).channels;
    for (const Bounds& b :
         {Bounds{ir::Protocol::Simple, 0.65, 1.0}, Bounds{ir::Protocol::LL128, 0.7, 1.35},
          Bounds{ir::Protocol::LL, 0.4, 1.05}}) {
      const ir::Algorithm tree = nccl_tree_chain(8, b.protocol, channels / 2);
      const std::uint64_t unit = 4ull * static_cast<std::uint64_t>(channels / 2);
      for (std::uint64_t target = 1024; target <= (1ull << 30); target *= 8) {
        const std::uint64_t bytes = std::max<std::uint64_t>(unit, target / unit * unit);
        const double weft = simulate(tree, topo, bytes);
        const double nccl = nccl_time(topo, "Tree", b.protocol, bytes);
        INFO(preset << " " << ir::to_string(b.protocol) << " " << channels / 2 << " chains, "
                    << bytes << " bytes: simulated " << weft << " us, NCCL's model " << nccl
                    << " us");
        CHECK(weft / nccl >= b.low);
        CHECK(weft / nccl <= b.high);
        // Small calls are latency: there both agree within 25% but LL128's (NCCL's tree hop is
        // faster than its ring hop, which the simulator uses).
        if (target <= 64 * 1024 && b.protocol != ir::Protocol::LL128) {
          CHECK(weft / nccl == Approx(1.0).margin(0.25));
        }
      }
    }
  }
}

TEST_CASE("A large ring allreduce converges to 2(N-1)/N S over its bottleneck bandwidth") {
  const predict::Topology topo = topology("h100-nvswitch");
  dsl::AlgorithmParams params;
  params.ranks = 8;
  params.instances = 16;  // 16 threadblocks per GPU out-link: more than a link carries
  const ir::Algorithm ring = library_algorithm("allreduce_ring", params);
  const std::uint64_t bytes = 1ull << 30;
  const double seconds = (simulate(ring, topo, bytes) - topo.costs().launch_latency_us -
                          topo.costs().protocol(ir::Protocol::Simple).call_latency_us) *
                         1e-6;
  // Each GPU sends 2(N-1)/N·S; 16 threadblocks' rate or the GPU's NVLink, whichever is less.
  const double per_threadblock =
      topo.costs().protocol(ir::Protocol::Simple).threadblock_bandwidth_gbs;
  double nvlink = 0;
  for (const predict::Link& link : topo.links()) {
    if (link.type == predict::LinkType::NVLink) nvlink = std::max(nvlink, link.bandwidth_gbs);
  }
  const double bottleneck_gbs = std::min(16 * per_threadblock, nvlink);
  const double expected = 2.0 * 7 / 8 * static_cast<double>(bytes) / (bottleneck_gbs * 1e9);
  INFO("simulated " << seconds << " s, 2(N-1)/N S / " << bottleneck_gbs << " GB/s = " << expected);
  // Within 8%: the ring's fill and drain (14 steps of a tile) and the last hop's latency add to
  // the bandwidth term.
  CHECK(seconds == Approx(expected).epsilon(0.08));
}

TEST_CASE("On NVSwitch machines all-pairs beats the ring on small calls and loses on large ones") {
  for (const char* preset : {"h100-nvswitch", "a100-nvswitch"}) {
    const predict::Topology topo = topology(preset);
    dsl::AlgorithmParams params;
    params.ranks = 8;
    params.protocol = ir::Protocol::LL;
    const ir::Algorithm allpairs = library_algorithm("allreduce_allpairs", params);
    const ir::Algorithm ring = library_algorithm("allreduce_ring", params);
    INFO(preset);
    const double allpairs_small = simulate(allpairs, topo, 4096);
    const double ring_small = simulate(ring, topo, 4096);
    INFO("4 KB: all-pairs " << allpairs_small << " us, ring " << ring_small << " us");
    CHECK(allpairs_small < ring_small);
    // Alike threadblock budgets: all-pairs' 7 per rank (one per peer) against 8 rings.
    params.protocol = ir::Protocol::Simple;
    const ir::Algorithm allpairs_large = library_algorithm("allreduce_allpairs", params);
    params.instances = 8;
    const ir::Algorithm ring_large = library_algorithm("allreduce_ring", params);
    const double allpairs_big = simulate(allpairs_large, topo, 1ull << 30);
    const double ring_big = simulate(ring_large, topo, 1ull << 30);
    INFO("1 GB: all-pairs " << allpairs_big << " us, ring " << ring_big << " us");
    CHECK(allpairs_big > ring_big);
  }
}

TEST_CASE("All-pairs with a chunk per rank (the default) reduces side by side on large calls") {
  // Chunk j's reductions start from another peer than chunk j+1's, so the threadblocks that
  // received them reduce at once. With one chunk per rank block, each rank's reductions are one
  // chain: the allreduce is then far slower; the reduce-scatter, with separate directions (which
  // the compiler's time judge keeps), about as fast.
  const predict::Topology topo = topology("a100-nvswitch");
  for (const char* name : {"allreduce_allpairs", "reducescatter_allpairs"}) {
    dsl::AlgorithmParams params;
    params.ranks = 8;
    params.protocol = ir::Protocol::LL;
    params.chunks = 1;
    const double whole = simulate(library_algorithm(name, params), topo, 256ull << 20);
    params.chunks = 0;  // the default: 8 on 8 ranks
    const double split = simulate(library_algorithm(name, params), topo, 256ull << 20);
    INFO(name << " at 256 MB: --chunks 1 " << whole << " us, default " << split << " us");
    CHECK(split <= whole);
    if (std::string_view(name) == "allreduce_allpairs") CHECK(split * 2 < whole);
  }
}

TEST_CASE("Across nodes the hierarchical allreduce beats a flat ring on large calls") {
  const predict::Topology topo = topology("h100-nvswitch", 2);
  dsl::AlgorithmParams params;
  params.ranks = 16;
  params.nodes = 2;
  params.gpus_per_node = 8;
  params.instances = 4;
  const ir::Algorithm hierarchical = library_algorithm("allreduce_hierarchical", params);
  const ir::Algorithm ring = library_algorithm("allreduce_ring", params);
  const double h = simulate(hierarchical, topo, 1ull << 28);
  const double r = simulate(ring, topo, 1ull << 28);
  INFO("256 MB: hierarchical " << h << " us, ring " << r << " us");
  CHECK(h < r);
}

TEST_CASE("On the PCIe machine the hierarchical allreduce beats all-pairs on large calls") {
  // Pairs of GPUs under one switch, two switches per socket: treat each socket as a node.
  const predict::Topology topo = topology("pcie-gen4");
  dsl::AlgorithmParams params;
  params.ranks = 8;
  params.nodes = 2;
  params.gpus_per_node = 4;
  const ir::Algorithm hierarchical = library_algorithm("allreduce_hierarchical", params);
  dsl::AlgorithmParams flat;
  flat.ranks = 8;
  const ir::Algorithm allpairs = library_algorithm("allreduce_allpairs", flat);
  const double h = simulate(hierarchical, topo, 1ull << 28);
  const double a = simulate(allpairs, topo, 1ull << 28);
  INFO("256 MB: hierarchical " << h << " us, all-pairs " << a << " us");
  CHECK(h < a);
}

TEST_CASE("The simulator refuses a topology of another rank count, naming both") {
  const predict::Topology topo = topology("h100-nvswitch");
  dsl::AlgorithmParams params;
  params.ranks = 4;
  const ir::Algorithm ring = library_algorithm("allreduce_ring", params);
  const predict::Simulator simulator(ring, topo);
  CHECK_THAT(simulator.error(), Catch::Contains("4 ranks") && Catch::Contains("h100-nvswitch") &&
                                    Catch::Contains("has 8"));
  predict::SimulationOptions options;
  options.bytes = 4096;
  CHECK_FALSE(simulator.run(options).ok());
}

TEST_CASE("Sizes an algorithm does not divide into are reported, not simulated") {
  const predict::Topology topo = topology("h100-nvswitch");
  dsl::AlgorithmParams params;
  params.ranks = 8;
  const ir::Algorithm ring = library_algorithm("allreduce_ring", params);
  const predict::Simulator simulator(ring, topo);
  predict::SimulationOptions options;
  options.bytes = 4 * 12;  // 12 floats into 8 chunks
  const predict::SimulationResult r = simulator.run(options);
  CHECK_FALSE(r.ok());
  CHECK_THAT(r.error, Catch::Contains("not divisible"));
}

// The call's time with the tiles past the first 64 added by their period, after checking it
// against simulating every tile (within 1 %).
double extended_time(const ir::Algorithm& algo, const predict::Topology& topo,
                     std::uint64_t bytes) {
  const predict::Simulator simulator(algo, topo);
  predict::SimulationOptions options;
  options.bytes = bytes;
  const predict::SimulationResult extended = simulator.run(options);
  options.max_tiles = 0;
  const predict::SimulationResult whole = simulator.run(options);
  REQUIRE(extended.ok());
  REQUIRE(whole.ok());
  CHECK(extended.simulated_tiles < whole.simulated_tiles);
  CHECK(extended.time_us == Approx(whole.time_us).epsilon(0.01));
  return extended.time_us;
}

TEST_CASE("Simulating tiles past the first ones by their period matches simulating them all") {
  dsl::AlgorithmParams params;
  params.ranks = 8;
  params.protocol = ir::Protocol::LL;
  extended_time(library_algorithm("allreduce_ring", params), topology("h100-nvswitch"),
                64ull << 20);
}

// A sweep of sizes reuses the simulated tiles' makespans for every call long enough to outgrow
// them; what it predicts must be what a simulator new to each size predicts.
TEST_CASE("A simulator asked size after size predicts each as a fresh one does") {
  dsl::AlgorithmParams params;
  params.ranks = 8;
  params.protocol = ir::Protocol::LL;
  const ir::Algorithm ring = library_algorithm("allgather_ring", params);
  const predict::Topology topo = topology("h100-nvswitch");
  const predict::Simulator reused(ring, topo);
  std::size_t extended = 0;
  // Sizes in no order, one twice, and calls of other shapes between them (a deeper FIFO,
  // smaller tiles): each must get its own tiles' makespans, never another shape's.
  // With 16 tiles simulated, a call of exactly 16 full tiles runs what a longer call's first
  // run does, and one a tile short of that (or with a short last tile) does not.
  struct Call {
    std::uint64_t bytes;
    int fifo_depth;
    std::size_t max_tile_bytes;
    int max_tiles = 64;
  };
  predict::SimulationOptions large;
  large.bytes = 64ull << 20;
  const predict::SimulationResult probe = reused.run(large);
  REQUIRE(probe.ok());
  const std::uint64_t tile_call = probe.tile_elements * 4 * 8;  // 8 ranks' chunks of one tile
  for (const Call call :
       {Call{64ull << 20, 0, 0}, Call{16ull << 20, 0, 0}, Call{128ull << 20, 2, 0},
        Call{64ull << 20, 0, 0}, Call{256ull << 20, 0, 8192}, Call{128ull << 20, 0, 0},
        Call{16 * tile_call, 0, 0, 16}, Call{64 * tile_call, 0, 0, 16},
        Call{15 * tile_call, 0, 0, 16}, Call{16 * tile_call - 8 * 64, 0, 0, 16},
        Call{40 * tile_call, 0, 0, 16}}) {
    predict::SimulationOptions options;
    options.bytes = call.bytes;
    options.max_tiles = call.max_tiles;
    if (call.fifo_depth > 0) options.runtime.ll.fifo_depth = call.fifo_depth;
    options.runtime.max_tile_bytes = call.max_tile_bytes;
    const predict::SimulationResult again = reused.run(options);
    const predict::SimulationResult fresh = predict::Simulator(ring, topo).run(options);
    INFO(call.bytes << " bytes: " << again.error);
    REQUIRE(again.ok());
    REQUIRE(fresh.ok());
    CHECK(again.time_us == fresh.time_us);
    CHECK(again.simulated_tiles == fresh.simulated_tiles);
    CHECK(again.step_executions == fresh.step_executions);
    extended += again.tiles > again.simulated_tiles;
  }
  CHECK(extended >= 5);  // the reuse was exercised
}

// The pipeline's last tiles drain with no later tile competing for the NICs; a period taken from
// them predicted a 1 GB alltoall across two nodes 4 % under the network's cut.
TEST_CASE("Across nodes a long alltoall extends by its steady state, not by its drain") {
  dsl::AlgorithmParams params;
  params.ranks = 16;
  const double time_us = extended_time(library_algorithm("alltoall_direct", params),
                                       topology("a100-nvswitch", 2), 1ull << 30);
  // Half of each rank's bytes leave its node, through 8 NICs of 25 GB/s per node.
  const double node_cut_us = 8.0 * (1ull << 30) / 2 / (8 * 25e3);
  CHECK(time_us > node_cut_us);
}

TEST_CASE("A recorded run has a critical path from the call's start to its last step") {
  const predict::Topology topo = topology("h100-nvswitch");
  dsl::AlgorithmParams params;
  params.ranks = 8;
  const ir::Algorithm ring = library_algorithm("allreduce_ring", params);
  const predict::Simulator simulator(ring, topo);
  predict::SimulationOptions options;
  options.bytes = 1 << 20;
  options.record = true;
  const predict::SimulationResult r = simulator.run(options);
  REQUIRE(r.ok());
  REQUIRE_FALSE(r.critical_path.empty());
  CHECK(r.steps[static_cast<std::size_t>(r.critical_path.front())].cause == -1);
  double last = 0;
  for (const predict::StepRecord& s : r.steps) last = std::max(last, s.end_us);
  CHECK(r.steps[static_cast<std::size_t>(r.critical_path.back())].end_us == last);
  CHECK(r.messages.size() > 0);
}

// Two GPUs joined by one NVLink of `link_gbs`, a threadblock moving at most 20 GB/s, and no
// latency per message (a sender whose FIFO is full would wait a hop's latency for a slot, and
// the link would idle then unless another threadblock filled it).
constexpr double kThreadblockGbs = 20;
predict::Topology one_link(double link_gbs) {
  predict::MachineDescription m;
  m.name = "two GPUs, one NVLink";
  m.memory_bandwidth_gbs = 1000;
  const int a = m.add_vertex(predict::VertexKind::Gpu, "gpu 0");
  const int b = m.add_vertex(predict::VertexKind::Gpu, "gpu 1");
  m.add_link(a, b, predict::LinkType::NVLink, link_gbs);
  predict::Topology topo = predict::build_topology(m, 1, 2);
  REQUIRE(topo.route(0, 1).size() == 1);
  predict::CostParameters costs = topo.costs();
  predict::ProtocolCosts& simple = costs.protocols[static_cast<std::size_t>(ir::Protocol::Simple)];
  simple.threadblock_bandwidth_gbs = kThreadblockGbs;
  simple.hop_latency_us.fill(0);
  simple.step_latency_us = 0;
  // The link carries its stated rate: these tests are about how flows share it.
  costs.achievable_share.fill(1.0);
  topo.set_costs(costs);
  return topo;
}

// Each rank sends its four chunks to the other, cut into steps of `sizes` chunks, each step on a
// threadblock of its own: the steps of one rank cross the same links, so they share one bundle of
// the simulator's flow network, starting together and ending as their own bytes allow.
ir::Algorithm allgather_in_steps(const std::vector<int>& sizes) {
  dsl::AlgorithmParams params;
  params.ranks = 2;
  params.limits = "weft";
  dsl::Program p("allgather_in_steps", dsl::Collective::allgather(2, 4, true), params.options());
  for (int r = 0; r < 2; ++r) {
    int index = 0;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      // Sends and receives on threadblocks of their own: a threadblock that received between
      // its sends would leave the link idle meanwhile.
      const int tb = static_cast<int>(k);
      const int receiver = static_cast<int>(sizes.size() + k);
      p.chunk(r, dsl::input, index, sizes[k])
          .copy(1 - r, dsl::output, 4 * r + index, {tb, tb, receiver});
      index += sizes[k];
    }
  }
  return compiled(p);
}

// Every tile simulated: a period extending the first 64 would assume the steps' sharing goes
// on, where the shorter steps run out first.
double every_tile_us(const ir::Algorithm& algo, const predict::Topology& topo,
                     std::uint64_t bytes) {
  predict::SimulationOptions options;
  options.bytes = bytes;
  options.max_tiles = 0;
  const predict::SimulationResult r = predict::Simulator(algo, topo).run(options);
  INFO(r.error);
  REQUIRE(r.ok());
  return r.time_us;
}

// Flows over the same links run as one bundle in the simulator's flow network, which counts the
// bytes each has been served; one that joins late or ends early must end exactly when its own
// bytes are through. On a link that binds every flow (5 GB/s, a quarter of what a threadblock
// moves), the call lasts its bytes over the link (and the same latencies) whether they move in
// one step or in several that end apart.
TEST_CASE("Steps that share a link end as their own bytes allow: the link's time is the same") {
  const predict::Topology topo = one_link(kThreadblockGbs / 4);
  const ir::Algorithm whole = allgather_in_steps({4});
  for (const std::uint64_t bytes : {64ull << 10, 4ull << 20, 64ull << 20}) {
    const double one_step = every_tile_us(whole, topo, bytes);
    // Two ranks' halves over 5 GB/s, and the call's latencies.
    CHECK(one_step > static_cast<double>(bytes) / 2 / 5e3);
    CHECK(one_step < static_cast<double>(bytes) / 2 / 5e3 + 20);
    for (const std::vector<int>& sizes :
         {std::vector<int>{1, 3}, std::vector<int>{1, 1, 2}, std::vector<int>{3, 1}}) {
      INFO(bytes << " bytes in steps of " << sizes.size() << " threadblocks");
      CHECK(every_tile_us(allgather_in_steps(sizes), topo, bytes) ==
            Approx(one_step).epsilon(1e-9));
    }
  }
}

// Where the link is wide, each step runs at its threadblock's bandwidth, and a bundle's flows end
// apart: the three-chunk step outlasts four one-chunk steps by two chunks at 20 GB/s, however the
// one-chunk step beside it ended.
TEST_CASE("Steps that share a wide link each run at their threadblock's bandwidth") {
  const predict::Topology topo = one_link(1000);
  for (const std::uint64_t bytes : {64ull << 10, 4ull << 20}) {
    INFO(bytes << " bytes");
    const double chunk_us = static_cast<double>(bytes) / 8 / (kThreadblockGbs * 1e3);
    const double ones = every_tile_us(allgather_in_steps({1, 1, 1, 1}), topo, bytes);
    CHECK(every_tile_us(allgather_in_steps({1, 3}), topo, bytes) - ones ==
          Approx(2 * chunk_us).epsilon(1e-6));
    CHECK(every_tile_us(allgather_in_steps({3, 1}), topo, bytes) - ones ==
          Approx(2 * chunk_us).epsilon(1e-6));
  }
}

// A step that joins its bundle while the bundle's other flow runs, at an instant none of the
// bundle's flows ends, must be served its own bytes from then on. Rank 0 sends six chunks to rank
// 1, all over one route, so one bundle: three at once from the start, and three on a threadblock
// that first receives a chunk from rank 1 (the other direction's bundle). That threadblock's
// chain, one chunk in and three out at 20 GB/s, is the call's longest.
TEST_CASE("A step that joins a running bundle late is served its own bytes from then on") {
  const predict::Topology topo = one_link(1000);
  const auto late_joiner = [] {
    dsl::AlgorithmParams params;
    params.ranks = 2;
    params.limits = "weft";
    dsl::Program p("late_joiner", dsl::Collective::allgather(2, 6, true), params.options());
    // Rank 1: one chunk at once, the other five beside it.
    p.chunk(1, dsl::input, 3, 1).copy(0, dsl::output, 9, {0, 0, 0});
    p.chunk(1, dsl::input, 0, 3).copy(0, dsl::output, 6, {1, 1, 4});
    p.chunk(1, dsl::input, 4, 2).copy(0, dsl::output, 10, {2, 2, 5});
    // Rank 0: three chunks at once; three more on the threadblock that receives rank 1's first
    // chunk, after it.
    p.chunk(0, dsl::input, 0, 3).copy(1, dsl::output, 0, {1, 1, 4});
    p.chunk(0, dsl::input, 3, 3).copy(1, dsl::output, 3, {0, 0, 3});
    return compiled(p);
  }();
  const std::uint64_t bytes = 96ull << 10;  // twelve chunks, and eight
  // The call's latencies: four one-chunk steps side by side last one chunk (an eighth of the
  // bytes) at 20 GB/s beyond them.
  const double latencies_us = every_tile_us(allgather_in_steps({1, 1, 1, 1}), topo, bytes) -
                              static_cast<double>(bytes) / 8 / (kThreadblockGbs * 1e3);
  const double chunk_us = static_cast<double>(bytes) / 12 / (kThreadblockGbs * 1e3);
  CHECK(every_tile_us(late_joiner, topo, bytes) ==
        Approx(latencies_us + 4 * chunk_us).epsilon(1e-6));
}

// Each rank sends its `messages` chunks to the other one step at a time, all on one connection
// (channel 0, threadblock 0 sends, threadblock 1 receives), unfused: `messages` messages per tile.
ir::Algorithm one_connection(int messages) {
  dsl::AlgorithmParams params;
  params.ranks = 2;
  params.limits = "weft";
  dsl::Options options = params.options();
  options.fusion = false;
  dsl::Program p("one_connection", dsl::Collective::allgather(2, messages, true), options);
  for (int r = 0; r < 2; ++r) {
    for (int j = 0; j < messages; ++j) {
      p.chunk(r, dsl::input, j).copy(1 - r, dsl::output, messages * r + j, {0, 0, 1});
    }
  }
  return compiled(p);
}

// The floor tuning prunes by (a FIFO of D messages lets a sender start at most D of them per hop
// latency) must never exceed the prediction, or pruning could leave out a winner; and it must
// bind where that is what limits a call: many small messages on one connection.
TEST_CASE("The simulator's floor is never above its prediction and binds many small messages") {
  const predict::Topology pair = topology("h100-nvswitch", 1, 2);
  const ir::Algorithm many = one_connection(64);
  REQUIRE(many.gpus[0].threadblocks.size() == 2);
  REQUIRE(many.gpus[0].threadblocks[0].steps.size() == 64);
  const predict::Simulator simulator(many, pair);
  predict::SimulationOptions options;
  for (const std::uint64_t bytes : {32ull << 10, 1ull << 20, 64ull << 20, 1ull << 30}) {
    INFO(bytes << " bytes");
    options.bytes = bytes;
    const double time = simulator.run(options).time_us;
    const double floor = simulator.floor_us(options);
    CHECK(floor <= time);
    // 64 messages through a FIFO of 2: 32 hop latencies at least, which is most of a small call.
    if (bytes == (32ull << 10)) CHECK(floor > 0.8 * time);
  }
  const predict::Topology node = topology("h100-nvswitch");
  for (const char* name : {"allreduce_ring", "allreduce_allpairs", "allgather_ring"}) {
    dsl::AlgorithmParams params;
    params.ranks = 8;
    params.channels = 2;
    const ir::Algorithm algo = library_algorithm(name, params);
    const predict::Simulator s(algo, node);
    for (std::uint64_t bytes = 1 << 10; bytes <= (1ull << 30); bytes *= 32) {
      INFO(name << " at " << bytes << " bytes");
      options.bytes = bytes;
      const predict::SimulationResult r = s.run(options);
      REQUIRE(r.ok());
      CHECK(s.floor_us(options) <= r.time_us);
      CHECK(s.floor_us(options) > 0);
    }
  }
}
