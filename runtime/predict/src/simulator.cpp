#include "weft/predict/simulator.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "attempt_queue.h"
#include "flow_network.h"
#include "weft/cpu/plan.h"
#include "weft/cpu/step_core.h"
#include "weft/ir/geometry.h"
#include "weft/predict/nccl_model.h"
#include "weft/program/call_plan.h"
#include "weft/program/selection.h"

namespace weft::predict {

namespace {

using cpu::detail::PlanStep;
using cpu::detail::PlanThreadblock;
using cpu::detail::Readiness;

// What a message carries in the simulation: its entry in the run's message table.
// The time of something that has not happened yet.
constexpr double kNotYet = std::numeric_limits<double>::infinity();

struct Arrival {
  int message = -1;
};

// A message streams like the protocols' slices: it is put in the FIFO when its sender starts,
// its first bytes are visible one hop latency later (the receiver may start then), and its last
// bytes one hop latency after the sender ends (the receiver cannot end before). Latency is so
// paid once per hop of a chain of steps, not once per tile, as with NCCL's pipelined slices.
struct MessageState {
  double first_us = 0;
  double last_us = kNotYet;  // until the sender ends
  int record = -1;           // the sender's step record (recording)
  int waiting = -1;          // a receiver whose flow ended before the last bytes came
};

// Accesses a step makes to its own GPU's memory per payload byte: reads of the FIFO slot, the
// source and the operand, writes of the destination. The bytes a send writes land in the peer's
// memory (its FIFO slot).
double local_memory_accesses(ir::StepType type) {
  switch (type) {
    case ir::StepType::Send:
      return 1;  // read src
    case ir::StepType::Recv:
    case ir::StepType::RecvCopySend:
    case ir::StepType::RecvReduceSend:
    case ir::StepType::Copy:
      return 2;  // read slot (or src) and write dst, or read slot and src
    case ir::StepType::RecvReduceCopy:
    case ir::StepType::RecvReduceCopySend:
    case ir::StepType::Reduce:
      return 3;  // two reads and a write
    case ir::StepType::Nop:
      return 0;
  }
  return 0;
}

// The latency of one message from `rank` to `peer`: its protocol's hop latency for the kind of
// route (no less than a step of Weft's), or the route's links' own latencies where they add up
// to more.
double send_latency_us(const Topology& topology, const ProtocolCosts& costs, int rank, int peer) {
  double links_latency = 0;
  for (int l : topology.route(rank, peer)) {
    links_latency += topology.links()[static_cast<std::size_t>(l)].latency_us;
  }
  return std::max(costs.hop_us(topology.route_type(rank, peer)), links_latency);
}

}  // namespace

// What one run of the first tiles of a call depends on besides the algorithm and the machine:
// the tiles' shape and the FIFO depth, not the call's size. A call of more tiles than are
// simulated runs the same full tiles of the protocol's slot whatever its size, and so does a call
// of exactly that many full tiles (256 MB's run of 16 tiles is 64 MB's whole call where both cut
// full tiles of one size). Every run's makespan is kept by its shape, so that a sweep of sizes
// (the compiler's judge, tune's, synthesize's) simulates each shape once, not once per size.
struct TileRun {
  bool in_place = false;
  std::size_t element_bytes = 0;
  std::size_t tile_elements = 0;
  std::size_t tiles = 0;     // simulated
  std::size_t elements = 0;  // in those tiles (the last may be short)
  int fifo_depth = 0;
  double makespan_us = 0;
  std::uint64_t step_executions = 0;
  bool same_shape(const TileRun& other) const {
    return in_place == other.in_place && element_bytes == other.element_bytes &&
           tile_elements == other.tile_elements && tiles == other.tiles &&
           elements == other.elements && fifo_depth == other.fifo_depth;
  }
};

struct Simulator::State {
  const ir::Algorithm* algorithm = nullptr;
  const Topology* topology = nullptr;
  ir::Algorithm unbanded;  // the algorithm without its minBytes/maxBytes band: every size is asked
  cpu::detail::Plan plan;
  std::string error;
  int max_count = 1;
  int max_steps = 1;
  mutable std::mutex runs_mutex;  // run() is const: callers may share a simulator across threads
  mutable std::vector<TileRun> runs;
};

Simulator::Simulator(const ir::Algorithm& algorithm, const Topology& topology)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.algorithm = &algorithm;
  s.topology = &topology;
  if (algorithm.ngpus != topology.ranks()) {
    s.error = fmt::format(
        "{}{} has {} ranks but the topology '{}' has {} ({} node(s) × {} GPUs); choose --nodes "
        "and --gpus-per-node to match",
        algorithm.source.empty() ? std::string("the algorithm") : algorithm.source,
        algorithm.where.line > 0 ? fmt::format(":{}", algorithm.where.line) : std::string(),
        algorithm.ngpus, topology.name(), topology.ranks(), topology.nodes(),
        topology.gpus_per_node());
    return;
  }
  s.unbanded = algorithm;
  s.unbanded.min_bytes = 0;
  s.unbanded.max_bytes = 0;
  s.plan = cpu::detail::build_plan(s.unbanded);
  if (!s.plan.error.empty()) {
    s.error = s.plan.error;
    return;
  }
  for (const ir::Gpu& gpu : algorithm.gpus) {
    for (const ir::Threadblock& tb : gpu.threadblocks) {
      s.max_steps = std::max(s.max_steps, static_cast<int>(tb.steps.size()));
      for (const ir::Step& step : tb.steps) s.max_count = std::max(s.max_count, step.count);
    }
  }
}

