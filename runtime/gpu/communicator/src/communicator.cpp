// weft::gpu::Communicator: loading (flatten, lay out, allocate, exchange) and running (plan the
// call, check residency, launch) algorithms. See communicator.h for the contract. Everything
// device-specific goes through the transport's DeviceRuntime, so this one implementation serves
// CUDA devices and host mode alike.
#include "weft/communicator/communicator.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "weft/ir/geometry.h"
#include "weft/ir/validate.h"
#include "weft/program/call_plan.h"
#include "weft/program/connection_layout.h"
#include "weft/program/device_abi.h"
#include "weft/program/device_program.h"
#include "weft/program/launch_plan.h"

namespace weft::gpu {

namespace {

// Runtime-owned memory a call needs per local rank (scratch, avg's premultiplied input). Grows
// on demand; outgrown allocations are kept until the algorithm is unloaded, because a captured
// CUDA graph may still refer to them.
class GrowingBuffers {
 public:
  explicit GrowingBuffers(std::size_t ranks) : current_(ranks) {}

  // Makes buffer k at least `bytes`; fails during capture, when allocating is not allowed.
  Status ensure(std::size_t k, std::size_t bytes, DeviceRuntime& runtime, bool capturing,
                std::string_view what) {
    if (bytes == 0 || current_[k].bytes() >= bytes) return {};
    if (capturing) {
      return Status::error(
          ErrorCode::InvalidUsage,
          fmt::format("the call needs {} bytes of {} but the stream is being captured, when Weft "
                      "cannot allocate; call reserve_scratch (weftReserveScratch) with the "
                      "largest count first, or run the call once before capturing",
                      bytes, what));
    }
    auto allocation = runtime.allocate(bytes, what);
    if (!allocation.ok()) return allocation.status();
    if (current_[k].get() != nullptr) retired_.push_back(std::move(current_[k]));
    current_[k] = std::move(allocation.value());
    return {};
  }
  char* get(std::size_t k) const { return static_cast<char*>(current_[k].get()); }

 private:
  std::vector<DeviceMemory> current_;
  std::vector<DeviceMemory> retired_;
};

struct LoadedAlgorithm {
  ir::Algorithm algorithm;
  std::vector<RankProgram> programs;  // per local rank
  std::vector<RegionLayout> layouts;  // per rank
  std::unique_ptr<SharedWindow> window;
  std::vector<DeviceMemory> privates;  // per local rank
  DeviceMemory ctas;
  int cta_count = 0;
  int max_count = 0;
  int max_message_count = 0;  // largest cnt of a step that sends or receives
  int max_steps = 0;
  // Some peer may be another device: the kernel orders its handshakes at system scope.
  bool system_scope = true;
  // Why calls cannot run this algorithm at all (LL128 over a link that may tear its lines).
  std::string refusal;
  GrowingBuffers scratch;
  GrowingBuffers premultiplied;

  explicit LoadedAlgorithm(std::size_t local) : scratch(local), premultiplied(local) {}
};

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

Result<ir::Algorithm> validated(const ir::Algorithm& algorithm) {
  const Diagnostics diagnostics = ir::validate(algorithm, ir::weft_limits());
  if (diagnostics.has_errors()) {
    return Status::error(
        ErrorCode::InvalidAlgorithm,
        fmt::format("algorithm '{}' is invalid:\n{}", algorithm.name, diagnostics.str()));
  }
  return algorithm;
}

class CommunicatorImpl final : public Communicator {
 public:
  CommunicatorImpl(std::shared_ptr<Transport> transport, RuntimeOptions options)
      : transport_(std::move(transport)),
        runtime_(transport_->device_runtime()),
        options_(std::move(options)),
        local_ranks_(transport_->local_ranks().begin(), transport_->local_ranks().end()) {}

