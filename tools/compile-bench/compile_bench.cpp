// Compile-time benchmark: builds one library algorithm, compiles it, then verifies it, and prints
// one line with the compile time, the process's peak memory after compiling, the verification
// time and the peak memory after verifying. scripts/bench-compile.sh runs it for a table.
//
//   weft_compile_bench NAME (--ranks N | --nodes A --gpus-per-node B) [--channels C]
//                      [--seeds K] [--repeat R] [--no-verify]
//
// With --repeat R the compile runs R times and the fastest is reported: on a shared machine a
// run of a few milliseconds is easily stretched by being descheduled.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "weft/algorithms/library.h"
#include "weft/compiler/compiler.h"

namespace {

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double peak_megabytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in kilobytes on Linux
}

int usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s NAME (--ranks N | --nodes A --gpus-per-node B) [--channels C] "
               "[--seeds K] [--repeat R] [--no-verify]\n",
               argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace weft;
  if (argc < 2) return usage(argv[0]);
  dsl::AlgorithmParams params;
  int seeds = 1;
  int repeat = 1;
  bool verify = true;
  for (int k = 2; k < argc; ++k) {
    const std::string arg = argv[k];
    auto value = [&]() -> int {
      if (k + 1 >= argc) std::exit(usage(argv[0]));
      return std::atoi(argv[++k]);
    };
    if (arg == "--ranks")
      params.ranks = value();
    else if (arg == "--nodes")
      params.nodes = value();
    else if (arg == "--gpus-per-node")
      params.gpus_per_node = value();
    else if (arg == "--channels")
      params.channels = value();
    else if (arg == "--seeds")
      seeds = value();
    else if (arg == "--repeat")
      repeat = std::max(1, value());
    else if (arg == "--no-verify")
      verify = false;
    else
      return usage(argv[0]);
  }
  if (params.nodes > 0) params.ranks = params.nodes * params.gpus_per_node;

  dsl::Registry registry;
  algorithms::register_library(registry);
  const dsl::AlgorithmInfo* info = registry.find(argv[1]);
  if (!info) {
    std::fprintf(stderr, "unknown algorithm %s\n", argv[1]);
    return 2;
  }
  if (const auto why = dsl::check_shape(*info, params)) {
    std::fprintf(stderr, "%s\n", why->c_str());
    return 2;
  }
  const double baseline = peak_megabytes();
  double compile_seconds = 0;
  double compile_cpu = 0;
  double trace_seconds = 0;
  std::optional<dsl::Program> program;
  compiler::CompileResult result;
  for (int run = 0; run < repeat; ++run) {
    program.reset();
    result = {};
    const double cpu_start = cpu_seconds();
    const auto start = std::chrono::steady_clock::now();
    program.emplace(info->build(params));
    const double traced =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result = compiler::compile_unverified(*program);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double cpu = cpu_seconds() - cpu_start;
    if (run == 0 || wall < compile_seconds) {
      compile_seconds = wall;
      trace_seconds = traced;
    }
    if (run == 0 || cpu < compile_cpu) compile_cpu = cpu;
  }
  const double compile_peak = peak_megabytes();
  if (!result.algorithm) {
    std::fprintf(stderr, "%s", result.error_text().c_str());
    return 1;
  }
  std::string verdict = "skipped";
  if (verify) {
    // The proof `weftc compile` runs (compiler::compile_proof).
    compiler::verify(*program, result, compiler::compile_proof(seeds));
    verdict = result.verified ? "passed" : "FAILED";
  }
  std::printf(
      "%s ranks=%d steps=%d threadblocks=%d channels=%d compile_s=%.4f compile_cpu_s=%.4f "
      "compile_peak_mb=%.1f baseline_mb=%.1f verify_s=%.3f verify_peak_mb=%.1f verify=%s\n",
      argv[1], params.ranks, result.stats.steps, result.stats.threadblocks, result.stats.channels,
      compile_seconds, compile_cpu, compile_peak, baseline, result.verify_seconds, peak_megabytes(),
      verdict.c_str());
  if (std::getenv("WEFT_BENCH_PASSES")) {
    std::printf("  trace %.4f", trace_seconds);
    for (const auto& [pass, seconds] : result.pass_seconds)
      std::printf("  %s %.4f", pass.c_str(), seconds);
    std::printf("\n");
  }
  return verify && !result.verified ? 1 : 0;
}