Simulator::~Simulator() = default;
Simulator::Simulator(Simulator&&) noexcept = default;
Simulator& Simulator::operator=(Simulator&&) noexcept = default;

const std::string& Simulator::error() const {
  return state_->error;
}

namespace {

class Run {
 public:
  Run(const ir::Algorithm& algorithm, const Topology& topology, const cpu::detail::Plan& plan,
      const cpu::detail::ModeLayout& layout, const gpu::CallPlan& call,
      const SimulationOptions& options, SimulationResult& result)
      : topology_(topology),
        plan_(plan),
        call_(call),
        options_(options),
        result_(result),
        costs_(topology.costs().protocol(algorithm.protocol)),
        core_(plan, layout, simulated_tiles(call, options),
              options.runtime.configured(algorithm.protocol).fifo_depth),
        network_(capacities(topology), memory_links(topology)) {
    const std::size_t count = plan.threadblocks.size();
    busy_.assign(count, 0);
    queued_.assign(count, 0);
    record_.assign(count, -1);
    woken_by_.assign(count, -1);
    sending_.assign(count, -1);
    tile_finishers_.assign(static_cast<std::size_t>(core_.tiles()), 0);
    tile_end_us_.assign(static_cast<std::size_t>(core_.tiles()), 0);
    for (const PlanThreadblock& tb : plan.threadblocks) working_threadblocks_ += tb.step_count > 0;
    prepare_routes();
  }

  void run();
  double makespan_us() const { return makespan_; }

  static int simulated_tiles(const gpu::CallPlan& call, const SimulationOptions& options) {
    const std::size_t cap =
        options.max_tiles > 0 ? static_cast<std::size_t>(options.max_tiles) : call.tiles;
    return static_cast<int>(std::min(call.tiles, std::max<std::size_t>(cap, 2)));
  }

 private:
  static std::vector<double> capacities(const Topology& topology) {
    std::vector<double> capacity;
    capacity.reserve(topology.links().size());
    // GB/s is bytes per nanosecond, so × 1000 gives bytes per microsecond.
    for (const Link& link : topology.links()) capacity.push_back(link.bandwidth_gbs * 1e3);
    return capacity;
  }