  Status initialise() {
    if (!runtime_) {
      return Status::error(
          ErrorCode::InvalidArgument,
          fmt::format("communicator: the {} transport has no device runtime", transport_->name()));
    }
    auto control = runtime_->allocate(sizeof(device::Control), "the communicator's control word");
    if (!control.ok()) return control.status();
    control_ = std::move(control.value());
    auto report = runtime_->allocate_mapped(sizeof(device::ErrorReport), "the error report");
    if (!report.ok()) return report.status();
    report_ = std::move(report.value());
    auto abort = runtime_->abort_word();
    if (!abort.ok()) return abort.status();
    abort_ = abort.value();
    // Failures before this communicator existed do not concern it; later ones stop it too.
    abort_epoch_ = process_abort_count();
    return {};
  }

  std::uint32_t process_abort_count() const {
    return std::atomic_ref<const std::uint32_t>(*abort_.host).load(std::memory_order_acquire);
  }

  int nranks() const override { return transport_->nranks(); }
  std::span<const int> local_ranks() const override { return local_ranks_; }
  int device() const override { return transport_->device(); }
  DeviceKind device_kind() const override { return runtime_->kind(); }
  const RuntimeOptions& options() const override { return options_; }

  Result<AlgorithmHandle> load(const std::string& xml_path) override {
    ir::LoadResult loaded = ir::load_xml_file(xml_path, ir::weft_limits());
    if (!loaded.ok()) {
      return Status::error(
          ErrorCode::InvalidAlgorithm,
          fmt::format("{} failed to load:\n{}", xml_path, loaded.diagnostics.str()));
    }
    return install(std::move(*loaded.algorithm));
  }

  Result<AlgorithmHandle> load(const ir::Algorithm& algorithm) override {
    auto checked = validated(algorithm);
    if (!checked.ok()) return checked.status();
    return install(std::move(checked.value()));
  }

  Status unload(AlgorithmHandle handle) override {
    auto it = algorithms_.find(handle.id);
    if (it == algorithms_.end()) return unknown(handle);
    // Peers may still be writing into this rank's FIFOs until they are done too.
    if (auto s = runtime_->synchronize(); !s.ok()) return s;
    if (auto s = transport_->barrier(); !s.ok()) return s;
    const Status closed = it->second->window ? it->second->window->close() : Status{};
    algorithms_.erase(it);
    return closed;
  }

  const ir::Algorithm* algorithm(AlgorithmHandle handle) const override {
    auto it = algorithms_.find(handle.id);
    return it == algorithms_.end() ? nullptr : &it->second->algorithm;
  }

  Result<PlannedCall> plan(AlgorithmHandle handle, const CallShape& call) const override {
    auto it = algorithms_.find(handle.id);
    if (it == algorithms_.end()) return unknown(handle);
    const LoadedAlgorithm& loaded = *it->second;
    if (const Applicability verdict = check_applicable(loaded.algorithm, call); !verdict) {
      return Status::error(ErrorCode::NotApplicable, verdict.reason);
    }
    if (!loaded.refusal.empty()) return Status::error(ErrorCode::NotApplicable, loaded.refusal);
    auto plan = plan_fitting(loaded, call);
    if (!plan.ok()) return plan.status();
    return PlannedCall{handle, call, std::move(plan).value(), this};
  }

  Status reserve_scratch(AlgorithmHandle handle, std::size_t max_count, DataType dtype) override {
    auto it = algorithms_.find(handle.id);
    if (it == algorithms_.end()) return unknown(handle);
    LoadedAlgorithm& loaded = *it->second;
    const ir::Algorithm& algo = loaded.algorithm;
    const std::size_t total = max_count * static_cast<std::size_t>(ir::count_multiplier(algo));
    const auto chunks = static_cast<std::size_t>(std::max(algo.nchunksperloop, 1));
    const std::size_t chunk = (total + chunks - 1) / chunks;
    const std::size_t element = size_of(dtype);
    for (std::size_t k = 0; k < local_ranks_.size(); ++k) {
      const int rank = local_ranks_[k];
      const auto scratch =
          static_cast<std::size_t>(ir::scratch_extent_chunks(algo, rank)) * chunk * element;
      if (auto s = loaded.scratch.ensure(k, scratch, *runtime_, false, "scratch"); !s.ok())
        return s;
      if (is_floating(dtype)) {
        const auto input =
            static_cast<std::size_t>(ir::input_extent_chunks(algo, rank)) * chunk * element;
        if (auto s = loaded.premultiplied.ensure(k, input, *runtime_, false,
                                                 "avg's premultiplied input");
            !s.ok()) {
          return s;
        }
      }
    }
    return {};
  }

