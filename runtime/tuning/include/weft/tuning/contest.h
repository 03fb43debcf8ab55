// The contest (docs/architecture.md §7): one loop behind `weftc tune` and `weftc synthesize`.
// Sources bring candidates — the algorithm library's variants, sketches synthesized for the
// machine, a user's own XML files — each with its own proof; the loop predicts them all on one
// machine beside NCCL's own algorithms, with the same pruning for whichever source offers a
// lower bound, chooses the bands, and proves what it would write: every band winner not proved
// yet (a winner that does not prove is left out and the bands chosen again). The commands differ
// only in which sources they list, in what order, and in their options.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "weft/ir/ir.h"
#include "weft/predict/topology.h"
#include "weft/tuning/contenders.h"
#include "weft/tuning/tune.h"

namespace weft::tuning {

// One candidate as its source offers it.
struct Entry {
  Candidate candidate;
  // Proves the candidate as its source can (a DSL program's postcondition, or the collective's
  // spec for a file): nothing when it proves, else why not, after the candidate's name. Null
  // when the source proved it already. It is handed the candidate, which it need not keep a
  // copy of (a sketch for a thousand GPUs is large).
  std::function<std::optional<std::string>(const Candidate&)> prove;
  // The entry of the same source whose schedule is this one's on a protocol with more payload
  // per byte (TuneRequest::twins), by index among the source's entries; -1: none.
  int twin = -1;
};

// What one source brings to the contest.
struct Field {
  std::string source;  // "synthesis", "library", "files": for reports and progress lines
  std::vector<Entry> entries;
  std::vector<std::string> rejected;  // what it left out, with why (the report lists them)
  // A lower bound on a candidate's time at a size (synthesis: the bound for its protocol). A
  // field that has one is prunable (TuneRequest::floor_us): at most one field per contest.
  std::function<double(const Candidate&, std::uint64_t bytes)> floor_us;
  bool backwards = false;      // TuneRequest::prunable_backwards, for a prunable field
  double compile_seconds = 0;  // what gathering it took (the source's own measure)
};

struct ContestRequest {
  ir::Collective collective = ir::Collective::AllReduce;
  std::vector<std::uint64_t> sizes;  // ascending
  bool in_place = false;
  bool with_nccl = true;
  double gap = 0;          // TuneRequest::gap, for the prunable field
  bool prove_all = false;  // prove every entry before predicting, not only the winners
  // TuneRequest::max_threadblocks: a candidate over it wins no band, so none is proved (not even
  // with prove_all, which proves what will be written).
  int max_threadblocks = 0;
  // Hears each prediction (TuneRequest::on_predict) and each proof (k of n, 1-based).
  std::function<void(std::size_t k, std::size_t n, const std::string& name, std::uint64_t bytes)>
      on_predict;
  std::function<void(const std::string& name)> on_prove;
};

struct Contest {
  Tuning tuning;
  // The candidates that contended, field by field in the order given (what did not prove left
  // out), and per field how many of them it still has.
  std::vector<Candidate> candidates;
  std::vector<std::size_t> field_sizes;
  std::vector<bool> proved;  // per candidate
  // Per field: what it left out, then its candidates whose proofs failed, each with why.
  std::vector<std::vector<std::string>> rejected;
  double predict_seconds = 0;
  double prove_seconds = 0;

  std::size_t proved_count() const;
  // Every field's rejections in field order (the report's list).
  std::vector<std::string> all_rejected() const;
};

// Runs the contest. Throws std::invalid_argument for more than one prunable field, or a twin out
// of its field's range (tune's reasons).
Contest run_contest(std::vector<Field> fields, const predict::Topology& topology,
                    const ContestRequest& request);

}  // namespace weft::tuning
