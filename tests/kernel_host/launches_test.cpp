// Launch after launch on one communicator with nothing reset between them (monotone message
// counts, LL/LL128 flags, dependency flags), calls of changing sizes, the same launch arguments
// replayed as a CUDA graph replays them, and steps split into several messages per tile.
#include <memory>
#include <optional>

#include "kernel/device_abi.h"
#include "kernel_host_support.h"

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

// A DeviceRuntime that passes everything to the host's and keeps the last interpreter launch, so
// that the test can launch exactly those arguments again, as a CUDA graph replays its kernel
// nodes.
class RecordingRuntime final : public DeviceRuntime {
 public:
  explicit RecordingRuntime(std::shared_ptr<DeviceRuntime> inner) : inner_(std::move(inner)) {}

  struct Launch {
    DataType dtype;
    ReduceOp op;
    ir::Protocol protocol;
    device::LaunchArgs args;
    int ctas;
    int threads;
  };
  const std::optional<Launch>& last() const { return last_; }
  Status replay() {
    REQUIRE(last_.has_value());
    return inner_->launch_interpreter(last_->dtype, last_->op, last_->protocol, last_->args,
                                      last_->ctas, last_->threads, nullptr);
  }

  DeviceKind kind() const override { return inner_->kind(); }
  int device() const override { return inner_->device(); }
  std::string describe() const override { return inner_->describe(); }
  Result<DeviceMemory> allocate(std::size_t bytes, std::string_view what) override {
    return inner_->allocate(bytes, what);
  }
  Result<MappedMemory> allocate_mapped(std::size_t bytes, std::string_view what) override {
    return inner_->allocate_mapped(bytes, what);
  }
  Status upload(void* destination, std::span<const std::byte> data) override {
    return inner_->upload(destination, data);
  }
  Status synchronize() override { return inner_->synchronize(); }
  Result<bool> capturing(StreamHandle stream) override { return inner_->capturing(stream); }
  int max_threads(int configured) const override { return inner_->max_threads(configured); }
  int min_threads() const override { return inner_->min_threads(); }
  bool has_interpreter(DataType dtype, ReduceOp op, ir::Protocol protocol) const override {
    return inner_->has_interpreter(dtype, op, protocol);
  }
  Result<Residency> resident_ctas(DataType dtype, ReduceOp op, ir::Protocol protocol,
                                  int threads) override {
    return inner_->resident_ctas(dtype, op, protocol, threads);
  }
  Status launch_interpreter(DataType dtype, ReduceOp op, ir::Protocol protocol,
                            const device::LaunchArgs& args, int ctas, int threads,
                            StreamHandle stream) override {
    last_ = Launch{dtype, op, protocol, args, ctas, threads};
    return inner_->launch_interpreter(dtype, op, protocol, args, ctas, threads, stream);
  }
  Status launch_scale(DataType dtype, const device::ScaleArgs& args,
                      StreamHandle stream) override {
    return inner_->launch_scale(dtype, args, stream);
  }

 private:
  std::shared_ptr<DeviceRuntime> inner_;
  std::optional<Launch> last_;
};

// The host transport with its runtime seen through a RecordingRuntime.
class RecordingTransport final : public Transport {
 public:
  explicit RecordingTransport(std::shared_ptr<Transport> inner)
      : inner_(std::move(inner)),
        runtime_(std::make_shared<RecordingRuntime>(inner_->device_runtime())) {}
  RecordingRuntime& recorder() const { return *runtime_; }

  std::string_view name() const override { return inner_->name(); }
  int nranks() const override { return inner_->nranks(); }
  std::span<const int> local_ranks() const override { return inner_->local_ranks(); }
  int device() const override { return inner_->device(); }
  DeviceKind device_kind() const override { return inner_->device_kind(); }
  std::shared_ptr<DeviceRuntime> device_runtime() const override { return runtime_; }
  Result<std::unique_ptr<SharedWindow>> open_window(std::span<const std::size_t> bytes,
                                                    std::uint64_t fingerprint) override {
    return inner_->open_window(bytes, fingerprint);
  }
  Status barrier() override { return inner_->barrier(); }

 private:
  std::shared_ptr<Transport> inner_;
  std::shared_ptr<RecordingRuntime> runtime_;
};

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

TEST_CASE("launches: steps with more pieces than a slot holds go as several messages",
          "[kernel-host][launches]") {
  // The smallest slots (1 KB) and pieces of 16 bytes: a cnt-72 step needs 72 pieces, more than
  // any protocol's payload holds (Simple 1024, LL 512, LL128 960 bytes), so every step goes as
  // several messages per tile. The FIFO is deep enough for two such steps.
  RuntimeOptions options = host_options();
  options.max_tile_bytes = 16;
  options.simple.slot_bytes = options.ll.slot_bytes = options.ll128.slot_bytes = 1024;
  options.simple.fifo_depth = options.ll.fifo_depth = options.ll128.fifo_depth = 8;
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

}  // namespace
}  // namespace weft::gpu::testing