  // A GPU's memory is shared max-min fair (flow_network.h): every flow of the GPU crosses it,
  // and those a NIC holds back must not hold back the rest.
  static std::vector<bool> memory_links(const Topology& topology) {
    std::vector<bool> fair;
    fair.reserve(topology.links().size());
    for (const Link& link : topology.links()) fair.push_back(link.type == LinkType::Memory);
    return fair;
  }

  void prepare_routes();
  void schedule(int g, double time);
  void attempt(int g, double now);
  void complete(int g, double now);
  void finish(int g, double now);
  void finish_at(int g, double time) { attempts_.push(time, g, true); }
  void take_attempt();  // the earliest attempt, or a receiver's end its last bytes allow
  int new_message(double first_us, int record) {
    int id = 0;
    if (free_messages_.empty()) {
      id = static_cast<int>(messages_.size());
      messages_.emplace_back();
    } else {
      id = free_messages_.back();
      free_messages_.pop_back();
    }
    messages_[static_cast<std::size_t>(id)] = {first_us, kNotYet, record, -1};
    return id;
  }
  // The links a step's bytes cross, with their weights, into uses_ (kept between steps: a step
  // starts for every tile of every threadblock, and a fresh vector each time is a heap
  // allocation the simulation otherwise never makes).
  void uses_of(int g, const PlanStep& step);
  std::size_t tile_elements(int tile) const {
    const std::size_t start = static_cast<std::size_t>(tile) * call_.tile_elements;
    return std::min(call_.tile_elements, call_.chunk_elements - start);
  }
  void fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
  }

  const Topology& topology_;
  const cpu::detail::Plan& plan_;
  const gpu::CallPlan& call_;
  const SimulationOptions& options_;
  SimulationResult& result_;
  const ProtocolCosts& costs_;
  cpu::detail::StepCore<Arrival> core_;
  detail::FlowNetwork network_;

  // Per threadblock: the links its sends cross between the two memories, and the latency of one
  // of its messages.
  std::vector<std::vector<int>> send_route_;
  std::vector<double> send_latency_us_;
  std::vector<char> busy_;     // a step is running
  std::vector<char> queued_;   // an attempt is scheduled
  std::vector<int> record_;    // its running step's record (recording), or -1
  std::vector<int> woken_by_;  // the record whose end last let it try
  std::vector<int> flow_owner_;
  std::vector<MessageState> messages_;
  std::vector<int> free_messages_;
  std::vector<int> sending_;                 // per threadblock: the message its running step sends
  std::vector<detail::LinkUse> uses_;        // uses_of's answer
  std::vector<std::size_t> tile_finishers_;  // per simulated tile: threadblocks done with it
  std::vector<double> tile_end_us_;          // per simulated tile: when the last one was
  std::size_t working_threadblocks_ = 0;     // those with steps
  detail::AttemptQueue attempts_;
  int completing_ = -1;  // the record whose end is being processed
  double makespan_ = 0;
  std::string error_;
};

void Run::prepare_routes() {
  const std::size_t count = plan_.threadblocks.size();
  send_route_.resize(count);
  send_latency_us_.assign(count, 0);
  for (std::size_t g = 0; g < count; ++g) {
    const PlanThreadblock& tb = plan_.threadblocks[g];
    if (tb.send_peer < 0 || tb.send_peer == tb.rank) continue;
    const auto route = topology_.route(tb.rank, tb.send_peer);
    send_route_[g].assign(route.begin(), route.end());
    send_latency_us_[g] = send_latency_us(topology_, costs_, tb.rank, tb.send_peer);
  }
}

