// A Shim under test: the recording stand-in for libnccl behind it, a recording backend in place
// of the GPU runtime, and its log lines captured.
#pragma once

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "../plugin_test_support.h"
#include "shim.h"

namespace weft::plugin::testing {

// What the recording backend saw, in order.
struct BackendEvents {
  std::mutex mutex;
  std::vector<std::string> events;
  std::string fail_load;  // an algorithm name whose load fails
  // Calls of at least this count are refused by the runtime's own check (its plan does not fit).
  std::size_t refuse_count_from = std::numeric_limits<std::size_t>::max();
  std::atomic<int> plans{0};  // calls the runtime was asked to plan
  std::string host;           // the host id the last side was created with
  void set_host(const std::string& h) {
    std::lock_guard lock(mutex);
    host = h;
  }
  void add(std::string event) {
    std::lock_guard lock(mutex);
    events.push_back(std::move(event));
  }
  std::vector<std::string> snapshot() {
    std::lock_guard lock(mutex);
    return events;
  }
  std::size_t count_starting(std::string_view prefix) {
    const auto all = snapshot();
    return static_cast<std::size_t>(std::count_if(
        all.begin(), all.end(), [&](const std::string& e) { return e.rfind(prefix, 0) == 0; }));
  }
};

// Every rank "agrees" with this one: a single-participant view of a multi-rank bootstrap.
class EchoBootstrap final : public gpu::Bootstrap {
 public:
  EchoBootstrap(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  gpu::Status allgather(std::span<std::byte> data, std::size_t bytes_per_rank) override {
    const std::byte* own = data.data() + bytes_per_rank * static_cast<std::size_t>(rank_);
    for (int r = 0; r < size_; ++r) {
      if (r != rank_)
        std::memmove(data.data() + bytes_per_rank * static_cast<std::size_t>(r), own,
                     bytes_per_rank);
    }
    return gpu::Status::success();
  }

 private:
  int rank_;
  int size_;
};

class RecordingSide final : public WeftSide {
 public:
  RecordingSide(std::shared_ptr<BackendEvents> events, int rank)
      : events_(std::move(events)), rank_(rank) {}
  ~RecordingSide() override { events_->add(fmt::format("destroy rank {}", rank_)); }
  gpu::Result<int> load(const ir::Algorithm& algorithm) override {
    events_->add(fmt::format("load {} rank {}", algorithm.name, rank_));
    if (algorithm.name == events_->fail_load) {
      return gpu::Status::error(gpu::ErrorCode::CudaError, "out of memory (test)");
    }
    return next_handle_++;
  }
  gpu::Result<gpu::PlannedCall> plan(int handle, const gpu::CallShape& call) const override {
    ++events_->plans;
    if (call.count >= events_->refuse_count_from) {
      return gpu::Status::error(
          gpu::ErrorCode::InvalidArgument,
          fmt::format("handle {}: the call's plan does not fit (test)", handle));
    }
    gpu::PlannedCall planned;
    planned.handle = gpu::AlgorithmHandle{handle};
    planned.shape = call;
    return planned;
  }
  gpu::Status run(const gpu::PlannedCall& planned, const CollectiveCall& call,
                  cudaStream_t stream) override {
    if (planned.shape.collective != call.collective || planned.shape.count != call.count) {
      return gpu::Status::error(gpu::ErrorCode::InternalError,
                                "run with the plan of another call (test)");
    }
    events_->add(fmt::format("run handle {} rank {} {} count {} send {} recv {} stream {}",
                             planned.handle.id, rank_, ir::to_string(call.collective), call.count,
                             fmt::ptr(call.sendbuf), fmt::ptr(call.recvbuf), fmt::ptr(stream)));
    return gpu::Status::success();
  }
  gpu::Status async_error() const override { return gpu::Status::success(); }

 private:
  std::shared_ptr<BackendEvents> events_;
  int rank_;
  int next_handle_ = 100;
};

class RecordingBackend final : public WeftBackend {
 public:
  explicit RecordingBackend(std::shared_ptr<BackendEvents> events) : events_(std::move(events)) {}
  gpu::Result<int> current_device() override { return 0; }
  gpu::Result<std::shared_ptr<gpu::Bootstrap>> nccl_bootstrap(ncclComm_t, int rank, int nranks, int,
                                                              const NcclFunctions&) override {
    events_->add(fmt::format("nccl bootstrap rank {}/{}", rank, nranks));
    return std::shared_ptr<gpu::Bootstrap>(std::make_shared<EchoBootstrap>(rank, nranks));
  }
  gpu::Result<std::unique_ptr<WeftSide>> create(std::shared_ptr<gpu::Bootstrap>, int nranks,
                                                int rank, int device,
                                                const std::string& host) override {
    events_->add(fmt::format("create rank {}/{} device {}", rank, nranks, device));
    events_->set_host(host);
    return std::unique_ptr<WeftSide>(std::make_unique<RecordingSide>(events_, rank));
  }

