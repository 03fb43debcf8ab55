// weft-latency: the step-latency benchmark. In one run it prints the floor — what one handshake
// through device memory costs, as a flag ping-pong between two CTAs of one grid and between two
// grids — and beside it Weft's time per step on chains of dependent steps (chain:HOPS, two
// ranks emulated on one device), for every protocol and step variant asked for (the overlap
// step differs from lean in Simple only).
//
//   weft-latency                          # device 0: hops 1, 8, 64; Simple, LL, LL128; full,
//                                         # lean, overlap
//   weft-latency --device host --quick    # host mode: the same logic on CPU threads
//
// A chain's "per step" is its marginal cost: (time of the longest chain − time of the
// shortest) ÷ the hops between them, which leaves out the launch and the call's fixed costs;
// "× floor" divides it by the one-grid relaxed handshake. In host mode the figures are the
// host's (threads time-sliced on a few cores), meaningless as GPU figures: that mode checks the
// benchmark's logic and the chains' results.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "builtin_algorithms.h"
#include "device_call.h"
#include "perf_device.h"
#include "perf_options.h"
#include "pingpong.h"
#include "reference.h"
#include "weft/communicator/communicator.h"
#include "weft/communicator/transport.h"
#include "weft/cpu/cpu_executor.h"
#include "weft/ir/collective_spec.h"
#include "weft/program/options.h"

