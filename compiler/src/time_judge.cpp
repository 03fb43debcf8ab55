#include "time_judge.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "weft/compiler/emit.h"
#include "weft/compiler/verify.h"
#include "weft/cpu/cpu_executor.h"
#include "weft/cpu/run_tasks.h"
#include "weft/predict/simulator.h"
#include "weft/predict/topology.h"

namespace weft::compiler {

std::vector<std::uint64_t> judged_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes) {
  constexpr std::uint64_t kSizes[] = {64ull << 10, 1ull << 20, 4ull << 20, 64ull << 20,
                                      256ull << 20};
  std::vector<std::uint64_t> sizes;
  for (const std::uint64_t s : kSizes) {
    if (s >= min_bytes && (max_bytes == 0 || s <= max_bytes)) sizes.push_back(s);
  }
  if (sizes.empty()) {
    // A band between two of the defaults: its ends, or its start when it has no end.
    sizes.push_back(std::max<std::uint64_t>(min_bytes, 1));
    if (max_bytes > sizes.front()) sizes.push_back(max_bytes);
  }
  return sizes;
}

namespace detail {

namespace {

// To a hundredth of a microsecond, as `weftc simulate` prints it.
long long hundredths(double us) {
  return std::llround(us * 100.0);
}

}  // namespace

bool same_steps(const ir::Algorithm& a, const ir::Algorithm& b) {
  if (a.gpus.size() != b.gpus.size() || a.nchannels != b.nchannels) return false;
  for (std::size_t r = 0; r < a.gpus.size(); ++r) {
    const auto& ta = a.gpus[r].threadblocks;
    const auto& tb = b.gpus[r].threadblocks;
    if (ta.size() != tb.size()) return false;
    for (std::size_t t = 0; t < ta.size(); ++t) {
      if (ta[t].send != tb[t].send || ta[t].recv != tb[t].recv || ta[t].channel != tb[t].channel ||
          ta[t].steps.size() != tb[t].steps.size()) {
        return false;
      }
      for (std::size_t s = 0; s < ta[t].steps.size(); ++s) {
        const ir::Step& x = ta[t].steps[s];
        const ir::Step& y = tb[t].steps[s];
        if (x.type != y.type || x.srcbuf != y.srcbuf || x.srcoff != y.srcoff ||
            x.dstbuf != y.dstbuf || x.dstoff != y.dstoff || x.count != y.count ||
            x.depid != y.depid || x.deps != y.deps || x.hasdep != y.hasdep) {
          return false;
        }
      }
    }
  }
  return true;
}

namespace {

std::uint64_t step_count(const ir::Algorithm& algo) {
  std::uint64_t steps = 0;
  for (const ir::Gpu& gpu : algo.gpus) {
    for (const ir::Threadblock& tb : gpu.threadblocks) steps += tb.steps.size();
  }
  return steps;
}

}  // namespace

TimeJudge::TimeJudge(const dsl::Program& program, const JudgeOptions& options,
                     dsl::Replication layout, const BlockSizes& blocks)
    : program_(program), options_(options), layout_(layout), blocks_(blocks) {
  sizes_ = options.sizes.empty()
               ? judged_sizes(program.options().min_bytes, program.options().max_bytes)
               : options.sizes;
}

TimeJudge::~TimeJudge() = default;

void TimeJudge::note_once(std::string text) {
  // Diagnostics end with a newline; a note is one line.
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (std::find(notes_.begin(), notes_.end(), text) == notes_.end())
    notes_.push_back(std::move(text));
}

// The machine, loaded on first use: judging may never be needed (one candidate), and a large
// machine's routes cost time to build.
const predict::Topology* TimeJudge::machine(int ranks) {
  if (machine_ || machine_failed_) return machine_.get();
  predict::TopologyRequest request{options_.topology, std::max(1, options_.nodes),
                                   options_.gpus_per_node};
  if (options_.nodes == 0 || options_.gpus_per_node == 0) {
    // How many GPUs one copy of the machine has decides how the ranks are laid out.
    predict::TopologyResult one = predict::load_topology({options_.topology, 1, 0});
    if (!one.topology) {
      machine_failed_ = true;
      note_once(fmt::format("judged by critical path: the machine '{}' does not load: {}",
                            options_.topology, one.diagnostics.str()));
      return nullptr;
    }
    int per_node = options_.gpus_per_node > 0 ? options_.gpus_per_node
                                              : std::min(ranks, one.topology->ranks());
    if (options_.gpus_per_node == 0 && options_.nodes > 0) per_node = ranks / options_.nodes;
    while (per_node > 1 && ranks % per_node != 0) --per_node;
    request.gpus_per_node = std::max(1, per_node);
    request.nodes = options_.nodes > 0 ? options_.nodes : ranks / request.gpus_per_node;
  }
  predict::TopologyResult loaded = predict::load_topology(request);
  if (!loaded.topology || loaded.topology->ranks() != ranks) {
    machine_failed_ = true;
    note_once(loaded.topology
                  ? fmt::format("judged by critical path: '{}' as {} node(s) × {} GPUs has {} "
                                "GPUs, the program {} ranks",
                                options_.topology, request.nodes, request.gpus_per_node,
                                loaded.topology->ranks(), ranks)
                  : fmt::format("judged by critical path: the machine '{}' does not load: {}",
                                options_.topology, loaded.diagnostics.str()));
    return nullptr;
  }
  machine_ = std::make_unique<predict::Topology>(std::move(*loaded.topology));
  note_once(fmt::format("judged by predicted time on '{}' ({} node(s) × {} GPUs)",
                        options_.topology, request.nodes, request.gpus_per_node));
  return machine_.get();
}

bool TimeJudge::within_limit(const ir::Algorithm& one_instance) {
  const std::uint64_t steps =
      step_count(one_instance) * static_cast<std::uint64_t>(program_.options().instances);
  if (options_.max_steps == 0 || steps <= options_.max_steps) return true;
  note_once(fmt::format(
      "judged by critical path: a candidate of {} steps is above the {} that time judges", steps,
      options_.max_steps));
  return false;
}

// One instance's algorithm as the program runs it: copied for every instance, with its header.
ir::Algorithm TimeJudge::whole(const ir::Algorithm& one_instance) const {
  ir::Algorithm copied = replicate(one_instance, program_.options().instances, layout_, blocks_);
  emit_header(program_, copied);
  return copied;
}

// The machine a candidate of `ranks` ranks is predicted on, or null (a note says why).
const predict::Topology* TimeJudge::topology_for(int ranks) {
  if (options_.machine != nullptr && options_.machine->ranks() == ranks) {
    note_once(fmt::format("judged by predicted time on '{}' ({} node(s) × {} GPUs)",
                          options_.machine->name(), options_.machine->nodes(),
                          options_.machine->gpus_per_node()));
    return options_.machine;
  }
  return machine(ranks);
}

// One candidate's times, or why there are none. Touches nothing of the judge's but what it only
// reads, so several run at once.
TimeJudge::Prediction TimeJudge::predict_one(const ir::Algorithm& one_instance,
                                             const predict::Topology& topology) const {
  const ir::Algorithm copied = whole(one_instance);
  const predict::Simulator simulator(copied, topology);
  Prediction out;
  for (const std::uint64_t bytes : sizes_) {
    predict::SimulationOptions sim;
    sim.bytes = bytes;
    sim.max_tiles = options_.max_tiles;
    const predict::SimulationResult r = simulator.run(sim);
    if (!r.ok()) {
      out.times.clear();
      out.error =
          fmt::format("judged by critical path: no prediction at {} bytes: {}", bytes, r.error);
      return out;
    }
    out.times.push_back(r.time_us);
  }
  return out;
}

std::vector<std::vector<double>> TimeJudge::times(
    const std::vector<const ir::Algorithm*>& candidates) {
  std::vector<std::vector<double>> out(candidates.size());
  if (!options_.enabled || candidates.empty()) return out;
  for (const ir::Algorithm* c : candidates) {
    if (!within_limit(*c)) return out;
  }
  const predict::Topology* topology = topology_for(candidates.front()->ngpus);
  if (topology == nullptr) return out;
  // Each distinct candidate once: those predicted before are looked up, and a repeat among these
  // takes the prediction of its first occurrence.
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::vector<std::size_t> fresh;                               // candidates to predict
  std::vector<std::size_t> fresh_of(candidates.size(), kNone);  // index into `fresh`
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    const auto seen = std::find_if(seen_.begin(), seen_.end(), [&](const auto& entry) {
      return same_steps(entry.first, *candidates[k]);
    });
    if (seen != seen_.end()) {
      out[k] = seen->second;
      continue;
    }
    const auto repeat = std::find_if(fresh.begin(), fresh.end(), [&](std::size_t f) {
      return same_steps(*candidates[f], *candidates[k]);
    });
    fresh_of[k] = static_cast<std::size_t>(repeat - fresh.begin());
    if (repeat == fresh.end()) fresh.push_back(k);
  }
  // The simulations, on as many threads as the machine has (each its own simulator).
  std::vector<Prediction> predicted(fresh.size());
  cpu::run_tasks<std::monostate>(fresh.size(), 0, [&](std::size_t i, std::monostate&) {
    predicted[i] = predict_one(*candidates[fresh[i]], *topology);
  });
  for (std::size_t i = 0; i < fresh.size(); ++i) {
    if (!predicted[i].error.empty()) {
      note_once(predicted[i].error);
      return std::vector<std::vector<double>>(candidates.size());
    }
  }
  for (std::size_t i = 0; i < fresh.size(); ++i) {
    ++predictions_;
    seen_.emplace_back(*candidates[fresh[i]], predicted[i].times);
  }
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    if (fresh_of[k] != kNone) out[k] = predicted[fresh_of[k]].times;
  }
  return out;
}