  Status async_error() const override {
    // The proxy's failure (a peer host gone, a malformed message) is the cause; the kernel's
    // report then only says which wait it ended.
    Status transport = transport_->async_error();
    auto* report = static_cast<device::ErrorReport*>(report_.host);
    // The device writes `valid` last, with release semantics (a system fence on the GPU): once
    // it reads 1 here, the rest of the record is complete.
    if (report == nullptr ||
        std::atomic_ref<std::uint32_t>(report->valid).load(std::memory_order_acquire) == 0) {
      return transport;
    }
    device::ErrorReport copy;
    std::memcpy(&copy, report, sizeof(copy));
    if (!transport.ok()) {
      return Status::error(
          transport.code,
          fmt::format("{}: {}; the call ended at {}", runtime_->describe(), transport.message,
                      ir::element_path(copy.rank, copy.threadblock, copy.ir_step)));
    }
    std::string message = describe_failure(copy);
    // A wait on a rank elsewhere names where it is, and which hosts went quiet: a peer that
    // stopped is the likely cause, though the wait that ran out may be on another rank that
    // waits for it in turn.
    if (const int peer = copy.peer; peer >= 0 && peer < nranks()) {
      if (const std::string where = transport_->locate(peer); !where.empty()) {
        message += fmt::format(" (rank {} is on {})", peer, where);
      }
    }
    if (const std::string quiet = transport_->silent_hosts(); !quiet.empty()) {
      message += "; silent: " + quiet;
    }
    return Status::error(ErrorCode::Timeout, fmt::format("{}: {}", runtime_->describe(), message));
  }

  Status run(AlgorithmHandle handle, std::span<const RankBuffers> calls, std::size_t count,
             DataType dtype, ReduceOp op, int root, StreamHandle stream) override {
    if (Status stopped = refuse_if_stopped(); !stopped.ok()) return stopped;
    auto it = algorithms_.find(handle.id);
    if (it == algorithms_.end()) return unknown(handle);
    LoadedAlgorithm& loaded = *it->second;
    const ir::Algorithm& algo = loaded.algorithm;
    if (!loaded.refusal.empty()) return Status::error(ErrorCode::NotApplicable, loaded.refusal);
    if (Status s = check_buffer_count(calls); !s.ok()) return s;
    if (size_of(dtype) == 0) {
      return Status::error(ErrorCode::InvalidArgument,
                           fmt::format("run: unknown data type {}", static_cast<int>(dtype)));
    }
    auto in_place = buffers_in_place(algo, calls, count, size_of(dtype));
    if (!in_place.ok()) return in_place.status();
    CallShape shape;
    shape.collective = algo.collective;
    shape.nranks = nranks();
    shape.count = count;
    shape.dtype = dtype;
    shape.op = op;
    shape.in_place = in_place.value();
    shape.root = root;
    auto plan = plan_fitting(loaded, shape);
    if (!plan.ok()) return plan.status();
    return launch(loaded, shape, plan.value(), calls, stream);
  }