namespace weft::latency {
namespace {

using gpu::Result;
using gpu::Status;

struct Options {
  bool host = false;
  int device = 0;
  std::vector<int> hops{1, 8, 64};
  std::vector<ir::Protocol> protocols{ir::Protocol::Simple, ir::Protocol::LL, ir::Protocol::LL128};
  std::vector<gpu::StepVariant> variants{gpu::StepVariant::Full, gpu::StepVariant::Lean,
                                         gpu::StepVariant::Overlap};
  std::size_t bytes = 1024;
  int iterations = 50;
  int warmup = 5;
  int graph_launches = 0;
  int round_trips = 10000;
};

std::optional<Options> parse(int argc, char** argv, int& exit_code) {
  Options o;
  CLI::App app{
      "weft-latency: the floor of a step (a flag ping-pong through device memory) beside "
      "Weft's time per step on chains of dependent steps, per protocol and step "
      "variant, in one run."};
  app.set_help_flag("-h,--help", "print this help and exit");
  std::string device = "0";
  std::string hops, protocols, variants, bytes;
  bool quick = false;
  app.add_option("--device", device, "a CUDA device number, or 'host' (CPU threads)");
  app.add_option("--hops", hops, "chain lengths, comma-separated (default 1,8,64)");
  app.add_option("--protocols", protocols, "Simple,LL,LL128 (default all)");
  app.add_option("--variants", variants, "step variants: full,lean,overlap (default all)");
  app.add_option("-b,--bytes", bytes, "bytes each call broadcasts (default 1K)");
  app.add_option("-n,--iterations", o.iterations, "timed calls per figure")
      ->check(CLI::Range(1, 100000));
  app.add_option("-w,--warmup", o.warmup, "calls before timing")->check(CLI::Range(0, 100000));
  app.add_option("-G,--graph-launches", o.graph_launches,
                 "capture the timed calls as a CUDA graph replayed this often (0: no graph)")
      ->check(CLI::Range(0, 100000));
  app.add_option("--round-trips", o.round_trips, "ping-pong round trips per figure")
      ->check(CLI::Range(1, 10000000));
  app.add_flag("--quick", quick, "hops 1 and 8, 5 calls, 500 round trips: a check, not a figure");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    exit_code = app.exit(e);
    return std::nullopt;
  }
  const auto fail = [&](const std::string& message) {
    std::fprintf(stderr, "weft-latency: %s (see --help)\n", message.c_str());
    exit_code = 2;
    return std::nullopt;
  };
  if (device == "host") {
    o.host = true;
  } else {
    try {
      std::size_t used = 0;
      o.device = std::stoi(device, &used);
      if (used != device.size() || o.device < 0) throw std::invalid_argument(device);
    } catch (const std::exception&) {
      return fail(fmt::format("--device '{}': a device number or 'host'", device));
    }
  }
  if (quick) {
    o.hops = {1, 8};
    o.iterations = 5;
    o.warmup = 1;
    o.round_trips = 500;
  }
  const auto split = [](const std::string& text) {
    std::vector<std::string> items;
    std::size_t start = 0;
    while (start <= text.size()) {
      const std::size_t comma = std::min(text.find(',', start), text.size());
      items.push_back(text.substr(start, comma - start));
      start = comma + 1;
    }
    return items;
  };
  if (!hops.empty()) {
    o.hops.clear();
    for (const std::string& item : split(hops)) {
      int h = 0;
      try {
        std::size_t used = 0;
        h = std::stoi(item, &used);
        if (used != item.size()) h = 0;
      } catch (const std::exception&) {
        h = 0;
      }
      if (h < 1 || h > perf::kMaxChainHops) {
        return fail(
            fmt::format("--hops '{}': each a whole number in 1..{}", item, perf::kMaxChainHops));
      }
      o.hops.push_back(h);
    }
    std::sort(o.hops.begin(), o.hops.end());
    o.hops.erase(std::unique(o.hops.begin(), o.hops.end()), o.hops.end());
  }
  if (!protocols.empty()) {
    o.protocols.clear();
    for (const std::string& item : split(protocols)) {
      const auto p = ir::parse_protocol(item);
      if (!p) return fail(fmt::format("--protocols '{}': Simple, LL or LL128", item));
      o.protocols.push_back(*p);
    }
  }
  if (!variants.empty()) {
    o.variants.clear();
    for (const std::string& item : split(variants)) {
      const auto v = gpu::parse_step_variant(item);
      if (!v) return fail(fmt::format("--variants '{}': full, lean or overlap", item));
      o.variants.push_back(*v);
    }
  }
  if (!bytes.empty()) {
    const auto b = gpu::parse_byte_size(bytes);
    if (!b || *b < 4 || *b > (std::size_t{1} << 30)) {
      return fail(fmt::format("--bytes '{}': a size in [4, 1G], such as 1K", bytes));
    }
    o.bytes = *b;
  }
  return o;
}

struct Floor {
  double relaxed = 0;
  double ordered = 0;
};

Result<Floor> measure_floor(const Options& o, PingPongPlace place) {
  Floor floor;
  for (bool ordered : {false, true}) {
    PingPongOptions p;
    p.round_trips = o.round_trips;
    p.ordered = ordered;
    Result<double> us = Status::error(gpu::ErrorCode::InvalidArgument, "no device");
    if (o.host) {
      us = pingpong_host(p);
    } else {
#if defined(WEFT_LATENCY_WITH_CUDA)
      static_cast<void>(pingpong_cuda(o.device, place, p));  // warm-up: the first launch loads
      us = pingpong_cuda(o.device, place, p);
#else
      static_cast<void>(place);
      us = Status::error(gpu::ErrorCode::InvalidArgument,
                         "this weft-latency was built without CUDA; --device host runs on CPU "
                         "threads");
#endif
    }
    if (!us.ok()) return us.status();
    (ordered ? floor.ordered : floor.relaxed) = us.value();
  }
  return floor;
}

// One variant's communicator and the device its buffers live on.
struct Bench {
  std::unique_ptr<perf::PerfDevice> device;
  std::unique_ptr<gpu::Communicator> comm;
};

Result<Bench> open_bench(const Options& o, gpu::StepVariant variant) {
  auto runtime = gpu::runtime_options_from_env(gpu::process_environment());
  if (!runtime.ok()) return runtime.status();
  gpu::RuntimeOptions options = runtime.value();
  options.step = variant;
  // Slices (WEFT_SIMPLE_SLICES) are the overlap step's; the other variants run without.
  if (variant != gpu::StepVariant::Overlap) options.simple_slices = 1;
  Bench b;
  Result<std::shared_ptr<gpu::Transport>> transport =
      Status::error(gpu::ErrorCode::InvalidArgument, "no device");
  if (o.host) {
    b.device = perf::make_host_perf_device();
    transport = gpu::make_host_transport(2);
  } else {
#if defined(WEFT_LATENCY_WITH_CUDA)
    auto device = perf::make_cuda_perf_device(o.device);
    if (!device.ok()) return device.status();
    b.device = std::move(device.value());
    transport = gpu::make_emulation_transport(2, o.device);
#endif
  }
  if (!transport.ok()) return transport.status();
  auto comm = gpu::Communicator::create(transport.value(), options);
  if (!comm.ok()) return comm.status();
  b.comm = std::move(comm.value());
  return b;
}

struct Timing {
  double us_per_call = 0;
  long long wrong = 0;
};

// Times chain:hops on the bench's communicator, after checking one call against the CPU
// reference executor.
Result<Timing> time_chain(const Options& o, Bench& b, int hops, ir::Protocol protocol) {
  const ir::Algorithm algo = perf::chain_broadcast(hops, protocol);
  auto handle = b.comm->load(algo);
  if (!handle.ok()) return handle.status();
  const perf::RowCall row = perf::row_call(algo, o.bytes, DataType::Float);
  auto call = perf::DeviceCall::create(*b.device, *b.comm, algo, row.count, DataType::Float, false);
  if (!call.ok()) return call.status();
  if (auto s = b.comm->reserve_scratch(handle.value(), row.count, DataType::Float); !s.ok()) {
    return s;
  }
  const cpu::Executor executor(algo, standard_spec(algo, 0));
  const perf::Reference reference = perf::compute_reference(
      executor, row.total_elements, DataType::Float, ReduceOp::Sum, 0, false);
  if (!reference.error.empty()) {
    return Status::error(gpu::ErrorCode::InvalidAlgorithm,
                         "the CPU reference executor failed: " + reference.error);
  }
  if (auto s = call.value()->upload(reference); !s.ok()) return s;
  const auto enqueue = [&] {
    return call.value()->run(*b.comm, handle.value(), ReduceOp::Sum, 0, b.device->stream());
  };
  if (auto s = enqueue(); !s.ok()) return s;
  if (auto s = b.device->synchronize(); !s.ok()) return s;
  if (auto s = b.comm->async_error(); !s.ok()) return s;
  auto wrong = call.value()->count_wrong(reference);
  if (!wrong.ok()) return wrong.status();
  for (int i = 0; i < o.warmup; ++i) {
    if (auto s = enqueue(); !s.ok()) return s;
  }
  if (auto s = b.device->synchronize(); !s.ok()) return s;
  auto us = b.device->time_calls(enqueue, o.iterations, o.graph_launches);
  if (!us.ok()) return us.status();
  if (auto s = b.comm->async_error(); !s.ok()) return s;
  return Timing{us.value(), static_cast<long long>(wrong.value())};
}

int run(const Options& o) {
  std::string where;
  if (o.host) {
    where = perf::make_host_perf_device()->describe() + ", host mode: the figures are the host's";
  } else {
#if defined(WEFT_LATENCY_WITH_CUDA)
    auto device = perf::make_cuda_perf_device(o.device);
    if (!device.ok()) {
      std::fprintf(stderr, "weft-latency: %s\n", device.status().str().c_str());
      return 1;
    }
    where = device.value()->describe();
#else
    std::fprintf(stderr,
                 "weft-latency: built without CUDA; --device host runs the same logic on CPU "
                 "threads\n");
    return 1;
#endif
  }
  std::printf("# weft-latency: %s\n", where.c_str());
  std::printf(
      "# the floor: one handshake through memory between thread 0 of two CTAs, half a "
      "ping-pong round trip (%d round trips), us\n",
      o.round_trips);
  std::printf("# %-12s %10s %10s\n", "place", "relaxed", "ordered");
  std::map<PingPongPlace, Floor> floors;
  for (PingPongPlace place : {PingPongPlace::OneGrid, PingPongPlace::TwoGrids}) {
    if (o.host && place == PingPongPlace::TwoGrids) continue;  // one pair of threads either way
    auto floor = measure_floor(o, place);
    if (!floor.ok()) {
      std::fprintf(stderr, "weft-latency: %s\n", floor.status().str().c_str());
      return 1;
    }
    floors[place] = floor.value();
    std::printf("  %-12s %10.3f %10.3f\n",
                place == PingPongPlace::OneGrid ? "one grid" : "two grids", floor.value().relaxed,
                floor.value().ordered);
  }
  const double floor_us = floors[PingPongPlace::OneGrid].relaxed;
  std::printf(
      "# Weft: chain:HOPS (2 ranks on the one device, %zu bytes, %d calls after %d warm-up%s); "
      "per step = marginal cost between the shortest and each longer chain; "
      "x floor = per step / one-grid relaxed handshake\n",
      o.bytes, o.iterations, o.warmup,
      o.graph_launches > 0 ? fmt::format(", graph replayed {} times", o.graph_launches).c_str()
                           : "");
  std::printf("# %-8s %-7s %5s %11s %11s %11s %9s %7s\n", "variant", "proto", "hops", "us/call",
              "us/hop", "per step", "x floor", "#wrong");
  int status = 0;
  for (gpu::StepVariant variant : o.variants) {
    auto bench = open_bench(o, variant);
    if (!bench.ok()) {
      std::fprintf(stderr, "weft-latency: %s\n", bench.status().str().c_str());
      return 1;
    }
    for (ir::Protocol protocol : o.protocols) {
      std::optional<std::pair<int, double>> shortest;
      for (int hops : o.hops) {
        auto timing = time_chain(o, bench.value(), hops, protocol);
        if (!timing.ok()) {
          std::fprintf(stderr, "weft-latency: %s, %s, chain:%d: %s\n", gpu::to_string(variant),
                       std::string(ir::to_string(protocol)).c_str(), hops,
                       timing.status().str().c_str());
          return 1;  // a timeout poisons the communicator
        }
        const Timing& t = timing.value();
        if (t.wrong != 0) status = 1;
        std::string marginal = "-", ratio = "-";
        if (shortest) {
          const double per_step =
              (t.us_per_call - shortest->second) / static_cast<double>(hops - shortest->first);
          marginal = fmt::format("{:.3f}", per_step);
          if (floor_us > 0) ratio = fmt::format("{:.2f}", per_step / floor_us);
        } else {
          shortest = std::make_pair(hops, t.us_per_call);
        }
        std::printf("  %-8s %-7s %5d %11.2f %11.3f %11s %9s %7lld\n", gpu::to_string(variant),
                    std::string(ir::to_string(protocol)).c_str(), hops, t.us_per_call,
                    t.us_per_call / hops, marginal.c_str(), ratio.c_str(), t.wrong);
        std::fflush(stdout);
      }
    }
  }
  std::printf("# %s\n", status == 0 ? "every chain's result matched the CPU reference"
                                    : "WRONG: some chain's result differs from the CPU reference");
  return status;
}

}  // namespace
}  // namespace weft::latency

int main(int argc, char** argv) {
  int exit_code = 0;
  const auto options = weft::latency::parse(argc, argv, exit_code);
  if (!options) return exit_code;
  return weft::latency::run(*options);
}
