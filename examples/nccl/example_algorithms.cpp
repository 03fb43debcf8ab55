// Writes the algorithms the NCCL example runs on Weft, for a given rank count: a ring
// allreduce, a ring allgather and a direct alltoall (for one rank: copies), in MSCCL's XML. Every
// file is validated and run on the CPU reference executor (several tilings, FIFO depth 2) before it
// is written, so a file this program writes is one the shim will load.
//
//   weft-example-algorithms OUT_DIR 2 4 8
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "weft/cpu/cpu_executor.h"
#include "weft/ir/collective_spec.h"
#include "weft/ir/ir.h"
#include "weft/ir/validate.h"
#include "weft/ir/xml.h"

namespace {

using weft::ir::Algorithm;
using weft::ir::BufferKind;
using weft::ir::Collective;
using weft::ir::Step;
using weft::ir::StepType;
using weft::ir::Threadblock;

int mod(int value, int n) {
  return ((value % n) + n) % n;
}

Step step(StepType type, BufferKind src, int srcoff, BufferKind dst, int dstoff) {
  Step s;
  s.type = type;
  s.srcbuf = src;
  s.srcoff = srcoff;
  s.dstbuf = dst;
  s.dstoff = dstoff;
  s.count = 1;
  return s;
}

Algorithm header(std::string name, Collective collective, std::string collective_name, int n) {
  Algorithm algo;
  algo.name = std::move(name);
  algo.collective = collective;
  algo.collective_name = std::move(collective_name);
  algo.protocol = weft::ir::Protocol::Simple;
  algo.nchannels = 1;
  algo.nchunksperloop = n;
  algo.ngpus = n;
  algo.inplace = false;  // in-place calls fall back to NCCL: the example shows both paths
  algo.outofplace = true;
  return algo;
}

// Reduce-scatter around the ring (each rank ends owning chunk r+1 reduced), then allgather of
// the owned chunks; one threadblock per rank, every step one chunk.
Algorithm ring_allreduce(int n) {
  Algorithm algo = header(fmt::format("weft_example_ring_allreduce_{}", n), Collective::AllReduce,
                          "allreduce", n);
  for (int r = 0; r < n; ++r) {
    weft::ir::Gpu gpu;
    gpu.id = r;
    gpu.input_chunks = n;
    gpu.output_chunks = n;
    Threadblock tb;
    tb.send = mod(r + 1, n);
    tb.recv = mod(r - 1, n);
    tb.steps.push_back(step(StepType::Send, BufferKind::Input, r, BufferKind::Output, r));
    for (int k = 1; k <= n - 2; ++k) {
      tb.steps.push_back(
          step(StepType::RecvReduceSend, BufferKind::Input, mod(r - k, n), BufferKind::None, -1));
    }
    const int owned = mod(r + 1, n);
    tb.steps.push_back(
        step(StepType::RecvReduceCopySend, BufferKind::Input, owned, BufferKind::Output, owned));
    for (int j = 1; j <= n - 2; ++j) {
      const int chunk = mod(r + 1 - j, n);
      tb.steps.push_back(
          step(StepType::RecvCopySend, BufferKind::None, -1, BufferKind::Output, chunk));
    }
    tb.steps.push_back(
        step(StepType::Recv, BufferKind::None, -1, BufferKind::Output, mod(r + 2, n)));
    gpu.threadblocks.push_back(std::move(tb));
    algo.gpus.push_back(std::move(gpu));
  }
  return algo;
}

// Each rank sends its block to the next, forwards what it receives, and copies its own block.
Algorithm ring_allgather(int n) {
  Algorithm algo = header(fmt::format("weft_example_ring_allgather_{}", n), Collective::AllGather,
                          "allgather", n);
  for (int r = 0; r < n; ++r) {
    weft::ir::Gpu gpu;
    gpu.id = r;
    gpu.input_chunks = 1;
    gpu.output_chunks = n;
    Threadblock tb;
    tb.send = mod(r + 1, n);
    tb.recv = mod(r - 1, n);
    tb.steps.push_back(step(StepType::Send, BufferKind::Input, 0, BufferKind::Output, r));
    for (int j = 1; j <= n - 2; ++j) {
      tb.steps.push_back(
          step(StepType::RecvCopySend, BufferKind::None, -1, BufferKind::Output, mod(r - j, n)));
    }
    tb.steps.push_back(
        step(StepType::Recv, BufferKind::None, -1, BufferKind::Output, mod(r + 1, n)));
    tb.steps.push_back(step(StepType::Copy, BufferKind::Input, 0, BufferKind::Output, r));
    gpu.threadblocks.push_back(std::move(tb));
    algo.gpus.push_back(std::move(gpu));
  }
  return algo;
}

// One threadblock per peer: send the peer's block, receive the peer's block for us.
Algorithm direct_alltoall(int n) {
  Algorithm algo = header(fmt::format("weft_example_direct_alltoall_{}", n), Collective::AllToAll,
                          "alltoall", n);
  for (int r = 0; r < n; ++r) {
    weft::ir::Gpu gpu;
    gpu.id = r;
    gpu.input_chunks = n;
    gpu.output_chunks = n;
    for (int k = 1; k < n; ++k) {
      const int peer = mod(r + k, n);
      Threadblock tb;
      tb.id = k - 1;
      tb.send = peer;
      tb.recv = peer;
      tb.steps.push_back(step(StepType::Send, BufferKind::Input, peer, BufferKind::Output, r));
      tb.steps.push_back(step(StepType::Recv, BufferKind::None, -1, BufferKind::Output, peer));
      if (k == 1)
        tb.steps.push_back(step(StepType::Copy, BufferKind::Input, r, BufferKind::Output, r));
      gpu.threadblocks.push_back(std::move(tb));
    }
    algo.gpus.push_back(std::move(gpu));
  }
  return algo;
}

// One rank: the collective is a copy of the input into the output. Lets a one-rank NCCL job
// (NCCL beside the shim on one GPU) show the whole Weft path: bootstrap through NCCL, loading,
// selection and a kernel launch.
Algorithm single_rank_copy(Collective collective, std::string collective_name) {
  Algorithm algo = header(fmt::format("weft_example_copy_{}_1", collective_name), collective,
                          collective_name, 1);
  weft::ir::Gpu gpu;
  gpu.input_chunks = 1;
  gpu.output_chunks = 1;
  Threadblock tb;
  tb.steps.push_back(step(StepType::Copy, BufferKind::Input, 0, BufferKind::Output, 0));
  gpu.threadblocks.push_back(std::move(tb));
  algo.gpus.push_back(std::move(gpu));
  return algo;
}

std::vector<Algorithm> algorithms_for(int n) {
  if (n == 1) {
    return {single_rank_copy(Collective::AllReduce, "allreduce"),
            single_rank_copy(Collective::AllGather, "allgather"),
            single_rank_copy(Collective::AllToAll, "alltoall")};
  }
  return {ring_allreduce(n), ring_allgather(n), direct_alltoall(n)};
}

// Validation, then the CPU reference executor with tiles much smaller than chunks, FIFO depth 2
// and several interleavings. Returns an empty string when the algorithm passes.
std::string check(const Algorithm& algo) {
  const auto diagnostics = weft::ir::validate(algo, weft::ir::weft_limits());
  if (diagnostics.has_errors()) return diagnostics.str();
  const weft::cpu::Executor executor(algo, weft::standard_spec(algo, 0));
  for (std::uint64_t seed : {1, 2, 3}) {
    weft::cpu::RunOptions options;
    options.seed = seed;
    options.chunk_elements = 37;
    options.tile_elements = 8;
    options.fifo_depth = 2;
    const auto result = executor.run(options);
    if (result.outcome != weft::cpu::Outcome::Pass) {
      return fmt::format("{} (seed {}): {}", weft::cpu::to_string(result.outcome), seed,
                         result.message);
    }
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: %s OUT_DIR RANKS...\n  writes ring allreduce, ring allgather and "
                 "direct alltoall algorithms for each rank count (1..64; one rank: "
                 "copies)\n",
                 argv[0]);
    return 2;
  }
  const std::filesystem::path out = argv[1];
  std::error_code error;
  std::filesystem::create_directories(out, error);
  if (error) {
    std::fprintf(stderr, "%s: %s\n", out.c_str(), error.message().c_str());
    return 1;
  }
  for (int k = 2; k < argc; ++k) {
    char* end = nullptr;
    const long n = std::strtol(argv[k], &end, 10);
    if (end == argv[k] || *end != '\0' || n < 1 || n > 64) {
      std::fprintf(stderr, "rank count '%s' is not in 1..64\n", argv[k]);
      return 2;
    }
    const int ranks = static_cast<int>(n);
    for (const Algorithm& algo : algorithms_for(ranks)) {
      if (const std::string problem = check(algo); !problem.empty()) {
        std::fprintf(stderr, "%s failed its check: %s\n", algo.name.c_str(), problem.c_str());
        return 1;
      }
      const std::string path = (out / (algo.name + ".xml")).string();
      std::string write_error;
      if (!weft::ir::write_xml_file(algo, path, &write_error)) {
        std::fprintf(stderr, "%s\n", write_error.c_str());
        return 1;
      }
      std::printf("%s\n", path.c_str());
    }
  }
  return 0;
}
