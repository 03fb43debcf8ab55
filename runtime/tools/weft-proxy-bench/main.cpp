// weft-proxy-bench: the proxy (docs/architecture.md §6) between two processes that stand for two
// hosts, beside which `scripts/bench-proxy.sh` runs UCX's own ucx_perftest on the same transport.
//
//   weft-proxy-bench [--latency ITERS] [--sizes 1M,4M] [--depth D] [--stream ITERS]
//
// Without --rank it starts both ranks itself (WEFT_HOSTID a and b, a fresh local rendezvous);
// UCX's transport is whatever UCX_TLS and UCX_NET_DEVICES say. The kernel's side of each
// connection is played by one thread per process doing exactly what the interpreter does for a
// connection to another host (kernel/wait_post.cuh): write the slot, leave the size in the
// descriptor ring, release the tail; on the other side, wait for the tail, read, release the
// head. The proxies in between are the real ones, as a call across hosts uses them.
//
//   latency    one-way time of an 8-byte message: half a round trip, rank 0 → 1 → 0
//   bandwidth  rank 0 streams messages of SIZE (one per slot, DEPTH slots), rank 1 consumes;
//              the time until rank 1's last acknowledgement is back
//   descriptor 8-byte messages streamed through a FIFO of 64: the time per message, which is
//              what the proxies cost per descriptor when the network is not what limits
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "weft/communicator/bootstrap.h"
#include "weft/host/host_network.h"
#include "weft/ir/ir.h"
#include "weft/program/connection_layout.h"
#include "weft/program/options.h"
#include "weft/proxy/participants.h"

extern char** environ;

