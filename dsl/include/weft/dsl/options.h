// Program-wide choices that are not part of the algorithm's data flow.
#pragma once

#include <cstdint>
#include <string>

#include "weft/ir/ir.h"

namespace weft::dsl {

// Auto: the compiler forms threadblocks and channels (honouring any hints given); Manual: every
// operation must say its threadblocks, and the compiler only checks them.
enum class ThreadblockPolicy { Auto, Manual };

// How the compiler forms threadblocks from sends and receives that no fused step ties together:
// Paired puts a send to rank q and a receive from rank q on one threadblock (fewer threadblocks,
// as NCCL's p2p does); Separate gives each direction its own, so that a receive never waits
// behind a send of the same threadblock (or a send behind a receive); Auto compiles both and
// keeps Separate only where it shortens the critical path (where the compiler judges by time,
// tries every placement and keeps the fastest). Msccl places as msccl-tools' automatic policy
// does: directions apart, and each local step (copy, reduce) on the threadblock of its channel
// whose latest step is earliest in the level order (schedule.h), a threadblock of its own where
// its channel has none yet.
enum class Placement { Auto, Paired, Separate, Msccl };

// How `instances` copies lay out their chunks: Interleaved puts instance i of chunk k at
// k·instances + i (MSCCL's default); Blocked keeps each instance's chunks of one rank block
// together, so multi-chunk steps stay single steps; Auto is Interleaved when every operation moves
// one chunk and Blocked otherwise, so that k instances have exactly k times one's steps.
enum class Replication { Interleaved, Blocked, Auto };

// How far unhinted traffic spreads over channels. Fewest: only as far as the limits profile
// needs. ShortestPath: also further where that shortens the critical path (independent flows
// between the same ranks then run side by side, and each chunk's chain of hops may get a channel
// of its own so that its hops stay fused, as msccl-tools' automatic channels do), at the cost of
// more threadblocks and a longer compile. Under the manual threadblock policy the
// user's threadblocks keep their channels: Fewest.
enum class ChannelPolicy { Fewest, ShortestPath };

struct Options {
  ir::Protocol protocol = ir::Protocol::Simple;
  int instances = 1;
  ThreadblockPolicy threadblocks = ThreadblockPolicy::Auto;
  Placement placement = Placement::Auto;
  Replication replication = Replication::Auto;
  ChannelPolicy channel_policy = ChannelPolicy::Fewest;
  bool fusion = true;
  std::uint64_t min_bytes = 0;
  std::uint64_t max_bytes = 0;   // 0: no upper bound
  std::string limits = "msccl";  // limits profile the output must obey: "msccl" or "weft"
  // The nodes the program is written for (ranks in contiguous blocks, one per node): the IR's
  // nnodes, 0 when it is not one node's machine in particular.
  int nodes = 0;
};

}  // namespace weft::dsl