void Run::uses_of(int g, const PlanStep& step) {
  const PlanThreadblock& tb = plan_.threadblocks[static_cast<std::size_t>(g)];
  std::vector<detail::LinkUse>& uses = uses_;
  uses.clear();
  const auto add = [&uses](int link, double weight) {
    if (weight <= 0) return;
    for (auto& use : uses) {
      if (use.link == link) {  // one emulated GPU: every rank's memory is one link
        use.weight += weight;
        return;
      }
    }
    uses.push_back({link, weight});
  };
  // A memory link's bandwidth is what a copy moves (a read and a write per byte): an access
  // weighs half.
  add(topology_.memory_link(tb.rank), local_memory_accesses(step.type) / 2);
  if (ir::sends(step.type)) {
    for (int link : send_route_[static_cast<std::size_t>(g)]) add(link, 1);
    add(topology_.memory_link(tb.send_peer), 0.5);  // the write into the peer's FIFO slot
  }
}

void Run::schedule(int g, double time) {
  auto& queued = queued_[static_cast<std::size_t>(g)];
  if (queued != 0) return;
  queued = 1;
  attempts_.push(time, g, false);
}

void Run::attempt(int g, double now) {
  const auto ug = static_cast<std::size_t>(g);
  if (busy_[ug] != 0 || core_.finished(g)) return;
  switch (core_.check(g)) {
    case Readiness::Blocked:
      return;
    case Readiness::Mismatch:
      fail(core_.mismatch(g));
      return;
    case Readiness::Runnable:
      break;
  }
  const PlanStep& step = core_.current_step(g);
  if (ir::receives(step.type)) {
    const MessageState& m = messages_[static_cast<std::size_t>(core_.incoming(g).payload.message)];
    if (m.first_us > now) {  // sent, its first bytes still on their way
      woken_by_[ug] = m.record;
      schedule(g, m.first_us);
      return;
    }
  }
  busy_[ug] = 1;
  const std::uint64_t payload =
      static_cast<std::uint64_t>(step.count) * tile_elements(core_.tile(g)) * call_.element_bytes;
  ++result_.step_executions;
  if (options_.record) {
    const PlanThreadblock& tb = core_.threadblock(g);
    record_[ug] = static_cast<int>(result_.steps.size());
    result_.steps.push_back({tb.rank, tb.id, tb.channel, core_.tile(g), core_.step(g), step.type,
                             payload, now, now, woken_by_[ug], false});
  }
  if (ir::sends(step.type)) {
    const int message = new_message(now + send_latency_us_[ug], record_[ug]);
    sending_[ug] = message;
    core_.put(g, Arrival{message}, [this, now](int h) {
      woken_by_[static_cast<std::size_t>(h)] = -1;
      schedule(h, now);
    });
  }
  uses_of(g, step);
  if (payload == 0 || uses_.empty()) {
    complete(g, now);
    return;
  }
  // The protocol's lines carry flags beside the data: every link moves payload / efficiency, and
  // a threadblock's bandwidth counts those bytes too (cost_parameters.h).
  const double efficiency = costs_.payload_efficiency > 0 ? costs_.payload_efficiency : 1;
  const double cap = costs_.threadblock_bandwidth_gbs * 1e3;
  const int flow = network_.start(now, static_cast<double>(payload) / efficiency, uses_, cap);
  if (flow_owner_.size() <= static_cast<std::size_t>(flow)) flow_owner_.resize(flow + 1, -1);
  flow_owner_[static_cast<std::size_t>(flow)] = g;
}

void Run::complete(int g, double now) {
  const PlanStep& step = core_.current_step(g);
  if (ir::receives(step.type)) {
    MessageState& m = messages_[static_cast<std::size_t>(core_.incoming(g).payload.message)];
    if (m.last_us > now) {  // its last bytes are not in yet
      if (std::isfinite(m.last_us)) {
        finish_at(g, m.last_us);
      } else {
        m.waiting = g;  // the sender's end schedules it
      }
      return;
    }
  }
  finish(g, now);
}

