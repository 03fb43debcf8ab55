// Predicted time as the judge between legal schedules of one program (weft/compiler/judge.h): each
// candidate the plan search builds is copied for the instances, given the program's header, and
// run on the simulator at the judged sizes. Identical candidates (the two scheduling orders often
// agree) are predicted once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "weft/compiler/judge.h"
#include "weft/compiler/replicate.h"
#include "weft/dsl/program.h"
#include "weft/ir/ir.h"

namespace weft::predict {
class Topology;
}  // namespace weft::predict

namespace weft::compiler::detail {

class TimeJudge {
 public:
  // `program` and `options` must outlive the judge.
  TimeJudge(const dsl::Program& program, const JudgeOptions& options, dsl::Replication layout,
            const BlockSizes& blocks);
  ~TimeJudge();
  TimeJudge(const TimeJudge&) = delete;
  TimeJudge& operator=(const TimeJudge&) = delete;

  // Predicted times (µs, launch latency included) at sizes() of each candidate (one instance's
  // placed algorithm, copied for every instance), the distinct ones on as many threads as the
  // machine has. All empty when judging is off, a candidate has more steps than the limit, or
  // the machine or the simulator cannot take one: the critical path then decides, and notes()
  // says why (once).
  std::vector<std::vector<double>> times(const std::vector<const ir::Algorithm*>& candidates);

  bool enabled() const { return options_.enabled; }
  // Whether one instance's algorithm, copied for every instance, completes with FIFOs of depth 2
  // on the CPU executor (two tile sizes): what a schedule made without that depth must show.
  bool completes_at_depth_two(const ir::Algorithm& one_instance) const;
  // Whether a candidate has few enough steps (all instances) to be predicted.
  bool within_limit(const ir::Algorithm& one_instance);
  const std::vector<std::uint64_t>& sizes() const { return sizes_; }
  // Which machine judged, and where judging stood aside.
  const std::vector<std::string>& notes() const { return notes_; }
  // Candidates predicted (identical ones once).
  int predictions() const { return predictions_; }

 private:
  struct Prediction {
    std::vector<double> times;
    std::string error;
  };
  void note_once(std::string text);
  // The machine loaded from JudgeOptions, once; null when it does not load (a note says why).
  const predict::Topology* machine(int ranks);
  ir::Algorithm whole(const ir::Algorithm& one_instance) const;
  const predict::Topology* topology_for(int ranks);
  Prediction predict_one(const ir::Algorithm& one_instance,
                         const predict::Topology& topology) const;

  const dsl::Program& program_;
  const JudgeOptions& options_;
  dsl::Replication layout_;
  BlockSizes blocks_;
  std::vector<std::uint64_t> sizes_;
  std::unique_ptr<predict::Topology> machine_;
  bool machine_failed_ = false;
  std::vector<std::string> notes_;
  int predictions_ = 0;
  // Candidates already predicted, with their times.
  std::vector<std::pair<ir::Algorithm, std::vector<double>>> seen_;
};

// Whether two algorithms are the same steps on the same threadblocks and channels.
bool same_steps(const ir::Algorithm& a, const ir::Algorithm& b);

// `a` no slower than `b` at any size and faster at one, compared as the simulator prints times: to
// a hundredth of a microsecond.
bool dominates(const std::vector<double>& a, const std::vector<double>& b);
// `a` no slower than `b` at any size, compared the same way.
bool no_slower_anywhere(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace weft::compiler::detail
