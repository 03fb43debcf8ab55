// A small NCCL application, the thing to run to see the Weft shim work: one rank per process,
// allreduce, allgather and alltoall over a size sweep, every result checked. It knows nothing
// about Weft; run it with LD_PRELOAD=libweft_nccl.so to put Weft under it.
//
//   weft-nccl-example -n 4 [-b 1K] [-e 1M] [-f 4] [-c allreduce,allgather,alltoall] [-i]
//
// Without --rank the program is the launcher: it makes the ncclUniqueId, starts n copies of
// itself (--rank r), waits for them and exits non-zero if any failed or the whole run took
// longer than --timeout seconds. Rank r uses GPU r mod (number of GPUs), so n ranks may share one
// GPU (NCCL itself refuses that; Weft's standalone mode serves it: see docs/nccl.md).
#include <cuda_runtime.h>
#include <nccl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

extern char** environ;

namespace {

struct Options {
  int nranks = 2;
  int rank = -1;  // -1: launcher
  std::string id_hex;
  std::size_t min_bytes = 1024;
  std::size_t max_bytes = 1 << 20;
  std::size_t factor = 4;
  std::vector<std::string> collectives = {"allreduce", "allgather", "alltoall"};
  bool in_place = false;
  int iterations = 2;
  int timeout_s = 300;
};

[[noreturn]] void usage(const char* program, const char* problem) {
  if (problem != nullptr) std::fprintf(stderr, "%s: %s\n", program, problem);
  std::fprintf(stderr,
               "usage: %s [-n RANKS] [-b MIN_BYTES] [-e MAX_BYTES] [-f FACTOR] [-c LIST] [-i] "
               "[-w ITERS] [-t TIMEOUT_S]\n"
               "  -c: comma-separated subset of allreduce,allgather,alltoall\n"
               "  -i: also run each call in place\n"
               "  sizes accept K, M, G suffixes (powers of 1024)\n",
               program);
  std::exit(2);
}

std::size_t parse_size(const char* program, const char* text) {
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  std::size_t multiplier = 1;
  if (end != nullptr && *end != '\0') {
    switch (*end) {
      case 'K':
      case 'k':
        multiplier = 1ull << 10;
        break;
      case 'M':
      case 'm':
        multiplier = 1ull << 20;
        break;
      case 'G':
      case 'g':
        multiplier = 1ull << 30;
        break;
      default:
        usage(program, "bad size");
    }
    if (end[1] != '\0') usage(program, "bad size");
  }
  if (end == text) usage(program, "bad size");
  return static_cast<std::size_t>(value) * multiplier;
}

Options parse(int argc, char** argv) {
  Options options;
  for (int k = 1; k < argc; ++k) {
    const std::string_view arg = argv[k];
    auto value = [&]() -> const char* {
      if (k + 1 >= argc) usage(argv[0], "missing value");
      return argv[++k];
    };
    if (arg == "-n")
      options.nranks = std::atoi(value());
    else if (arg == "--rank")
      options.rank = std::atoi(value());
    else if (arg == "--id")
      options.id_hex = value();
    else if (arg == "-b")
      options.min_bytes = parse_size(argv[0], value());
    else if (arg == "-e")
      options.max_bytes = parse_size(argv[0], value());
    else if (arg == "-f")
      options.factor = parse_size(argv[0], value());
    else if (arg == "-w")
      options.iterations = std::atoi(value());
    else if (arg == "-t")
      options.timeout_s = std::atoi(value());
    else if (arg == "-i")
      options.in_place = true;
    else if (arg == "-c") {
      options.collectives.clear();
      std::string list = value();
      for (std::size_t start = 0; start <= list.size();) {
        const auto comma = list.find(',', start);
        const std::string name = list.substr(start, comma - start);
        if (name != "allreduce" && name != "allgather" && name != "alltoall") {
          usage(argv[0], "unknown collective");
        }
        options.collectives.push_back(name);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else
      usage(argv[0], ("unknown argument " + std::string(arg)).c_str());
  }
  if (options.nranks < 1 || options.factor < 2 || options.min_bytes == 0 ||
      options.max_bytes < options.min_bytes || options.iterations < 1) {
    usage(argv[0], "bad option values");
  }
  return options;
}

std::string to_hex(const ncclUniqueId& id) {
  static const char digits[] = "0123456789abcdef";
  std::string text;
  for (char c : id.internal) {
    const auto byte = static_cast<unsigned char>(c);
    text += digits[byte >> 4];
    text += digits[byte & 15];
  }
  return text;
}

bool from_hex(const std::string& text, ncclUniqueId& id) {
  if (text.size() != 2 * sizeof(id.internal)) return false;
  for (std::size_t k = 0; k < sizeof(id.internal); ++k) {
    const unsigned value = static_cast<unsigned>(std::stoul(text.substr(2 * k, 2), nullptr, 16));
    id.internal[k] = static_cast<char>(value);
  }
  return true;
}

// ---- Launcher -------------------------------------------------------------------------------

int launch(const Options& options, int argc, char** argv) {
  ncclUniqueId id;
  if (const ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess) {
    std::fprintf(stderr, "ncclGetUniqueId failed: %s\n", ncclGetErrorString(r));
    return 1;
  }
  const std::string id_hex = to_hex(id);
  std::vector<pid_t> children;
  for (int rank = 0; rank < options.nranks; ++rank) {
    std::vector<std::string> args(argv, argv + argc);
    args.push_back("--rank");
    args.push_back(std::to_string(rank));
    args.push_back("--id");
    args.push_back(id_hex);
    std::vector<char*> raw;
    for (std::string& arg : args) raw.push_back(arg.data());
    raw.push_back(nullptr);
    pid_t pid = 0;
    // The same executable, started fresh: a CUDA context does not survive fork().
    if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, raw.data(), environ) != 0) {
      std::perror("posix_spawn");
      for (pid_t child : children) kill(child, SIGKILL);
      return 1;
    }
    children.push_back(pid);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(options.timeout_s);
  int failures = 0;
  std::size_t remaining = children.size();
  while (remaining > 0) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      --remaining;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
      continue;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "timeout: the ranks did not finish within %d s; killing them\n",
                   options.timeout_s);
      for (pid_t child : children) kill(child, SIGKILL);
      while (waitpid(-1, &status, 0) > 0) {
      }
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (failures > 0) {
    std::fprintf(stderr, "%d of %d ranks failed\n", failures, options.nranks);
    return 1;
  }
  std::printf("# all %d ranks passed\n", options.nranks);
  return 0;
}

// ---- One rank -------------------------------------------------------------------------------

#define CHECK_CUDA(call)                                                                     \
  do {                                                                                       \
    const cudaError_t e_ = (call);                                                           \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "rank %d: %s failed: %s\n", rank, #call, cudaGetErrorString(e_)); \
      return 1;                                                                              \
    }                                                                                        \
  } while (0)

