// The proxy (docs/architecture.md §6): one per transport, a thread that carries every connection
// whose ends are on different hosts, as NCCL's network proxy and MSCCL++'s port channels do.
//
//   sender's kernel: writes the message into a staging slot of the proxy's memory, leaves its size
//                    in a descriptor ring, posts the connection's tail (kernel/wait_post.cuh);
//   sender's proxy:  puts the message into the receiver's proxy memory, then signals a
//                    descriptor (wire.h) into the receiver's inbox;
//   receiver's proxy: checks the descriptor against the connection, moves the message into the
//                    FIFO slot (LL, LL128: a line at a time, data before flag) and raises the
//                    tail, so the receiving kernel waits exactly as it does for a peer in memory;
//   acknowledgements (the receiver's head) and arrivals (kernel/device_abi.h) go back the same
//                    way, as single words.
// Step semantics, FIFO depths and the kernel's timeouts are unchanged. A failure (a peer lost,
// a malformed descriptor, an engine error) is recorded once, named, and raises the process's
// abort word, so every wait of the process ends within about a millisecond.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "weft/communicator/bootstrap.h"
#include "weft/communicator/device_runtime.h"
#include "weft/communicator/transport.h"
#include "weft/program/launch_plan.h"
#include "weft/program/options.h"
#include "weft/program/status.h"
#include "weft/proxy/engine.h"
#include "weft/proxy/participants.h"
#include "weft/proxy/wire.h"

namespace weft::proxy {

struct ProxyOptions {
  EngineOptions engine;
  // Connecting, proving each connection, and every window's exchange and closing flush.
  std::chrono::milliseconds setup_timeout{60'000};
  // Tests only, to play a faulty peer: called on every descriptor this proxy signals.
  std::function<void(WireDescriptor&)> tamper;
};

class ProxiedWindow;
struct WindowState;
struct PeerRecord;

class Proxy : public std::enable_shared_from_this<Proxy> {
 public:
  // Collective over `bootstrap`, by every participant when participants.any_crossing(): loads
  // the engine (where this participant crosses any other), exchanges addresses over the
  // rendezvous, connects to every participant on another host and proves each connection with
  // a put it waits to complete, then starts the thread. A participant that cannot start its
  // engine still takes part, so that all fail alike, naming it.
  static Result<std::shared_ptr<Proxy>> start(gpu::Bootstrap& bootstrap, Participants participants,
                                              std::shared_ptr<gpu::DeviceRuntime> runtime,
                                              ProxyOptions options);
  ~Proxy();
  Proxy(const Proxy&) = delete;
  Proxy& operator=(const Proxy&) = delete;

  // "UCX 1.13.1 over tcp": the engine and the transports of its connections.
  std::string describe() const;
  const Participants& participants() const { return participants_; }
  // The first failure; success while there is none.
  Status failure() const;
  // The peers whose proxies have not been heard from for a second or more ("participant 3 on
  // host 'b' (... has not answered for 5.2 s)"), for a failure's message; empty when none.
  std::string silence() const;

  // Collective: the proxy's part of a window (transport.h's open_window). `regions[k]` is local
  // rank k's region as the kernel addresses it: the proxy posts remote ranks' arrivals there.
  Result<std::unique_ptr<ProxiedWindow>> open_window(gpu::Bootstrap& bootstrap,
                                                     const gpu::WindowRequest& request,
                                                     std::span<void* const> regions);

 private:
  friend class ProxiedWindow;
  friend struct WindowState;
  Proxy(Participants participants, std::shared_ptr<gpu::DeviceRuntime> runtime,
        ProxyOptions options);
  Status connect(gpu::Bootstrap& bootstrap);
  Status start_engine(PeerRecord& record);
  Status prove_connections(const std::vector<PeerRecord>& records);
  void run();
  // Tells every peer this proxy is alive, and notes which peers it heard from and which said
  // goodbye.
  void heartbeat();
  // Tells every peer this proxy is leaving, then waits (boundedly) for every put it made to be
  // answered, so that none is left in flight when its connections close (~Proxy).
  void say_goodbye();
  // Records the first failure and raises the process's abort word.
  void fail(Status status);
  void add(WindowState* window);
  void remove(WindowState* window);
  // Memory a peer may still put into after its window closed uncleanly: freed with the engine.
  void retire(gpu::MappedMemory memory, int registration);

  Participants participants_;
  std::shared_ptr<gpu::DeviceRuntime> runtime_;
  ProxyOptions options_;
  std::unique_ptr<Engine> engine_;  // null where this participant crosses nobody
  std::vector<int> peers_;          // the participants it crosses
  std::vector<std::string> peer_transports_;
  gpu::DeviceRuntime::AbortWord abort_{};
  gpu::MappedMemory hello_;  // each peer's proving put, then its heartbeats, land here
  int hello_registration_ = -1;
  std::vector<int> hello_memory_;  // per peer (peers_' order): its hello words
  struct Heard {
    std::uint64_t value = 0;
    std::chrono::steady_clock::time_point at;
    bool departed = false;  // its goodbye came: no heartbeat goes to it any more
  };
  mutable std::mutex heard_mutex_;
  std::vector<Heard> heard_;  // per participant: its last heartbeat, and when it came
  // Per participant: how it was lost while nothing was in flight with it (success: it is not).
  std::vector<Status> lost_;

  mutable std::mutex mutex_;     // the engine and the windows
  std::atomic<int> waiting_{0};  // setup calls waiting for mutex_: the thread lets them in
  std::vector<WindowState*> windows_;
  std::vector<std::pair<gpu::MappedMemory, int>> retired_;
  mutable std::mutex failure_mutex_;
  Status failure_;
  std::atomic<bool> failed_{false};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// A window's connections that cross hosts, served by the proxy while it is open.
class ProxiedWindow {
 public:
  ~ProxiedWindow();
  ProxiedWindow(const ProxiedWindow&) = delete;
  ProxiedWindow& operator=(const ProxiedWindow&) = delete;

  std::span<const gpu::ProxiedSend> sends(int rank) const;
  std::span<const gpu::ProxiedReceive> receives(int rank) const;
  // Where local ranks address remote rank `rank`'s arrival table (a device address), or null
  // where `rank` is not reached through the proxy.
  void* arrival_table(int rank) const;

  // Collective, once every kernel of the window is done: stops serving it, completes this
  // proxy's puts, waits for every participant to have done so, then frees its memory. Without
  // it (an error path) the memory stays with the proxy until it ends, since a peer may still
  // put into it.
  Status close(gpu::Bootstrap& bootstrap);

 private:
  friend class Proxy;
  explicit ProxiedWindow(std::shared_ptr<Proxy> proxy);
  std::shared_ptr<Proxy> proxy_;
  std::unique_ptr<WindowState> state_;
  bool closed_ = false;
};

// The proxy's options from the environment: WEFT_UCX_LIB, the libucp to load.
ProxyOptions proxy_options_from_env(const gpu::EnvLookup& lookup);

// Every participant's bytes, of any length up to `limit` each: the lengths first, then each
// padded to the longest. Fails naming a participant whose length is beyond the limit.
Result<std::vector<std::vector<std::byte>>> allgather_blobs(gpu::Bootstrap& bootstrap,
                                                            std::span<const std::byte> mine,
                                                            std::size_t limit);

}  // namespace weft::proxy
