// Setting a window's connections across hosts up (Proxy::open_window) and taking them down
// (ProxiedWindow::close); what the thread does for them in between is window_service.cpp's.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "weft/proxy/proxy.h"
#include "window_state.h"

namespace weft::proxy {

namespace {

constexpr std::size_t kMaxKey = 64 * 1024;

struct WindowHeader {
  std::uint64_t fingerprint = 0;
  std::uint64_t bytes = 0;  // of the sender's proxy memory
  std::uint64_t ready = 0;  // 0: the sender failed to set its memory up
};

}  // namespace

ProxiedWindow::ProxiedWindow(std::shared_ptr<Proxy> proxy) : proxy_(std::move(proxy)) {}

ProxiedWindow::~ProxiedWindow() {
  if (!state_ || closed_) return;
  proxy_->remove(state_.get());
  // A peer may still put into this memory: it stays registered, with the proxy, until the
  // engine is gone.
  const std::lock_guard lock(proxy_->mutex_);
  for (int memory : state_->memories) {
    if (memory >= 0 && proxy_->engine_) proxy_->engine_->remove_remote_memory(memory);
  }
  proxy_->retire(std::move(state_->block), state_->registration);
}

std::span<const gpu::ProxiedSend> ProxiedWindow::sends(int rank) const {
  const auto& locals = state_->mine.local_ranks;
  const auto it = std::find(locals.begin(), locals.end(), rank);
  if (it == locals.end()) return {};
  return state_->proxied_sends[static_cast<std::size_t>(it - locals.begin())];
}

std::span<const gpu::ProxiedReceive> ProxiedWindow::receives(int rank) const {
  const auto& locals = state_->mine.local_ranks;
  const auto it = std::find(locals.begin(), locals.end(), rank);
  if (it == locals.end()) return {};
  return state_->proxied_receives[static_cast<std::size_t>(it - locals.begin())];
}

void* ProxiedWindow::arrival_table(int rank) const {
  const std::size_t offset = state_->mine.arrival_out(rank);
  return offset == kNoOffset ? nullptr : state_->device<char>(offset);
}

Status ProxiedWindow::close(gpu::Bootstrap& bootstrap) {
  if (!state_ || closed_) return {};
  proxy_->remove(state_.get());
  Status flushed;
  {
    proxy_->waiting_.fetch_add(1, std::memory_order_acq_rel);
    const std::lock_guard lock(proxy_->mutex_);
    proxy_->waiting_.fetch_sub(1, std::memory_order_acq_rel);
    if (proxy_->engine_) flushed = proxy_->engine_->flush(proxy_->options_.setup_timeout);
  }
  // Nobody frees its memory before everybody's last puts into it have landed.
  Status met = bootstrap.barrier();
  if (!flushed.ok() || !met.ok()) return !flushed.ok() ? flushed : met;  // the destructor keeps it
  {
    const std::lock_guard lock(proxy_->mutex_);
    for (int memory : state_->memories) {
      if (memory >= 0) proxy_->engine_->remove_remote_memory(memory);
    }
    if (state_->registration >= 0) proxy_->engine_->deregister_memory(state_->registration);
  }
  closed_ = true;
  state_.reset();
  return {};
}

Result<std::unique_ptr<ProxiedWindow>> Proxy::open_window(gpu::Bootstrap& bootstrap,
                                                          const gpu::WindowRequest& request,
                                                          std::span<void* const> regions) {
  const Participants& who = participants_;
  const auto crosses = [&who](int a, int b) { return who.crosses(a, b); };
  std::vector<ProxyLayout> layouts;
  for (int p = 0; p < who.size(); ++p) {
    layouts.push_back(layout_proxy(request.layouts, who.owner, p, crosses, request.protocol));
  }
  auto state = std::make_unique<WindowState>();
  state->proxy = this;
  state->participants = &participants_;
  state->runtime = runtime_.get();
  state->mine = layouts[static_cast<std::size_t>(who.me)];
  state->protocol = request.protocol;
  state->tamper = options_.tamper;
  const ProxyLayout& mine = state->mine;
  if (regions.size() != mine.local_ranks.size()) {
    return Status::error(ErrorCode::InternalError,
                         fmt::format("proxy: {} regions for {} local ranks", regions.size(),
                                     mine.local_ranks.size()));
  }

  // This participant's proxy memory, registered; a failure still takes part in the exchange.
  Status local;
  std::vector<std::byte> key;
  const bool needed = !mine.sends.empty() || !mine.receives.empty() || !mine.remote_ranks.empty();
  if (std::find(regions.begin(), regions.end(), nullptr) != regions.end()) {
    local = Status::error(ErrorCode::InternalError, "proxy: a local rank has no region");
  } else if (needed && engine_) {
    auto block = runtime_->allocate_mapped(mine.total_bytes, "the proxy's memory");
    if (!block.ok()) {
      local = block.status();
    } else {
      state->block = std::move(block.value());
      std::memset(state->block.host, 0, mine.total_bytes);
      waiting_.fetch_add(1, std::memory_order_acq_rel);
      const std::lock_guard lock(mutex_);
      waiting_.fetch_sub(1, std::memory_order_acq_rel);
      auto registered = engine_->register_memory(state->block.host, mine.total_bytes);
      if (!registered.ok()) {
        local = registered.status();
      } else {
        state->registration = registered.value().id;
        key = std::move(registered.value().key);
      }
    }
  }
  WindowHeader header{request.fingerprint, mine.total_bytes, local.ok() ? 1u : 0u};
  std::vector<std::byte> blob(sizeof(header));
  std::memcpy(blob.data(), &header, sizeof(header));
  blob.insert(blob.end(), key.begin(), key.end());
  auto all = allgather_blobs(bootstrap, blob, kMaxKey);
  if (!all.ok()) return all.status();
  auto window = std::unique_ptr<ProxiedWindow>(new ProxiedWindow(shared_from_this()));
  if (!local.ok()) return local;

  state->memories.assign(static_cast<std::size_t>(who.size()), -1);
  for (int p = 0; p < who.size(); ++p) {
    const std::vector<std::byte>& theirs = all.value()[static_cast<std::size_t>(p)];
    WindowHeader h;
    if (theirs.size() < sizeof(h)) {
      return Status::error(ErrorCode::SystemError,
                           fmt::format("participant {} sent a malformed window record", p));
    }
    std::memcpy(&h, theirs.data(), sizeof(h));
    if (h.ready == 0) {
      return Status::error(ErrorCode::SystemError,
                           fmt::format("participant {} on host '{}' could not set its proxy "
                                       "memory up (its log says why)",
                                       p, who.hosts[static_cast<std::size_t>(p)]));
    }
    if (h.fingerprint != request.fingerprint) {
      return Status::error(
          ErrorCode::Mismatch,
          fmt::format("participants {} and {} loaded different algorithms (or options) at the "
                      "same position (fingerprints {:#x} and {:#x}); every rank must load the "
                      "same files in the same order",
                      who.me, p, request.fingerprint, h.fingerprint));
    }
    if (!who.participants_cross(who.me, p) || theirs.size() == sizeof(h)) continue;
    if (h.bytes != layouts[static_cast<std::size_t>(p)].total_bytes) {
      return Status::error(ErrorCode::Mismatch,
                           fmt::format("participant {}'s proxy memory is {} bytes where its "
                                       "layout needs {}: it runs another version of Weft or "
                                       "other FIFO options",
                                       p, h.bytes, layouts[static_cast<std::size_t>(p)].total_bytes));
    }
    const std::lock_guard lock(mutex_);
    auto memory = engine_->add_remote_memory(
        p, std::span<const std::byte>(theirs.data() + sizeof(h), theirs.size() - sizeof(h)));
    if (!memory.ok()) return memory.status();
    state->memories[static_cast<std::size_t>(p)] = memory.value();
    if (engine_->remote_bytes(memory.value()) != h.bytes) {
      return Status::error(ErrorCode::SystemError,
                           fmt::format("participant {}'s memory key covers {} bytes, its record "
                                       "says {}",
                                       p, engine_->remote_bytes(memory.value()), h.bytes));
    }
  }

  // Each stage, with where its other end is in the peer's memory.
  const auto memory_of = [&](int rank) {
    return state->memories[static_cast<std::size_t>(who.owner[static_cast<std::size_t>(rank)])];
  };
  const auto layout_of = [&](int rank) -> const ProxyLayout& {
    return layouts[static_cast<std::size_t>(who.owner[static_cast<std::size_t>(rank)])];
  };
  state->proxied_sends.resize(mine.local_ranks.size());
  state->proxied_receives.resize(mine.local_ranks.size());
  const auto local_index = [&](int rank) {
    return static_cast<std::size_t>(
        std::find(mine.local_ranks.begin(), mine.local_ranks.end(), rank) -
        mine.local_ranks.begin());
  };
  for (const SendStage& stage : mine.sends) {
    const ReceiveStage* other = layout_of(stage.connection.receiver).find_receive(stage.connection);
    if (other == nullptr) {
      return Status::error(ErrorCode::InternalError,
                           fmt::format("proxy: rank {} has no receiving end for channel {}, "
                                       "rank {} → rank {}",
                                       stage.connection.receiver, stage.connection.channel,
                                       stage.connection.sender, stage.connection.receiver));
    }
    WindowState::Send send;
    send.stage = &stage;
    send.peer = who.owner[static_cast<std::size_t>(stage.connection.receiver)];
    send.memory = memory_of(stage.connection.receiver);
    send.landing = other->landing;
    send.inbox = other->inbox;
    state->sends.push_back(send);
    gpu::ProxiedSend endpoint;
    endpoint.channel = stage.connection.channel;
    endpoint.receiver = stage.connection.receiver;
    endpoint.fifo = state->device<char>(stage.fifo);
    endpoint.tail = state->device<std::uint64_t>(stage.tail);
    endpoint.head = state->device<const std::uint64_t>(stage.head);
    endpoint.descriptors = state->device<std::uint64_t>(stage.descriptors);
    state->proxied_sends[local_index(stage.connection.sender)].push_back(endpoint);
  }
  for (const ReceiveStage& stage : mine.receives) {
    const SendStage* other = layout_of(stage.connection.sender).find_send(stage.connection);
    if (other == nullptr) {
      return Status::error(ErrorCode::InternalError,
                           fmt::format("proxy: rank {} has no sending end for channel {}, "
                                       "rank {} → rank {}",
                                       stage.connection.sender, stage.connection.channel,
                                       stage.connection.sender, stage.connection.receiver));
    }
    WindowState::Receive receive;
    receive.stage = &stage;
    receive.peer = who.owner[static_cast<std::size_t>(stage.connection.sender)];
    receive.memory = memory_of(stage.connection.sender);
    receive.ack_inbox = other->ack_inbox;
    receive.ack_position =
        static_cast<int>(other - layout_of(stage.connection.sender).sends.data());
    state->receives.push_back(receive);
    gpu::ProxiedReceive endpoint;
    endpoint.channel = stage.connection.channel;
    endpoint.sender = stage.connection.sender;
    endpoint.fifo = state->device<const char>(stage.fifo);
    endpoint.tail = state->device<const std::uint64_t>(stage.tail);
    endpoint.head = state->device<std::uint64_t>(stage.head);
    state->proxied_receives[local_index(stage.connection.receiver)].push_back(endpoint);
  }
  // Arrivals: each local rank's word for each remote rank it crosses, out; and in, each remote
  // rank's word for each local rank, into that rank's region.
  for (int remote : mine.remote_ranks) {
    const ProxyLayout& theirs = layout_of(remote);
    for (int rank : mine.local_ranks) {
      if (!who.crosses(rank, remote)) continue;
      WindowState::ArrivalOut out;
      out.peer = who.owner[static_cast<std::size_t>(remote)];
      out.rank = remote;
      out.source = mine.arrival_out(remote) + static_cast<std::size_t>(rank) * 8;
      out.memory = memory_of(remote);
      out.target = theirs.arrival_in(remote, rank);
      state->arrivals_out.push_back(out);
      WindowState::ArrivalIn in;
      in.source = mine.arrival_in(rank, remote);
      in.region_word = static_cast<std::uint64_t*>(regions[local_index(rank)]) + remote;
      state->arrivals_in.push_back(in);
    }
  }
  // The stages point into state->mine, which moves with the state: keep it where it is.
  window->state_ = std::move(state);
  add(window->state_.get());
  return window;
}

}  // namespace weft::proxy
