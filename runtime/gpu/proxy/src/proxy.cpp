// The proxy's life: connecting to the other hosts' participants, the thread that serves the
// windows, failures. What one window's service does is proxied_window.cpp's.
#include "weft/proxy/proxy.h"

#include <algorithm>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "weft/proxy/peer_record.h"
#include "window_state.h"

namespace weft::proxy {

namespace {

// The most bytes of an engine's address or memory key a participant may send.
constexpr std::size_t kMaxBlob = 64 * 1024;

// A hello word with this bit set is its proxy's goodbye.
constexpr std::uint64_t kGoodbye = std::uint64_t{1} << 63;

// How long a leaving proxy waits for its last puts to be answered. Where the network emulates
// puts in software (UCX over tcp), the target answers each put; a put still unanswered when its
// sender's connections close makes the target's answer fail, which UCX 1.13 treats as fatal and
// aborts the target's process.
constexpr auto kGoodbyeFlush = std::chrono::seconds(10);

}  // namespace

Result<std::vector<std::vector<std::byte>>> allgather_blobs(gpu::Bootstrap& bootstrap,
                                                            std::span<const std::byte> mine,
                                                            std::size_t limit) {
  const auto size = static_cast<std::size_t>(bootstrap.size());
  const auto me = static_cast<std::size_t>(bootstrap.rank());
  std::vector<std::uint64_t> lengths(size, 0);
  lengths[me] = mine.size();
  if (Status s = bootstrap.allgather(std::as_writable_bytes(std::span(lengths)),
                                     sizeof(std::uint64_t));
      !s.ok()) {
    return s;
  }
  std::uint64_t longest = 0;
  for (std::size_t p = 0; p < size; ++p) {
    if (lengths[p] > limit) {
      return Status::error(ErrorCode::SystemError,
                           fmt::format("participant {} sent a record of {} bytes (at most {})", p,
                                       lengths[p], limit));
    }
    longest = std::max(longest, lengths[p]);
  }
  const auto stride = static_cast<std::size_t>(std::max<std::uint64_t>(longest, 1));
  std::vector<std::byte> all(stride * size);
  std::copy(mine.begin(), mine.end(), all.begin() + static_cast<std::ptrdiff_t>(me * stride));
  if (Status s = bootstrap.allgather(all, stride); !s.ok()) return s;
  std::vector<std::vector<std::byte>> blobs(size);
  for (std::size_t p = 0; p < size; ++p) {
    const auto begin = all.begin() + static_cast<std::ptrdiff_t>(p * stride);
    blobs[p].assign(begin, begin + static_cast<std::ptrdiff_t>(lengths[p]));
  }
  return blobs;
}

ProxyOptions proxy_options_from_env(const gpu::EnvLookup& lookup) {
  ProxyOptions options;
  if (const char* library = lookup ? lookup("WEFT_UCX_LIB") : nullptr;
      library != nullptr && *library != '\0') {
    options.engine.library = library;
  }
  return options;
}

Proxy::Proxy(Participants participants, std::shared_ptr<gpu::DeviceRuntime> runtime,
             ProxyOptions options)
    : participants_(std::move(participants)),
      runtime_(std::move(runtime)),
      options_(std::move(options)) {}

Result<std::shared_ptr<Proxy>> Proxy::start(gpu::Bootstrap& bootstrap, Participants participants,
                                            std::shared_ptr<gpu::DeviceRuntime> runtime,
                                            ProxyOptions options) {
  if (!runtime) return Status::error(ErrorCode::InternalError, "proxy: no device runtime");
  std::shared_ptr<Proxy> proxy(
      new Proxy(std::move(participants), std::move(runtime), std::move(options)));
  auto abort = proxy->runtime_->abort_word();
  if (!abort.ok()) return abort.status();
  proxy->abort_ = abort.value();
  // The thread progresses the engine from the start: a software transport's puts land only
  // while their target progresses, and the exchanges below block in the rendezvous.
  proxy->thread_ = std::thread([raw = proxy.get()] { raw->run(); });
  if (Status s = proxy->connect(bootstrap); !s.ok()) return s;
  return proxy;
}

Status Proxy::connect(gpu::Bootstrap& bootstrap) {
  const int me = participants_.me;
  for (int p = 0; p < participants_.size(); ++p) {
    if (participants_.participants_cross(me, p)) peers_.push_back(p);
  }
  // 1. The engine, where this participant needs one: its address, or why there is none.
  PeerRecord mine;
  if (!peers_.empty()) {
    Status local = start_engine(mine);
    if (!local.ok()) {
      mine.state = EngineState::Failed;
      mine.failure = local.message;
    }
  }
  auto all = allgather_blobs(bootstrap, encode_peer_record(mine), kMaxBlob);
  if (!all.ok()) return all.status();
  // 2. Everyone's engine must be up where it is needed. Every participant sees every record, so
  // all of them stop here alike when one could not start its engine.
  std::vector<PeerRecord> records;
  for (int p = 0; p < participants_.size(); ++p) {
    auto record = decode_peer_record(all.value()[static_cast<std::size_t>(p)], p);
    if (!record.ok()) return record.status();
    if (record.value().state == EngineState::Failed) {
      return Status::error(
          ErrorCode::SystemError,
          fmt::format("{} could not start its network engine: {}",
                      p == me ? std::string("the proxy")
                              : fmt::format("participant {} on host '{}'", p,
                                            participants_.hosts[static_cast<std::size_t>(p)]),
                      record.value().failure.empty() ? "no reason given"
                                                     : record.value().failure));
    }
    records.push_back(std::move(record.value()));
  }
  // 3. Each connection made and proved: a word put into every peer and waited for at its target.
  // A peer that is gone, that refuses the connection or that the engine cannot reach fails here,
  // named; the verdicts are exchanged, so that all fail alike.
  Status proved = prove_connections(records);
  std::vector<std::uint8_t> verdicts(static_cast<std::size_t>(participants_.size()), 0);
  verdicts[static_cast<std::size_t>(me)] = proved.ok() ? 1 : 0;
  const Status exchanged =
      bootstrap.allgather(std::as_writable_bytes(std::span(verdicts)), 1);
  if (!proved.ok()) {
    return Status::error(proved.code, fmt::format("the proxy could not reach the other hosts: {}",
                                                  proved.message));
  }
  if (!exchanged.ok()) return exchanged;
  for (int p = 0; p < participants_.size(); ++p) {
    if (verdicts[static_cast<std::size_t>(p)] == 0) {
      return Status::error(ErrorCode::SystemError,
                           fmt::format("participant {} on host '{}' could not reach every other "
                                       "host through its proxy (its log says why)",
                                       p, participants_.hosts[static_cast<std::size_t>(p)]));
    }
  }
  if (engine_) {
    const std::lock_guard lock(mutex_);
    for (int p : peers_) peer_transports_.push_back(engine_->transports(p));
  }
  return {};
}

Status Proxy::start_engine(PeerRecord& record) {
  auto engine = make_ucx_engine(options_.engine);
  if (!engine.ok()) return engine.status();
  auto hello = runtime_->allocate_mapped(
      static_cast<std::size_t>(participants_.size()) * sizeof(std::uint64_t),
      "the proxy's hello words");
  if (!hello.ok()) return hello.status();
  auto registered = engine.value()->register_memory(hello.value().host, hello.value().owner.bytes());
  if (!registered.ok()) return registered.status();
  record.state = EngineState::Ready;
  record.address = engine.value()->address();
  record.hello_key = std::move(registered.value().key);
  const std::lock_guard lock(mutex_);
  engine_ = std::move(engine.value());
  hello_ = std::move(hello.value());
  hello_registration_ = registered.value().id;
  return {};
}

Status Proxy::prove_connections(const std::vector<PeerRecord>& records) {
  if (!engine_) return {};
  const int me = participants_.me;
  waiting_.fetch_add(1, std::memory_order_acq_rel);
  const std::lock_guard lock(mutex_);
  waiting_.fetch_sub(1, std::memory_order_acq_rel);
  std::vector<int>& hello_memory = hello_memory_;
  hello_memory.clear();
  Status proved;
  for (int p : peers_) {
    const PeerRecord& record = records[static_cast<std::size_t>(p)];
    const std::string& host = participants_.hosts[static_cast<std::size_t>(p)];
    if (record.state != EngineState::Ready) {
      proved = Status::error(ErrorCode::SystemError,
                             fmt::format("participant {} on host '{}' has no network engine", p,
                                         host));
      break;
    }
    if (Status s = engine_->connect(p, record.address); !s.ok()) {
      proved = Status::error(s.code, fmt::format("{} (host '{}')", s.message, host));
      break;
    }
    auto memory = engine_->add_remote_memory(p, record.hello_key);
    if (!memory.ok()) {
      proved = memory.status();
      break;
    }
    hello_memory.push_back(memory.value());
  }
  if (proved.ok()) {
    auto* word = static_cast<std::uint64_t*>(hello_.host) + me;
    *word = static_cast<std::uint64_t>(me) + 1;
    for (int memory : hello_memory) {
      proved = engine_->put(memory, static_cast<std::uint64_t>(me) * sizeof(std::uint64_t), word,
                            sizeof(std::uint64_t));
      if (!proved.ok()) break;
    }
  }
  if (proved.ok()) proved = engine_->flush(options_.setup_timeout);
  for (int p : peers_) {
    if (Status s = engine_->peer_status(p); !s.ok()) {
      // The engine's own word for what happened names the peer's host too.
      proved = Status::error(s.code, fmt::format("{} (host '{}')", s.message,
                                                 participants_.hosts[static_cast<std::size_t>(p)]));
      break;
    }
  }
  // The hello words stay: each proxy's heartbeat lands in them from now on (run()).
  const auto now = std::chrono::steady_clock::now();
  heard_.assign(static_cast<std::size_t>(participants_.size()), Heard{0, now});
  lost_.assign(static_cast<std::size_t>(participants_.size()), Status{});
  return proved;
}

Proxy::~Proxy() {
  stop_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
  say_goodbye();
  windows_.clear();
  if (engine_) {
    for (auto& [memory, registration] : retired_) engine_->deregister_memory(registration);
    if (hello_registration_ >= 0) engine_->deregister_memory(hello_registration_);
  }
  engine_.reset();  // no more puts can land: the memory may go
  retired_.clear();
}

std::string Proxy::describe() const {
  if (!engine_) return "no network engine (no other host to reach)";
  std::vector<std::string> unique;
  for (const std::string& t : peer_transports_) {
    if (std::find(unique.begin(), unique.end(), t) == unique.end()) unique.push_back(t);
  }
  std::string transports;
  for (const std::string& t : unique) transports += (transports.empty() ? "" : ", ") + t;
  return fmt::format("{} over {}", engine_->name(), transports.empty() ? "nothing" : transports);
}

Status Proxy::failure() const {
  if (!failed_.load(std::memory_order_acquire)) return {};
  const std::lock_guard lock(failure_mutex_);
  return failure_;
}

void Proxy::fail(Status status) {
  if (const std::string quiet = silence(); !quiet.empty()) {
    status.message += "; silent: " + quiet;
  }
  {
    const std::lock_guard lock(failure_mutex_);
    if (!failure_.ok()) return;
    failure_ = std::move(status);
  }
  failed_.store(true, std::memory_order_release);
  // Every wait of every communicator of the process ends (kernel/primitives.cuh).
  if (abort_.host != nullptr) {
    std::atomic_ref<std::uint32_t>(*abort_.host).fetch_add(1, std::memory_order_acq_rel);
  }
}

void Proxy::add(WindowState* window) {
  waiting_.fetch_add(1, std::memory_order_acq_rel);
  const std::lock_guard lock(mutex_);
  waiting_.fetch_sub(1, std::memory_order_acq_rel);
  windows_.push_back(window);
}

void Proxy::remove(WindowState* window) {
  waiting_.fetch_add(1, std::memory_order_acq_rel);
  const std::lock_guard lock(mutex_);
  waiting_.fetch_sub(1, std::memory_order_acq_rel);
  windows_.erase(std::remove(windows_.begin(), windows_.end(), window), windows_.end());
}

void Proxy::retire(gpu::MappedMemory memory, int registration) {
  retired_.emplace_back(std::move(memory), registration);
}

void Proxy::heartbeat() {
  const int me = participants_.me;
  auto* words = static_cast<std::uint64_t*>(hello_.host);
  const std::uint64_t beat =
      std::atomic_ref<std::uint64_t>(words[me]).load(std::memory_order_relaxed) + 1;
  std::atomic_ref<std::uint64_t>(words[me]).store(beat, std::memory_order_relaxed);
  const auto now = std::chrono::steady_clock::now();
  const std::lock_guard lock(heard_mutex_);
  for (std::size_t k = 0; k < peers_.size() && k < hello_memory_.size(); ++k) {
    const int p = peers_[k];
    const std::uint64_t value =
        std::atomic_ref<const std::uint64_t>(words[p]).load(std::memory_order_acquire);
    Heard& heard = heard_[static_cast<std::size_t>(p)];
    if (value != heard.value) heard = Heard{value, now, (value & kGoodbye) != 0};
    // A peer that said goodbye is closing its connections: a put to it now could arrive after.
    if (heard.departed) continue;
    // A failed put is the peer's failure, which peer_status reports.
    static_cast<void>(engine_->put(hello_memory_[k],
                                   static_cast<std::uint64_t>(me) * sizeof(std::uint64_t),
                                   &words[me], sizeof(std::uint64_t)));
  }
}

void Proxy::say_goodbye() {
  if (!engine_ || hello_memory_.empty()) return;
  const int me = participants_.me;
  auto* words = static_cast<std::uint64_t*>(hello_.host);
  std::atomic_ref<std::uint64_t>(words[me]).fetch_or(kGoodbye, std::memory_order_relaxed);
  for (std::size_t k = 0; k < peers_.size() && k < hello_memory_.size(); ++k) {
    const auto p = static_cast<std::size_t>(peers_[k]);
    if (!lost_.empty() && !lost_[p].ok()) continue;
    static_cast<void>(engine_->put(hello_memory_[k],
                                   static_cast<std::uint64_t>(me) * sizeof(std::uint64_t),
                                   &words[me], sizeof(std::uint64_t)));
  }
  // Lost peers fail their puts at once; the answers of the live ones come within the bound.
  static_cast<void>(engine_->flush(kGoodbyeFlush));
}

std::string Proxy::silence() const {
  constexpr auto kSilent = std::chrono::seconds(1);
  const auto now = std::chrono::steady_clock::now();
  std::string note;
  const std::lock_guard lock(heard_mutex_);
  for (int p : peers_) {
    if (heard_.size() <= static_cast<std::size_t>(p)) break;
    if (heard_[static_cast<std::size_t>(p)].departed) continue;
    const auto quiet = now - heard_[static_cast<std::size_t>(p)].at;
    if (quiet < kSilent) continue;
    note += fmt::format("{}participant {} on host '{}' (its proxy, or its whole process, has not "
                        "answered for {:.1f} s)",
                        note.empty() ? "" : "; ", p,
                        participants_.hosts[static_cast<std::size_t>(p)],
                        std::chrono::duration<double>(quiet).count());
  }
  return note;
}

void Proxy::run() {
  using Clock = std::chrono::steady_clock;
  // A pass that found nothing to do yields the core (at once: where cores are few, a spinning
  // proxy holds up the very threads it waits for, the engine's peer among them, for a whole
  // time slice; where they are many, a yield costs a microsecond), and after a long quiet
  // spell the thread sleeps a little, so that an idle communicator does not hold a core (the
  // first message after a long pause then waits up to the sleep).
  constexpr auto kSleepAfter = std::chrono::milliseconds(50);
  constexpr auto kSleep = std::chrono::microseconds(50);
  // Peers' failures are looked at this often: a lost connection is noticed within it.
  constexpr std::uint32_t kPeerCheckEvery = 4096;
  // Every proxy tells every peer it is alive this often, so that a failure's message can name
  // a peer whose proxy stopped answering (proxy.h, silence()).
  constexpr auto kHeartbeat = std::chrono::milliseconds(100);
  auto heartbeat_at = Clock::now();
  auto last_busy = Clock::now();
  std::uint32_t iteration = 0;
  while (!stop_.load(std::memory_order_acquire)) {
    bool busy = false;
    {
      const std::lock_guard lock(mutex_);
      if (engine_) busy = engine_->progress();
      if (engine_ && !failed_.load(std::memory_order_relaxed)) {
        for (WindowState* window : windows_) {
          Status status = window->service(*engine_, busy, iteration);
          if (!status.ok()) {
            fail(std::move(status));
            break;
          }
        }
      }
      if (engine_ && iteration % 256 == 0 && !hello_memory_.empty() &&
          Clock::now() - heartbeat_at >= kHeartbeat) {
        heartbeat_at = Clock::now();
        heartbeat();
      }
      if (engine_ && ++iteration % kPeerCheckEvery == 0 &&
          !failed_.load(std::memory_order_relaxed)) {
        for (int p : peers_) {
          Status s = engine_->peer_status(p);
          if (s.ok() || !lost_[static_cast<std::size_t>(p)].ok()) continue;
          Status gone = Status::error(
              s.code, fmt::format("participant {} on host '{}' is gone: {}; its process ended "
                                  "or its host cannot be reached",
                                  p, participants_.hosts[static_cast<std::size_t>(p)], s.message));
          // A peer that leaves with nothing in flight to or from it (its communicator done
          // first, at the end of a job) is only noted: a later message to it fails then.
          const bool in_flight = std::any_of(windows_.begin(), windows_.end(),
                                             [p](const WindowState* w) { return w->busy_with(p); });
          if (in_flight) {
            fail(std::move(gone));
            break;
          }
          lost_[static_cast<std::size_t>(p)] = std::move(gone);
        }
      }
    }
    if (waiting_.load(std::memory_order_acquire) > 0) {
      std::this_thread::yield();
      continue;
    }
    if (busy) {
      last_busy = Clock::now();
      continue;
    }
    if (iteration % 64 == 0 && Clock::now() - last_busy > kSleepAfter) {
      std::this_thread::sleep_for(kSleep);
    } else {
      std::this_thread::yield();
    }
  }
}

}  // namespace weft::proxy
