// Helpers of the GPU tests: an emulated communicator with an algorithm loaded, and one call
// checked against the CPU reference executor.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "builtin_algorithms.h"
#include "device_call.h"
#include "reference.h"
#include "weft/runtime/collective_spec.h"
#include "weft/runtime/cpu_executor.h"
#include "weft/runtime/geometry.h"
#include "weft/runtime/gpu/communicator.h"

namespace weft::gpu::testing {

// Tiles of at most 256 bytes: even small calls run many tiles (results must not depend on T).
inline RuntimeOptions small_tiles() {
  RuntimeOptions o;
  o.timeout_s = 20;
  o.max_tile_bytes = 256;
  return o;
}

struct Emulation {
  ir::Algorithm algorithm;
  std::unique_ptr<Communicator> comm;
  AlgorithmHandle handle;
  cudaStream_t stream = nullptr;

  ~Emulation() {
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
};

inline std::unique_ptr<Emulation> emulate(const ir::Algorithm& algorithm,
                                          const RuntimeOptions& options = small_tiles(),
                                          int device = 0) {
  auto e = std::make_unique<Emulation>();
  e->algorithm = algorithm;
  auto transport = make_emulation_transport(algorithm.ngpus, device);
  INFO(transport.status().str());
  REQUIRE(transport.ok());
  auto comm = Communicator::create(transport.value(), options);
  INFO(comm.status().str());
  REQUIRE(comm.ok());
  e->comm = std::move(comm.value());
  auto handle = e->comm->load(algorithm);
  INFO(handle.status().str());
  REQUIRE(handle.ok());
  e->handle = handle.value();
  REQUIRE(cudaSetDevice(device) == cudaSuccess);
  REQUIRE(cudaStreamCreateWithFlags(&e->stream, cudaStreamNonBlocking) == cudaSuccess);
  return e;
}

struct CallSpec {
  std::size_t chunk_elements = 37;
  DataType dtype = DataType::Float;
  ReduceOp op = ReduceOp::Sum;
  bool in_place = false;
  int root = 0;
  int repeats = 1;  // back-to-back calls on the same inputs (out of place only makes sense)
};

inline std::string describe(const Emulation& e, const CallSpec& c) {
  return fmt::format("{} ({} ranks, {}), S={} {} {} {}", e.algorithm.name, e.algorithm.ngpus,
                     ir::to_string(e.algorithm.protocol), c.chunk_elements, to_string(c.dtype),
                     to_string(c.op), c.in_place ? "in-place" : "out-of-place");
}

// Runs the call (`repeats` times) and returns the number of wrong elements; every error fails
// the test with the runtime's message.
inline std::size_t run_checked(Emulation& e, const CallSpec& c) {
  INFO(describe(e, c));
  const std::size_t total = c.chunk_elements * static_cast<std::size_t>(e.algorithm.nchunksperloop);
  const std::size_t count =
      total / static_cast<std::size_t>(std::max(ir::count_multiplier(e.algorithm), 1));
  const cpu::Executor executor(e.algorithm, standard_spec(e.algorithm, c.root));
  const perf::Reference reference =
      perf::compute_reference(executor, c.chunk_elements, c.dtype, c.op, c.root, c.in_place);
  INFO(reference.error);
  REQUIRE(reference.error.empty());
  auto call = perf::DeviceCall::create(*e.comm, e.algorithm, count, c.dtype, c.in_place);
  REQUIRE(call.ok());
  REQUIRE(call.value()->upload(reference).ok());
  for (int k = 0; k < c.repeats; ++k) {
    const Status launched = call.value()->run(*e.comm, e.handle, c.op, c.root, e.stream);
    INFO(launched.str());
    REQUIRE(launched.ok());
  }
  REQUIRE(cudaStreamSynchronize(e.stream) == cudaSuccess);
  const Status async = e.comm->async_error();
  INFO(async.str());
  REQUIRE(async.ok());
  auto wrong = call.value()->count_wrong(reference);
  REQUIRE(wrong.ok());
  return wrong.value();
}

}  // namespace weft::gpu::testing