void Run::finish(int g, double now) {
  const auto ug = static_cast<std::size_t>(g);
  const PlanStep& step = core_.current_step(g);
  completing_ = record_[ug];
  const auto wake = [this, now](int h) {
    woken_by_[static_cast<std::size_t>(h)] = completing_;
    schedule(h, now);
  };
  if (options_.record && completing_ >= 0)
    result_.steps[static_cast<std::size_t>(completing_)].end_us = now;
  if (ir::receives(step.type)) {
    const int message = core_.take(g, wake).message;
    const MessageState& m = messages_[static_cast<std::size_t>(message)];
    if (options_.record && m.record >= 0) {
      result_.messages.push_back({m.record, completing_,
                                  result_.steps[static_cast<std::size_t>(m.record)].end_us,
                                  m.last_us});
    }
    free_messages_.push_back(message);
  }
  if (ir::sends(step.type)) {
    MessageState& m = messages_[static_cast<std::size_t>(sending_[ug])];
    m.last_us = now + send_latency_us_[ug];
    if (m.waiting >= 0) {
      woken_by_[static_cast<std::size_t>(m.waiting)] = completing_;
      finish_at(m.waiting, m.last_us);
      m.waiting = -1;
    }
  }
  const int tile = core_.tile(g);
  core_.advance(g, wake);
  if (core_.finished(g) || core_.tile(g) != tile) {
    const auto t = static_cast<std::size_t>(tile);
    if (++tile_finishers_[t] == working_threadblocks_) tile_end_us_[t] = now;
  }
  busy_[ug] = 0;
  makespan_ = std::max(makespan_, now);
  woken_by_[ug] = completing_;
  schedule(g, now);
}

void Run::take_attempt() {
  const detail::Attempt next = attempts_.pop();
  if (next.finish) {
    finish(next.threadblock, next.time);
    return;
  }
  queued_[static_cast<std::size_t>(next.threadblock)] = 0;
  attempt(next.threadblock, next.time);
}

void Run::run() {
  for (std::size_t g = 0; g < plan_.threadblocks.size(); ++g) {
    if (!core_.finished(static_cast<int>(g))) schedule(static_cast<int>(g), 0);
  }
  while (error_.empty()) {
    // What happens at the instant the network has open joins it while nothing ends by then
    // (flow_network.h): the rates are settled once for all of it.
    if (!attempts_.empty() && network_.open_and_quiet(attempts_.next_time())) {
      take_attempt();
      continue;
    }
    const auto end = network_.next_end();
    const bool have_attempt = !attempts_.empty();
    if (!end && !have_attempt) break;
    // Ends before attempts at the same time: what a step frees is there for whoever tries next.
    if (end && (!have_attempt || end->first <= attempts_.next_time())) {
      attempts_.advance(end->first);
      network_.finish(end->first, end->second);
      complete(flow_owner_[static_cast<std::size_t>(end->second)], end->first);
      continue;
    }
    take_attempt();
  }
  if (!error_.empty()) {
    result_.error = error_;
    return;
  }
  if (!core_.all_finished()) {
    std::size_t blocked = 0;
    std::string first;
    for (std::size_t g = 0; g < plan_.threadblocks.size(); ++g) {
      const int gi = static_cast<int>(g);
      if (core_.finished(gi)) continue;
      if (blocked++ == 0) {
        const PlanThreadblock& tb = core_.threadblock(gi);
        first = fmt::format("{} (tile {}) waits for {}",
                            ir::element_path(tb.rank, tb.id, core_.step(gi)), core_.tile(gi),
                            core_.waiting_for(gi));
      }
    }
    result_.error =
        fmt::format("deadlock: {} of {} threadblocks blocked at FIFO depth {}; the first: {}",
                    blocked, plan_.threadblocks.size(), core_.fifo_depth(), first);
    return;
  }
  // The call's time (latencies, makespan, tiles past the simulated ones at the steady-state
  // period) is Simulator::run's, from makespan_us(), whether this run or a kept one gave it.
  result_.simulated_tiles = tile_end_us_.size();
  if (options_.record && !result_.steps.empty()) {
    int last = 0;
    for (std::size_t i = 0; i < result_.steps.size(); ++i) {
      if (result_.steps[i].end_us > result_.steps[static_cast<std::size_t>(last)].end_us) {
        last = static_cast<int>(i);
      }
    }
    for (int r = last; r >= 0; r = result_.steps[static_cast<std::size_t>(r)].cause) {
      result_.steps[static_cast<std::size_t>(r)].critical = true;
      result_.critical_path.push_back(r);
    }
    std::reverse(result_.critical_path.begin(), result_.critical_path.end());
  }
}

}  // namespace

