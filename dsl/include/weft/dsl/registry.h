// Named algorithms that build programs from a few parameters: the library in examples/ and the
// user's own. A Registry is an object the caller owns (weftc builds one at start-up); a shared
// library adds to it through the C entry point below, which `weftc compile --load` calls.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/dsl/program.h"
#include "weft/version.h"

namespace weft::dsl {

struct AlgorithmParams {
  int ranks = 0;          // all ranks (nodes × gpus_per_node for hierarchical algorithms)
  int nodes = 0;          // 0 when not given
  int gpus_per_node = 0;  // 0 when not given
  ir::Protocol protocol = ir::Protocol::Simple;
  int instances = 1;
  // Channels the algorithm spreads its traffic over (e.g. channels per ring), where meaningful;
  // 1 lets the compiler add channels only when the limits profile needs them.
  int channels = 1;
  int chunks = 0;  // pipeline depth or chunk factor where meaningful; 0: the algorithm's default
  std::uint64_t min_bytes = 0;
  std::uint64_t max_bytes = 0;
  std::optional<bool> in_place;  // absent: the algorithm's default (alltoall: out of place)
  int root = 0;                  // broadcast and reduce
  std::string limits = "msccl";  // limits profile
  Placement placement = Placement::Auto;
  ChannelPolicy channel_policy = ChannelPolicy::Fewest;

  // Options carrying protocol, instances, size band, limits, threadblock placement and the
  // channel policy.
  Options options() const;
};

enum class Shape {
  AnyRanks,         // --ranks N (N ≥ min_ranks)
  PowerOfTwoRanks,  // --ranks 2^k
  NodesTimesGpus,   // --nodes A --gpus-per-node B
};

struct AlgorithmInfo {
  std::string name;
  std::string collective;  // "allreduce", ...
  std::string summary;     // one line
  Shape shape = Shape::AnyRanks;
  int min_ranks = 2;
  std::function<Program(const AlgorithmParams&)> build;
};

// Why `params` do not fit `info`'s shape, or nothing when they do.
std::optional<std::string> check_shape(const AlgorithmInfo& info, const AlgorithmParams& params);

class Registry {
 public:
  // Throws std::invalid_argument when the name is taken or the entry has no builder.
  void add(AlgorithmInfo info);
  const AlgorithmInfo* find(std::string_view name) const;
  const std::vector<AlgorithmInfo>& algorithms() const { return algorithms_; }

 private:
  std::vector<AlgorithmInfo> algorithms_;
};

// The symbol a library of algorithms exports (extern "C"), and its type:
//   extern "C" void weft_register_algorithms(weft::dsl::Registry* registry) { ... }
inline constexpr const char* kRegisterSymbol = "weft_register_algorithms";
using RegisterFunction = void (*)(Registry*);

// The Weft version a library was compiled against: the symbol below, which every file that
// includes this header defines (weakly, so that they agree and link). weftc reads it from the
// library before calling anything in it and refuses a library of another version, whose
// Registry and Program may be laid out differently.
inline constexpr const char* kVersionSymbol = "weft_algorithm_library_version";

}  // namespace weft::dsl

extern "C" {
[[gnu::weak, gnu::visibility("default")]] extern const char weft_algorithm_library_version[] =
    WEFT_VERSION_STRING;
}
