#include "weft/cuda/ll128_probe.h"

#include <cuda_runtime_api.h>

#include "cuda_check.h"

namespace weft::gpu {

namespace {

__global__ void ll128_probe_kernel(std::uint64_t* lines, std::uint32_t nlines, std::uint32_t rounds,
                                   std::uint32_t writers, bool jitter, unsigned long long* counters,
                                   unsigned* writers_done) {
  const unsigned lane = threadIdx.x % 32;
  const unsigned warp = threadIdx.x / 32;
  const unsigned warps = blockDim.x / 32;
  const unsigned group = lane / 8;
  const unsigned part = lane % 8;
  if (blockIdx.x < writers) {
    const unsigned stride = writers * warps * 4;
    for (std::uint32_t round = 1; round <= rounds; ++round) {
      for (std::uint32_t base = (blockIdx.x * warps + warp) * 4; base < nlines; base += stride) {
        const std::uint32_t line = base + group;
        // Lanes arrive at the store at different times, as after the kernel's divergent word work.
        if (jitter && (lane * 7u + round) % 5u == 0) __nanosleep(32 * (lane % 4));
        const std::uint64_t value = round;
        __syncwarp();
        if (line < nlines) {
          asm volatile(
              "st.volatile.global.v2.u64 [%0], {%1,%2};" ::"l"(lines + line * 16 + part * 2),
              "l"(value), "l"(value)
              : "memory");
        }
      }
    }
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(writers_done, 1u);
    return;
  }
  unsigned long long read = 0, torn = 0;
  const unsigned readers = gridDim.x - writers;
  const unsigned stride = readers * warps * 4;
  // Bounded: readers stop when the writers are done, or after as many passes as they make.
  for (std::uint32_t pass = 0; pass < 4 * rounds; ++pass) {
    if (*static_cast<volatile unsigned*>(writers_done) >= writers) break;
    for (std::uint32_t base = ((blockIdx.x - writers) * warps + warp) * 4; base < nlines;
         base += stride) {
      const std::uint32_t line = base + group;
      if (jitter && (lane * 11u + pass) % 7u == 0) __nanosleep(32 * (lane % 4));
      std::uint64_t v0 = 0, v1 = 0;
      __syncwarp();
      if (line < nlines) {
        asm volatile("ld.volatile.global.v2.u64 {%0,%1}, [%2];"
                     : "=l"(v0), "=l"(v1)
                     : "l"(lines + line * 16 + part * 2)
                     : "memory");
      }
      // The line's flag is lane 7's second word, as in LL128; a line is torn when any of its
      // lanes holds a word that differs from it. Lane 0 of the line counts it.
      const std::uint64_t flag = __shfl_sync(0xffffffffu, v1, static_cast<int>(group * 8 + 7));
      const unsigned differs = __ballot_sync(0xffffffffu, v0 != flag || v1 != flag);
      if (part == 0 && line < nlines) {
        ++read;
        if (((differs >> (group * 8)) & 0xffu) != 0) ++torn;
      }
    }
  }
  atomicAdd(&counters[0], read);
  atomicAdd(&counters[1], torn);
}

}  // namespace

Result<Ll128ProbeResult> probe_ll128(int device, const Ll128ProbeOptions& options) {
  DeviceScope scope(device);
  if (!scope.status().ok()) return scope.status();
  int sms = 0;
  WEFT_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::uint32_t ctas = options.ctas != 0 ? options.ctas : static_cast<std::uint32_t>(sms);
  if (ctas < 2) {
    return Status::error(ErrorCode::InvalidArgument, "the LL128 probe needs at least 2 CTAs");
  }
  const std::uint32_t writers = ctas / 2;
  std::uint64_t* lines = nullptr;
  unsigned long long* counters = nullptr;
  unsigned* done = nullptr;
  const std::size_t bytes = static_cast<std::size_t>(options.lines) * 128;
  WEFT_CUDA_TRY(cudaMalloc(&lines, bytes));
  Status status;
  auto fail = [&](cudaError_t e, const char* what) {
    if (status.ok()) status = cuda_error(e, what);
  };
  if (const cudaError_t e =
          cudaMalloc(&counters, 2 * sizeof(unsigned long long) + sizeof(unsigned));
      e != cudaSuccess) {
    fail(e, "cudaMalloc (probe counters)");
  } else {
    done = reinterpret_cast<unsigned*>(counters + 2);
    cudaMemset(lines, 0, bytes);
    cudaMemset(counters, 0, 2 * sizeof(unsigned long long) + sizeof(unsigned));
    // Every CTA must be resident at once (readers wait for writers): a cooperative launch
    // refuses a grid the device cannot hold instead of leaving part of it waiting.
    void* params[] = {&lines,
                      const_cast<std::uint32_t*>(&options.lines),
                      const_cast<std::uint32_t*>(&options.rounds),
                      const_cast<std::uint32_t*>(&writers),
                      const_cast<bool*>(&options.jitter),
                      &counters,
                      &done};
    if (const cudaError_t e =
            cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&ll128_probe_kernel),
                                        dim3(ctas), dim3(256), params, 0, nullptr);
        e != cudaSuccess) {
      fail(e, "cudaLaunchCooperativeKernel (LL128 probe)");
    } else if (const cudaError_t s = cudaDeviceSynchronize(); s != cudaSuccess) {
      fail(s, "cudaDeviceSynchronize (LL128 probe)");
    }
  }
  unsigned long long host[2] = {0, 0};
  if (status.ok()) {
    if (const cudaError_t e = cudaMemcpy(host, counters, sizeof(host), cudaMemcpyDeviceToHost);
        e != cudaSuccess) {
      fail(e, "cudaMemcpy (probe counters)");
    }
  }
  cudaFree(lines);
  if (counters != nullptr) cudaFree(counters);
  if (!status.ok()) return status;
  return Ll128ProbeResult{host[0], host[1]};
}

}  // namespace weft::gpu
