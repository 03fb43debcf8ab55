// Several participants in one process (threads), each driving some ranks: the in-process
// transport's exchange, and, with two or more GPUs, peer access between them.
#include <chrono>
#include <thread>

#include "gpu_test_support.h"

namespace weft::gpu::testing {
namespace {

// Runs `algo` with `participants` communicators (threads), participant p driving ranks
// [p·k, (p+1)·k) on device devices[p] and starting its calls p × `skew` late; returns the wrong
// elements summed.
std::size_t run_participants(const ir::Algorithm& algo, int participants,
                             const std::vector<int>& devices,
                             const RuntimeOptions& options = small_tiles(),
                             std::chrono::milliseconds skew = std::chrono::milliseconds(0)) {
  const int n = algo.ngpus;
  const int per = n / participants;
  auto rendezvous = InProcessRendezvous::create(participants);
  const std::size_t chunk = 129;
  const std::size_t count = chunk * static_cast<std::size_t>(algo.nchunksperloop);
  const cpu::Executor executor(algo, standard_spec(algo, 0));
  const perf::Reference reference =
      perf::compute_reference(executor, chunk, DataType::Float, ReduceOp::Sum, 0, false);
  REQUIRE(reference.error.empty());
  std::vector<std::size_t> wrong(static_cast<std::size_t>(participants), 0);
  std::vector<std::string> errors(static_cast<std::size_t>(participants));
  std::vector<std::thread> threads;
  for (int p = 0; p < participants; ++p) {
    threads.emplace_back([&, p] {
      auto fail = [&](const Status& s) { errors[static_cast<std::size_t>(p)] = s.str(); };
      auto bootstrap = rendezvous->join(p);
      if (!bootstrap.ok()) return fail(bootstrap.status());
      std::vector<int> ranks;
      for (int r = p * per; r < (p + 1) * per; ++r) ranks.push_back(r);
      const int device = devices[static_cast<std::size_t>(p)];
      auto transport = make_in_process_transport(std::move(bootstrap.value()), n, ranks, device);
      if (!transport.ok()) return fail(transport.status());
      auto comm = Communicator::create(transport.value(), options);
      if (!comm.ok()) return fail(comm.status());
      auto handle = comm.value()->load(algo);
      if (!handle.ok()) return fail(handle.status());
      auto perf_device = perf::make_cuda_perf_device(device);
      if (!perf_device.ok()) return fail(perf_device.status());
      auto call = perf::DeviceCall::create(*perf_device.value(), *comm.value(), algo, count,
                                           DataType::Float, false);
      if (!call.ok()) return fail(call.status());
      if (auto s = call.value()->upload(reference); !s.ok()) return fail(s);
      std::this_thread::sleep_for(skew * p);
      const StreamHandle stream = perf_device.value()->stream();
      for (int k = 0; k < 5; ++k) {
        if (auto s = call.value()->run(*comm.value(), handle.value(), ReduceOp::Sum, -1, stream);
            !s.ok())
          return fail(s);
      }
      if (auto s = perf_device.value()->synchronize(); !s.ok()) return fail(s);
      if (auto s = comm.value()->async_error(); !s.ok()) return fail(s);
      auto counted = call.value()->count_wrong(reference);
      if (!counted.ok()) return fail(counted.status());
      wrong[static_cast<std::size_t>(p)] = counted.value();
      (void)comm.value()->unload(handle.value());
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors) {
    INFO(e);
    CHECK(e.empty());
  }
  std::size_t total = 0;
  for (std::size_t w : wrong) total += w;
  return total;
}

TEST_CASE("two participants on one GPU share memory in process", "[gpu][transport]") {
  // Each participant launches its own kernel; on an otherwise idle GPU both are resident at once.
  CHECK(run_participants(perf::ring_allreduce(4, ir::Protocol::Simple), 2, {0, 0}) == 0);
  CHECK(run_participants(perf::allpairs_allreduce(4, ir::Protocol::LL), 2, {0, 0}) == 0);
}

TEST_CASE("a participant seconds late is waited for; the timeout starts once all arrived",
          "[gpu][transport]") {
  // A timeout far shorter than the skew: before the review's fix the early participant's first
  // wait failed after 0.5 s. Now its clock starts once every rank has entered the call.
  RuntimeOptions options = small_tiles();
  options.timeout_s = 0.5;
  options.arrival_timeout_s = 60;
  CHECK(run_participants(perf::ring_allreduce(4, ir::Protocol::Simple), 2, {0, 0}, options,
                         std::chrono::milliseconds(3000)) == 0);
  CHECK(run_participants(perf::ring_allreduce(4, ir::Protocol::LL), 2, {0, 0}, options,
                         std::chrono::milliseconds(3000)) == 0);
}

TEST_CASE("one participant per GPU with peer access", "[gpu][transport]") {
  int devices = 0;
  cudaGetDeviceCount(&devices);
  if (devices < 2) {
    WARN("one GPU only: the multi-GPU in-process transport was not exercised");
    return;
  }
  std::vector<int> ids;
  for (int d = 0; d < std::min(devices, 4); ++d) ids.push_back(d);
  const int n = static_cast<int>(ids.size());
  CHECK(run_participants(perf::ring_allreduce(n, ir::Protocol::Simple), n, ids) == 0);
  CHECK(run_participants(perf::ring_allreduce(n, ir::Protocol::LL128), n, ids) == 0);
}

}  // namespace
}  // namespace weft::gpu::testing
