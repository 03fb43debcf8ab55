// Transports give every rank the device memory its peers write into: the receive FIFOs and
// counters of docs/architecture.md §5 live in the receiver's region, acknowledgements in the
// sender's, and a rank reaches a peer's region through the pointer its transport hands out. Which
// mechanism makes that pointer valid (same device, peer access, CUDA IPC) is the transport's
// business only.
//
// A participant (one Communicator) drives one or more local ranks, all on one CUDA device:
//   - emulation: one participant drives all N ranks on one GPU (separate buffers per rank);
//   - in-process multi-GPU: one participant per GPU, threads of one process, peer access;
//   - multi-process: one participant per process, CUDA IPC handles exchanged by a Bootstrap.
//   - host mode: one participant drives all N ranks with host memory, and the kernel's source runs
//     on CPU threads (DeviceKind::Host), for machines without a GPU and for tests.
//   - across hosts: a connection whose ends are on different hosts goes through each process's
//     proxy (weft_proxy, docs/architecture.md §6): the kernel's end is in the proxy's memory,
//     and the proxy moves messages, acknowledgements and arrivals over the network.
// The header needs no CUDA headers; the CUDA transports live in the CUDA library (weft_gpu), the
// host transports in weft_kernel_host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weft/communicator/bootstrap.h"
#include "weft/communicator/device_runtime.h"
#include "weft/ir/ir.h"
#include "weft/program/connection_layout.h"
#include "weft/program/launch_plan.h"
#include "weft/program/status.h"

namespace weft::gpu {

// Regions of device memory, one per rank, opened together by every participant.
class SharedWindow {
 public:
  virtual ~SharedWindow() = default;
  // The local rank's own region, on its device, zeroed when opened.
  virtual void* local(int rank) const = 0;
  // `peer`'s region as `rank` (a local rank) addresses it; `peer` may be local too.
  virtual void* peer(int rank, int peer) const = 0;
  virtual std::size_t bytes(int rank) const = 0;
  // The local rank's connections that go through the proxy (their other end is on another
  // host); empty where every peer's region is reached through memory.
  virtual std::span<const ProxiedSend> proxied_sends(int /*rank*/) const { return {}; }
  virtual std::span<const ProxiedReceive> proxied_receives(int /*rank*/) const { return {}; }
  // Collective, once no kernel uses the window any more (after the transport's barrier): lets
  // the proxy finish what it sends and free its memory. A window destroyed without it (an error
  // path) keeps that memory until its transport ends.
  virtual Status close() { return {}; }
};

// What a window is for: each local rank's region size, the algorithm's fingerprint, and its
// connections (every rank's region layout, indexed by rank), which a transport that reaches some
// peers through a proxy lays out its own memory by.
struct WindowRequest {
  std::span<const std::size_t> bytes_per_local_rank;
  std::uint64_t fingerprint = 0;
  std::span<const RegionLayout> layouts;
  ir::Protocol protocol = ir::Protocol::Simple;
};

// How a rank reaches a peer's memory, as far as the protocols care: LL128 is correct only where
// a 128-byte store arrives whole (NVLink; one device once probed; host mode), and the kernel's
// memory ordering needs system scope wherever a peer is another device.
enum class LinkKind {
  SameDevice,  // the peer's memory is on this rank's device
  NVLink,      // peer access over NVLink (or NVSwitch)
  PCIe,        // peer access without NVLink: PCIe, or a link without native atomics
  Host,        // host mode: every rank in host memory
  Network,     // another host (or, in host mode, another process): through the proxy
  Unknown,     // not determined (e.g. the peer's GPU is not visible to this process)
};
std::string_view to_string(LinkKind kind);

struct PeerLink {
  LinkKind kind = LinkKind::Unknown;
  std::string detail;  // how it was determined, for messages
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual std::string_view name() const = 0;  // "in-process", "cuda-ipc"
  virtual int nranks() const = 0;
  // The ranks this participant drives, ascending; all on device().
  virtual std::span<const int> local_ranks() const = 0;
  virtual int device() const = 0;
  // The device the windows live on, and how kernels are launched there.
  virtual DeviceKind device_kind() const = 0;
  virtual std::shared_ptr<DeviceRuntime> device_runtime() const = 0;
  // How local rank `rank` reaches rank `peer` (any rank, local or not).
  virtual PeerLink peer_link(int rank, int peer) const = 0;

  // Collective over all participants, in the same order everywhere: allocates a zeroed region of
  // bytes_per_local_rank[k] bytes for local rank local_ranks()[k] and maps every rank's region
  // for every local rank (or, for a rank on another host, sets up the proxy's end of each
  // connection with it). `fingerprint` identifies what the window is for (the algorithm); if
  // participants disagree the call fails with Mismatch naming them instead of mixing algorithms.
  virtual Result<std::unique_ptr<SharedWindow>> open_window(const WindowRequest& request) = 0;

  // Collective: returns once every participant has entered (before memory is freed, so that no
  // peer still writes into it).
  virtual Status barrier() = 0;

  // A failure outside the kernel that stops this transport's calls (the proxy's: a peer host
  // that vanished, a malformed message from it); success while there is none. The failure also
  // raises the process's abort word, so the kernel's waits end too.
  virtual Status async_error() const { return {}; }
  // Where `rank` runs, for messages ("host 'b', through the proxy over UCX tcp"); empty when
  // there is nothing to say beyond the rank.
  virtual std::string locate(int /*rank*/) const { return {}; }
  // What carries the connections across hosts ("UCX 1.13.1 over tcp"); empty when none does.
  virtual std::string network() const { return {}; }
  // The hosts whose proxies have gone quiet, for a failure's message; empty when none has.
  virtual std::string silent_hosts() const { return {}; }
};

// Host mode: all `nranks` ranks in this process, in host memory, the interpreter's source on CPU
// threads (one participant). Needs no GPU and no CUDA.
Result<std::shared_ptr<Transport>> make_host_transport(int nranks);

// Host mode across processes (weft_kernel_host, weft/host/host_network.h): this process's ranks
// in its memory, every other process's through the proxy.

// Emulation: all `nranks` ranks in this process on `device` (one participant).
Result<std::shared_ptr<Transport>> make_emulation_transport(int nranks, int device);

// In-process: several participants (threads) of one process, each driving `local_ranks` on its
// own `device`; regions of other devices are reached through peer access, which must be
// possible. `bootstrap` connects the participants (InProcessRendezvous::join).
Result<std::shared_ptr<Transport>> make_in_process_transport(std::shared_ptr<Bootstrap> bootstrap,
                                                             int nranks,
                                                             std::vector<int> local_ranks,
                                                             int device);

// CUDA IPC: participants in different processes (same host) exchange cudaIpcMemHandle_t records
// through `bootstrap` (a socket rendezvous, or NCCL's allgather inside the shim). Peers that
// turn out to share this process are reached directly. Several processes on ONE GPU need MPS,
// otherwise their kernels cannot run at the same time and every call times out.
Result<std::shared_ptr<Transport>> make_ipc_transport(std::shared_ptr<Bootstrap> bootstrap,
                                                      int nranks, std::vector<int> local_ranks,
                                                      int device);

}  // namespace weft::gpu