  Status run(const PlannedCall& call, std::span<const RankBuffers> calls,
             StreamHandle stream) override {
    if (Status stopped = refuse_if_stopped(); !stopped.ok()) return stopped;
    if (call.planner != this) {
      return Status::error(ErrorCode::InvalidUsage,
                           "run: the call was not planned by this communicator's plan()");
    }
    auto it = algorithms_.find(call.handle.id);
    if (it == algorithms_.end()) return unknown(call.handle);
    LoadedAlgorithm& loaded = *it->second;
    if (Status s = check_buffer_count(calls); !s.ok()) return s;
    const CallShape& shape = call.shape;
    auto in_place = buffers_in_place(loaded.algorithm, calls, shape.count, size_of(shape.dtype));
    if (!in_place.ok()) return in_place.status();
    // The plan (scratch sizes, and the algorithm's own in-place/out-of-place check) holds only
    // for buffers of the kind it was made for.
    if (in_place.value() != shape.in_place) {
      return Status::error(ErrorCode::InvalidArgument,
                           fmt::format("run: the call was planned {} but its buffers are {}",
                                       shape.in_place ? "in-place" : "out-of-place",
                                       in_place.value() ? "in-place" : "out-of-place"));
    }
    return launch(loaded, shape, call.plan, calls, stream);
  }

 private:
  // After a failure inside a kernel, of this communicator or (through the process-wide abort
  // word) of an older one, no further call may start.
  Status refuse_if_stopped() const {
    if (Status failure = async_error(); !failure.ok()) {
      failure.message += " (an earlier call failed; this communicator refuses further calls)";
      return failure;
    }
    if (process_abort_count() != abort_epoch_) {
      return Status::error(ErrorCode::InvalidUsage,
                           "another communicator of this process failed, which aborts every "
                           "communicator created before it; create a new communicator");
    }
    return {};
  }

  Status check_buffer_count(std::span<const RankBuffers> calls) const {
    if (calls.size() == local_ranks_.size()) return {};
    return Status::error(
        ErrorCode::InvalidArgument,
        fmt::format("run: {} buffer pairs for {} local ranks", calls.size(), local_ranks_.size()));
  }

  // Whether the local ranks' buffers make an in-place call; they must all agree.
  Result<bool> buffers_in_place(const ir::Algorithm& algo, std::span<const RankBuffers> calls,
                                std::size_t count, std::size_t element) const {
    bool in_place = false;
    for (std::size_t k = 0; k < calls.size(); ++k) {
      if (calls[k].sendbuf == nullptr || calls[k].recvbuf == nullptr) {
        return Status::error(ErrorCode::InvalidArgument,
                             fmt::format("run: rank {} has a null buffer", local_ranks_[k]));
      }
      const bool mine = ir::is_in_place_call(algo.collective, local_ranks_[k], calls[k].sendbuf,
                                             calls[k].recvbuf, count, element);
      if (k == 0) {
        in_place = mine;
      } else if (mine != in_place) {
        return Status::error(ErrorCode::InvalidArgument,
                             fmt::format("run: rank {} calls {} but rank {} {}", local_ranks_[0],
                                         in_place ? "in-place" : "out-of-place", local_ranks_[k],
                                         mine ? "in-place" : "out-of-place"));
      }
    }
    return in_place;
  }

  // plan_call, and the FIFO check: a step split into several messages per tile shrinks the FIFO
  // below the two steps the algorithms are verified at; refuse instead of timing out.
  Result<CallPlan> plan_fitting(const LoadedAlgorithm& loaded, const CallShape& call) const {
    const ir::Algorithm& algo = loaded.algorithm;
    auto plan = plan_call(algo, call, options_, loaded.max_count, loaded.max_steps);
    if (!plan.ok()) return plan.status();
    // The depth as set: a step's messages and the FIFO's depth grow alike with the slices.
    if (auto s = check_fifo_depth(algo.protocol, options_.configured(algo.protocol), plan.value(),
                                  loaded.max_message_count);
        !s.ok()) {
      return s;
    }
    return plan;
  }

