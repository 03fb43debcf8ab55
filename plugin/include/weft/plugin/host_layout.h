// Where a communicator's ranks run, host by host, and whether an algorithm was written for that
// (docs/nccl.md, "Across hosts"). An algorithm states the nodes it assumes (the IR's nnodes: ranks
// in contiguous blocks of ngpus / nnodes, block k on node k); a file that states none is for one
// node. The shim gives a communicator only the algorithms written for its hosts. Plain C++, so
// that the rule is tested without NCCL or a GPU.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "weft/ir/ir.h"

namespace weft::plugin {

struct HostLayout {
  std::vector<std::string> hosts;  // in the order their first rank comes
  // Each host holds the same number of ranks, all of them consecutive, the hosts in order:
  // ranks [k × per_host, (k + 1) × per_host) on hosts[k].
  bool blocks = false;
  int per_host = 0;  // when blocks

  int count() const { return static_cast<int>(hosts.size()); }
  // "2 hosts, 4 ranks each" / "3 hosts, ranks not in equal consecutive blocks".
  std::string describe() const;
};

// `host_of_rank[r]`: rank r's host id.
HostLayout host_layout(std::span<const std::string> host_of_rank);

// Why `algorithm` must not run on a communicator laid out as `layout` (nothing when it may).
std::optional<std::string> placement_mismatch(const ir::Algorithm& algorithm,
                                              const HostLayout& layout);

}  // namespace weft::plugin
