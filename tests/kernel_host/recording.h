// A transport and device runtime that pass everything to host mode's while letting a test see
// and steer what the GPU path cannot show: the launch arguments (to replay a launch exactly, as
// a CUDA graph does, or to seed the threadblocks' counters), and the links between ranks (a fake
// link table).
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "weft/communicator/device_runtime.h"
#include "weft/communicator/transport.h"
#include "weft/program/device_abi.h"

namespace weft::gpu::testing {

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
  // Launches exactly these arguments again, as a graph replays its kernel node.
  Status relaunch(const Launch& launch) {
    return inner_->launch_interpreter(launch.dtype, launch.op, launch.protocol, launch.args,
                                      launch.ctas, launch.threads, nullptr);
  }
  Status replay() {
    if (!last_) return Status::error(ErrorCode::InvalidUsage, "nothing launched yet");
    return relaunch(*last_);
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
  Status launch_scale(DataType dtype, const device::ScaleArgs& args, StreamHandle stream) override {
    return inner_->launch_scale(dtype, args, stream);
  }
  Result<AbortWord> abort_word() override { return inner_->abort_word(); }
  Status ll128_on_one_device() override { return inner_->ll128_on_one_device(); }
  Status post_word(std::uint64_t* address, std::uint64_t value) override {
    return inner_->post_word(address, value);
  }

 private:
  std::shared_ptr<DeviceRuntime> inner_;
  std::optional<Launch> last_;
};

// The host transport with its runtime seen through a RecordingRuntime; `links`, when set, says
// how rank r reaches peer p instead of the host transport.
class RecordingTransport final : public Transport {
 public:
  using LinkTable = std::function<PeerLink(int rank, int peer)>;
  explicit RecordingTransport(std::shared_ptr<Transport> inner, LinkTable links = {})
      : inner_(std::move(inner)),
        runtime_(std::make_shared<RecordingRuntime>(inner_->device_runtime())),
        links_(std::move(links)) {}
  RecordingRuntime& recorder() const { return *runtime_; }

  std::string_view name() const override { return inner_->name(); }
  int nranks() const override { return inner_->nranks(); }
  std::span<const int> local_ranks() const override { return inner_->local_ranks(); }
  int device() const override { return inner_->device(); }
  DeviceKind device_kind() const override { return inner_->device_kind(); }
  std::shared_ptr<DeviceRuntime> device_runtime() const override { return runtime_; }
  PeerLink peer_link(int rank, int peer) const override {
    return links_ ? links_(rank, peer) : inner_->peer_link(rank, peer);
  }
  Result<std::unique_ptr<SharedWindow>> open_window(const WindowRequest& request) override {
    return inner_->open_window(request);
  }
  Status barrier() override { return inner_->barrier(); }

 private:
  std::shared_ptr<Transport> inner_;
  std::shared_ptr<RecordingRuntime> runtime_;
  LinkTable links_;
};

}  // namespace weft::gpu::testing