namespace {

// The call's shape and how the runtime cuts it; none, with `error` set, where it cannot run.
std::optional<gpu::CallPlan> plan_call_of(const ir::Algorithm& algo, const cpu::detail::Plan& plan,
                                          int max_count, int max_steps,
                                          const SimulationOptions& options, gpu::CallShape& shape,
                                          std::string& error) {
  const std::size_t element_bytes = size_of(options.dtype);
  const auto multiplier = static_cast<std::uint64_t>(ir::count_multiplier(algo));
  if (options.bytes == 0 || options.bytes % (element_bytes * multiplier) != 0) {
    error = fmt::format(
        "{} bytes is not a whole number of {}-byte elements per rank ({} ranks' blocks)",
        options.bytes, element_bytes, multiplier);
    return std::nullopt;
  }
  shape.collective = algo.collective;
  shape.nranks = algo.ngpus;
  shape.count = static_cast<std::size_t>(options.bytes / element_bytes / multiplier);
  shape.dtype = options.dtype;
  shape.op = ReduceOp::Sum;
  shape.in_place = options.in_place.value_or(!algo.outofplace && algo.inplace);
  if (algo.collective == ir::Collective::Broadcast || algo.collective == ir::Collective::Reduce) {
    shape.root = algo.root >= 0 ? algo.root : 0;
  }
  auto call = gpu::plan_call(algo, shape, options.runtime, max_count, max_steps);
  if (!call.ok()) {
    error = call.status().message;
    return std::nullopt;
  }
  const cpu::detail::ModeLayout& layout = plan.layout(shape.in_place);
  if (!layout.error.empty()) {
    error = layout.error;
    return std::nullopt;
  }
  return std::move(call).value();
}

}  // namespace

double Simulator::floor_us(const SimulationOptions& options) const {
  const State& s = *state_;
  if (!s.error.empty()) return 0;
  gpu::CallShape shape;
  std::string error;
  const auto call =
      plan_call_of(s.unbanded, s.plan, s.max_count, s.max_steps, options, shape, error);
  if (!call) return 0;
  const ir::Algorithm& algo = s.unbanded;
  const ProtocolCosts& costs = s.topology->costs().protocol(algo.protocol);
  const int depth = std::max(1, options.runtime.configured(algo.protocol).fifo_depth);
  // Only the tiles run() simulates count: a longer call's time is extended from theirs, by a
  // period that is never negative, so the bound holds for the prediction as well.
  const auto tiles = static_cast<std::uint64_t>(Run::simulated_tiles(*call, options));
  double makespan = 0;
  for (const cpu::detail::PlanConnection& c : s.plan.connections) {
    if (c.sender_threadblock < 0 || c.sends_per_tile == 0) continue;
    const PlanThreadblock& tb = s.plan.threadblocks[static_cast<std::size_t>(c.sender_threadblock)];
    if (tb.send_peer < 0 || tb.send_peer == tb.rank) continue;
    // Message k + D starts once message k is taken, which is no sooner than one latency after
    // message k started; the last one is taken a latency after it started.
    const std::uint64_t messages = static_cast<std::uint64_t>(c.sends_per_tile) * tiles;
    const double latency = send_latency_us(*s.topology, costs, tb.rank, tb.send_peer);
    makespan = std::max(
        makespan,
        static_cast<double>((messages - 1) / static_cast<std::uint64_t>(depth) + 1) * latency);
  }
  return s.topology->costs().launch_latency_us + costs.call_latency_us + makespan;
}

