// Communicator::plan and run(PlannedCall): a call planned once, as the NCCL shim plans it while it
// chooses among algorithms, gives what run() gives when it plans the call itself; and a plan is
// refused wherever it does not hold (other buffers, another communicator, an unloaded algorithm).
#include "kernel_host_support.h"

namespace weft::gpu::testing {
namespace {

CallShape shape_of(const Emulation& e, const CallSpec& c) {
  CallShape shape;
  shape.collective = e.algorithm.collective;
  shape.nranks = e.algorithm.ngpus;
  shape.count = count_for(e.algorithm, c.chunk_elements);
  shape.dtype = c.dtype;
  shape.op = c.op;
  shape.in_place = c.in_place;
  shape.root = c.root;
  return shape;
}

// run_checked, with the call planned first and launched from its plan.
std::size_t run_planned_checked(Emulation& e, const CallSpec& c) {
  INFO(describe(e, c));
  const cpu::Executor executor(e.algorithm, standard_spec(e.algorithm, c.root));
  const perf::Reference reference =
      perf::compute_reference(executor, c.chunk_elements, c.dtype, c.op, c.root, c.in_place);
  INFO(reference.error);
  REQUIRE(reference.error.empty());
  const CallShape shape = shape_of(e, c);
  auto call =
      perf::DeviceCall::create(*e.device, *e.comm, e.algorithm, shape.count, c.dtype, c.in_place);
  INFO(call.status().str());
  REQUIRE(call.ok());
  REQUIRE(call.value()->upload(reference).ok());
  auto planned = e.comm->plan(e.handle, shape);
  INFO(planned.status().str());
  REQUIRE(planned.ok());
  const Status launched = e.comm->run(planned.value(), call.value()->calls(), e.device->stream());
  INFO(launched.str());
  REQUIRE(launched.ok());
  REQUIRE(e.device->synchronize().ok());
  const Status async = e.comm->async_error();
  INFO(async.str());
  REQUIRE(async.ok());
  auto wrong = call.value()->count_wrong(reference);
  REQUIRE(wrong.ok());
  return wrong.value();
}

TEST_CASE("planned call: launched from its plan, a call gives the CPU reference's result",
          "[kernel-host]") {
  auto e = emulate_on_host(perf::ring_allreduce(4, ir::Protocol::Simple));
  // Avg in place premultiplies the caller's buffer: the plan must carry in-place through.
  for (const bool in_place : {false, true}) {
    CHECK(run_planned_checked(*e, {kChunk, DataType::Float, ReduceOp::Avg, in_place}) == 0);
    CHECK(run_planned_checked(*e, {kChunk, DataType::Int32, ReduceOp::Max, in_place}) == 0);
  }
}

TEST_CASE("planned call: plan refuses as applies does, and run refuses a plan that does not hold",
          "[kernel-host]") {
  auto e = emulate_on_host(perf::ring_allreduce(4, ir::Protocol::Simple));
  const StreamHandle stream = e->device->stream();
  const CallSpec spec{kChunk, DataType::Float, ReduceOp::Sum, false};
  CallShape shape = shape_of(*e, spec);
  {
    INFO("a count the algorithm does not divide");
    CallShape odd = shape;
    odd.count += 1;
    auto refused = e->comm->plan(e->handle, odd);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().code == ErrorCode::NotApplicable);
    const Applicability verdict = e->comm->applies(e->handle, odd);
    CHECK_FALSE(verdict.applies);
    CHECK(verdict.reason == refused.status().message);
  }
  auto planned = e->comm->plan(e->handle, shape);
  REQUIRE(planned.ok());
  CHECK(e->comm->applies(e->handle, shape).applies);
  {
    INFO("in-place buffers for a call planned out-of-place");
    auto in_place = perf::DeviceCall::create(*e->device, *e->comm, e->algorithm, shape.count,
                                             DataType::Float, true);
    REQUIRE(in_place.ok());
    const Status s = e->comm->run(planned.value(), in_place.value()->calls(), stream);
    CHECK(s.code == ErrorCode::InvalidArgument);
    CHECK_THAT(s.message, Catch::Contains("planned out-of-place"));
  }
  auto call = perf::DeviceCall::create(*e->device, *e->comm, e->algorithm, shape.count,
                                       DataType::Float, false);
  REQUIRE(call.ok());
  {
    INFO("a plan another communicator made");
    auto other = emulate_on_host(perf::ring_allreduce(4, ir::Protocol::Simple));
    auto foreign = other->comm->plan(other->handle, shape);
    REQUIRE(foreign.ok());
    const Status s = e->comm->run(foreign.value(), call.value()->calls(), stream);
    CHECK(s.code == ErrorCode::InvalidUsage);
  }
  {
    INFO("a plan whose algorithm was unloaded since");
    REQUIRE(e->comm->unload(e->handle).ok());
    const Status s = e->comm->run(planned.value(), call.value()->calls(), stream);
    CHECK(s.code == ErrorCode::InvalidUsage);
    CHECK_THAT(s.message, Catch::Contains("unknown algorithm handle"));
  }
}

}  // namespace
}  // namespace weft::gpu::testing
