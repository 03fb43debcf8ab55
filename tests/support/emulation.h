// Shared by the GPU tests (tests/gpu) and the host-mode tests (tests/kernel_host): a communicator
// with an algorithm loaded, on whatever device its transport gives (a CUDA device, or the host),
// and one call checked against the CPU reference executor.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "device_call.h"
#include "perf_device.h"
#include "reference.h"
#include "weft/communicator/communicator.h"
#include "weft/cpu/cpu_executor.h"
#include "weft/ir/collective_spec.h"
#include "weft/ir/geometry.h"
#include "weft/ir/validate.h"

namespace weft::gpu::testing {

// An algorithm of tests/gpu/data (loaded through the XML reader, as a user's file is), with its
// protocol replaced by `proto`.
inline ir::Algorithm test_data_algorithm(const std::string& file, ir::Protocol proto) {
  ir::LoadResult loaded =
      ir::load_xml_file(std::string(WEFT_GPU_TEST_DATA_DIR) + "/" + file, ir::weft_limits());
  INFO(loaded.diagnostics.str());
  REQUIRE(loaded.ok());
  ir::Algorithm algo = *loaded.algorithm;
  algo.protocol = proto;
  return algo;
}

// The step variant the tests run: WEFT_STEP (full, lean or overlap; unset: the default), so that
// one suite proves each (tests/kernel_host/CMakeLists.txt runs the host-mode suite once more
// under each variant that is not the default; gpu-check.sh the GPU tests). A value that is none
// of them stops the run rather than testing the default under another name.
inline StepVariant step_variant_under_test() {
  const char* text = std::getenv("WEFT_STEP");
  if (text == nullptr || *text == '\0') return RuntimeOptions{}.step;
  const auto variant = parse_step_variant(text);
  if (!variant) {
    std::fprintf(stderr, "WEFT_STEP='%s': expected full, lean or overlap\n", text);
    std::abort();
  }
  return *variant;
}

// Simple's slices under test: WEFT_SIMPLE_SLICES (unset: the default), checked as the runtime
// checks it; a bad value stops the run.
inline int slices_under_test() {
  const char* text = std::getenv("WEFT_SIMPLE_SLICES");
  if (text == nullptr || *text == '\0') return RuntimeOptions{}.simple_slices;
  // Read with the step under test: slices are the overlap step's.
  auto options = runtime_options_from_env([text](const char* name) -> const char* {
    const std::string_view variable(name);
    if (variable == "WEFT_SIMPLE_SLICES") return text;
    return variable == "WEFT_STEP" ? std::getenv("WEFT_STEP") : nullptr;
  });
  if (!options.ok()) {
    std::fprintf(stderr, "%s\n", options.status().message.c_str());
    std::abort();
  }
  return options.value().simple_slices;
}

// A test communicator's options: the defaults, with the step variant and slices under test.
inline RuntimeOptions test_options() {
  RuntimeOptions o;
  o.step = step_variant_under_test();
  o.simple_slices = slices_under_test();
  return o;
}

// Tiles of at most 256 bytes: even small calls run many tiles (results must not depend on T).
inline RuntimeOptions small_tiles() {
  RuntimeOptions o = test_options();
  o.timeout_s = 20;
  o.max_tile_bytes = 256;
  return o;
}

struct Emulation {
  ir::Algorithm algorithm;
  std::unique_ptr<perf::PerfDevice> device;  // the call buffers and the stream
  std::unique_ptr<Communicator> comm;
  AlgorithmHandle handle;
};

inline std::unique_ptr<Emulation> emulate_over(Result<std::shared_ptr<Transport>> transport,
                                               std::unique_ptr<perf::PerfDevice> device,
                                               const ir::Algorithm& algorithm,
                                               const RuntimeOptions& options) {
  auto e = std::make_unique<Emulation>();
  e->algorithm = algorithm;
  e->device = std::move(device);
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

// NCCL's count for a call whose chunks hold `chunk_elements`.
inline std::size_t count_for(const ir::Algorithm& algo, std::size_t chunk_elements) {
  const std::size_t total = chunk_elements * static_cast<std::size_t>(algo.nchunksperloop);
  return total / static_cast<std::size_t>(std::max(ir::count_multiplier(algo), 1));
}

// Runs the call (`repeats` times) and returns the number of wrong elements; every error fails
// the test with the runtime's message.
inline std::size_t run_checked(Emulation& e, const CallSpec& c) {
  INFO(describe(e, c));
  const cpu::Executor executor(e.algorithm, standard_spec(e.algorithm, c.root));
  const perf::Reference reference =
      perf::compute_reference(executor, c.chunk_elements, c.dtype, c.op, c.root, c.in_place);
  INFO(reference.error);
  REQUIRE(reference.error.empty());
  auto call =
      perf::DeviceCall::create(*e.device, *e.comm, e.algorithm,
                               count_for(e.algorithm, c.chunk_elements), c.dtype, c.in_place);
  INFO(call.status().str());
  REQUIRE(call.ok());
  REQUIRE(call.value()->upload(reference).ok());
  for (int k = 0; k < c.repeats; ++k) {
    const Status launched = call.value()->run(*e.comm, e.handle, c.op, c.root, e.device->stream());
    INFO(launched.str());
    REQUIRE(launched.ok());
  }
  REQUIRE(e.device->synchronize().ok());
  const Status async = e.comm->async_error();
  INFO(async.str());
  REQUIRE(async.ok());
  auto wrong = call.value()->count_wrong(reference);
  REQUIRE(wrong.ok());
  return wrong.value();
}

}  // namespace weft::gpu::testing