bool TimeJudge::completes_at_depth_two(const ir::Algorithm& one_instance) const {
  const ir::Algorithm copied = whole(one_instance);
  const cpu::Executor executor(copied, executor_spec(program_, copied));
  for (const std::size_t tile : {std::size_t{8}, std::size_t{64}}) {
    cpu::RunOptions run;
    run.tile_elements = tile;
    run.fifo_depth = 2;
    // Completion depends neither on the data nor on the interleaving: nothing need move, and the
    // kept candidate is proven in full afterwards.
    run.completion_only = true;
    if (program_.collective().root() >= 0) run.root = program_.collective().root();
    if (executor.run(run).outcome != cpu::Outcome::Pass) return false;
  }
  return true;
}

namespace {

// Whether `holds(a's hundredths, b's)` at every size, where both have the same sizes.
template <typename Holds>
bool at_every_size(const std::vector<double>& a, const std::vector<double>& b, Holds holds) {
  if (a.empty() || a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!holds(hundredths(a[i]), hundredths(b[i]))) return false;
  }
  return true;
}

}  // namespace

bool no_slower_anywhere(const std::vector<double>& a, const std::vector<double>& b) {
  return at_every_size(a, b, [](long long x, long long y) { return x <= y; });
}

bool dominates(const std::vector<double>& a, const std::vector<double>& b) {
  return no_slower_anywhere(a, b) && !no_slower_anywhere(b, a);
}

}  // namespace detail
}  // namespace weft::compiler
