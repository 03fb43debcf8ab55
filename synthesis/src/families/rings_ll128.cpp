// One lane per ring on LL128, for middle sizes, where LL128's lower latency pays more than the
// lanes' width (docs/synthesis.md#family-rings-ll128).
#include "registry.h"
#include "weft/synthesis/machine_facts.h"

namespace weft::synthesis::families {

namespace {

bool offers(const Request& request) {
  return request.collective != ir::Collective::AllToAll && !request.plan.rings.empty();
}

void sketches(const Request& request, FamilyVariants& out) {
  const int lanes = most_lanes(request.topology, request.channels);
  const TreeShape mid{Within::Rings, Across::Direct,
                      plan_pieces(request.plan, Within::Rings, 0, lanes, 64), 0, request.channels};
  offer(out, tree_sketch(request.topology, request.collective, request.plan, mid),
        ir::Protocol::LL128);
}

}  // namespace

const Family kRingsLL128{"rings-ll128", offers, sketches};

}  // namespace weft::synthesis::families
