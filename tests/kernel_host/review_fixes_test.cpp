// What the kernel's review against NCCL's memory orders found, proved where the CPU can prove
// it: LL's flags across the 32-bit wrap, the timeout that starts only once every
// rank has entered the call, the process's abort word, a replay after a failure, and LL128's
// refusal over a link that may tear its lines.
#include <chrono>
#include <cstring>
#include <thread>

#include "kernel_host_support.h"
#include "recording.h"
#include "weft/ir/validate.h"

namespace weft::gpu::testing {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Recorded {
  std::shared_ptr<RecordingTransport> transport;
  std::unique_ptr<Emulation> emulation;
};

Recorded emulate_recorded(const ir::Algorithm& algo, const RuntimeOptions& options,
                          RecordingTransport::LinkTable links = {}) {
  auto host = make_host_transport(algo.ngpus);
  REQUIRE(host.ok());
  Recorded r;
  r.transport = std::make_shared<RecordingTransport>(host.value(), std::move(links));
  r.emulation = emulate_over(std::shared_ptr<Transport>(r.transport), perf::make_host_perf_device(),
                             algo, options);
  return r;
}

// Moves every message count of the launch's connections forward by `add`: the threadblocks'
// sent/received and each connection's head and tail counters (host memory in host mode), as if
// `add` more messages had gone by. Consistent on both sides of every connection, so the next
// calls carry on from there.
void advance_counters(const device::LaunchArgs& args, int ctas, std::uint64_t add) {
  for (int k = 0; k < ctas; ++k) {
    const device::CtaDescriptor& d = args.ctas[k];
    d.state->sent += add;
    d.state->received += add;
    // Each connection's counters once, through its receiver (who owns head and reads tail).
    if (d.recv_head != nullptr) *d.recv_head += add;
    if (d.recv_tail != nullptr) *const_cast<std::uint64_t*>(d.recv_tail) += add;
  }
}

void check_across_the_wrap(const std::vector<std::size_t>& chunks) {
  for (const ir::Protocol proto : {ir::Protocol::LL, ir::Protocol::LL128}) {
    const ir::Algorithm ring = perf::ring_allreduce(4, proto);
    RuntimeOptions options = line_options();
    auto r = emulate_recorded(ring, options);
    // A first small call, so that only the slots' first lines have ever been written.
    CHECK(run_checked(*r.emulation, {3, DataType::Float, ReduceOp::Sum, false}) == 0);
    const auto& launch = r.transport->recorder().last();
    REQUIRE(launch.has_value());
    // Just below 2^32 messages on every connection: the next calls' messages cross the point
    // where a 32-bit flag k + 1 would be 0, which is what a line nobody wrote holds.
    const std::uint64_t now = launch->args.ctas[0].state->sent;
    advance_counters(launch->args, launch->ctas, (std::uint64_t{1} << 32) - 5 - now);
    for (const std::size_t chunk : chunks) {
      INFO(ir::to_string(proto) << ", chunk " << chunk);
      CHECK(run_checked(*r.emulation, {chunk, DataType::Int32, ReduceOp::Sum, false}) == 0);
    }
    CHECK(launch->args.ctas[0].state->sent > (std::uint64_t{1} << 32));
  }
}

TEST_CASE("review: LL flags across the 32-bit wrap, small messages then large ones",
          "[kernel-host][review]") {
  check_across_the_wrap({3, 601, 3, 601, 3, 601});
}

TEST_CASE("review: LL flags across the 32-bit wrap, large messages then small ones",
          "[kernel-host][review]") {
  check_across_the_wrap({601, 3, 601, 3, 601, 3});
}

// deadlock_pair with a third rank that has no step: it never enters any launch.
ir::Algorithm deadlock_with_absent_rank() {
  ir::Algorithm algo = perf::deadlock_pair(ir::Protocol::Simple);
  algo.ngpus = 3;
  ir::Gpu absent;
  absent.id = 2;
  absent.input_chunks = absent.output_chunks = 1;
  algo.gpus.push_back(absent);
  return algo;
}

TEST_CASE("review: a deadlock is reported after the timeout once every rank has arrived",
          "[kernel-host][review]") {
  RuntimeOptions options = host_options();
  options.timeout_s = 0.3;
  options.arrival_timeout_s = 30;
  auto e = emulate_on_host(perf::deadlock_pair(ir::Protocol::Simple), options);
  auto call =
      perf::DeviceCall::create(*e->device, *e->comm, e->algorithm, 4, DataType::Float, false);
  REQUIRE(call.ok());
  const auto start = Clock::now();
  REQUIRE(call.value()->run(*e->comm, e->handle, ReduceOp::Sum, -1, nullptr).ok());
  CHECK(seconds_since(start) < 20);  // the timeout, not the arrival limit
  const Status status = e->comm->async_error();
  CHECK(status.code == ErrorCode::Timeout);
  CHECK_THAT(status.message, Catch::Contains("with every rank in the call"));
}

TEST_CASE("review: a rank that never enters the call is waited for, then named",
          "[kernel-host][review]") {
  // Ranks 0 and 1 deadlock, but rank 2 has not arrived: that is not (yet) a deadlock, so the
  // short timeout does not fire; the arrival limit does, naming rank 2.
  RuntimeOptions options = host_options();
  options.timeout_s = 0.1;
  options.arrival_timeout_s = 1.5;
  auto e = emulate_on_host(deadlock_with_absent_rank(), options);
  auto call =
      perf::DeviceCall::create(*e->device, *e->comm, e->algorithm, 4, DataType::Float, false);
  REQUIRE(call.ok());
  const auto start = Clock::now();
  REQUIRE(call.value()->run(*e->comm, e->handle, ReduceOp::Sum, -1, nullptr).ok());
  CHECK(seconds_since(start) >= 1.5);  // not the 0.1 s timeout
  const Status status = e->comm->async_error();
  INFO(status.str());
  CHECK(status.code == ErrorCode::Timeout);
  CHECK_THAT(status.message, Catch::Contains("rank 2 had not entered the call") &&
                                 Catch::Contains("WEFT_ARRIVAL_TIMEOUT_S"));
}

TEST_CASE("review: one communicator's failure stops another's waits at once",
          "[kernel-host][review]") {
  // B waits on a deadlock with a long timeout; A deadlocks with a short one. A's failure raises
  // the process's abort word, and B's launch ends long before its own timeout, saying why.
  RuntimeOptions patient = host_options();
  patient.timeout_s = 120;
  RuntimeOptions hasty = host_options();
  hasty.timeout_s = 0.5;
  auto b = emulate_on_host(perf::deadlock_pair(ir::Protocol::LL), patient);
  auto a = emulate_on_host(perf::deadlock_pair(ir::Protocol::Simple), hasty);
  auto call_b =
      perf::DeviceCall::create(*b->device, *b->comm, b->algorithm, 4, DataType::Float, false);
  auto call_a =
      perf::DeviceCall::create(*a->device, *a->comm, a->algorithm, 4, DataType::Float, false);
  REQUIRE(call_a.ok());
  REQUIRE(call_b.ok());
  const auto start = Clock::now();
  Status launched_b;
  std::thread waiting(
      [&] { launched_b = call_b.value()->run(*b->comm, b->handle, ReduceOp::Sum, -1, nullptr); });
  REQUIRE(call_a.value()->run(*a->comm, a->handle, ReduceOp::Sum, -1, nullptr).ok());
  waiting.join();
  CHECK(launched_b.ok());
  CHECK(seconds_since(start) < 60);
  CHECK(a->comm->async_error().code == ErrorCode::Timeout);
  const Status status = b->comm->async_error();
  INFO(status.str());
  CHECK(status.code == ErrorCode::Timeout);
  CHECK_THAT(status.message, Catch::Contains("another communicator of this process failed"));
  // A communicator created after the failure is not concerned by it.
  auto c = emulate_on_host(perf::ring_allreduce(2, ir::Protocol::Simple));
  CHECK(run_checked(*c, {kChunk, DataType::Float, ReduceOp::Sum, false}) == 0);
}

TEST_CASE("review: a launch replayed after a failure touches nothing and changes no report",
          "[kernel-host][review]") {
  RuntimeOptions options = host_options();
  options.timeout_s = 0.3;
  const ir::Algorithm ring = perf::ring_allreduce(2, ir::Protocol::Simple);
  auto r = emulate_recorded(ring, options);
  Emulation& e = *r.emulation;
  auto call = perf::DeviceCall::create(*e.device, *e.comm, ring, count_for(ring, kChunk),
                                       DataType::Float, false);
  REQUIRE(call.ok());
  REQUIRE(call.value()->fill(1).ok());
  REQUIRE(call.value()->run(*e.comm, e.handle, ReduceOp::Sum, -1, nullptr).ok());
  REQUIRE(e.comm->async_error().ok());
  const auto good = *r.transport->recorder().last();
  // Then a deadlock on the same communicator fails it.
  const ir::Algorithm deadlock = perf::deadlock_pair(ir::Protocol::Simple);
  auto stuck = e.comm->load(deadlock);
  REQUIRE(stuck.ok());
  auto stuck_call =
      perf::DeviceCall::create(*e.device, *e.comm, deadlock, 4, DataType::Float, false);
  REQUIRE(stuck_call.ok());
  REQUIRE(stuck_call.value()->run(*e.comm, stuck.value(), ReduceOp::Sum, -1, nullptr).ok());
  const Status failure = e.comm->async_error();
  REQUIRE(failure.code == ErrorCode::Timeout);
  // A replay of the good launch (a graph bypasses run()'s refusal) leaves at once.
  REQUIRE(call.value()->fill(0x7f).ok());
  const auto start = Clock::now();
  REQUIRE(r.transport->recorder().relaunch(good).ok());
  CHECK(seconds_since(start) < 5);
  std::vector<std::byte> output(count_for(ring, kChunk) * sizeof(float));
  REQUIRE(e.device->download(output, call.value()->calls()[0].recvbuf).ok());
  for (const std::byte b : output) REQUIRE(b == std::byte{0x7f});
  CHECK(e.comm->async_error().message == failure.message);
}

TEST_CASE("review: LL128 is refused over a link that may tear its lines, with the pair named",
          "[kernel-host][review]") {
  // A fake link table: ranks 0 and 1 joined by PCIe, everything else by NVLink.
  const auto links = [](int rank, int peer) {
    if ((rank == 0 && peer == 1) || (rank == 1 && peer == 0)) {
      return PeerLink{LinkKind::PCIe, "a fake link table"};
    }
    return PeerLink{LinkKind::NVLink, "a fake link table"};
  };
  auto ll128 =
      emulate_recorded(perf::ring_allreduce(4, ir::Protocol::LL128), line_options(), links);
  Emulation& e = *ll128.emulation;
  CallShape shape;
  shape.collective = ir::Collective::AllReduce;
  shape.nranks = 4;
  shape.count = 4 * kChunk;
  shape.dtype = DataType::Float;
  shape.op = ReduceOp::Sum;
  const Applicability verdict = e.comm->applies(e.handle, shape);
  CHECK_FALSE(verdict.applies);
  CHECK_THAT(verdict.reason, Catch::Contains("LL128") && Catch::Contains("ranks 0 and 1") &&
                                 Catch::Contains("PCIe"));
  auto call =
      perf::DeviceCall::create(*e.device, *e.comm, e.algorithm, 4 * kChunk, DataType::Float, false);
  REQUIRE(call.ok());
  const Status refused = call.value()->run(*e.comm, e.handle, ReduceOp::Sum, -1, nullptr);
  CHECK(refused.code == ErrorCode::NotApplicable);
  CHECK_THAT(refused.message, Catch::Contains("ranks 0 and 1"));
  // Over the same links LL and Simple run (at system scope), and LL128 where every pair is
  // NVLink.
  for (const ir::Protocol proto : {ir::Protocol::Simple, ir::Protocol::LL}) {
    auto other = emulate_recorded(perf::ring_allreduce(4, proto), line_options(), links);
    CHECK(run_checked(*other.emulation, {kChunk, DataType::Float, ReduceOp::Sum, false}) == 0);
  }
  auto nvlink =
      emulate_recorded(perf::ring_allreduce(4, ir::Protocol::LL128), line_options(), [](int, int) {
        return PeerLink{LinkKind::NVLink, "fake"};
      });
  CHECK(run_checked(*nvlink.emulation, {kChunk, DataType::Float, ReduceOp::Sum, false}) == 0);
}

}  // namespace
}  // namespace weft::gpu::testing
