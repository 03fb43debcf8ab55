// Private to the proxy: one window's connections across hosts and what the proxy's thread does
// for them on each pass (service). Touched only under the proxy's lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "weft/communicator/device_runtime.h"
#include "weft/program/launch_plan.h"
#include "weft/proxy/engine.h"
#include "weft/proxy/proxy_layout.h"
#include "weft/proxy/wire.h"

namespace weft::proxy {

class Proxy;

struct WindowState {
  // This participant's end of a connection to a rank on another host, and the peer's end.
  struct Send {
    const SendStage* stage = nullptr;
    int peer = -1;            // the receiver's participant
    int memory = -1;          // the receiver's proxy memory (engine handle)
    std::size_t landing = 0;  // in the receiver's proxy memory
    std::size_t inbox = 0;
    std::uint64_t forwarded = 0;     // messages put and signalled
    std::uint64_t acknowledged = 0;  // the receiver's head, as last raised here
  };
  struct Receive {
    const ReceiveStage* stage = nullptr;
    int peer = -1;                   // the sender's participant
    int memory = -1;                 // the sender's proxy memory
    std::size_t ack_inbox = 0;       // in the sender's proxy memory
    int ack_position = -1;           // the connection in the sender's ProxyLayout::sends
    std::uint64_t delivered = 0;     // messages whose tail (or lines) are raised
    std::uint64_t acknowledged = 0;  // the head as last forwarded
    bool ack_waited = false;         // a new head was seen a pass ago and is still to go
  };
  // Local rank `local`'s arrival word for remote rank `remote` (written by the kernel into the
  // table for `remote`), forwarded to the arrival table of `remote`'s participant.
  struct ArrivalOut {
    int peer = -1;  // the participant of rank `rank`
    int rank = -1;
    std::size_t source = 0;  // in this proxy memory
    int memory = -1;
    std::size_t target = 0;  // in the peer's
    std::uint64_t sent = 0;
  };
  // Remote rank `from`'s arrival word for local rank `local`, posted into `local`'s region.
  struct ArrivalIn {
    std::size_t source = 0;
    std::uint64_t* region_word = nullptr;  // a device address
    std::uint64_t applied = 0;
  };

  Proxy* proxy = nullptr;
  const Participants* participants = nullptr;
  gpu::DeviceRuntime* runtime = nullptr;
  ProxyLayout mine;
  ir::Protocol protocol = ir::Protocol::Simple;
  gpu::MappedMemory block;
  int registration = -1;
  std::vector<int> memories;  // per participant: its proxy memory's engine handle, or -1
  std::vector<Send> sends;
  std::vector<Receive> receives;
  std::vector<ArrivalOut> arrivals_out;
  std::vector<ArrivalIn> arrivals_in;
  // The kernel's end of each connection, per local rank (in mine.local_ranks' order).
  std::vector<std::vector<gpu::ProxiedSend>> proxied_sends;
  std::vector<std::vector<gpu::ProxiedReceive>> proxied_receives;
  std::function<void(WireDescriptor&)> tamper;

  // One pass: forwards posted messages, delivers announced ones, forwards and raises
  // acknowledgements, and (every few passes) arrivals. Sets `busy` when it moved anything. A
  // failure names the peer and what was wrong.
  Status service(Engine& engine, bool& busy, std::uint32_t pass);
  // Whether a message to or from `participant` is in flight: posted and not acknowledged, or
  // delivered and not consumed.
  bool busy_with(int participant) const;

  char* host(std::size_t offset) const { return static_cast<char*>(block.host) + offset; }
  std::uint64_t* host_word(std::size_t offset) const {
    return reinterpret_cast<std::uint64_t*>(host(offset));
  }
  template <class T>
  T* device(std::size_t offset) const {
    return reinterpret_cast<T*>(static_cast<char*>(block.device) + offset);
  }

 private:
  Status forward(Engine& engine, Send& send, bool& busy);
  Status deliver(Receive& receive, bool& busy);
  Status acknowledge(Engine& engine, Receive& receive, bool& busy);
  Status raise_head(Send& send, bool& busy);
  // An acknowledgement the peer's proxy sent, in a word or on one of its descriptors.
  Status apply_acknowledgement(Send& send, std::uint64_t head, int peer_rank, bool& busy);
  Status arrivals(Engine& engine, bool& busy);
  std::string peer_name(int participant, int rank) const;
  // An engine's failure, with the peer it was sending to.
  Status towards(const Status& failure, int participant, int rank) const;
  // A peer found gone where that need not end anything (proxy.h, Proxy::lost_).
  void note_lost(Status status, int participant);
};

}  // namespace weft::proxy