  // Enqueues a call whose buffers are checked and whose plan fits.
  Status launch(LoadedAlgorithm& loaded, const CallShape& shape, const CallPlan& plan,
                std::span<const RankBuffers> calls, StreamHandle stream) {
    const ir::Algorithm& algo = loaded.algorithm;
    const DataType dtype = shape.dtype;
    const ReduceOp op = shape.op;
    const bool in_place = shape.in_place;
    const std::size_t element = size_of(dtype);
    auto captured = runtime_->capturing(stream);
    if (!captured.ok()) return captured.status();
    const bool capturing = captured.value();

    device::LaunchArgs args;
    args.ctas = static_cast<const device::CtaDescriptor*>(loaded.ctas.get());
    args.control = static_cast<device::Control*>(control_.get());
    args.report = static_cast<device::ErrorReport*>(report_.device);
    args.abort = abort_.device;
    args.abort_epoch = abort_epoch_;
    args.system_scope = loaded.system_scope ? 1u : 0u;
    args.arrival_timeout_ns = static_cast<std::uint64_t>(options_.arrival_timeout_s * 1e9);
    args.element_bytes = static_cast<std::uint32_t>(element);
    args.chunk_elements = plan.chunk_elements;
    args.tile_elements = plan.tile_elements;
    args.tiles = plan.tiles;
    args.piece_stride_bytes = plan.piece_stride_bytes;
    const ProtocolOptions protocol = options_.protocol(algo.protocol);
    args.slot_bytes = protocol.slot_bytes;
    args.fifo_depth = static_cast<std::uint32_t>(protocol.fifo_depth);
    args.pieces_per_message = static_cast<std::uint32_t>(plan.pieces_per_message);
    args.timeout_ns = static_cast<std::uint64_t>(options_.timeout_s * 1e9);
    args.lean_steps = options_.step != StepVariant::Full ? 1u : 0u;
    args.overlap_steps = options_.step == StepVariant::Overlap ? 1u : 0u;
    args.slices = algo.protocol == ir::Protocol::Simple
                      ? static_cast<std::uint32_t>(options_.simple_slices)
                      : 1u;

    for (std::size_t k = 0; k < calls.size(); ++k) {
      const int rank = local_ranks_[k];
      const std::size_t scratch = plan.scratch_bytes[static_cast<std::size_t>(rank)];
      if (auto s = loaded.scratch.ensure(k, scratch, *runtime_, capturing, "scratch"); !s.ok()) {
        return s;
      }
      args.buffers[k].input = static_cast<char*>(const_cast<void*>(calls[k].sendbuf));
      args.buffers[k].output = static_cast<char*>(calls[k].recvbuf);
      args.buffers[k].scratch = loaded.scratch.get(k);
    }
    // Everything that can refuse the call comes before the premultiplication, which scales an
    // in-place caller's buffer: a refused call must leave the caller's data as it was.
    if (!runtime_->has_interpreter(dtype, op, algo.protocol)) {
      return Status::error(ErrorCode::NotApplicable, fmt::format("no kernel for {} with {}",
                                                                 to_string(op), to_string(dtype)));
    }
    auto threads = resident_threads(dtype, op, algo.protocol, loaded.cta_count);
    if (!threads.ok()) return threads.status();
    if (op == ReduceOp::Avg) {
      if (auto s = premultiply(loaded, calls, plan, dtype, in_place, capturing, stream, args);
          !s.ok()) {
        return s;
      }
    }
    if (auto s = runtime_->launch_interpreter(dtype, op, algo.protocol, args, loaded.cta_count,
                                              threads.value(), stream);
        !s.ok()) {
      return s;
    }
    return {};
  }

  Status unknown(AlgorithmHandle handle) const {
    return Status::error(
        ErrorCode::InvalidUsage,
        fmt::format("unknown algorithm handle {} (never loaded, or unloaded)", handle.id));
  }

