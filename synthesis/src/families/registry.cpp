#include "registry.h"

#include <iterator>
#include <utility>

#include "weft/synthesis/machine_facts.h"
#include "weft/synthesis/paths.h"
#include "weft/synthesis/rings.h"

namespace weft::synthesis {

std::vector<std::string_view> family_names() {
  std::vector<std::string_view> names;
  for (const families::Family* f : families::kRegistry) names.push_back(f->name);
  return names;
}

std::vector<std::string_view> offering_families(const predict::Topology& topology,
                                                ir::Collective collective, const NodePlan& plan,
                                                int most_channels) {
  const families::Request request{topology, collective, plan,
                                  sketch_channels(collective, most_channels)};
  std::vector<std::string_view> names;
  for (const families::Family* f : families::kRegistry) {
    if (f->offers(request)) names.push_back(f->name);
  }
  return names;
}

std::vector<FamilyVariants> family_variants(const predict::Topology& topology,
                                            ir::Collective collective, const NodePlan& plan,
                                            int most_channels) {
  const families::Request request{topology, collective, plan,
                                  sketch_channels(collective, most_channels)};
  std::vector<FamilyVariants> out;
  for (const families::Family* f : families::kRegistry) {
    if (!f->offers(request)) continue;
    FamilyVariants offered;
    offered.family = f->name;
    f->sketches(request, offered);
    out.push_back(std::move(offered));
  }
  return out;
}

std::vector<Variant> variants(const predict::Topology& topology, ir::Collective collective,
                              const NodePlan& plan, int most_channels) {
  std::vector<Variant> twins;
  std::vector<Variant> rest;
  for (FamilyVariants& f : family_variants(topology, collective, plan, most_channels)) {
    twins.insert(twins.end(), std::make_move_iterator(f.twins.begin()),
                 std::make_move_iterator(f.twins.end()));
    rest.insert(rest.end(), std::make_move_iterator(f.variants.begin()),
                std::make_move_iterator(f.variants.end()));
  }
  twins.insert(twins.end(), std::make_move_iterator(rest.begin()),
               std::make_move_iterator(rest.end()));
  return twins;
}

NodePlan plan_node(const predict::Topology& topology, ir::Collective collective) {
  NodePlan plan;
  if (collective == ir::Collective::AllToAll) return plan;
  const std::vector<int> node0 = node0_ranks(topology);
  plan.rings = pack_rings(topology, node0);
  plan.paths = pack_paths(topology, node0, 8);
  return plan;
}

}  // namespace weft::synthesis
