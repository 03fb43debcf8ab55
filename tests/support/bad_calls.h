// Bad calls and the errors they get, the same on a CUDA device and in host mode (one
// Communicator serves both): shared by the GPU tests and the host-mode tests.
#pragma once

#include <vector>

#include "builtin_algorithms.h"
#include "emulation.h"

namespace weft::gpu::testing {

// `e` runs perf::ring_allreduce(4, Simple). Ends by unloading it.
inline void check_bad_calls(Emulation& e) {
  auto call = perf::DeviceCall::create(*e.device, *e.comm, e.algorithm, 400, DataType::Float,
                                       false);
  REQUIRE(call.ok());
  const StreamHandle stream = e.device->stream();
  {
    INFO("an unknown handle");
    const Status s = e.comm->run(AlgorithmHandle{42}, call.value()->calls(), 400, DataType::Float,
                                 ReduceOp::Sum, -1, stream);
    CHECK(s.code == ErrorCode::InvalidUsage);
  }
  {
    INFO("a count the algorithm does not divide");
    const Status s = e.comm->run(e.handle, call.value()->calls(), 401, DataType::Float,
                                 ReduceOp::Sum, -1, stream);
    CHECK(s.code == ErrorCode::NotApplicable);
    CHECK_THAT(s.message, Catch::Contains("not divisible"));
  }
  {
    INFO("avg on integers");
    const Status s = e.comm->run(e.handle, call.value()->calls(), 400, DataType::Int32,
                                 ReduceOp::Avg, -1, stream);
    CHECK(s.code == ErrorCode::NotApplicable);
    CHECK_THAT(s.message, Catch::Contains("avg"));
  }
  {
    INFO("the wrong number of buffer pairs");
    const Status s = e.comm->run(e.handle, call.value()->calls().subspan(1), 400, DataType::Float,
                                 ReduceOp::Sum, -1, stream);
    CHECK(s.code == ErrorCode::InvalidArgument);
  }
  {
    INFO("a null buffer");
    std::vector<RankBuffers> buffers(call.value()->calls().begin(), call.value()->calls().end());
    buffers[2].recvbuf = nullptr;
    const Status s =
        e.comm->run(e.handle, buffers, 400, DataType::Float, ReduceOp::Sum, -1, stream);
    CHECK(s.code == ErrorCode::InvalidArgument);
    CHECK_THAT(s.message, Catch::Contains("rank 2"));
  }
  {
    INFO("an algorithm for another rank count");
    auto other = e.comm->load(perf::ring_allreduce(8, ir::Protocol::Simple));
    CHECK(other.status().code == ErrorCode::InvalidArgument);
  }
  {
    INFO("an invalid algorithm lists its findings");
    ir::Algorithm bad = perf::ring_allreduce(4, ir::Protocol::Simple);
    bad.gpus[1].threadblocks[0].send = 1;  // sends to itself
    auto loaded = e.comm->load(bad);
    CHECK(loaded.status().code == ErrorCode::InvalidAlgorithm);
    CHECK_THAT(loaded.status().message, Catch::Contains("gpu 1"));
  }
  {
    INFO("a file the runtime refuses names its line");
    auto loaded = e.comm->load(WEFT_TEST_DATA_DIR "/cli/malformed.xml");
    CHECK(loaded.status().code == ErrorCode::InvalidAlgorithm);
    CHECK_THAT(loaded.status().message, Catch::Contains("malformed.xml:"));
  }
  {
    INFO("unload, then the handle is gone");
    REQUIRE(e.comm->unload(e.handle).ok());
    CHECK(e.comm->algorithm(e.handle) == nullptr);
    CHECK(e.comm->unload(e.handle).code == ErrorCode::InvalidUsage);
  }
}

}  // namespace weft::gpu::testing