  Result<AlgorithmHandle> install(ir::Algorithm algo) {
    if (algo.ngpus != nranks()) {
      return Status::error(ErrorCode::InvalidArgument,
                           fmt::format("algorithm '{}' is for {} ranks, the communicator has {}",
                                       algo.name, algo.ngpus, nranks()));
    }
    auto loaded = std::make_unique<LoadedAlgorithm>(local_ranks_.size());
    // Every rank is flattened, not only the local ones: a rank the runtime refuses must fail the
    // load on every participant alike, before the window exchange, or the others would wait in
    // that collective for a participant that already gave up.
    for (int rank = 0; rank < nranks(); ++rank) {
      auto program = flatten_rank(algo, rank);
      if (!program.ok()) return program.status();
      if (std::find(local_ranks_.begin(), local_ranks_.end(), rank) == local_ranks_.end()) {
        continue;
      }
      loaded->max_count = std::max(loaded->max_count, program.value().max_count);
      loaded->max_steps = std::max(loaded->max_steps, program.value().max_steps);
      loaded->programs.push_back(std::move(program.value()));
    }
    // Tiles depend on the largest cnt anywhere, so that every rank cuts chunks alike.
    for (const ir::Gpu& gpu : algo.gpus) {
      for (const ir::Threadblock& tb : gpu.threadblocks) {
        for (const ir::Step& step : tb.steps) {
          if (step.type != ir::StepType::Nop)
            loaded->max_count = std::max(loaded->max_count, step.count);
          if (ir::sends(step.type) || ir::receives(step.type))
            loaded->max_message_count = std::max(loaded->max_message_count, step.count);
        }
        loaded->max_steps = std::max(loaded->max_steps, static_cast<int>(tb.steps.size()));
      }
    }
    const ProtocolOptions protocol = options_.protocol(algo.protocol);
    for (int rank = 0; rank < nranks(); ++rank) {
      loaded->layouts.push_back(layout_region(algo, rank, protocol));
    }
    judge_links(algo, *loaded);
    std::vector<std::size_t> region_bytes;
    for (int rank : local_ranks_) {
      region_bytes.push_back(loaded->layouts[static_cast<std::size_t>(rank)].total_bytes);
    }
    std::uint64_t print = fingerprint(algo);
    print = mix(print, protocol.slot_bytes);
    print = mix(print, static_cast<std::uint64_t>(protocol.fifo_depth));
    // Tiles depend on WEFT_TILE_BYTES too; ranks that cut chunks differently would read each
    // other's messages with the wrong layout.
    print = mix(print, options_.max_tile_bytes);
    // Slices group tiles, which orders a connection's messages differently.
    print = mix(print, static_cast<std::uint64_t>(
                           algo.protocol == ir::Protocol::Simple ? options_.simple_slices : 1));
    WindowRequest request;
    request.bytes_per_local_rank = region_bytes;
    request.fingerprint = print;
    request.layouts = loaded->layouts;
    request.protocol = algo.protocol;
    auto window = transport_->open_window(request);
    if (!window.ok()) return window.status();
    loaded->window = std::move(window.value());

    std::vector<LocalRankMemory> memories;
    for (std::size_t k = 0; k < local_ranks_.size(); ++k) {
      const int rank = local_ranks_[k];
      const RankProgram& program = loaded->programs[k];
      const PrivateLayout layout = layout_private(program, nranks());
      LocalRankMemory memory;
      memory.rank = rank;
      memory.program = &program;
      for (int peer = 0; peer < nranks(); ++peer) {
        memory.regions.push_back(
            reinterpret_cast<std::uintptr_t>(loaded->window->peer(rank, peer)));
      }
      const auto sends = loaded->window->proxied_sends(rank);
      const auto receives = loaded->window->proxied_receives(rank);
      memory.proxied_sends.assign(sends.begin(), sends.end());
      memory.proxied_receives.assign(receives.begin(), receives.end());
      auto block =
          runtime_->allocate(layout.total_bytes, fmt::format("the program of rank {}", rank));
      if (!block.ok()) return block.status();
      if (auto s =
              runtime_->upload(block.value().get(), pack_private(program, layout, memory.regions));
          !s.ok()) {
        return s;
      }
      memory.private_base = reinterpret_cast<std::uintptr_t>(block.value().get());
      loaded->privates.push_back(std::move(block.value()));
      memories.push_back(std::move(memory));
    }
    auto ctas = build_cta_descriptors(memories, loaded->layouts);
    if (!ctas.ok()) return ctas.status();
    loaded->cta_count = static_cast<int>(ctas.value().size());
    if (loaded->cta_count == 0) {
      return Status::error(ErrorCode::InvalidAlgorithm,
                           fmt::format("algorithm '{}' has no step on the local ranks", algo.name));
    }
    const auto bytes = std::as_bytes(std::span(ctas.value()));
    auto table = runtime_->allocate(bytes.size(), "the CTA table");
    if (!table.ok()) return table.status();
    if (auto s = runtime_->upload(table.value().get(), bytes); !s.ok()) return s;
    loaded->ctas = std::move(table.value());
    loaded->algorithm = std::move(algo);

    const AlgorithmHandle handle{next_id_++};
    algorithms_.emplace(handle.id, std::move(loaded));
    return handle;
  }

