// The ping-pong on a GPU: thread 0 of two CTAs (of one grid, or of two grids on two streams)
// pass a counter back and forth through device memory, with the PTX the interpreter's own
// handshakes use (primitives_cuda.cuh): relaxed GPU-scope polls and stores, and for `ordered`
// an acq_rel fence before each store and after each poll.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "pingpong.h"

namespace weft::latency {
namespace {

struct Flags {
  // Each counter on its own 128-byte line, so that the two sides never share one.
  unsigned long long ping;
  unsigned long long pad0[15];
  unsigned long long pong;
  unsigned long long pad1[15];
  unsigned long long elapsed_ns;
  unsigned long long timed_out;
};

__device__ __forceinline__ unsigned long long poll(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void post(unsigned long long* p, unsigned long long v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ void fence() {
  asm volatile("fence.acq_rel.gpu;" ::: "memory");
}

__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Waits for *p to reach `value`; false (and the flag raised) after `timeout_ns`.
__device__ bool wait_for(Flags* f, const unsigned long long* p, unsigned long long value,
                         bool ordered, unsigned long long deadline) {
  for (unsigned spins = 0; poll(p) < value; ++spins) {
    if (spins % 1024 == 1023 && (now_ns() > deadline || poll(&f->timed_out) != 0)) {
      post(&f->timed_out, 1);
      return false;
    }
  }
  if (ordered) fence();
  return true;
}

// role 0 pings and times; role 1 answers. In one grid the role is the CTA's index.
__global__ void pingpong_kernel(Flags* f, int role, unsigned long long n, int ordered,
                                unsigned long long timeout_ns) {
  if (threadIdx.x != 0) return;
  if (role < 0) role = static_cast<int>(blockIdx.x);
  const unsigned long long start = now_ns();
  const unsigned long long deadline = start + timeout_ns;
  for (unsigned long long i = 1; i <= n; ++i) {
    if (role == 0) {
      if (ordered) fence();
      post(&f->ping, i);
      if (!wait_for(f, &f->pong, i, ordered, deadline)) return;
    } else {
      if (!wait_for(f, &f->ping, i, ordered, deadline)) return;
      if (ordered) fence();
      post(&f->pong, i);
    }
  }
  if (role == 0) f->elapsed_ns = now_ns() - start;
}

gpu::Status cuda(cudaError_t e, const char* call) {
  if (e == cudaSuccess) return {};
  // No fmt here: nvcc compiles this file, and the message is short.
  return gpu::Status::error(gpu::ErrorCode::CudaError,
                            std::string(call) + ": " + cudaGetErrorString(e));
}

#define LATENCY_CUDA(call)                                  \
  do {                                                      \
    if (auto s_ = cuda((call), #call); !s_.ok()) return s_; \
  } while (0)

struct Resources {
  Flags* flags = nullptr;
  cudaStream_t streams[2] = {nullptr, nullptr};
  ~Resources() {
    for (cudaStream_t s : streams) {
      if (s != nullptr) cudaStreamDestroy(s);
    }
    if (flags != nullptr) cudaFree(flags);
  }
};

}  // namespace

gpu::Result<double> pingpong_cuda(int device, PingPongPlace place, const PingPongOptions& options) {
  if (options.round_trips < 1) {
    return gpu::Status::error(gpu::ErrorCode::InvalidArgument, std::to_string(options.round_trips) +
                                                                   " round trips: need at least 1");
  }
  LATENCY_CUDA(cudaSetDevice(device));
  Resources r;
  LATENCY_CUDA(cudaMalloc(&r.flags, sizeof(Flags)));
  for (cudaStream_t& s : r.streams) {
    LATENCY_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  }
  const auto n = static_cast<unsigned long long>(options.round_trips);
  const auto timeout_ns = static_cast<unsigned long long>(options.timeout_s * 1e9);
  const int ordered = options.ordered ? 1 : 0;
  LATENCY_CUDA(cudaMemset(r.flags, 0, sizeof(Flags)));
  if (place == PingPongPlace::OneGrid) {
    pingpong_kernel<<<2, 32, 0, r.streams[0]>>>(r.flags, -1, n, ordered, timeout_ns);
  } else {
    // The answering grid first, so that it is waiting when the pinging one starts.
    pingpong_kernel<<<1, 32, 0, r.streams[1]>>>(r.flags, 1, n, ordered, timeout_ns);
    pingpong_kernel<<<1, 32, 0, r.streams[0]>>>(r.flags, 0, n, ordered, timeout_ns);
  }
  LATENCY_CUDA(cudaGetLastError());
  LATENCY_CUDA(cudaDeviceSynchronize());
  Flags result{};
  LATENCY_CUDA(cudaMemcpy(&result, r.flags, sizeof(Flags), cudaMemcpyDeviceToHost));
  if (result.timed_out != 0) {
    return gpu::Status::error(
        gpu::ErrorCode::Timeout,
        std::string("ping-pong between ") +
            (place == PingPongPlace::OneGrid ? "two CTAs of one grid" : "two grids") +
            " on device " + std::to_string(device) + ": no answer within " +
            std::to_string(options.timeout_s) + " s (were both resident?)");
  }
  return static_cast<double>(result.elapsed_ns) / 1e3 / (2.0 * static_cast<double>(n));
}

}  // namespace weft::latency
