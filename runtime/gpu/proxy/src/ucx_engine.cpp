// The UCX engine (engine.h): one UCP context and worker per engine, an endpoint per peer,
// put-with-signal as put, fence, put (UCP orders what follows a fence after what precedes it).
// Without hardware RMA (tcp, shared memory) UCP emulates puts with messages that the target's
// worker applies when it progresses, which the proxy thread does continuously.
#include <stdio.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "ucx_library.h"
#include "weft/proxy/engine.h"

namespace weft::proxy {

namespace {

// What a peer needs to put into memory registered here: where it starts in this process (UCP's
// puts name the target's own address; the proxy's never do), its length, and UCP's packed key.
struct KeyHeader {
  std::uint64_t base = 0;
  std::uint64_t bytes = 0;
};

class UcxEngine final : public Engine {
 public:
  ~UcxEngine() override { close(); }

  Status open(const EngineOptions& options) {
    if (Status s = lib_.open(options.library.empty() ? "libucp.so.0" : options.library);
        !s.ok()) {
      return s;
    }
    version_ = lib_.ucp_get_version_string();
    ucp_config_t* config = nullptr;
    if (ucs_status_t st = lib_.ucp_config_read(nullptr, nullptr, &config); st != UCS_OK) {
      return failure("reading UCX's configuration (UCX_* variables)", st);
    }
    for (const auto& [name, value] : options.ucx_settings) {
      if (ucs_status_t st = lib_.ucp_config_modify(config, name.c_str(), value.c_str());
          st != UCS_OK) {
        lib_.ucp_config_release(config);
        return failure(fmt::format("setting UCX's {} to '{}'", name, value), st);
      }
    }
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_RMA;
    const ucs_status_t init =
        lib_.ucp_init_version(UCP_API_MAJOR, UCP_API_MINOR, &params, config, &context_);
    lib_.ucp_config_release(config);
    if (init != UCS_OK) return failure("starting UCX (ucp_init)", init);
    ucp_worker_params_t worker{};
    worker.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    // The proxy's thread progresses it and the communicator's thread sets connections up, never
    // at once (the proxy's lock).
    worker.thread_mode = UCS_THREAD_MODE_SERIALIZED;
    if (ucs_status_t st = lib_.ucp_worker_create(context_, &worker, &worker_); st != UCS_OK) {
      return failure("creating a UCX worker", st);
    }
    ucp_address_t* address = nullptr;
    std::size_t length = 0;
    if (ucs_status_t st = lib_.ucp_worker_get_address(worker_, &address, &length); st != UCS_OK) {
      return failure("reading the UCX worker's address", st);
    }
    const auto* bytes = reinterpret_cast<const std::byte*>(address);
    address_.assign(bytes, bytes + length);
    lib_.ucp_worker_release_address(worker_, address);
    return {};
  }

  std::string name() const override { return "UCX " + version_; }
  std::vector<std::byte> address() const override { return address_; }

  Result<RegisteredMemory> register_memory(void* base, std::size_t bytes) override {
    ucp_mem_map_params_t params{};
    params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
    params.address = base;
    params.length = bytes;
    ucp_mem_h memory = nullptr;
    if (ucs_status_t st = lib_.ucp_mem_map(context_, &params, &memory); st != UCS_OK) {
      return failure(fmt::format("registering {} bytes with UCX", bytes), st);
    }
    void* packed = nullptr;
    std::size_t packed_bytes = 0;
    if (ucs_status_t st = lib_.ucp_rkey_pack(context_, memory, &packed, &packed_bytes);
        st != UCS_OK) {
      lib_.ucp_mem_unmap(context_, memory);
      return failure("packing a UCX memory key", st);
    }
    RegisteredMemory registered;
    registered.id = next_local_++;
    KeyHeader header{reinterpret_cast<std::uintptr_t>(base), bytes};
    registered.key.resize(sizeof(header) + packed_bytes);
    std::memcpy(registered.key.data(), &header, sizeof(header));
    std::memcpy(registered.key.data() + sizeof(header), packed, packed_bytes);
    lib_.ucp_rkey_buffer_release(packed);
    locals_.emplace(registered.id, memory);
    return registered;
  }

  void deregister_memory(int id) override {
    auto it = locals_.find(id);
    if (it == locals_.end()) return;
    lib_.ucp_mem_unmap(context_, it->second);
    locals_.erase(it);
  }