  // The links between the local ranks and their peers decide the kernel's memory scope and
  // whether LL128 may run at all: only where a 128-byte store arrives whole (NVLink, one device
  // that passed the runtime's probe, host mode). Elsewhere the algorithm loads but every call is
  // not applicable, with the pair and the link named, so that callers (the NCCL shim) fall back.
  void judge_links(const ir::Algorithm& algo, LoadedAlgorithm& loaded) {
    bool system = false;
    for (const int rank : local_ranks_) {
      for (const ir::Threadblock& tb : algo.gpus[static_cast<std::size_t>(rank)].threadblocks) {
        for (const int peer : {tb.send, tb.recv}) {
          if (peer < 0 || peer == rank) continue;
          const PeerLink link = transport_->peer_link(rank, peer);
          system = system || (link.kind != LinkKind::SameDevice && link.kind != LinkKind::Host);
          if (algo.protocol != ir::Protocol::LL128 || !loaded.refusal.empty()) continue;
          std::string why;
          // Through the proxy, the receiving side's proxy writes a line's data before its flag:
          // whole to threads of the host (host mode), not to a GPU reading host memory over
          // PCIe in pieces.
          const bool whole_by_proxy =
              link.kind == LinkKind::Network && runtime_->kind() == DeviceKind::Host;
          if (link.kind == LinkKind::SameDevice) {
            if (auto s = runtime_->ll128_on_one_device(); !s.ok()) why = s.message;
          } else if (link.kind != LinkKind::NVLink && link.kind != LinkKind::Host &&
                     !whole_by_proxy) {
            why = fmt::format("they are joined by {} ({})", to_string(link.kind), link.detail);
          }
          if (!why.empty()) {
            loaded.refusal = fmt::format(
                "algorithm '{}' uses LL128, which is correct only where a 128-byte store arrives "
                "whole (NVLink, or one GPU that passed the torn-line probe); ranks {} and {}: {}",
                algo.name, rank, peer, why);
          }
        }
      }
    }
    loaded.system_scope = system;
  }

  // Every CTA of the launch waits on others, so all must be resident at once. Starts from the
  // configured thread count and halves it while the device cannot hold the grid.
  Result<int> resident_threads(DataType dtype, ReduceOp op, ir::Protocol protocol, int ctas) {
    const auto key = std::tuple{dtype, op, protocol, ctas};
    if (auto it = threads_.find(key); it != threads_.end()) return it->second;
    std::string tried;
    int most = runtime_->max_threads(options_.threads);
    // The overlap step's Simple kernel gives a warp of its own to the posts: two warps at least
    // where the configuration allows (host mode, whose CTAs are one warp otherwise).
    if (options_.step == StepVariant::Overlap && protocol == ir::Protocol::Simple) {
      most = std::max(most, std::min(options_.threads, 64));
    }
    for (int threads = most; threads >= runtime_->min_threads(); threads /= 2) {
      auto residency = runtime_->resident_ctas(dtype, op, protocol, threads);
      if (!residency.ok()) return residency.status();
      if (residency.value().ctas >= ctas) {
        threads_.emplace(key, threads);
        return threads;
      }
      tried += fmt::format("{}{} threads: {}", tried.empty() ? "" : "; ", threads,
                           residency.value().arithmetic);
      if (threads % 64 != 0) break;
    }
    return Status::error(ErrorCode::NotResident,
                         fmt::format("the launch needs {} threadblocks resident at once on {}, "
                                     "which holds at most ({}); use an algorithm with fewer "
                                     "threadblocks or fewer emulated ranks",
                                     ctas, runtime_->describe(), tried));
  }

