// How the compiler judges schedules by time (docs/architecture.md §4.1): where the passes
// can build several legal schedules of one program (both scheduling orders, fused or not, the
// channel plans, sends and receives paired on one threadblock or not), each is predicted by the
// simulator (weft/predict/simulator.h) on a machine at the sizes the algorithm is for, and the
// predicted time decides, not a count of steps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace weft::predict {
class Topology;
}  // namespace weft::predict

namespace weft::compiler {

// Which candidate the others must beat: Weft's own first choice (critical-path order), or the one
// MSCCLang's own compiler would make (level order, the program's hints as written), for programs
// that come from msccl-tools.
enum class Incumbent { Weft, Msccl };

struct JudgeOptions {
  // Off: the critical path, in steps, decides as it did before time judged (and nothing is
  // predicted).
  bool enabled = true;
  // The machine: a preset or an NCCL topology file, as `weftc simulate -t` reads it.
  std::string topology = "a100-nvswitch";
  // 0: as many GPUs per node as the machine has and divide the ranks (the largest divisor no
  // larger), and as many nodes as that makes.
  int nodes = 0;
  int gpus_per_node = 0;
  // The machine itself, already loaded (with its cost parameters and link edits), as `weftc tune`
  // and `weftc synthesize` hold it: used instead of `topology`, `nodes` and `gpus_per_node` when
  // set and its ranks are the program's. Must outlive the compile.
  const predict::Topology* machine = nullptr;
  // The sizes (bytes, as nccl-tests counts them) a candidate is predicted at. Empty: 64 KB, 1 MB,
  // 4 MB, 64 MB and 256 MB, those inside the algorithm's minBytes..maxBytes band (its ends when
  // none is).
  std::vector<std::uint64_t> sizes;
  // Candidates with more steps than this (all instances) are judged by their critical path: what
  // a prediction costs grows with the steps (on a 2-core machine, judging adds at most about 1 s
  // to a library algorithm's compile at 8 to 64 ranks under this limit). 0: no limit.
  std::uint64_t max_steps = 8000;
  // Tiles a prediction simulates one by one before it extends the pipeline's steady state
  // (predict::SimulationOptions::max_tiles): fewer than `weftc simulate`'s 64, since a judgement
  // needs the order of candidates, and the period of a pipeline shows within a few tiles. What a
  // judgement costs goes with the tiles simulated: 8 made all-pairs allreduce's at 16 ranks a
  // third of what 16 did, and scripts/bench-schedule.sh's verdicts against msccl-tools held.
  int max_tiles = 8;
  Incumbent incumbent = Incumbent::Weft;
};

// One candidate schedule as time judged it (CompileResult::candidates; `weftc compile
// --candidates` prints them).
struct JudgedCandidate {
  // "level order, msccl-tools' placement, a channel per data chain", ...
  std::string description;
  int steps = 0;         // one instance, nops included
  int threadblocks = 0;  // one instance, all ranks
  int channels = 0;
  int critical_path = 0;         // in steps
  std::vector<double> times_us;  // predicted at CompileResult::judged_sizes
  bool kept = false;
};

// The judged sizes for a band (JudgeOptions::sizes empty): the defaults inside it, else its ends.
std::vector<std::uint64_t> judged_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes);

}  // namespace weft::compiler
