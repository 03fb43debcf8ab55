// weft-perf: nccl-tests-style benchmark of a Weft algorithm on the GPU runtime.
//
//   weft-perf --builtin ring --ranks 8 -b 1K -e 256M -f 2            # 8 emulated ranks, one GPU
//   weft-perf --xml algo.xml --rank R --nranks N --rendezvous ADDRESS[#SECRET]  # a process per GPU
//   weft-perf --xml algo.xml --ranks 8 --device host -b 1K -e 1M       # host mode, no GPU
//   weft-perf --xml algo.xml --device host --rank R --nranks N --rendezvous ADDRESS  # host mode,
//                                            a process per rank, the others through the proxy
//
// Each row: the call's size and count, then for out-of-place and in-place the time per call,
// algbw, busbw, #wrong (elements differing from the CPU reference executor) and the fraction of
// the device's measured copy bandwidth the call's device-memory traffic achieved; last, that
// traffic in bytes (per device: every rank in emulation).
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "device_call.h"
#include "memory_estimate.h"
#include "perf_device.h"
#include "perf_options.h"
#include "perf_report.h"
#include "weft/communicator/communicator.h"
#include "weft/cpu/cpu_executor.h"
#include "weft/host/host_network.h"
#include "weft/ir/collective_spec.h"
#include "weft/ir/validate.h"
#include "weft/program/call_plan.h"
#include "weft/program/device_program.h"
#include "weft/proxy/participants.h"
#if defined(WEFT_PERF_WITH_CUDA)
#include "weft/cuda/cuda_network.h"
#endif