  Status premultiply(LoadedAlgorithm& loaded, std::span<const RankBuffers> calls,
                     const CallPlan& plan, DataType dtype, bool in_place, bool capturing,
                     StreamHandle stream, device::LaunchArgs& args) {
    if (!is_floating(dtype)) {
      return Status::error(ErrorCode::NotApplicable,
                           fmt::format("avg is not supported for {}", to_string(dtype)));
    }
    const ir::Algorithm& algo = loaded.algorithm;
    for (std::size_t k = 0; k < calls.size(); ++k) {
      const int rank = local_ranks_[k];
      const std::size_t elements =
          static_cast<std::size_t>(ir::input_extent_chunks(algo, rank)) * plan.chunk_elements;
      if (elements == 0) continue;
      device::ScaleArgs scale;
      scale.source = static_cast<const char*>(calls[k].sendbuf);
      scale.elements = elements;
      scale.factor = 1.0 / static_cast<double>(algo.ngpus);
      if (in_place) {
        // The input lies inside the output, which the call may overwrite anyway.
        scale.destination = static_cast<char*>(const_cast<void*>(calls[k].sendbuf));
      } else {
        if (auto s = loaded.premultiplied.ensure(k, elements * plan.element_bytes, *runtime_,
                                                 capturing, "avg's premultiplied input");
            !s.ok()) {
          return s;
        }
        scale.destination = loaded.premultiplied.get(k);
        args.buffers[k].input = scale.destination;
      }
      if (auto s = runtime_->launch_scale(dtype, scale, stream); !s.ok()) return s;
    }
    return {};
  }

  std::shared_ptr<Transport> transport_;
  std::shared_ptr<DeviceRuntime> runtime_;
  RuntimeOptions options_;
  std::vector<int> local_ranks_;
  DeviceMemory control_;
  MappedMemory report_;
  DeviceRuntime::AbortWord abort_;
  std::uint32_t abort_epoch_ = 0;
  std::map<int, std::unique_ptr<LoadedAlgorithm>> algorithms_;
  // Residency verdicts by (type, operator, protocol, CTAs).
  std::map<std::tuple<DataType, ReduceOp, ir::Protocol, int>, int> threads_;
  int next_id_ = 0;
};

}  // namespace

Result<std::unique_ptr<Communicator>> Communicator::create(std::shared_ptr<Transport> transport,
                                                           RuntimeOptions options) {
  if (!transport) return Status::error(ErrorCode::InvalidArgument, "communicator: no transport");
  if (auto s = check(options); !s.ok()) return s;
  if (transport->local_ranks().size() > static_cast<std::size_t>(device::kMaxLocalRanks)) {
    return Status::error(
        ErrorCode::InvalidArgument,
        fmt::format("communicator: at most {} local ranks", device::kMaxLocalRanks));
  }
  auto communicator = std::make_unique<CommunicatorImpl>(std::move(transport), std::move(options));
  if (auto s = communicator->initialise(); !s.ok()) return s;
  return std::unique_ptr<Communicator>(std::move(communicator));
}

Applicability Communicator::applies(AlgorithmHandle handle, const CallShape& call) const {
  auto planned = plan(handle, call);
  if (!planned.ok()) return {false, planned.status().message};
  return {true, {}};
}

}  // namespace weft::gpu