  Status connect(int peer, std::span<const std::byte> address) override {
    if (peers_.count(peer) != 0) return {};
    auto state = std::make_unique<Peer>();
    state->engine = this;
    state->index = peer;
    ucp_ep_params_t params{};
    params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                        UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.address = reinterpret_cast<const ucp_address_t*>(address.data());
    // A peer's death is reported by UCX only where its transports can tell (tcp, InfiniBand);
    // shared memory cannot, and UCP then refuses the endpoint: take it without, and the kernel's
    // timeouts stand guard instead (WEFT_TIMEOUT_S).
    params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb = &UcxEngine::on_peer_error;
    params.err_handler.arg = state.get();
    ucs_status_t st = lib_.ucp_ep_create(worker_, &params, &state->endpoint);
    if (st == UCS_ERR_UNREACHABLE) {
      params.err_mode = UCP_ERR_HANDLING_MODE_NONE;
      params.field_mask &= ~static_cast<std::uint64_t>(UCP_EP_PARAM_FIELD_ERR_HANDLER);
      st = lib_.ucp_ep_create(worker_, &params, &state->endpoint);
      state->detects_failure = false;
      all_detect_ = false;
    }
    if (st != UCS_OK) {
      return Status::error(
          ErrorCode::SystemError,
          fmt::format("UCX cannot reach participant {}: {}: its address refuses connections "
                      "(its process ended, or a firewall), or the two hosts have no transport "
                      "in common (compare UCX_TLS and UCX_NET_DEVICES on both; `ucx_info -d` "
                      "lists each host's)",
                      peer, lib_.status_string(st)));
    }
    peers_.emplace(peer, std::move(state));
    return {};
  }

  Result<int> add_remote_memory(int peer, std::span<const std::byte> key) override {
    auto it = peers_.find(peer);
    if (it == peers_.end() || it->second->endpoint == nullptr) {
      return Status::error(ErrorCode::InternalError,
                           fmt::format("UCX: memory of participant {}, not connected", peer));
    }
    if (key.size() <= sizeof(KeyHeader)) {
      return Status::error(ErrorCode::SystemError,
                           fmt::format("participant {} sent a memory key of {} bytes", peer,
                                       key.size()));
    }
    Remote remote;
    remote.peer = peer;
    KeyHeader header;
    std::memcpy(&header, key.data(), sizeof(header));
    remote.base = header.base;
    remote.bytes = header.bytes;
    if (ucs_status_t st = lib_.ucp_ep_rkey_unpack(it->second->endpoint,
                                                  key.data() + sizeof(KeyHeader), &remote.rkey);
        st != UCS_OK) {
      return failure(fmt::format("unpacking participant {}'s memory key", peer), st);
    }
    const int id = next_remote_++;
    remotes_.emplace(id, remote);
    return id;
  }

  void remove_remote_memory(int memory) override {
    auto it = remotes_.find(memory);
    if (it == remotes_.end()) return;
    lib_.ucp_rkey_destroy(it->second.rkey);
    remotes_.erase(it);
  }

  std::size_t remote_bytes(int memory) const override {
    auto it = remotes_.find(memory);
    return it == remotes_.end() ? 0 : it->second.bytes;
  }

  Status put(int memory, std::uint64_t offset, const void* source, std::size_t bytes) override {
    auto it = remotes_.find(memory);
    if (it == remotes_.end()) {
      return Status::error(ErrorCode::InternalError, fmt::format("UCX: no remote memory {}", memory));
    }
    const Remote& remote = it->second;
    if (offset > remote.bytes || bytes > remote.bytes - offset) {
      return Status::error(ErrorCode::InternalError,
                           fmt::format("a put of {} bytes at offset {} of participant {}'s memory, "
                                       "which holds {}: refused",
                                       bytes, offset, remote.peer, remote.bytes));
    }
    if (bytes == 0) return {};
    Peer& peer = *peers_.at(remote.peer);
    if (!peer.failure.ok()) return peer.failure;
    ucp_request_param_t params{};
    ucs_status_ptr_t request = lib_.ucp_put_nbx(peer.endpoint, source, bytes,
                                                remote.base + offset, remote.rkey, &params);
    if (UCS_PTR_IS_ERR(request)) {
      return Status::error(ErrorCode::SystemError,
                           fmt::format("UCX put to participant {} failed: {}", remote.peer,
                                       lib_.status_string(UCS_PTR_STATUS(request))));
    }
    // Released by UCP once complete; completion is observed by flush or by the peer's answer,
    // and a failure by the endpoint's error handler.
    if (request != nullptr) lib_.ucp_request_free(request);
    return {};
  }

  Status signal(int memory, std::uint64_t offset, const void* source,
                std::size_t bytes) override {
    if (ucs_status_t st = lib_.ucp_worker_fence(worker_); st != UCS_OK) {
      return failure("ordering puts (ucp_worker_fence)", st);
    }
    return put(memory, offset, source, bytes);
  }

  Status flush(std::chrono::milliseconds timeout) override {
    ucp_request_param_t params{};
    ucs_status_ptr_t request = lib_.ucp_worker_flush_nbx(worker_, &params);
    if (UCS_PTR_IS_ERR(request)) return failure("flushing puts", UCS_PTR_STATUS(request));
    if (request == nullptr) return first_peer_failure();
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    ucs_status_t st = UCS_INPROGRESS;
    while ((st = lib_.ucp_request_check_status(request)) == UCS_INPROGRESS &&
           std::chrono::steady_clock::now() < deadline) {
      if (lib_.ucp_worker_progress(worker_) == 0) std::this_thread::yield();
    }
    lib_.ucp_request_free(request);
    if (st == UCS_INPROGRESS) {
      if (Status s = first_peer_failure(); !s.ok()) return s;
      return Status::error(ErrorCode::Timeout,
                           fmt::format("UCX: puts not complete after {:.1f} s",
                                       static_cast<double>(timeout.count()) / 1000.0));
    }
    if (st != UCS_OK) {
      if (Status s = first_peer_failure(); !s.ok()) return s;
      return failure("flushing puts", st);
    }
    return first_peer_failure();
  }

