// Never hang, never lie: deadlocks time out with a report; repeated calls and graph replays give
// the same results without host resets; launches that cannot be resident are refused; misuse is
// reported.
#include <chrono>

#include "bad_calls.h"
#include "gpu_test_support.h"

namespace weft::gpu::testing {
namespace {

using perf::allpairs_chain_allreduce;
using perf::ring_allreduce;

TEST_CASE("a deadlocking algorithm times out with a report instead of hanging",
          "[gpu][robustness]") {
  for (ir::Protocol proto : {ir::Protocol::Simple, ir::Protocol::LL, ir::Protocol::LL128}) {
    const ir::Algorithm algo = test_data_algorithm("deadlock_pair.xml", proto);
    RuntimeOptions options = test_options();
    options.timeout_s = 1.0;
    auto e = emulate(algo, options);
    auto call = perf::DeviceCall::create(*e->device, *e->comm, algo, 64, DataType::Float, false);
    REQUIRE(call.ok());
    REQUIRE(call.value()->fill(0).ok());
    const auto start = std::chrono::steady_clock::now();
    REQUIRE(call.value()->run(*e->comm, e->handle, ReduceOp::Sum, -1, stream_of(*e)).ok());
    REQUIRE(cudaStreamSynchronize(stream_of(*e)) == cudaSuccess);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(seconds < 10.0);
    const Status status = e->comm->async_error();
    INFO(status.str());
    CHECK(status.code == ErrorCode::Timeout);
    CHECK_THAT(status.message, Catch::Contains("gpu ") && Catch::Contains("/ tb 0 / step 0") &&
                                   Catch::Contains("timed out") &&
                                   Catch::Contains("message 1 from rank"));
    // The communicator refuses further calls instead of running on broken state.
    const Status again = call.value()->run(*e->comm, e->handle, ReduceOp::Sum, -1, stream_of(*e));
    CHECK(again.code == ErrorCode::Timeout);
    CHECK_THAT(again.message, Catch::Contains("refuses further calls"));
  }
}

TEST_CASE("a dependency that never completes is reported as such", "[gpu][robustness]") {
  const ir::Algorithm algo = perf::stuck_dependency(ir::Protocol::Simple);
  RuntimeOptions options = test_options();
  options.timeout_s = 0.5;
  auto e = emulate(algo, options);
  auto call = perf::DeviceCall::create(*e->device, *e->comm, algo, 16, DataType::Int32, false);
  REQUIRE(call.ok());
  REQUIRE(call.value()->run(*e->comm, e->handle, ReduceOp::Sum, -1, stream_of(*e)).ok());
  REQUIRE(cudaStreamSynchronize(stream_of(*e)) == cudaSuccess);
  const Status status = e->comm->async_error();
  CHECK(status.code == ErrorCode::Timeout);
  // Whichever wait expired first is reported: the receive or the dependency on it.
  CHECK_THAT(status.message,
             Catch::Contains("message 1 from rank") || Catch::Contains("to finish its step 0"));
}

TEST_CASE("1,000 back-to-back calls give the reference result", "[gpu][robustness]") {
  for (ir::Protocol proto : {ir::Protocol::Simple, ir::Protocol::LL, ir::Protocol::LL128}) {
    auto e = emulate(allpairs_chain_allreduce(8, proto, true), small_tiles());
    CHECK(run_checked(*e, {100, DataType::Float, ReduceOp::Sum, false, 0, 1000}) == 0);
    // Calls of another size on the same communicator: counters carry over correctly.
    CHECK(run_checked(*e, {7, DataType::Int32, ReduceOp::Max, false, 0, 10}) == 0);
    CHECK(run_checked(*e, {1000, DataType::Float, ReduceOp::Sum, false, 0, 3}) == 0);
  }
}

TEST_CASE("a captured CUDA graph replays to the reference result", "[gpu][robustness]") {
  for (ir::Protocol proto : {ir::Protocol::Simple, ir::Protocol::LL}) {
    const ir::Algorithm algo = ring_allreduce(8, proto);
    auto e = emulate(algo, small_tiles());
    const std::size_t chunk = 333;
    const std::size_t count = chunk * 8;
    const cpu::Executor executor(algo, standard_spec(algo, 0));
    const perf::Reference reference =
        perf::compute_reference(executor, chunk, DataType::Float, ReduceOp::Sum, 0, false);
    REQUIRE(reference.error.empty());
    auto call = perf::DeviceCall::create(*e->device, *e->comm, algo, count, DataType::Float, false);
    REQUIRE(call.ok());
    REQUIRE(call.value()->upload(reference).ok());
    REQUIRE(e->comm->reserve_scratch(e->handle, count, DataType::Float).ok());
    cudaGraph_t graph = nullptr;
    REQUIRE(cudaStreamBeginCapture(stream_of(*e), cudaStreamCaptureModeThreadLocal) == cudaSuccess);
    for (int k = 0; k < 10; ++k) {
      const Status s = call.value()->run(*e->comm, e->handle, ReduceOp::Sum, -1, stream_of(*e));
      INFO(s.str());
      CHECK(s.ok());
    }
    REQUIRE(cudaStreamEndCapture(stream_of(*e), &graph) == cudaSuccess);
    cudaGraphExec_t exec = nullptr;
    REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
    for (int replay = 0; replay < 20; ++replay)
      REQUIRE(cudaGraphLaunch(exec, stream_of(*e)) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(stream_of(*e)) == cudaSuccess);
    CHECK(e->comm->async_error().ok());
    auto wrong = call.value()->count_wrong(reference);
    REQUIRE(wrong.ok());
    CHECK(wrong.value() == 0);
    // Ordinary calls after the replays still line up with the graph's counters.
    CHECK(run_checked(*e, {chunk, DataType::Float, ReduceOp::Sum, false, 0, 2}) == 0);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
}

TEST_CASE("capturing a call that would allocate is refused, not broken", "[gpu][robustness]") {
  ir::Algorithm algo = ring_allreduce(2, ir::Protocol::Simple);
  algo.gpus[0].scratch_chunks = 2;
  algo.gpus[1].scratch_chunks = 2;
  auto e = emulate(algo);
  auto call = perf::DeviceCall::create(*e->device, *e->comm, algo, 1 << 20, DataType::Float, false);
  REQUIRE(call.ok());
  REQUIRE(cudaStreamBeginCapture(stream_of(*e), cudaStreamCaptureModeThreadLocal) == cudaSuccess);
  const Status s = call.value()->run(*e->comm, e->handle, ReduceOp::Sum, -1, stream_of(*e));
  cudaGraph_t graph = nullptr;
  cudaStreamEndCapture(stream_of(*e), &graph);
  if (graph != nullptr) cudaGraphDestroy(graph);
  CHECK(s.code == ErrorCode::InvalidUsage);
  CHECK_THAT(s.message, Catch::Contains("reserve_scratch"));
}

TEST_CASE("a launch the device cannot hold at once is refused clearly", "[gpu][robustness]") {
  // 64 ranks × 32 channels = 2,048 threadblocks: more than any current GPU holds.
  auto transport = make_emulation_transport(64, 0);
  REQUIRE(transport.ok());
  auto comm = Communicator::create(transport.value(), test_options());
  REQUIRE(comm.ok());
  const ir::Algorithm algo = ring_allreduce(64, ir::Protocol::LL, 32);
  auto handle = comm.value()->load(algo);
  REQUIRE(handle.ok());
  auto device = perf_device(0);
  auto call =
      perf::DeviceCall::create(*device, *comm.value(), algo, 64 * 32, DataType::Float, false);
  REQUIRE(call.ok());
  const Status s = call.value()->run(*comm.value(), handle.value(), ReduceOp::Sum, -1, nullptr);
  CHECK(s.code == ErrorCode::NotResident);
  CHECK_THAT(s.message, Catch::Contains("2048 threadblocks resident"));
}

TEST_CASE("misuse is reported with a reason", "[gpu][robustness]") {
  auto e = emulate(ring_allreduce(4, ir::Protocol::Simple));
  check_bad_calls(*e);
}

}  // namespace
}  // namespace weft::gpu::testing
