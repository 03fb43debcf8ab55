// One family of sketches (weft/synthesis/families.h): which machines and collectives it offers
// sketches for, and those sketches. Each family is one file of this folder, listed in
// registry.h in the order its sketches are predicted.
#pragma once

#include <string_view>
#include <vector>

#include "weft/ir/ir.h"
#include "weft/predict/topology.h"
#include "weft/synthesis/families.h"
#include "weft/synthesis/sketches.h"

namespace weft::synthesis::families {

// What every family is asked about: a collective on a machine.
struct Request {
  const predict::Topology& topology;
  ir::Collective collective;
  const NodePlan& plan;
  // The channels its sketches may take: the profile's, allreduce's halved (sketch_channels).
  int channels;
};

struct Family {
  // Its name; its measured reason is in docs/synthesis.md under #family-<name>.
  std::string_view name;
  // Whether it offers sketches for this collective on this machine.
  bool (*offers)(const Request& request);
  // Its sketches, where it offers them.
  void (*sketches)(const Request& request, FamilyVariants& out);
};

// A sketch on `protocol`, no twin.
void offer(FamilyVariants& out, Sketch sketch, ir::Protocol protocol = ir::Protocol::Simple);
// A sketch on Simple with its LL128 twin, and with `with_ll` its LL twin too (each twin listed
// before the one it is the twin of: predicted backwards, after it).
void offer_with_twins(FamilyVariants& out, Sketch sketch, bool with_ll = false);
// A sketch on Simple, with its LL and LL128 twins where `twinned`.
void offer_maybe_twinned(FamilyVariants& out, Sketch sketch, bool twinned);

// Allreduce on one node whose paths were packed: the two families of lanes both ways offer
// sketches there.
bool offers_node_allreduce_lanes(const Request& request);
// Lanes of equal shares both ways along `packed` (paths or spanning trees, packed both ways), in
// path_lanes_shape's pieces: one sketch where any lane is placed.
void offer_both_way_lanes(const Request& request,
                          const std::vector<std::vector<BroadcastPath>>& packed,
                          FamilyVariants& out);

// The shapes several families start from.
// Lanes along the node's rings, each as wide as ring_lane_gbs, in the pieces that share them
// by width.
TreeShape ring_lanes_shape(const Request& request);
// Lanes along the node's paths, path_lanes of them, one piece each.
TreeShape path_lanes_shape(const Request& request);
// A direct tree in direct_pieces, a channel each: wide enough to fill a GPU's links.
TreeShape wide_direct_shape(const Request& request);
// Backwards across nodes: a direct tree split by node (TreeShape::split_by_node) in
// pipelined_pieces, taking turns on split_channels.
TreeShape split_pipelined_shape(const Request& request);

}  // namespace weft::synthesis::families
