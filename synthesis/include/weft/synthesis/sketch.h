// A sketch: where every piece of a collective's data travels, hop by hop, before it is a program.
// The synthesizer finds sketches on a topology (sketches.h); to_program turns one into a DSL
// program, which the compiler then schedules, assigns and proves like any other.
#pragma once

#include <string>
#include <vector>

#include "weft/dsl/options.h"
#include "weft/dsl/program.h"
#include "weft/ir/ir.h"

namespace weft::synthesis {

// One hop of a piece, from a rank that holds it to another, on a channel.
struct Hop {
  int from = 0;
  int to = 0;
  int channel = 0;
  bool in_root_node = false;  // between two GPUs of the root's node (Route::partials_first)
};

// Where one piece travels.
//   allgather: piece `piece` of rank `root`'s block, from the root to every other rank; the hops
//              form a tree, each hop's `from` holding the piece by the time it is listed;
//   reducescatter: the piece of rank `root`'s block of the result, on the same tree backwards
//              (each rank adds what its subtree reduced and passes it toward the root);
//   allreduce: the piece owned by `root`, reduced backwards along the tree, then sent forwards;
//   alltoall:  the piece `piece` (destination × pieces + j) of rank `root`'s input, along a path:
//              the hops in order, the last one ending at the destination.
struct Route {
  int root = 0;
  int piece = 0;
  int count = 1;  // pieces piece .. piece + count - 1 travel together (not for alltoall)
  std::vector<Hop> hops;
  // Backwards (reducescatter, allreduce's scatter): the root takes what the other nodes reduced
  // before its own node's contributions, not after. Its node's chain for the piece then waits
  // for the network, and nothing waits for the network after that chain: where the links within
  // the node bind, the node spends the last partials' network hop on its own chains.
  bool partials_first = false;
};

struct Sketch {
  std::string name;  // "rings 3 c12", "rails direct + node rings", ...
  ir::Collective collective = ir::Collective::AllGather;
  int ranks = 0;
  int pieces = 1;    // pieces per rank's block
  int channels = 1;  // the hops' channels are below this (allreduce's gather adds it to them)
  // Whether the compiler may fuse a receive with the send that forwards it (dsl::Options::fusion).
  // Pipelined pieces are better unfused: a threadblock that only receives takes the next piece
  // from the network as soon as it has the last, instead of after forwarding it.
  bool fusion = true;
  std::vector<Route> routes;
};

// The sketch as a DSL program with these options (protocol, limits profile, ...). Throws
// dsl::DslError, naming the hop, when the sketch sends a piece from a rank that does not hold it.
dsl::Program to_program(const Sketch& sketch, const dsl::Options& options, bool in_place);

}  // namespace weft::synthesis
