// The sketches synthesis compiles for a collective on a machine, by family (docs/synthesis.md,
// "How candidates are found"): rings and paths within a node, equal lanes, direct trees wide,
// pipelined, taking turns or split by node, alltoall's routes and rails. Each family says which
// machines and collectives it offers sketches for (from weft/synthesis/machine_facts.h) and
// which sketches; a registry lists them in a fixed order, which is the order they are predicted
// and pruned in (weft/tuning/tune.h), so that ties go the same way on every run. Each family's
// measured reason is in docs/synthesis.md under its anchor, `#family-<name>`.
#pragma once

#include <string_view>
#include <vector>

#include "weft/ir/ir.h"
#include "weft/predict/topology.h"
#include "weft/synthesis/sketch.h"
#include "weft/synthesis/sketches.h"

namespace weft::synthesis {

// A sketch on a protocol, as it is compiled and predicted.
struct Variant {
  Sketch sketch;
  ir::Protocol protocol = ir::Protocol::Simple;
  // A twin of the same sketch on the protocol with more payload per byte (LL's is the LL128
  // one, LL128's the Simple one): not predicted past a size where it was slower than that one
  // (tuning::TuneRequest::twins).
  bool twin = false;
};

// What one family offers for a collective on a machine, each list in its order.
struct FamilyVariants {
  std::string_view family;        // its name, as family_names() lists it
  std::vector<Variant> twins;     // LL and LL128 twins (Variant::twin), each LL before its LL128
  std::vector<Variant> variants;  // the rest: Simple, and the sketches meant for LL or LL128
};

// Every family's name, in the registry's order.
std::vector<std::string_view> family_names();

// The names of the families that offer sketches for `collective` on this machine, in the
// registry's order: what family_variants would list, without building a sketch (on 1,024 GPUs
// those take minutes).
std::vector<std::string_view> offering_families(const predict::Topology& topology,
                                                ir::Collective collective, const NodePlan& plan,
                                                int most_channels);

// The families that offer sketches for `collective` on this machine, in the registry's order,
// with what each offers. `most_channels` is the limits profile's; `plan` the node's
// (plan_node).
std::vector<FamilyVariants> family_variants(const predict::Topology& topology,
                                            ir::Collective collective, const NodePlan& plan,
                                            int most_channels);

// Every family's variants in one list, the order they are predicted in: the twins first (every
// family's, in the registry's order), since the tuning loop predicts sketches backwards
// (TuneRequest::prunable_backwards) and a twin after the sketch it is the twin of; then the
// other variants, in the registry's order.
std::vector<Variant> variants(const predict::Topology& topology, ir::Collective collective,
                              const NodePlan& plan, int most_channels);

// The node's rings and paths (node 0's, which every node copies; none for alltoall, which needs
// no trees).
NodePlan plan_node(const predict::Topology& topology, ir::Collective collective);

}  // namespace weft::synthesis
