// Channels by data chain, before fusion: the widest plan the ShortestPath channel policy tries.
//
// A data chain is the path one piece of data takes through the program: a send, the receive of
// its message, the send that fusion will join to that receive (the first send of exactly what
// the receive stored, as fuse.h picks it), and so on. Fusion and the schedule decide before
// channels exist, so they treat all unhinted traffic as one channel: a rank's receive connection
// from one peer then fuses with sends to one other peer only, and every message between two ranks
// queues in one FIFO. Independent chains that cross at a rank (a ring's chunk arriving from the
// local neighbour and leaving for the other node, beside another that goes on around the ring)
// then lose their fusions and wait for each other. Giving each chain a channel first, as hints,
// lets fusion, the schedule and the threadblocks see the chains apart, as msccl-tools' automatic
// channels do: chains that pass the same pairs of ranks share a channel, and a chain takes the
// lowest channel on which no other chain uses any of its pairs (the least used one when none is
// free).
#pragma once

#include <optional>
#include <span>

#include "weft/compiler/instruction_dag.h"

namespace weft::compiler {

// `dag` with every unhinted send and receive given its chain's channel as a hint, on channels
// above the hinted ones and below `max_channels`; a chain with a hint keeps it. None when this
// plan is one channel for all unhinted traffic (what the narrow plan already is), when nothing is
// unhinted, or when a chain carries two different hints (fusion will keep those apart anyway).
// `keep_apart` (per instruction of `dag`, empty for none): sends fusion will leave alone, which
// therefore start chains of their own (fuse.h).
std::optional<InstructionDag> channel_per_data_chain(const InstructionDag& dag, int max_channels,
                                                     std::span<const char> keep_apart = {});

}  // namespace weft::compiler