namespace {

using namespace weft;
using Clock = std::chrono::steady_clock;

struct Options {
  int rank = -1;
  std::string rendezvous;
  int latency = 20000;
  std::vector<std::size_t> sizes = {std::size_t{1} << 20, std::size_t{4} << 20};
  int depth = 4;
  int stream = 20000;
};

[[noreturn]] void usage(const std::string& problem) {
  std::fprintf(stderr,
               "weft-proxy-bench: %s\nusage: weft-proxy-bench [--latency ITERS] [--sizes 1M,4M] "
               "[--depth D] [--stream ITERS]\n",
               problem.c_str());
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(a + " needs a value");
    const std::string v = argv[++i];
    if (a == "--rank") {
      o.rank = std::atoi(v.c_str());
    } else if (a == "--rendezvous") {
      o.rendezvous = v;
    } else if (a == "--latency") {
      o.latency = std::atoi(v.c_str());
    } else if (a == "--depth") {
      o.depth = std::atoi(v.c_str());
    } else if (a == "--stream") {
      o.stream = std::atoi(v.c_str());
    } else if (a == "--sizes") {
      o.sizes.clear();
      for (std::size_t start = 0; start <= v.size();) {
        const auto comma = v.find(',', start);
        const auto size = gpu::parse_byte_size(v.substr(start, comma - start));
        if (!size || *size == 0) usage("--sizes: '" + v + "' is not a list of sizes");
        o.sizes.push_back(*size);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else {
      usage("unknown argument " + a);
    }
  }
  if (o.latency < 1 || o.stream < 1 || o.depth < 2 || o.depth > gpu::kMaxFifoDepth) {
    usage("iterations must be positive and the depth in [2, 64]");
  }
  return o;
}

// Two ranks, one channel, a connection each way: what a ring of two is made of.
ir::Algorithm two_way() {
  ir::Algorithm a;
  a.name = "proxy_bench";
  a.ngpus = 2;
  a.nchannels = 1;
  a.nchunksperloop = 2;
  for (int r = 0; r < 2; ++r) {
    ir::Gpu gpu;
    gpu.id = r;
    ir::Threadblock tb;
    tb.id = 0;
    tb.send = 1 - r;
    tb.recv = 1 - r;
    tb.channel = 0;
    gpu.threadblocks.push_back(tb);
    a.gpus.push_back(gpu);
  }
  return a;
}

std::uint64_t acquire(const std::uint64_t* word) {
  return std::atomic_ref<const std::uint64_t>(*word).load(std::memory_order_acquire);
}
void release(std::uint64_t* word, std::uint64_t value) {
  std::atomic_ref<std::uint64_t>(*word).store(value, std::memory_order_release);
}
void wait_for(const std::uint64_t* word, std::uint64_t target) {
  for (std::uint32_t spins = 0; acquire(word) < target; ++spins) {
    if (spins % 64 == 63) std::this_thread::yield();  // two cores, four busy threads
  }
}

// One connection each way through the proxies, as the kernel of one rank sees it.
struct Ends {
  gpu::ProxiedSend send;
  gpu::ProxiedReceive receive;
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  int depth = 0;
  std::size_t slot = 0;

  void post(std::size_t bytes) {
    wait_for(send.head, sent + 1 > static_cast<std::uint64_t>(depth) ? sent + 1 - depth : 0);
    char* at = send.fifo + (sent % static_cast<std::uint64_t>(depth)) * slot;
    std::memcpy(at, &sent, std::min(bytes, sizeof(sent)));  // the message's first word
    send.descriptors[sent % static_cast<std::uint64_t>(depth)] = bytes;
    release(send.tail, ++sent);
  }
  void take() {
    wait_for(receive.tail, received + 1);
    release(receive.head, ++received);
  }
};

struct Session {
  std::shared_ptr<gpu::Bootstrap> bootstrap;
  std::shared_ptr<gpu::Transport> transport;
  std::unique_ptr<gpu::SharedWindow> window;
  std::vector<gpu::RegionLayout> layouts;
  std::size_t region_bytes = 0;
  Ends ends;
};

gpu::Status open(Session& s, const Options& o, std::size_t slot, int depth) {
  const ir::Algorithm algo = two_way();
  s.layouts.clear();
  for (int r = 0; r < 2; ++r) {
    s.layouts.push_back(gpu::layout_region(algo, r, gpu::ProtocolOptions{slot, depth}));
  }
  const std::size_t bytes[1] = {s.layouts[static_cast<std::size_t>(o.rank)].total_bytes};
  gpu::WindowRequest request;
  request.bytes_per_local_rank = bytes;
  request.fingerprint = slot * 131 + static_cast<std::size_t>(depth);
  request.layouts = s.layouts;
  request.protocol = ir::Protocol::Simple;
  auto window = s.transport->open_window(request);
  if (!window.ok()) return window.status();
  s.window = std::move(window.value());
  const auto sends = s.window->proxied_sends(o.rank);
  const auto receives = s.window->proxied_receives(o.rank);
  if (sends.size() != 1 || receives.size() != 1) {
    return gpu::Status::error(gpu::ErrorCode::InternalError,
                              "the two ranks do not cross through the proxies");
  }
  s.ends = Ends{sends[0], receives[0], 0, 0, depth, slot};
  return {};
}

gpu::Status close(Session& s) {
  gpu::Status closed = s.transport->barrier();
  if (closed.ok()) closed = s.window->close();
  s.window.reset();
  return closed;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int run_rank(const Options& o) {
  gpu::SocketBootstrapOptions boot;
  auto point = gpu::parse_rendezvous(o.rendezvous);
  if (!point.ok()) usage(point.status().message);
  boot.root = point.value().address;
  boot.secret = point.value().secret;
  boot.rank = o.rank;
  boot.size = 2;
  auto bootstrap = gpu::make_socket_bootstrap(boot);
  if (!bootstrap.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", o.rank, bootstrap.status().str().c_str());
    return 1;
  }
  Session s;
  s.bootstrap = std::move(bootstrap.value());
  gpu::HostNetworkOptions network;
  network.proxy = proxy::proxy_options_from_env(gpu::process_environment());
  auto host = proxy::host_id(gpu::process_environment());
  if (!host.ok()) usage(host.status().message);
  network.host = host.value();
  auto transport = gpu::make_host_network_transport(s.bootstrap, 2, {o.rank}, network);
  if (!transport.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", o.rank, transport.status().str().c_str());
    return 1;
  }
  s.transport = std::move(transport.value());
  const bool printer = o.rank == 0;
  const auto check = [&](const gpu::Status& st) {
    if (st.ok()) return;
    std::fprintf(stderr, "rank %d: %s\n", o.rank, st.str().c_str());
    std::exit(1);
  };
  if (printer) {
    std::printf("# weft-proxy-bench: two processes as hosts a and b, the proxy over %s\n",
                s.transport->network().c_str());
    std::printf("%-12s %12s %8s %12s %14s %12s\n", "# test", "bytes", "depth", "messages",
                "us/message", "MB/s");
  }
  // Latency: a round trip of 8-byte messages, half of it.
  {
    check(open(s, o, 4096, 2));
    const int warm = std::min(o.latency / 10 + 1, 1000);
    std::vector<double> trips;
    trips.reserve(static_cast<std::size_t>(o.latency));
    Clock::time_point start;
    for (int i = 0; i < warm + o.latency; ++i) {
      const auto begun = Clock::now();
      if (i == warm) start = begun;
      if (o.rank == 0) {
        s.ends.post(8);
        s.ends.take();
      } else {
        s.ends.take();
        s.ends.post(8);
      }
      if (i >= warm) trips.push_back(seconds_since(begun));
    }
    const double us = seconds_since(start) * 1e6 / o.latency / 2;
    std::sort(trips.begin(), trips.end());
    const double median = trips[trips.size() / 2] * 1e6 / 2;
    if (printer) {
      std::printf("%-12s %12d %8d %12d %14.2f %12s   (median %.2f us)\n", "latency", 8, 2,
                  o.latency, us, "-", median);
    }
    check(close(s));
  }
  // Bandwidth and the cost per descriptor: rank 0 streams, rank 1 consumes.
  struct Stream {
    const char* name;
    std::size_t bytes;
    int depth;
    int messages;
  };
  std::vector<Stream> streams;
  for (std::size_t size : o.sizes) {
    const auto messages = static_cast<int>(
        std::max<std::size_t>(50, (std::size_t{1} << 30) / size));  // about 1 GB each
    streams.push_back({"bandwidth", size, o.depth, messages});
  }
  streams.push_back({"descriptor", 8, 64, o.stream});
  for (const Stream& st : streams) {
    check(open(s, o, st.bytes, st.depth));
    // A warm-up message each way first, so that the connection is set up.
    if (o.rank == 0) {
      s.ends.post(st.bytes);
      s.ends.take();
    } else {
      s.ends.take();
      s.ends.post(8);
    }
    const auto start = Clock::now();
    if (o.rank == 0) {
      for (int i = 0; i < st.messages; ++i) s.ends.post(st.bytes);
      // Every message consumed: the last acknowledgement is back.
      wait_for(s.ends.send.head, s.ends.sent);
    } else {
      for (int i = 0; i < st.messages; ++i) s.ends.take();
    }
    const double seconds = seconds_since(start);
    if (printer) {
      std::printf("%-12s %12zu %8d %12d %14.2f %12.1f\n", st.name, st.bytes, st.depth, st.messages,
                  seconds * 1e6 / st.messages,
                  static_cast<double>(st.bytes) * st.messages / seconds / 1e6);
    }
    check(close(s));
  }
  if (gpu::Status failure = s.transport->async_error(); !failure.ok()) check(failure);
  return 0;
}

int launch(const Options& o, char** argv) {
  auto point = gpu::make_local_rendezvous();
  if (!point.ok()) usage(point.status().message);
  const std::string rendezvous =
      gpu::format_rendezvous(point.value().address, point.value().secret);
  std::vector<pid_t> children;
  for (int rank = 0; rank < 2; ++rank) {
    std::string sizes;
    for (std::size_t size : o.sizes) sizes += (sizes.empty() ? "" : ",") + std::to_string(size);
    std::vector<std::string> args = {argv[0],
                                     "--rank",
                                     std::to_string(rank),
                                     "--rendezvous",
                                     rendezvous,
                                     "--latency",
                                     std::to_string(o.latency),
                                     "--sizes",
                                     sizes,
                                     "--depth",
                                     std::to_string(o.depth),
                                     "--stream",
                                     std::to_string(o.stream)};
    std::vector<char*> raw;
    for (std::string& a : args) raw.push_back(a.data());
    raw.push_back(nullptr);
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      if (std::strncmp(*e, "WEFT_HOSTID=", 12) != 0) env.emplace_back(*e);
    }
    env.push_back(rank == 0 ? "WEFT_HOSTID=a" : "WEFT_HOSTID=b");
    std::vector<char*> raw_env;
    for (std::string& e : env) raw_env.push_back(e.data());
    raw_env.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, argv[0], nullptr, nullptr, raw.data(), raw_env.data()) != 0) {
      std::perror("weft-proxy-bench: posix_spawn");
      return 1;
    }
    children.push_back(pid);
  }
  int failed = 0;
  for (pid_t pid : children) {
    int status = 0;
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  return o.rank < 0 ? launch(o, argv) : run_rank(o);
}
