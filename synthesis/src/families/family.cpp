#include "family.h"

#include <utility>

#include "weft/synthesis/machine_facts.h"
#include "weft/synthesis/paths.h"

namespace weft::synthesis::families {

void offer(FamilyVariants& out, Sketch sketch, ir::Protocol protocol) {
  out.variants.push_back({std::move(sketch), protocol});
}

void offer_with_twins(FamilyVariants& out, Sketch sketch, bool with_ll) {
  if (with_ll) out.twins.push_back({sketch, ir::Protocol::LL, true});
  out.twins.push_back({sketch, ir::Protocol::LL128, true});
  out.variants.push_back({std::move(sketch), ir::Protocol::Simple});
}

void offer_maybe_twinned(FamilyVariants& out, Sketch sketch, bool twinned) {
  if (twinned) {
    offer_with_twins(out, std::move(sketch), /*with_ll=*/true);
  } else {
    offer(out, std::move(sketch));
  }
}

TreeShape ring_lanes_shape(const Request& request) {
  const double lane_gbs = ring_lane_gbs(request.topology);
  const int lanes = most_lanes(request.topology, request.channels);
  return {Within::Rings, Across::Direct,
          plan_pieces(request.plan, Within::Rings, lane_gbs, lanes, 64), lane_gbs,
          request.channels};
}

TreeShape path_lanes_shape(const Request& request) {
  return {Within::Paths, Across::Direct, path_lanes(request.topology, request.channels), -1,
          request.channels};
}

TreeShape wide_direct_shape(const Request& request) {
  return {Within::Direct, Across::Direct,
          direct_pieces(request.topology, request.plan, request.channels), 0, request.channels};
}

TreeShape split_pipelined_shape(const Request& request) {
  TreeShape piped = wide_direct_shape(request);
  const int direct = piped.pieces;
  piped.pieces = pipelined_pieces(request.topology, request.collective);
  piped.direct_channels = split_channels(request.topology, direct);
  piped.split_by_node = true;
  return piped;
}

bool offers_node_allreduce_lanes(const Request& request) {
  return request.collective == ir::Collective::AllReduce && request.topology.nodes() == 1 &&
         !request.plan.paths.empty();
}

void offer_both_way_lanes(const Request& request,
                          const std::vector<std::vector<BroadcastPath>>& packed,
                          FamilyVariants& out) {
  const predict::Topology& topology = request.topology;
  const TreeShape bandwidth = path_lanes_shape(request);
  NodePlan lanes;
  lanes.paths = equal_lanes(topology, node0_ranks(topology), packed, bandwidth.pieces,
                            /*both_ways=*/true);
  lanes.equal_lanes = true;
  lanes.both_ways = true;
  if (!lanes.paths.empty()) {
    offer(out, tree_sketch(topology, request.collective, lanes, bandwidth));
  }
}

}  // namespace weft::synthesis::families