SimulationResult Simulator::run(const SimulationOptions& options) const {
  const State& s = *state_;
  SimulationResult result;
  result.bytes = options.bytes;
  if (!s.error.empty()) {
    result.error = s.error;
    return result;
  }
  const ir::Algorithm& algo = s.unbanded;
  const std::size_t element_bytes = size_of(options.dtype);
  gpu::CallShape shape;
  const auto call =
      plan_call_of(algo, s.plan, s.max_count, s.max_steps, options, shape, result.error);
  if (!call) return result;
  const cpu::detail::ModeLayout& layout = s.plan.layout(shape.in_place);
  result.chunk_elements = call->chunk_elements;
  result.tile_elements = call->tile_elements;
  result.tiles = call->tiles;
  result.fifo_depth = options.runtime.configured(algo.protocol).fifo_depth;
  const std::size_t simulated =
      static_cast<std::size_t>(Run::simulated_tiles(call.value(), options));
  const bool extended = call->tiles > simulated && simulated >= 4;
  // The first `tiles` tiles of the call, simulated or kept from a run of the same shape (nothing
  // is kept or looked up while recording: the records are the point). The records, if any, and an
  // error go to `into`.
  const auto run_tiles = [&](std::size_t tiles, bool record,
                             SimulationResult& into) -> std::optional<TileRun> {
    TileRun key;
    key.in_place = shape.in_place;
    key.element_bytes = element_bytes;
    key.tile_elements = call->tile_elements;
    key.tiles = tiles;
    key.elements = std::min(call->chunk_elements, tiles * call->tile_elements);
    key.fifo_depth = result.fifo_depth;
    if (!record) {
      const std::lock_guard lock(s.runs_mutex);
      for (const TileRun& known : s.runs) {
        if (known.same_shape(key)) return known;
      }
    }
    SimulationOptions these = options;
    these.record = record;
    these.max_tiles = static_cast<int>(tiles);
    Run run(algo, *s.topology, s.plan, layout, call.value(), these, into);
    run.run();
    if (!into.ok()) return std::nullopt;
    key.makespan_us = run.makespan_us();
    key.step_executions = into.step_executions;
    if (!record) {
      const std::lock_guard lock(s.runs_mutex);
      s.runs.push_back(key);
    }
    return key;
  };
  const std::optional<TileRun> full = run_tiles(simulated, options.record, result);
  if (!full) return result;
  result.simulated_tiles = simulated;
  result.step_executions = full->step_executions;
  result.time_us = s.topology->costs().launch_latency_us +
                   s.topology->costs().protocol(algo.protocol).call_latency_us + full->makespan_us;
  // A call of more tiles than were simulated is a pipeline in steady state between its fill and
  // its drain. Its period is taken from a second run of half the tiles: both runs fill and drain
  // alike, so the difference of their makespans is the steady state's. (The period between the
  // last simulated tiles' completions is not: those tiles drain with no later tile competing for
  // the links, which made 1 GB alltoalls beat the network's cut.)
  if (extended) {
    const std::size_t half_tiles = simulated / 2;
    SimulationResult half_result;
    const std::optional<TileRun> half = run_tiles(half_tiles, false, half_result);
    if (!half) {
      result.error = half_result.error;
      return result;
    }
    const double period = std::max(
        0.0, (full->makespan_us - half->makespan_us) / static_cast<double>(simulated - half_tiles));
    result.time_us += period * static_cast<double>(call->tiles - simulated);
  }
  result.algbw_gbs = static_cast<double>(options.bytes) / (result.time_us * 1e3);
  result.busbw_gbs = result.algbw_gbs * bus_bandwidth_factor(algo.collective, algo.ngpus);
  return result;
}

}  // namespace weft::predict
