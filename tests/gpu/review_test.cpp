// What only a GPU can show of what the kernel's review against NCCL's memory orders found:
// whether one GPU's SMs see a 128-byte line whole (the torn-line probe, under
// stress), that grids which cannot all be resident at once wait their turn instead of waiting on
// each other, and that a CUDA graph replayed after a failure touches nothing.
#include <cuda_runtime_api.h>

#include <cstring>

#include "gpu_test_support.h"
#include "weft/cuda/ll128_probe.h"

namespace weft::gpu::testing {
namespace {

TEST_CASE("LL128: no 128-byte line is seen torn between SMs under stress", "[gpu][review]") {
  // Many lines, many rounds, writers and readers on every SM, lanes delayed at random before
  // their accesses (divergent warps). If this ever fails, the runtime's own (shorter) probe
  // refuses LL128 between ranks of this GPU, with this count in its message.
  Ll128ProbeOptions options;
  options.lines = 1 << 16;
  options.rounds = 256;
  options.jitter = true;
  auto result = probe_ll128(0, options);
  INFO(result.status().str());
  REQUIRE(result.ok());
  INFO(result.value().torn << " torn of " << result.value().lines_read << " lines read");
  CHECK(result.value().lines_read > 0);
  CHECK(result.value().torn == 0);
}

TEST_CASE("two grids that cannot be resident together both complete", "[gpu][review]") {
  // Two communicators on two streams, each launching more threadblocks than half the GPU holds
  // at 512 threads (one per SM): launched plainly, each could start half its grid and wait for
  // the rest forever. Cooperative launches run whole grids, one after the other.
  int sms = 0;
  REQUIRE(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess);
  const int channels = std::max(1, sms / 8 - 1);  // 8 ranks × channels CTAs: just under the SMs
  RuntimeOptions options = small_tiles();
  options.timeout_s = 2;
  options.threads = 512;
  const ir::Algorithm ring = perf::ring_allreduce(8, ir::Protocol::Simple, channels);
  auto x = emulate(ring, options);
  auto y = emulate(ring, options);
  const std::size_t chunk = 1000;
  const cpu::Executor executor(ring, standard_spec(ring, 0));
  const perf::Reference reference =
      perf::compute_reference(executor, chunk, DataType::Float, ReduceOp::Sum, 0, false);
  REQUIRE(reference.error.empty());
  auto cx = perf::DeviceCall::create(*x->device, *x->comm, ring, count_for(ring, chunk),
                                     DataType::Float, false);
  auto cy = perf::DeviceCall::create(*y->device, *y->comm, ring, count_for(ring, chunk),
                                     DataType::Float, false);
  REQUIRE(cx.ok());
  REQUIRE(cy.ok());
  REQUIRE(cx.value()->upload(reference).ok());
  REQUIRE(cy.value()->upload(reference).ok());
  for (int k = 0; k < 10; ++k) {
    REQUIRE(cx.value()->run(*x->comm, x->handle, ReduceOp::Sum, -1, x->device->stream()).ok());
    REQUIRE(cy.value()->run(*y->comm, y->handle, ReduceOp::Sum, -1, y->device->stream()).ok());
  }
  REQUIRE(x->device->synchronize().ok());
  REQUIRE(y->device->synchronize().ok());
  INFO(x->comm->async_error().str() << " / " << y->comm->async_error().str());
  CHECK(x->comm->async_error().ok());
  CHECK(y->comm->async_error().ok());
  CHECK(cx.value()->count_wrong(reference).value() == 0);
  CHECK(cy.value()->count_wrong(reference).value() == 0);
}

TEST_CASE("a CUDA graph replayed after a failure touches nothing", "[gpu][review]") {
  RuntimeOptions options = small_tiles();
  options.timeout_s = 0.5;
  const ir::Algorithm ring = perf::ring_allreduce(2, ir::Protocol::Simple);
  auto e = emulate(ring, options);
  const std::size_t count = count_for(ring, 256);
  auto call = perf::DeviceCall::create(*e->device, *e->comm, ring, count, DataType::Float, false);
  REQUIRE(call.ok());
  REQUIRE(call.value()->fill(1).ok());
  REQUIRE(e->comm->reserve_scratch(e->handle, count, DataType::Float).ok());
  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamBeginCapture(stream_of(*e), cudaStreamCaptureModeThreadLocal) == cudaSuccess);
  REQUIRE(call.value()->run(*e->comm, e->handle, ReduceOp::Sum, -1, stream_of(*e)).ok());
  REQUIRE(cudaStreamEndCapture(stream_of(*e), &graph) == cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  REQUIRE(cudaGraphLaunch(exec, stream_of(*e)) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(stream_of(*e)) == cudaSuccess);
  REQUIRE(e->comm->async_error().ok());
  // A deadlock fails the communicator (and raises the process's abort word).
  const ir::Algorithm deadlock = perf::deadlock_pair(ir::Protocol::Simple);
  auto stuck = e->comm->load(deadlock);
  REQUIRE(stuck.ok());
  auto stuck_call =
      perf::DeviceCall::create(*e->device, *e->comm, deadlock, 4, DataType::Float, false);
  REQUIRE(stuck_call.ok());
  REQUIRE(stuck_call.value()->run(*e->comm, stuck.value(), ReduceOp::Sum, -1, stream_of(*e)).ok());
  REQUIRE(cudaStreamSynchronize(stream_of(*e)) == cudaSuccess);
  const Status failure = e->comm->async_error();
  REQUIRE(failure.code == ErrorCode::Timeout);
  // The replay bypasses run()'s refusal; the kernel sees the abort word and leaves at once.
  REQUIRE(call.value()->fill(0x7f).ok());
  REQUIRE(cudaGraphLaunch(exec, stream_of(*e)) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(stream_of(*e)) == cudaSuccess);
  std::vector<std::byte> output(count * sizeof(float));
  REQUIRE(e->device->download(output, call.value()->calls()[0].recvbuf).ok());
  for (const std::byte b : output) REQUIRE(b == std::byte{0x7f});
  CHECK(e->comm->async_error().message == failure.message);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

}  // namespace
}  // namespace weft::gpu::testing