 private:
  std::shared_ptr<BackendEvents> events_;
};

// The stand-in's recording, read through the functions it exports.
class RecordingNccl {
 public:
  RecordingNccl() {
    handle_ = dlopen(WEFT_RECORDING_NCCL, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(handle_ != nullptr);
    log_ = reinterpret_cast<LogFunction>(dlsym(handle_, "weft_recording_nccl_log"));
    clear_ = reinterpret_cast<void (*)()>(dlsym(handle_, "weft_recording_nccl_clear"));
    REQUIRE(log_ != nullptr);
    REQUIRE(clear_ != nullptr);
    clear_();
  }
  ~RecordingNccl() { dlclose(handle_); }
  RecordingNccl(const RecordingNccl&) = delete;
  RecordingNccl& operator=(const RecordingNccl&) = delete;

  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    const std::string text = read_recording(log_);
    std::size_t start = 0;
    while (start < text.size()) {
      const auto end = text.find('\n', start);
      out.push_back(text.substr(start, end - start));
      start = end + 1;
    }
    return out;
  }
  void clear() { clear_(); }

 private:
  void* handle_ = nullptr;
  LogFunction log_ = nullptr;
  void (*clear_)() = nullptr;
};

inline std::string hex(const void* pointer) {
  return fmt::format("{:x}", reinterpret_cast<std::uintptr_t>(pointer));
}

// A Shim with its log captured.
struct ShimUnderTest {
  std::shared_ptr<BackendEvents> backend = std::make_shared<BackendEvents>();
  std::mutex log_mutex;
  std::vector<std::string> log;
  std::unique_ptr<Shim> shim;

  explicit ShimUnderTest(ShimConfig config, std::string nccl_library = WEFT_RECORDING_NCCL) {
    config.debug = LogLevel::Trace;
    NcclLibrary nccl;
    if (!config.standalone) nccl = resolve_nccl(nccl_library);
    void* library = nccl.handle;
    shim = std::make_unique<Shim>(std::move(config), std::move(nccl),
                                  std::make_unique<RecordingBackend>(backend),
                                  [this](std::string_view line) {
                                    std::lock_guard lock(log_mutex);
                                    log.emplace_back(line);
                                  });
    // At this log level the shim asks NCCL its version for the banner; the tests look at what
    // it forwards for the application, so the recording starts after that.
    if (library) {
      if (void* clear = dlsym(library, "weft_recording_nccl_clear")) {
        reinterpret_cast<void (*)()>(clear)();
      }
    }
  }
  bool logged(std::string_view needle) {
    std::lock_guard lock(log_mutex);
    return std::any_of(log.begin(), log.end(), [&](const std::string& line) {
      return line.find(needle) != std::string::npos;
    });
  }
  std::string all_log() {
    std::lock_guard lock(log_mutex);
    std::string text;
    for (const auto& line : log) text += line + "\n";
    return text;
  }
};

// The calls nccl_api.cpp makes, for a Shim that is not the process's.
inline ncclResult_t all_reduce(Shim& shim, const void* send, void* recv, std::size_t count,
                               ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream) {
  CollectiveCall call;
  call.collective = ir::Collective::AllReduce;
  call.sendbuf = send;
  call.recvbuf = recv;
  call.count = count;
  call.nccl_datatype = type;
  call.nccl_op = op;
  return shim.collective("ncclAllReduce", call, comm, stream, [=](const NcclFunctions& nccl) {
    return nccl.AllReduce(send, recv, count, type, op, comm, stream);
  });
}

inline ncclResult_t all_gather(Shim& shim, const void* send, void* recv, std::size_t count,
                               ncclDataType_t type, ncclComm_t comm, cudaStream_t stream) {
  CollectiveCall call;
  call.collective = ir::Collective::AllGather;
  call.sendbuf = send;
  call.recvbuf = recv;
  call.count = count;
  call.nccl_datatype = type;
  return shim.collective("ncclAllGather", call, comm, stream, [=](const NcclFunctions& nccl) {
    return nccl.AllGather(send, recv, count, type, comm, stream);
  });
}

inline std::string data_xml(const std::string& name) {
  return std::string(WEFT_TEST_DATA_DIR) + "/xml/" + name;
}

}  // namespace weft::plugin::testing
