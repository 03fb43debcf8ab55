// The tuning table the tuner plugin reads from WEFT_TUNER_CONFIG: a CSV in the format of NCCL's
// example tuner, one rule per line,
//   collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]]
// with lower-case names (allreduce, ring, ll128, ...), −1 as a wildcard (max_bytes −1: no upper
// bound; channels −1: keep NCCL's choice) and '#' starting a comment. Plain data and functions,
// independent of NCCL's headers, so that it can be tested on its own. The writer (what
// `weftc tune` writes) and the reader (what the tuner plugin parses) live here side by side.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "weft/tuning/tuner_names.h"

namespace weft::tuning {
inline constexpr int kAnyValue = -1;

struct TunerRule {
  int collective = 0;  // ncclFunc_t
  std::uint64_t min_bytes = 0;
  std::uint64_t max_bytes = UINT64_MAX;
  int algorithm = 0;
  int protocol = 0;
  int channels = kAnyValue;
  int nodes = kAnyValue;
  int ranks = kAnyValue;
  int pipe_ops = kAnyValue;
  int reg_buff = kAnyValue;
  int line = 0;  // in the file, for messages
};

struct TunerConfig {
  std::vector<TunerRule> rules;  // in file order: the first match wins
  // Lines that were skipped, each "file:line: reason". The tuner reports them and goes on.
  std::vector<std::string> problems;
};

// A rule is one short line: 4 MiB holds tens of thousands, more than any table NCCL's tuner
// would want to scan per call.
inline constexpr std::uint64_t kTunerFileMaxBytes = std::uint64_t{4} << 20;

TunerConfig parse_tuner_config(std::string_view text, std::string_view source_name);
// A file that cannot be read (missing, not a regular file, larger than kTunerFileMaxBytes) gives
// no rules and one problem, as does one that yields no rule. Never blocks, never throws.
TunerConfig read_tuner_config(const std::string& path);

// What NCCL tells the tuner about one call.
struct TunerQuery {
  int collective = 0;  // ncclFunc_t
  std::size_t bytes = 0;
  int pipe_ops = 1;
  int reg_buff = 0;
  std::size_t nodes = 1;
  std::size_t ranks = 1;
};

// Applies the first rule that matches `query` and whose (algorithm, protocol) NCCL allows for
// this call (a cost that is not −1) and fits the table: that pair's cost becomes 0 so NCCL picks
// it, and *n_channels is set when the rule names channels. `cost_table` is NCCL's
// float[num_algorithms][num_protocols], row-major. Returns the index of the rule applied, −1
// when none did (nothing is changed then).
int apply_tuner_rules(const std::vector<TunerRule>& rules, const TunerQuery& query,
                      float* cost_table, int num_algorithms, int num_protocols, int* n_channels);

// One rule as `weftc tune` writes it: names as the reader takes them, and a comment after it.
struct TunerLine {
  std::string collective;  // "allreduce"
  std::uint64_t min_bytes = 0;
  std::uint64_t max_bytes = 0;  // inclusive; 0: no upper bound (written as −1)
  std::string algorithm;        // "ring"
  std::string protocol;         // "ll128"
  int channels = kAnyValue;
  int nodes = kAnyValue;
  int ranks = kAnyValue;
  std::string comment;
};

// The table's text: a header saying what wrote it, then one line per rule.
std::string write_tuner_config(const std::vector<TunerLine>& lines);

}  // namespace weft::tuning
