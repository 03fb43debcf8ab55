// On one node, the paths run as lanes of equal shares, placed so that no link carries much more
// than the packing asks of it (paths.h: equal_lanes), in the packing's lane count and twice it
// (docs/synthesis.md#family-equal-lanes).
#include <algorithm>
#include <utility>
#include <vector>

#include "registry.h"
#include "weft/synthesis/machine_facts.h"
#include "weft/synthesis/paths.h"

namespace weft::synthesis::families {

namespace {

bool offers(const Request& request) {
  return request.collective != ir::Collective::AllToAll && request.topology.nodes() == 1 &&
         !request.plan.paths.empty();
}

void sketches(const Request& request, FamilyVariants& out) {
  const predict::Topology& topology = request.topology;
  const std::vector<int> node0 = node0_ranks(topology);
  const int pieces = path_lanes(topology, request.channels);
  // Eight pieces per lane: finer pieces fill the paths sooner. Where the channels leave room for
  // more lanes than the paths, the pieces are doubled until they fill it.
  TreeShape filled = path_lanes_shape(request);
  while (filled.pieces < 8 * most_lanes(topology, request.channels)) filled.pieces *= 2;
  NodePlan lanes;
  lanes.paths = equal_lanes(topology, node0, request.plan.paths, pieces);
  lanes.equal_lanes = true;
  if (!lanes.paths.empty()) {
    offer(out, tree_sketch(topology, request.collective, lanes, filled));
  }
  // Twice as many lanes apportion the paths' rates more finely (D'Hondt over more seats).
  NodePlan finer;
  finer.paths = equal_lanes(topology, node0, request.plan.paths, pieces * 2);
  finer.equal_lanes = true;
  if (!finer.paths.empty()) {
    TreeShape fine = filled;
    fine.pieces = std::max(filled.pieces, pieces * 2);
    Sketch sketch = tree_sketch(topology, request.collective, finer, fine);
    sketch.name += "_x2";
    offer(out, std::move(sketch));
  }
}

}  // namespace

const Family kEqualLanes{"equal-lanes", offers, sketches};

}  // namespace weft::synthesis::families
