#include "device_call.h"

#include <algorithm>

#include <fmt/format.h>

namespace weft::perf {

gpu::Result<std::unique_ptr<DeviceCall>> DeviceCall::create(PerfDevice& device,
                                                            const gpu::Communicator& comm,
                                                            const ir::Algorithm& algo,
                                                            std::size_t count, DataType dtype,
                                                            bool in_place) {
  if (device.kind() != comm.device_kind()) {
    return gpu::Status::error(
        gpu::ErrorCode::InvalidArgument,
        fmt::format("buffers on a {} device for a communicator on a {} device",
                    gpu::to_string(device.kind()), gpu::to_string(comm.device_kind())));
  }
  std::unique_ptr<DeviceCall> call(new DeviceCall(device));
  call->ranks_.assign(comm.local_ranks().begin(), comm.local_ranks().end());
  call->count_ = count;
  call->dtype_ = dtype;
  call->in_place_ = in_place;
  for (int rank : call->ranks_) {
    const CallLayout layout = call_layout(algo, rank, count, size_of(dtype), in_place);
    auto recv = device.allocate(std::max<std::size_t>(layout.recv_bytes, 16));
    if (!recv.ok()) return recv.status();
    call->recv_.push_back(recv.value());
    void* send = nullptr;
    if (!in_place) {
      auto allocated = device.allocate(std::max<std::size_t>(layout.send_bytes, 16));
      if (!allocated.ok()) return allocated.status();
      send = allocated.value();
      call->send_.push_back(send);
    }
    gpu::RankBuffers buffers;
    if (in_place) {
      buffers.sendbuf = static_cast<char*>(recv.value()) + layout.send_offset;
      buffers.recvbuf = static_cast<char*>(recv.value()) + layout.recv_offset;
    } else {
      buffers.sendbuf = send;
      buffers.recvbuf = recv.value();
    }
    call->calls_.push_back(buffers);
    call->layouts_.push_back(layout);
  }
  return call;
}

DeviceCall::~DeviceCall() {
  for (void* p : send_) device_.release(p);
  for (void* p : recv_) device_.release(p);
}

gpu::Status DeviceCall::upload(const Reference& reference) const {
  for (std::size_t k = 0; k < ranks_.size(); ++k) {
    const cpu::RankBuffers& initial = reference.initial.at(static_cast<std::size_t>(ranks_[k]));
    const auto& image = device_image(initial, in_place_);
    if (image.size() != layouts_[k].recv_bytes) {
      return gpu::Status::error(gpu::ErrorCode::InternalError,
                                fmt::format("rank {}: reference buffer of {} bytes, device buffer "
                                            "of {}",
                                            ranks_[k], image.size(), layouts_[k].recv_bytes));
    }
    if (auto s = device_.upload(recv_[k], image); !s.ok()) return s;
    if (!in_place_) {
      const auto& send = send_image(initial);
      const std::size_t bytes = std::min(send.size(), layouts_[k].send_bytes);
      if (auto s = device_.upload(send_[k], std::span(send).first(bytes)); !s.ok()) return s;
    }
  }
  return {};
}

gpu::Status DeviceCall::fill(unsigned char byte) const {
  for (std::size_t k = 0; k < ranks_.size(); ++k) {
    if (auto s = device_.fill(recv_[k], byte, layouts_[k].recv_bytes); !s.ok()) return s;
    if (!in_place_) {
      if (auto s = device_.fill(send_[k], byte, layouts_[k].send_bytes); !s.ok()) return s;
    }
  }
  return {};
}

gpu::Status DeviceCall::run(gpu::Communicator& comm, gpu::AlgorithmHandle handle, ReduceOp op,
                            int root, gpu::StreamHandle stream) const {
  return comm.run(handle, calls_, count_, dtype_, op, root, stream);
}

gpu::Result<std::size_t> DeviceCall::count_wrong(const Reference& reference) const {
  std::size_t wrong = 0;
  std::vector<std::byte> found;
  for (std::size_t k = 0; k < ranks_.size(); ++k) {
    const auto& expected =
        device_image(reference.expected.at(static_cast<std::size_t>(ranks_[k])), in_place_);
    found.resize(layouts_[k].recv_bytes);
    if (auto s = device_.download(found, recv_[k]); !s.ok()) return s;
    wrong += perf::count_wrong(dtype_, expected, found);
  }
  return wrong;
}

}  // namespace weft::perf
