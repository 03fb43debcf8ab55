// Predicts how long one call of an algorithm takes on a topology (docs/architecture.md §7): a
// discrete-event simulation with the CPU executor's step semantics (the same core,
// runtime/cpu/include/weft/cpu/step_core.h): every threadblock runs its steps in order, tile after
// tile, as the GPU runtime cuts the call (chunk size from the call's bytes, tile size from the
// protocol's FIFO slot); a step waits for its dependency, its message and room in its FIFO; while
// it runs it moves its bytes over the links it crosses, sharing each link's bandwidth with every
// other transfer on it; a message arrives one hop latency after its last byte. The call's time is
// the launch and protocol call latencies plus the end of its last step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "weft/ir/ir.h"
#include "weft/ir/types.h"
#include "weft/predict/topology.h"
#include "weft/program/options.h"

namespace weft::predict {

struct SimulationOptions {
  std::uint64_t bytes = 0;  // the call's size as nccl-tests counts it (minBytes/maxBytes)
  DataType dtype = DataType::Float;
  std::optional<bool> in_place;  // none: out of place when the algorithm allows it
  bool record = false;           // keep every step execution and message (timelines, traces)
  // The GPU runtime's knobs (slot sizes and FIFO depths), as it would read them.
  gpu::RuntimeOptions runtime{};
  // Tiles simulated one by one (0: all; at least 4). A call of more tiles is a pipeline in
  // steady state between its fill and its drain: the simulator runs this many, and half as many
  // again, and extends the makespan by the remaining tiles times the period the two runs differ
  // by (their makespans' difference over their tiles' difference). What large calls cost to
  // predict is then independent of their size, and the pipeline's fill, drain and period are
  // still simulated, not assumed.
  int max_tiles = 64;
};

// One step execution of one threadblock in one tile.
struct StepRecord {
  int rank = 0;
  int threadblock = 0;  // its id on the rank
  int channel = 0;
  int tile = 0;
  int step = 0;
  ir::StepType type = ir::StepType::Nop;
  std::uint64_t bytes = 0;  // payload it moved
  double start_us = 0;      // from the start of the call, launch latency excluded
  double end_us = 0;
  int cause = -1;         // the record whose end let it start (-1: the call's start)
  bool critical = false;  // on the critical path
};

// A message: from the sending step's record to the receiving one's.
struct MessageRecord {
  int from = 0;
  int to = 0;
  double sent_us = 0;     // the sender's end
  double arrived_us = 0;  // one hop latency later
};

struct SimulationResult {
  std::string error;  // non-empty: no prediction (the algorithm does not apply to this size, ...)
  bool ok() const { return error.empty(); }
  std::uint64_t bytes = 0;
  double time_us = 0;  // launch latency + makespan
  double algbw_gbs = 0;
  double busbw_gbs = 0;
  std::size_t chunk_elements = 0;
  std::size_t tile_elements = 0;
  std::size_t tiles = 0;            // as the runtime cuts the call
  std::size_t simulated_tiles = 0;  // of them, run one by one (the records cover these)
  int fifo_depth = 0;
  std::uint64_t step_executions = 0;
  std::vector<StepRecord> steps;        // with `record`: in the order they started
  std::vector<MessageRecord> messages;  // with `record`
  std::vector<int> critical_path;       // with `record`: record indices, first to last
};

class Simulator {
 public:
  // The algorithm and topology must outlive the simulator.
  Simulator(const ir::Algorithm& algorithm, const Topology& topology);
  ~Simulator();
  Simulator(Simulator&&) noexcept;
  Simulator& operator=(Simulator&&) noexcept;

  // Non-empty when the algorithm cannot be simulated on this topology at all (rank counts
  // differ, an IR the executor refuses); run() then returns it as its error.
  const std::string& error() const;
  // Safe to call from several threads. A simulator keeps the makespan of every run of tiles it
  // made (not recording) by the run's shape (tile size, the elements in its tiles, FIFO depth,
  // mode): a later call that runs the same tiles reuses it. Calls that outgrow max_tiles all run
  // the same full tiles, as does a call of exactly that many, so a sweep of sizes costs one
  // simulation of its large calls, not one per size.
  SimulationResult run(const SimulationOptions& options) const;
  // A lower bound on run(options).time_us, found without simulating (0 where run would refuse
  // the call): a connection's FIFO holds D messages, and a message leaves it no sooner than one
  // hop latency after its sender started, so a sender starts at most D messages per hop latency.
  // Algorithms of many small steps per connection (a pipeline of many pieces) are slow at small
  // sizes for this reason alone; a tuning uses the bound to leave them out there.
  double floor_us(const SimulationOptions& options) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace weft::predict
