// Static validation of an IR (docs/architecture.md §2.7) against a limits profile.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "weft/ir/diagnostics.h"
#include "weft/ir/ir.h"
#include "weft/ir/xml.h"

namespace weft::ir {

struct LimitsProfile {
  std::string name;
  int max_steps_per_threadblock;
  int max_count;  // cnt must be below this
  int max_channels;
  int max_send_threadblocks_per_channel;
  int max_recv_threadblocks_per_channel;
  int max_threadblocks_per_rank;
  // The executor's XML reader: elements it keeps for one rank (the <algo>, that rank's <gpu>, its
  // <tb>s and <step>s) and characters in one attribute value. 0 = no limit.
  int max_xml_nodes_per_rank = 0;
  int max_attribute_length = 0;
};

// MSCCL's executor limits: 64 steps per threadblock, cnt < 72, 32 channels, 32 sending and 32
// receiving threadblocks per channel; its XML reader keeps 4,096 elements per rank and values of
// at most 255 characters.
LimitsProfile msccl_limits();
// Weft's own runtime: what its flat device program and dependency flags can encode.
LimitsProfile weft_limits();
std::optional<LimitsProfile> limits_by_name(std::string_view name);

// Every problem found, each with file, line and element path. Never throws, never loops forever
// (cycle detection is iterative).
Diagnostics validate(const Algorithm& algo, const LimitsProfile& limits);

// read + validate: what every consumer of a file calls.
struct LoadResult {
  std::optional<Algorithm> algorithm;  // present only when there are no errors
  Diagnostics diagnostics;
  bool ok() const { return algorithm.has_value(); }
};
LoadResult load_xml_file(const std::string& path, const LimitsProfile& limits,
                         const FileReadPolicy& policy = kAlgorithmFile);
LoadResult load_xml_string(std::string_view text, const LimitsProfile& limits,
                           std::string source_name = "<string>");

}  // namespace weft::ir