  bool progress() override { return lib_.ucp_worker_progress(worker_) != 0; }

  Status peer_status(int peer) const override {
    auto it = peers_.find(peer);
    if (it == peers_.end()) return {};
    return it->second->failure;
  }

  std::string transports(int peer) override {
    auto it = peers_.find(peer);
    if (it == peers_.end() || it->second->endpoint == nullptr) return "not connected";
    char* text = nullptr;
    std::size_t length = 0;
    FILE* stream = ::open_memstream(&text, &length);
    if (stream == nullptr) return "unknown";
    lib_.ucp_ep_print_info(it->second->endpoint, stream);
    std::fclose(stream);
    const std::string info(text, length);
    std::free(text);
    return lane_transports(info);
  }

  bool detects_peer_failure() const override { return all_detect_; }

 private:
  struct Peer {
    UcxEngine* engine = nullptr;
    int index = -1;
    ucp_ep_h endpoint = nullptr;
    bool detects_failure = true;
    Status failure;
  };
  struct Remote {
    int peer = -1;
    ucp_rkey_h rkey = nullptr;
    std::uint64_t base = 0;
    std::size_t bytes = 0;
  };

  static void on_peer_error(void* arg, ucp_ep_h /*endpoint*/, ucs_status_t status) {
    auto* peer = static_cast<Peer*>(arg);
    if (peer->failure.ok()) {
      peer->failure = Status::error(
          ErrorCode::SystemError,
          fmt::format("UCX lost the connection to participant {}: {}", peer->index,
                      peer->engine->lib_.status_string(status)));
    }
  }

  // "lane[0]:  1:tcp/lo.0 md[1] -> ..." → "tcp": the transports of the endpoint's lanes, each
  // once, in lane order.
  static std::string lane_transports(const std::string& info) {
    std::vector<std::string> names;
    std::istringstream lines(info);
    for (std::string line; std::getline(lines, line);) {
      const auto lane = line.find("lane[");
      if (lane == std::string::npos) continue;
      const auto colon = line.find(':', lane);
      if (colon == std::string::npos) continue;
      std::istringstream words(line.substr(colon + 1));
      std::string word;
      words >> word;  // "1:tcp/lo.0"
      if (const auto index = word.find(':'); index != std::string::npos) word.erase(0, index + 1);
      if (const auto slash = word.find('/'); slash != std::string::npos) word.erase(slash);
      if (!word.empty() && std::find(names.begin(), names.end(), word) == names.end()) {
        names.push_back(word);
      }
    }
    if (names.empty()) return "unknown";
    std::string joined;
    for (const auto& n : names) joined += (joined.empty() ? "" : "+") + n;
    return joined;
  }

  Status first_peer_failure() const {
    for (const auto& [index, peer] : peers_) {
      if (!peer->failure.ok()) return peer->failure;
    }
    return {};
  }

  Status failure(std::string_view what, ucs_status_t status) const {
    return Status::error(ErrorCode::SystemError,
                         fmt::format("UCX: {}: {}", what, lib_.status_string(status)));
  }

  void close() {
    for (auto& [id, remote] : remotes_) lib_.ucp_rkey_destroy(remote.rkey);
    remotes_.clear();
    // The worker's destruction closes every endpoint with it, at once, without progressing
    // it: a put that arrived from a peer is not handled any more, for its answer would go out
    // on an endpoint being closed, which UCX 1.13 treats as fatal (ucp_put_handler). A peer
    // that died cannot hold the close up either. The proxy said goodbye and flushed first.
    if (worker_ != nullptr) lib_.ucp_worker_destroy(worker_);
    worker_ = nullptr;
    peers_.clear();
    for (auto& [id, memory] : locals_) lib_.ucp_mem_unmap(context_, memory);
    locals_.clear();
    if (context_ != nullptr) lib_.ucp_cleanup(context_);
    context_ = nullptr;
  }

  ucx::Library lib_;
  std::string version_;
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  std::vector<std::byte> address_;
  std::map<int, std::unique_ptr<Peer>> peers_;
  std::map<int, ucp_mem_h> locals_;
  std::map<int, Remote> remotes_;
  int next_local_ = 0;
  int next_remote_ = 0;
  bool all_detect_ = true;
};

}  // namespace

Result<std::unique_ptr<Engine>> make_ucx_engine(const EngineOptions& options) {
  auto engine = std::make_unique<UcxEngine>();
  if (Status s = engine->open(options); !s.ok()) return s;
  return std::unique_ptr<Engine>(std::move(engine));
}

}  // namespace weft::proxy
