// Launch after launch on one communicator with nothing reset between them (monotone message
// counts, LL/LL128 flags, dependency flags), calls of changing sizes, the same launch arguments
// replayed as a CUDA graph replays them, and steps split into several messages per tile.
#include <memory>
#include <optional>

#include "kernel_host_support.h"
#include "recording.h"

namespace weft::gpu::testing {
namespace {

TEST_CASE("launches: three back-to-back calls, then calls of other sizes, no reset",
          "[kernel-host][launches]") {
  int calls = 0;
  for (const ir::Protocol proto : kProtocols) {
    auto e = emulate_on_host(perf::allpairs_chain_allreduce(4, proto, true));
    for (int k = 0; k < 3; ++k) {
      CHECK(run_checked(*e, {kChunk, DataType::Float, ReduceOp::Sum, false}) == 0);
      ++calls;
    }
    // Messages of other sizes in the same slots: an LL or LL128 line the smaller message does not
    // rewrite still holds an older flag, which must never match.
    for (const std::size_t chunk : {std::size_t{100}, std::size_t{3}, std::size_t{64}}) {
      CHECK(run_checked(*e, {chunk, DataType::Int32, ReduceOp::Max, false, 0, 2}) == 0);
      ++calls;
    }
  }
  report_calls("back-to-back", calls);
}

TEST_CASE("launches: the same launch arguments replayed, as a graph replays them",
          "[kernel-host][launches]") {
  int calls = 0;
  for (const ir::Protocol proto : kProtocols) {
    const ir::Algorithm algo = perf::ring_allreduce(4, proto, 2);
    auto host = make_host_transport(algo.ngpus);
    REQUIRE(host.ok());
    auto recording = std::make_shared<RecordingTransport>(host.value());
    auto e = emulate_over(std::shared_ptr<Transport>(recording), perf::make_host_perf_device(),
                          algo, host_options());
    const cpu::Executor executor(algo, standard_spec(algo, 0));
    const perf::Reference reference =
        perf::compute_reference(executor, kChunk, DataType::Float, ReduceOp::Sum, 0, false);
    REQUIRE(reference.error.empty());
    auto call = perf::DeviceCall::create(*e->device, *e->comm, algo, count_for(algo, kChunk),
                                         DataType::Float, false);
    REQUIRE(call.ok());
    REQUIRE(call.value()->upload(reference).ok());
    REQUIRE(call.value()->run(*e->comm, e->handle, ReduceOp::Sum, -1, nullptr).ok());
    REQUIRE(recording->recorder().last().has_value());
    // Out of place with the same inputs: every replay computes the same result again.
    for (int replay = 0; replay < 5; ++replay) {
      INFO("replay " << replay);
      REQUIRE(recording->recorder().replay().ok());
      const Status async = e->comm->async_error();
      INFO(async.str());
      REQUIRE(async.ok());
    }
    auto wrong = call.value()->count_wrong(reference);
    REQUIRE(wrong.ok());
    CHECK(wrong.value() == 0);
    ++calls;
    // Ordinary calls after the replays still line up with the counters the replays advanced.
    CHECK(run_checked(*e, {kChunk, DataType::Float, ReduceOp::Sum, false, 0, 2}) == 0);
    ++calls;
  }
  report_calls("replayed launches", calls);
}

TEST_CASE("launches: the step variant reaches the kernel, and each continues the other's state",
          "[kernel-host][launches]") {
  int calls = 0;
  for (const ir::Protocol proto : kProtocols) {
    for (const StepVariant variant :
         {StepVariant::Full, StepVariant::Lean, StepVariant::Overlap}) {
      INFO(ir::to_string(proto) << ", " << to_string(variant) << " step");
      const ir::Algorithm algo = perf::ring_allreduce(4, proto, 2);
      auto host = make_host_transport(algo.ngpus);
      REQUIRE(host.ok());
      auto recording = std::make_shared<RecordingTransport>(host.value());
      RuntimeOptions options = host_options();
      options.step = variant;
      if (variant != StepVariant::Overlap) options.simple_slices = 1;  // the overlap step's only
      auto e = emulate_over(std::shared_ptr<Transport>(recording), perf::make_host_perf_device(),
                            algo, options);
      const cpu::Executor executor(algo, standard_spec(algo, 0));
      const perf::Reference reference =
          perf::compute_reference(executor, kChunk, DataType::Float, ReduceOp::Sum, 0, false);
      REQUIRE(reference.error.empty());
      auto call = perf::DeviceCall::create(*e->device, *e->comm, algo, count_for(algo, kChunk),
                                           DataType::Float, false);
      REQUIRE(call.ok());
      REQUIRE(call.value()->upload(reference).ok());
      REQUIRE(call.value()->run(*e->comm, e->handle, ReduceOp::Sum, -1, nullptr).ok());
      const auto& launch = recording->recorder().last();
      REQUIRE(launch.has_value());
      CHECK(launch->args.lean_steps == (variant != StepVariant::Full ? 1u : 0u));
      CHECK(launch->args.overlap_steps == (variant == StepVariant::Overlap ? 1u : 0u));
      // The overlap step's Simple kernel has a poster warp besides the workers.
      if (variant == StepVariant::Overlap && proto == ir::Protocol::Simple) {
        CHECK(launch->threads >= 64);
      }
      // Another variant (full after lean or overlap, lean after full), launched on the counters
      // and flags this one left (out of place, the same inputs: the same result): all keep the
      // same per-connection state, so any may follow another.
      RecordingRuntime::Launch other = *launch;
      other.args.lean_steps = variant == StepVariant::Full ? 1u : 0u;
      other.args.overlap_steps = 0;
      REQUIRE(recording->recorder().relaunch(other).ok());
      const Status async = e->comm->async_error();
      INFO(async.str());
      REQUIRE(async.ok());
      auto wrong = call.value()->count_wrong(reference);
      REQUIRE(wrong.ok());
      CHECK(wrong.value() == 0);
      ++calls;
      // And this variant again after the other.
      CHECK(run_checked(*e, {kChunk, DataType::Float, ReduceOp::Sum, false, 0, 2}) == 0);
      ++calls;
    }
  }
  report_calls("step variants", calls);
}

TEST_CASE("launches: Simple slices: a step moves a group of tiles as that many messages",
          "[kernel-host][launches]") {
  // Tiles of 64 bytes, so that a call has many and a group of slices is often cut short by the
  // last tile; each slice a slot of its own (the FIFO's memory the same), under the overlap step
  // (whose they are), call after call on one communicator.
  int calls = 0;
  for (const StepVariant variant : {StepVariant::Overlap}) {
    for (const int slices : {2, 3, 8}) {
      for (const ir::Algorithm& algo : {perf::ring_allreduce(4, ir::Protocol::Simple, 2),
                                        perf::allpairs_chain_allreduce(3, ir::Protocol::Simple,
                                                                       true)}) {
        INFO(algo.name << ", " << to_string(variant) << " step, " << slices << " slices");
        auto host = make_host_transport(algo.ngpus);
        REQUIRE(host.ok());
        auto recording = std::make_shared<RecordingTransport>(host.value());
        RuntimeOptions options = host_options();
        options.step = variant;
        options.max_tile_bytes = 64;
        options.simple.slot_bytes = 384 * 1024;  // cut into 2, 3 or 8 slots of 128-byte lines
        options.simple_slices = slices;
        auto e = emulate_over(std::shared_ptr<Transport>(recording),
                              perf::make_host_perf_device(), algo, options);
        for (const std::size_t chunk : {kChunk, kLongChunk, std::size_t{3}}) {
          for (const bool in_place : {false, true}) {
            CHECK(run_checked(*e, {chunk, DataType::Float, ReduceOp::Sum, in_place}) == 0);
            ++calls;
          }
        }
        CHECK(run_checked(*e, {kLongChunk, DataType::Int8, ReduceOp::Max, false}) == 0);
        ++calls;
        const auto& launch = recording->recorder().last();
        REQUIRE(launch.has_value());
        CHECK(launch->args.slices == static_cast<std::uint32_t>(slices));
        CHECK(launch->args.fifo_depth == static_cast<std::uint32_t>(4 * slices));
        CHECK(launch->args.slot_bytes == 384 * 1024 / static_cast<std::size_t>(slices));
      }
    }
  }
  report_calls("slices", calls);
}

TEST_CASE("launches: steps with more pieces than a slot holds go as several messages",
          "[kernel-host][launches]") {
  // The smallest slots (1 KB) and tiles of 16 bytes: a cnt-72 step needs 72 pieces, more than
  // any protocol's payload holds (Simple 1024, LL 512, LL128 960 bytes: 8 pieces of a line), so
  // every step goes as several messages per tile. The FIFO is deep enough for two such steps.
  RuntimeOptions options = host_options();
  options.max_tile_bytes = 16;
  options.simple.slot_bytes = options.ll.slot_bytes = options.ll128.slot_bytes = 1024;
  options.simple.fifo_depth = options.ll.fifo_depth = options.ll128.fifo_depth = 32;
  // A 1 KB slot is the smallest: it cannot be cut into slices (the slices' own test below).
  options.simple_slices = 1;
  // Two ranks exchange all 72 chunks in one step each (MSCCL's limit is cnt < 72; Weft's is
  // higher).
  ir::Algorithm wide = perf::wide_exchange(72, ir::Protocol::LL);
  int calls = 0;
  for (const ir::Protocol proto : kProtocols) {
    wide.protocol = proto;
    auto w = emulate_on_host(wide, options);
    for (const DataType dtype : {DataType::Float, DataType::Int8, DataType::Double}) {
      CHECK(run_checked(*w, {kChunk, dtype, ReduceOp::Sum, false}) == 0);
      ++calls;
    }
  }
  report_calls("split steps", calls);
}

TEST_CASE("launches: step lists longer than the kernel keeps in shared memory run from global",
          "[kernel-host][launches]") {
  // The kernel copies a threadblock's steps into shared memory when there are at most 256 of
  // them: 128 chunks make 256 steps (copied), 129 make 258 (read where they are).
  int calls = 0;
  for (const int chunks : {128, 129}) {
    for (const ir::Protocol proto : kProtocols) {
      auto e = emulate_on_host(perf::chunkwise_exchange(chunks, proto), host_options());
      INFO(chunks << " chunks, " << ir::to_string(proto));
      CHECK(run_checked(*e, {kChunk, DataType::Float, ReduceOp::Sum, false}) == 0);
      CHECK(run_checked(*e, {kChunk, DataType::Int32, ReduceOp::Max, true}) == 0);
      calls += 2;
    }
  }
  report_calls("long step lists", calls);
}

}  // namespace
}  // namespace weft::gpu::testing
