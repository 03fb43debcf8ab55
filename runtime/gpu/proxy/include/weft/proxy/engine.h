// The network engine behind the proxy (docs/architecture.md §6): what moves bytes between the
// processes of different hosts. The proxy needs four things of it — register memory, put into a
// peer's registered memory, signal (a put that lands after every earlier one), flush — plus
// connecting and progress. UCX is the engine (make_ucx_engine); NCCL's one-sided API or its
// device-initiated networking could be a second one behind the same interface.
//
// Memory is named by a handle and an offset, never by a raw address: a put outside what the peer
// registered fails here, before anything is sent.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "weft/program/status.h"

namespace weft::proxy {

using gpu::ErrorCode;
using gpu::Result;
using gpu::Status;

// Memory this process registered: its handle here and the key a peer needs to put into it.
struct RegisteredMemory {
  int id = -1;
  std::vector<std::byte> key;
};

class Engine {
 public:
  virtual ~Engine() = default;

  // "UCX 1.13.1".
  virtual std::string name() const = 0;
  // This endpoint's address, for the peers' connect().
  virtual std::vector<std::byte> address() const = 0;

  // Makes [base, base + bytes) a target of the peers' puts.
  virtual Result<RegisteredMemory> register_memory(void* base, std::size_t bytes) = 0;
  virtual void deregister_memory(int id) = 0;

  // Connects to participant `peer`, whose address() is `address`. Fails when the engine has no
  // way to reach it (no transport in common, an address it cannot use).
  virtual Status connect(int peer, std::span<const std::byte> address) = 0;
  // `peer`'s registered memory, from its key; returns the handle puts name it by.
  virtual Result<int> add_remote_memory(int peer, std::span<const std::byte> key) = 0;
  virtual void remove_remote_memory(int memory) = 0;
  // The bytes `memory` covers, as its owner registered them.
  virtual std::size_t remote_bytes(int memory) const = 0;

  // Puts `bytes` from `source` at `offset` of remote memory `memory`. `source` must stay as it
  // is until the put is complete (flush, or the peer's answer to it). Fails, sending nothing,
  // when the range is outside what the peer registered.
  virtual Status put(int memory, std::uint64_t offset, const void* source, std::size_t bytes) = 0;
  // A put that reaches its target after every put issued before it, to any peer: the flag that
  // says the data before it has arrived.
  virtual Status signal(int memory, std::uint64_t offset, const void* source,
                        std::size_t bytes) = 0;
  // Progresses until every put issued so far is complete at its target, or the time is up.
  virtual Status flush(std::chrono::milliseconds timeout) = 0;

  // Moves whatever the network has for this endpoint (a software transport writes the peers'
  // puts here); true when anything happened.
  virtual bool progress() = 0;
  // The first failure seen on the connection to `peer` (its process died, it cannot be
  // reached); success while there is none.
  virtual Status peer_status(int peer) const = 0;
  // The transports the connection to `peer` uses, as the engine names them ("tcp",
  // "rc_mlx5"), for the log.
  virtual std::string transports(int peer) = 0;
  // Whether a dead peer is noticed by the engine (else only by the kernel's timeouts).
  virtual bool detects_peer_failure() const = 0;
};

struct EngineOptions {
  // UCX settings for this engine only (UCX's own names without the UCX_ prefix: {"TLS", "tcp"}),
  // over what UCX reads from the environment.
  std::vector<std::pair<std::string, std::string>> ucx_settings;
  // The libucp to load: WEFT_UCX_LIB (a site's UCX, e.g. HPC-X's), else the loader's
  // libucp.so.0.
  std::string library = "libucp.so.0";
};

// The UCX engine. UCX is loaded when this is called (libucp.so.0), so a build or a machine
// without it fails here, naming what is missing, and nothing else depends on it.
Result<std::unique_ptr<Engine>> make_ucx_engine(const EngineOptions& options = {});

}  // namespace weft::proxy