namespace weft::perf {
namespace {

using gpu::Result;
using gpu::Status;

struct Session {
  PerfOptions options;
  std::unique_ptr<PerfDevice> device;
  std::shared_ptr<gpu::Bootstrap> bootstrap;  // multi-process mode only
  std::unique_ptr<gpu::Communicator> comm;
  ir::Algorithm algorithm;
  gpu::AlgorithmHandle handle;
  std::vector<gpu::RankProgram> local_programs;
  double copy_bandwidth = 0;
  bool printer = true;                   // rank 0 prints
  std::string network;                   // what crosses hosts, if anything does
  std::set<std::string> not_applicable;  // reasons already printed
};

Result<ir::Algorithm> read_algorithm(const PerfOptions& o, int nranks) {
  const ir::Protocol protocol = o.protocol.value_or(ir::Protocol::Simple);
  if (!o.builtin.empty()) return builtin_algorithm(o.builtin, nranks, protocol);
  ir::LoadResult loaded = ir::load_xml_file(o.xml, ir::weft_limits(), ir::kCommandLineFile);
  if (!loaded.ok()) {
    return Status::error(gpu::ErrorCode::InvalidAlgorithm,
                         fmt::format("{}:\n{}", o.xml, loaded.diagnostics.str()));
  }
  ir::Algorithm algo = std::move(*loaded.algorithm);
  if (o.protocol) algo.protocol = *o.protocol;          // results never depend on the protocol
  if (o.any_size) algo.min_bytes = algo.max_bytes = 0;  // nor on the size band
  return algo;
}

// Multi-process mode: the ranks this process drives.
std::vector<int> local_ranks(const PerfOptions& o) {
  std::vector<int> ranks;
  for (int k = 0; k < o.local_ranks; ++k) ranks.push_back(o.rank + k);
  return ranks;
}

// Multi-process mode: the rendezvous settings, read before anything is opened (a bad
// WEFT_BOOTSTRAP_TIMEOUT_S is reported as itself, not as whatever failed next).
Result<gpu::SocketBootstrapOptions> rendezvous_options(const PerfOptions& o) {
  gpu::SocketBootstrapOptions boot;
  const gpu::RendezvousPoint point = gpu::parse_rendezvous(o.rendezvous).value();
  boot.root = point.address;
  boot.secret = point.secret;
  // A participant per process: K local ranks each.
  boot.rank = o.rank / o.local_ranks;
  boot.size = o.nranks / o.local_ranks;
  auto timeout = gpu::bootstrap_timeout_from_env(gpu::process_environment());
  if (!timeout.ok()) return timeout.status();
  if (timeout.value()) boot.timeout = *timeout.value();
  // As the shim and the C API log them.
  boot.on_dropped = [](const std::string& why) {
    std::fprintf(stderr, "weft-perf: warning: %s\n", why.c_str());
  };
  return boot;
}

Status join_rendezvous(Session& s, const gpu::SocketBootstrapOptions& boot) {
  auto bootstrap = gpu::make_socket_bootstrap(boot);
  if (!bootstrap.ok()) return bootstrap.status();
  s.bootstrap = std::move(bootstrap.value());
  s.printer = s.options.rank == 0;
  return {};
}

// The transport and the device the session's buffers live on.
Result<std::shared_ptr<gpu::Transport>> open_device(Session& s) {
  const PerfOptions& o = s.options;
  std::optional<gpu::SocketBootstrapOptions> boot;
  // Multi-process mode: the rendezvous, this process's host (WEFT_HOSTID) and the proxy's
  // options, all read before a device is opened.
  struct Across {
    std::string host;
    proxy::ProxyOptions proxy;
  };
  std::optional<Across> across;
  if (o.ranks == 0) {
    auto options = rendezvous_options(o);
    if (!options.ok()) return options.status();
    boot = std::move(options.value());
    auto host = proxy::host_id(gpu::process_environment());
    if (!host.ok()) return host.status();
    across = Across{host.value(), proxy::proxy_options_from_env(gpu::process_environment())};
    if (boot->timeout.count() > 0) across->proxy.setup_timeout = boot->timeout;
  }
  if (o.host) {
    s.device = make_host_perf_device();
    if (!boot) return gpu::make_host_transport(o.ranks);
    gpu::HostNetworkOptions network;
    network.host = across->host;
    network.proxy = across->proxy;
    if (Status st = join_rendezvous(s, *boot); !st.ok()) return st;
    return gpu::make_host_network_transport(s.bootstrap, o.nranks, local_ranks(o),
                                            std::move(network));
  }
#if defined(WEFT_PERF_WITH_CUDA)
  if (o.ranks > 0) {
    const int device = o.device >= 0 ? o.device : 0;
    auto perf_device = make_cuda_perf_device(device);
    if (!perf_device.ok()) return perf_device.status();
    s.device = std::move(perf_device.value());
    return gpu::make_emulation_transport(o.ranks, device);
  }
  auto devices = cuda_device_count();
  if (!devices.ok()) return devices.status();
  const int device = o.device >= 0 ? o.device : o.rank % std::max(devices.value(), 1);
  auto perf_device = make_cuda_perf_device(device);
  if (!perf_device.ok()) return perf_device.status();
  s.device = std::move(perf_device.value());
  if (Status st = join_rendezvous(s, *boot); !st.ok()) return st;
  // CUDA IPC within this host, the proxy to ranks of other hosts (WEFT_HOSTID).
  gpu::CudaNetworkOptions network;
  network.host = across->host;
  network.proxy = across->proxy;
  return gpu::make_ipc_network_transport(s.bootstrap, o.nranks, local_ranks(o), device,
                                         std::move(network));
#else
  return Status::error(gpu::ErrorCode::InvalidArgument,
                       "this weft-perf was built without CUDA; --device host runs the "
                       "interpreter on CPU threads");
#endif
}

Status open(Session& s) {
  const PerfOptions& o = s.options;
  auto runtime = gpu::runtime_options_from_env(gpu::process_environment());
  if (!runtime.ok()) return runtime.status();
  gpu::RuntimeOptions options = runtime.value();
  if (o.timeout_s > 0) options.timeout_s = o.timeout_s;
  auto transport = open_device(s);
  if (!transport.ok()) return transport.status();
  s.network = transport.value()->network();
  auto comm = gpu::Communicator::create(transport.value(), options);
  if (!comm.ok()) return comm.status();
  s.comm = std::move(comm.value());
  auto algo = read_algorithm(o, transport.value()->nranks());
  if (!algo.ok()) return algo.status();
  s.algorithm = std::move(algo.value());
  auto handle = s.comm->load(s.algorithm);
  if (!handle.ok()) return handle.status();
  s.handle = handle.value();
  for (int rank : s.comm->local_ranks()) {
    auto program = gpu::flatten_rank(s.algorithm, rank);
    if (!program.ok()) return program.status();
    s.local_programs.push_back(std::move(program.value()));
  }
  auto bandwidth = s.device->copy_bandwidth();
  if (!bandwidth.ok()) return bandwidth.status();
  s.copy_bandwidth = bandwidth.value();
  return {};
}

// Waits for the calls enqueued so far and turns a kernel timeout into an error.
Status settle(Session& s) {
  if (auto st = s.device->synchronize(); !st.ok()) return st;
  return s.comm->async_error();
}

// Time per call in microseconds: n iterations after w warm-ups, or n iterations captured in a
// graph replayed G times.
Result<double> time_calls(Session& s, const DeviceCall& call) {
  const PerfOptions& o = s.options;
  const auto enqueue = [&] {
    return call.run(*s.comm, s.handle, o.op, o.root, s.device->stream());
  };
  for (int i = 0; i < o.warmup; ++i) {
    if (auto st = enqueue(); !st.ok()) return st;
  }
  if (auto st = settle(s); !st.ok()) return st;
  auto time = s.device->time_calls(enqueue, o.iterations, o.graph_launches);
  if (!time.ok()) return time.status();
  if (auto st = s.comm->async_error(); !st.ok()) return st;
  return time.value();
}

// Sums a count over all processes (multi-process mode); the identity in emulation.
Result<long long> sum_over_ranks(Session& s, long long mine) {
  if (!s.bootstrap) return mine;
  std::vector<long long> all(static_cast<std::size_t>(s.bootstrap->size()));
  all[static_cast<std::size_t>(s.bootstrap->rank())] = mine;
  if (auto st = s.bootstrap->allgather(std::as_writable_bytes(std::span(all)), sizeof(long long));
      !st.ok()) {
    return st;
  }
  long long total = 0;
  for (long long v : all) total += v;
  return total;
}

Result<ModeResult> run_mode(Session& s, const cpu::Executor& executor, const RowCall& row,
                            bool in_place) {
  const PerfOptions& o = s.options;
  gpu::CallShape shape;
  shape.collective = s.algorithm.collective;
  shape.nranks = s.algorithm.ngpus;
  shape.count = row.count;
  shape.dtype = o.dtype;
  shape.op = o.op;
  shape.in_place = in_place;
  shape.root = o.root;
  if (const gpu::Applicability verdict = s.comm->applies(s.handle, shape); !verdict) {
    // The row says N/A; the reason once, as a comment line of the table.
    if (s.printer && s.not_applicable.insert(verdict.reason).second) {
      std::printf("# N/A (%s): %s\n", in_place ? "in place" : "out of place",
                  verdict.reason.c_str());
    }
    return ModeResult{};
  }
  auto call = DeviceCall::create(*s.device, *s.comm, s.algorithm, row.count, o.dtype, in_place);
  if (!call.ok()) return call.status();
  const std::size_t chunk =
      row.total_elements / static_cast<std::size_t>(s.algorithm.nchunksperloop);
  Reference reference;
  if (o.check) {
    reference = compute_reference(executor, chunk, o.dtype, o.op, o.root, in_place);
    if (!reference.error.empty()) {
      return Status::error(gpu::ErrorCode::InvalidAlgorithm,
                           "the CPU reference executor failed: " + reference.error);
    }
    if (auto st = call.value()->upload(reference); !st.ok()) return st;
  } else if (auto st = call.value()->fill(0); !st.ok()) {
    return st;
  }
  if (auto st = s.comm->reserve_scratch(s.handle, row.count, o.dtype); !st.ok()) return st;
  auto time = time_calls(s, *call.value());
  if (!time.ok()) return time.status();
  long long wrong = -1;
  if (o.check) {
    // Start again from the reference's inputs: in-place calls and avg changed them.
    if (auto st = call.value()->upload(reference); !st.ok()) return st;
    if (auto st = call.value()->run(*s.comm, s.handle, o.op, o.root, s.device->stream());
        !st.ok()) {
      return st;
    }
    if (auto st = settle(s); !st.ok()) return st;
    auto counted = call.value()->count_wrong(reference);
    if (!counted.ok()) return counted.status();
    auto total = sum_over_ranks(s, static_cast<long long>(counted.value()));
    if (!total.ok()) return total.status();
    wrong = total.value();
  }
  const std::uint64_t traffic =
      gpu::device_memory_traffic(s.local_programs, chunk, size_of(o.dtype));
  return measure(row.bytes, time.value(), bus_factor(s.algorithm.collective, s.algorithm.ngpus),
                 traffic, s.copy_bandwidth, wrong);
}

// The sweep's largest row against the memory the run may take: refused before anything large is
// allocated, with the figure and the ways out (exit 2, as for bad arguments).
bool fits_in_memory(const Session& s) {
  const PerfOptions& o = s.options;
  std::vector<std::size_t> counts;
  for (std::size_t bytes : size_sweep(o.min_bytes, o.max_bytes, o.step_factor)) {
    counts.push_back(row_call(s.algorithm, bytes, o.dtype).count);
  }
  const MemoryEstimate need =
      estimate_memory(s.algorithm, counts, o.dtype, static_cast<int>(s.comm->local_ranks().size()),
                      o.check, o.host);
  const std::optional<std::uint64_t> limit = memory_limit(o.max_memory);
  if (!limit || need.total <= *limit) return true;
  const MemoryEstimate unchecked = estimate_memory(
      s.algorithm, counts, o.dtype, static_cast<int>(s.comm->local_ranks().size()), false, o.host);
  std::string ways = "a smaller -e or fewer ranks";
  if (o.check && unchecked.total <= *limit) ways += ", -c 0 (no CPU reference: it would fit)";
  std::fprintf(
      stderr,
      "weft-perf: this run needs about %s of host memory at -e %zu bytes (the ranks' "
      "buffers %s%s%s), more than the %s it may take (%s).\n"
      "weft-perf: nothing was run. Ways out: %s; or --max-memory SIZE to allow more.\n",
      human_bytes(need.total).c_str(), o.max_bytes, human_bytes(need.buffers).c_str(),
      o.host ? " in host mode" : " on the device",
      o.check ? fmt::format(", the CPU reference {}", human_bytes(need.reference)).c_str() : "",
      human_bytes(*limit).c_str(), ir::memory_limit_source(o.max_memory).c_str(), ways.c_str());
  return false;
}

int run(Session& s) {
  const PerfOptions& o = s.options;
  if (auto st = open(s); !st.ok()) {
    std::fprintf(stderr, "weft-perf: %s\n", st.str().c_str());
    return 1;
  }
  if (!fits_in_memory(s)) return 2;
  if (s.printer) {
    std::printf(
        "# weft-perf: algorithm '%s' (%s, %d ranks, %s, %d channel%s), %s\n",
        s.algorithm.name.c_str(), std::string(ir::to_string(s.algorithm.collective)).c_str(),
        s.algorithm.ngpus, std::string(ir::to_string(s.algorithm.protocol)).c_str(),
        s.algorithm.nchannels, s.algorithm.nchannels == 1 ? "" : "s",
        o.host && o.ranks > 0 ? fmt::format("{} ranks in host mode (CPU threads)", o.ranks).c_str()
        : o.host ? fmt::format("{} rank{} per process in host mode (CPU threads)", o.local_ranks,
                               o.local_ranks == 1 ? "" : "s")
                       .c_str()
        : o.ranks > 0
            ? fmt::format("{} ranks emulated on one GPU", o.ranks).c_str()
            : fmt::format("{} rank{} per process", o.local_ranks, o.local_ranks == 1 ? "" : "s")
                  .c_str());
    if (!s.network.empty()) {
      std::printf("# across hosts: the proxy, %s\n", s.network.c_str());
    }
    std::printf("# %s; measured copy bandwidth %.1f GB/s (read + write)\n",
                s.device->describe().c_str(), s.copy_bandwidth);
    std::printf("# iterations %d, warm-up %d, check %d, graph launches %d, timeout %.1f s\n",
                o.iterations, o.warmup, o.check ? 1 : 0, o.graph_launches,
                s.comm->options().timeout_s);
    std::fputs(table_header().c_str(), stdout);
    std::fflush(stdout);  // a pipe or a file sees the header before the first row's calls
  }
  const cpu::Executor executor(s.algorithm, standard_spec(s.algorithm, o.root));
  long long wrong_total = 0;
  double busbw_sum = 0;
  int busbw_rows = 0;
  int status = 0;
  std::size_t last_bytes = 0;
  for (std::size_t bytes : size_sweep(o.min_bytes, o.max_bytes, o.step_factor)) {
    const RowCall call = row_call(s.algorithm, bytes, o.dtype);
    if (call.bytes == last_bytes) continue;  // rounding made it the previous row
    last_bytes = call.bytes;
    Row row;
    row.bytes = call.bytes;
    row.count = call.total_elements;
    row.dtype = o.dtype;
    row.op = o.op;
    row.root = o.root;
    row.traffic_bytes = gpu::device_memory_traffic(
        s.local_programs,
        call.total_elements / static_cast<std::size_t>(s.algorithm.nchunksperloop),
        size_of(o.dtype));
    for (bool in_place : {false, true}) {
      auto result = run_mode(s, executor, call, in_place);
      if (!result.ok()) {
        std::fprintf(stderr, "weft-perf: %zu bytes %s: %s\n", call.bytes,
                     in_place ? "in-place" : "out-of-place", result.status().str().c_str());
        std::fflush(stdout);
        return 1;  // a timeout poisons the communicator: nothing further can run
      }
      (in_place ? row.in_place : row.out_of_place) = result.value();
      if (result.value().ran) {
        if (result.value().wrong > 0) {
          wrong_total += result.value().wrong;
          status = 1;
        }
        busbw_sum += result.value().busbw_gbs;
        ++busbw_rows;
      }
    }
    if (s.printer) {
      std::fputs(format_row(row).c_str(), stdout);
      std::fflush(stdout);
    }
  }
  if (s.printer) {
    std::fputs(table_footer(wrong_total, busbw_rows > 0 ? busbw_sum / busbw_rows : 0).c_str(),
               stdout);
  }
  return status;
}

}  // namespace
}  // namespace weft::perf

int main(int argc, char** argv) {
  weft::perf::ParseOutcome parsed = weft::perf::parse_perf_options(argc, argv);
  if (!parsed.options) {
    std::fputs(parsed.text.c_str(), parsed.exit_code == 0 ? stdout : stderr);
    std::fputs("\n", parsed.exit_code == 0 ? stdout : stderr);
    return parsed.exit_code;
  }
  weft::perf::Session session;
  session.options = std::move(*parsed.options);
  return weft::perf::run(session);
}
