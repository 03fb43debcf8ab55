// Never hang, never lie, in host mode as on the GPU: a deadlock, a dependency that never
// completes and a FIFO too shallow for the algorithm end by the timeout with the device's error
// record (rank, threadblock, step, tile, what was awaited) reported by the host; bad input gets
// the GPU path's errors, because it is the same Communicator.
#include <chrono>

#include "bad_calls.h"
#include "kernel_host_support.h"

namespace weft::gpu::testing {
namespace {

using Clock = std::chrono::steady_clock;

RuntimeOptions short_timeout() {
  RuntimeOptions options = host_options();
  options.timeout_s = 0.3;
  return options;
}

// Runs one out-of-place call that is expected to time out; returns the communicator's report.
Status run_until_timeout(Emulation& e, DataType dtype) {
  auto call = perf::DeviceCall::create(*e.device, *e.comm, e.algorithm,
                                       count_for(e.algorithm, kChunk), dtype, false);
  REQUIRE(call.ok());
  REQUIRE(call.value()->fill(0).ok());
  const auto start = Clock::now();
  const Status launched = call.value()->run(*e.comm, e.handle, ReduceOp::Sum, -1, nullptr);
  INFO(launched.str());
  REQUIRE(launched.ok());  // as on the GPU, the launch itself succeeds; the wait fails inside it
  CHECK(std::chrono::duration<double>(Clock::now() - start).count() < 30.0);
  const Status status = e.comm->async_error();
  INFO(status.str());
  CHECK(status.code == ErrorCode::Timeout);
  // The communicator refuses further calls instead of running on broken state.
  const Status again = call.value()->run(*e.comm, e.handle, ReduceOp::Sum, -1, nullptr);
  CHECK(again.code == ErrorCode::Timeout);
  CHECK_THAT(again.message, Catch::Contains("refuses further calls"));
  return status;
}

TEST_CASE("failures: a deadlocking algorithm times out with a report", "[kernel-host][failures]") {
  for (const ir::Protocol proto : kProtocols) {
    const ir::Algorithm algo = test_data_algorithm("deadlock_pair.xml", proto);
    auto e = emulate_on_host(algo, short_timeout());
    const Status status = run_until_timeout(*e, DataType::Float);
    // Both ranks receive first: whichever wait expires first names its rank, threadblock 0,
    // step 0, tile 0 and the message it waited for.
    CHECK_THAT(status.message, Catch::Contains("host") && Catch::Contains("/ tb 0 / step 0") &&
                                   Catch::Contains("tile 0") && Catch::Contains("timed out") &&
                                   Catch::Contains("message 1 from rank"));
  }
}

TEST_CASE("failures: a dependency that never completes is reported", "[kernel-host][failures]") {
  const ir::Algorithm algo = perf::stuck_dependency(ir::Protocol::Simple);
  auto e = emulate_on_host(algo, short_timeout());
  const Status status = run_until_timeout(*e, DataType::Int32);
  // Whichever wait expired first is reported: the receive or the dependency on it.
  CHECK_THAT(status.message,
             Catch::Contains("message 1 from rank") || Catch::Contains("to finish its step 0"));
}

// perf::three_ahead sends three messages each way before receiving any: at FIFO depth 2 (the
// runtime's shallowest, docs/architecture.md §2.4, and what an algorithm that needs one slot more
// than it gets looks like) both ranks block on their third send; with depth 4 it completes.
TEST_CASE("failures: a FIFO too shallow for the algorithm times out on the free slot",
          "[kernel-host][failures]") {
  for (const ir::Protocol proto : kProtocols) {
    RuntimeOptions shallow = short_timeout();
    shallow.max_tile_bytes = 0;  // one tile: the third message is the first that cannot go
    shallow.simple.fifo_depth = shallow.ll.fifo_depth = shallow.ll128.fifo_depth = 2;
    // Slices would cut the slots into more (their depth × slices): one message a slot here.
    shallow.simple_slices = 1;
    auto e = emulate_on_host(perf::three_ahead(proto), shallow);
    const Status status = run_until_timeout(*e, DataType::Float);
    CHECK_THAT(status.message, Catch::Contains("/ step 2") && Catch::Contains("tile 0") &&
                                   Catch::Contains("a free FIFO slot towards rank") &&
                                   Catch::Contains("consumed 0 messages, 1 needed"));

    RuntimeOptions deep = shallow;
    deep.simple.fifo_depth = deep.ll.fifo_depth = deep.ll128.fifo_depth = 4;
    auto completes = emulate_on_host(perf::three_ahead(proto), deep);
    auto call = perf::DeviceCall::create(*completes->device, *completes->comm, completes->algorithm,
                                         3 * kChunk, DataType::Float, false);
    REQUIRE(call.ok());
    REQUIRE(
        call.value()->run(*completes->comm, completes->handle, ReduceOp::Sum, -1, nullptr).ok());
    const Status finished = completes->comm->async_error();
    INFO(finished.str());
    CHECK(finished.ok());
  }
}

TEST_CASE("failures: bad calls get the GPU path's errors", "[kernel-host][failures]") {
  auto e = emulate_on_host(perf::ring_allreduce(4, ir::Protocol::Simple));
  check_bad_calls(*e);
}

TEST_CASE("failures: a grid larger than the host holds at once is refused clearly",
          "[kernel-host][failures]") {
  // 64 ranks × 32 channels = 2,048 threadblocks of at least 32 threads: more OS threads than one
  // host-mode launch may start.
  const ir::Algorithm algo = perf::ring_allreduce(64, ir::Protocol::LL, 32);
  auto e = emulate_on_host(algo);
  auto call = perf::DeviceCall::create(*e->device, *e->comm, algo, 64 * 32, DataType::Float, false);
  REQUIRE(call.ok());
  const Status s = call.value()->run(*e->comm, e->handle, ReduceOp::Sum, -1, nullptr);
  CHECK(s.code == ErrorCode::NotResident);
  CHECK_THAT(s.message,
             Catch::Contains("2048 threadblocks resident") && Catch::Contains("host threads"));
}

}  // namespace
}  // namespace weft::gpu::testing