#define CHECK_NCCL(call)                                                                         \
  do {                                                                                           \
    const ncclResult_t r_ = (call);                                                              \
    if (r_ != ncclSuccess) {                                                                     \
      std::fprintf(stderr, "rank %d: %s failed: %s (%s)\n", rank, #call, ncclGetErrorString(r_), \
                   ncclGetLastError(comm));                                                      \
      return 1;                                                                                  \
    }                                                                                            \
  } while (0)

// Small integers, so that float sums are exact whatever the reduction order.
float input_value(int rank, std::size_t index) {
  return static_cast<float>((rank * 7 + static_cast<int>(index % 101)) % 53);
}

int run_rank(const Options& options) {
  const int rank = options.rank;
  const int n = options.nranks;
  ncclComm_t comm = nullptr;
  ncclUniqueId id;
  if (!from_hex(options.id_hex, id)) {
    std::fprintf(stderr, "rank %d: malformed --id\n", rank);
    return 1;
  }
  int devices = 0;
  CHECK_CUDA(cudaGetDeviceCount(&devices));
  CHECK_CUDA(cudaSetDevice(rank % devices));
  CHECK_NCCL(ncclCommInitRank(&comm, n, id, rank));
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreate(&stream));

  const std::size_t max_elements = options.max_bytes / sizeof(float);
  float* send = nullptr;
  float* recv = nullptr;
  CHECK_CUDA(cudaMalloc(&send, max_elements * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&recv, max_elements * sizeof(float)));
  std::vector<float> host(max_elements);
  std::vector<float> expected(max_elements);
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));

  if (rank == 0) {
    std::printf("# %d ranks, %d GPU(s)\n# %10s %12s %-10s %-12s %10s %s\n", n, devices, "bytes",
                "count", "collective", "placement", "time(us)", "result");
  }
  int wrong_total = 0;
  for (const std::string& coll : options.collectives) {
    for (std::size_t bytes = options.min_bytes; bytes <= options.max_bytes;
         bytes *= options.factor) {
      // `bytes` is the total buffer (nccl-tests' convention); count is NCCL's per-call count.
      const std::size_t total = bytes / sizeof(float);
      const std::size_t count = coll == "allreduce" ? total : total / static_cast<std::size_t>(n);
      if (count == 0) continue;
      for (int placement = 0; placement < (options.in_place ? 2 : 1); ++placement) {
        const bool in_place = placement == 1;
        // Inputs: allreduce and alltoall send `total` elements, allgather `count`.
        const std::size_t send_elements = coll == "allgather" ? count : total;
        for (std::size_t k = 0; k < send_elements; ++k) host[k] = input_value(rank, k);
        float* send_ptr = send;
        if (in_place)
          send_ptr = coll == "allgather" ? recv + static_cast<std::size_t>(rank) * count : recv;
        CHECK_CUDA(cudaMemset(recv, 0xff, total * sizeof(float)));  // NaN: unwritten shows
        CHECK_CUDA(cudaMemcpy(send_ptr, host.data(), send_elements * sizeof(float),
                              cudaMemcpyHostToDevice));
        if (coll == "alltoall" && in_place) continue;  // NCCL has no in-place alltoall
        // Expected output.
        for (std::size_t k = 0; k < total; ++k) {
          if (coll == "allreduce") {
            float sum = 0;
            for (int r = 0; r < n; ++r) sum += input_value(r, k);
            expected[k] = sum;
          } else if (coll == "allgather") {
            expected[k] = input_value(static_cast<int>(k / count), k % count);
          } else {  // alltoall: block j of the output is block `rank` of rank j's input
            const std::size_t block = k / count;
            expected[k] = input_value(static_cast<int>(block),
                                      static_cast<std::size_t>(rank) * count + k % count);
          }
        }
        float elapsed_ms = 0;
        for (int iteration = 0; iteration < options.iterations; ++iteration) {
          if (iteration > 0 && in_place) {
            // The previous iteration overwrote the input in place: restore it.
            CHECK_CUDA(cudaMemcpy(send_ptr, host.data(), send_elements * sizeof(float),
                                  cudaMemcpyHostToDevice));
          }
          CHECK_CUDA(cudaEventRecord(start, stream));
          if (coll == "allreduce") {
            CHECK_NCCL(ncclAllReduce(send_ptr, recv, count, ncclFloat, ncclSum, comm, stream));
          } else if (coll == "allgather") {
            CHECK_NCCL(ncclAllGather(send_ptr, recv, count, ncclFloat, comm, stream));
          } else {
            CHECK_NCCL(ncclAlltoAll(send_ptr, recv, count, ncclFloat, comm, stream));
          }
          CHECK_CUDA(cudaEventRecord(stop, stream));
          const cudaError_t sync = cudaStreamSynchronize(stream);
          ncclResult_t async = ncclSuccess;
          ncclCommGetAsyncError(comm, &async);
          if (sync != cudaSuccess || async != ncclSuccess) {
            std::fprintf(stderr, "rank %d: %s of %zu bytes failed: %s / %s (%s)\n", rank,
                         coll.c_str(), bytes, cudaGetErrorString(sync), ncclGetErrorString(async),
                         ncclGetLastError(comm));
            return 1;
          }
          CHECK_CUDA(cudaEventElapsedTime(&elapsed_ms, start, stop));
        }
        CHECK_CUDA(cudaMemcpy(host.data(), recv, total * sizeof(float), cudaMemcpyDeviceToHost));
        std::size_t wrong = 0;
        std::size_t first_wrong = 0;
        for (std::size_t k = 0; k < total; ++k) {
          if (!(host[k] == expected[k])) {
            if (wrong == 0) first_wrong = k;
            ++wrong;
          }
        }
        if (wrong > 0) {
          std::fprintf(stderr,
                       "rank %d: %s %s of %zu bytes: %zu wrong elements, first at %zu: expected "
                       "%g found %g\n",
                       rank, coll.c_str(), in_place ? "in-place" : "out-of-place", bytes, wrong,
                       first_wrong, static_cast<double>(expected[first_wrong]),
                       static_cast<double>(host[first_wrong]));
          ++wrong_total;
        }
        if (rank == 0) {
          std::printf("  %10zu %12zu %-10s %-12s %10.1f %s\n", bytes, count, coll.c_str(),
                      in_place ? "in-place" : "out-of-place",
                      static_cast<double>(elapsed_ms) * 1000.0, wrong == 0 ? "ok" : "WRONG");
          std::fflush(stdout);
        }
      }
    }
  }
  cudaFree(send);
  cudaFree(recv);
  cudaStreamDestroy(stream);
  CHECK_NCCL(ncclCommDestroy(comm));
  return wrong_total == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  if (options.rank < 0) return launch(options, argc, argv);
  if (options.rank >= options.nranks) usage(argv[0], "--rank out of range");
  return run_rank(options);
}
