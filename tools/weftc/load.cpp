#include "load.h"

#include <fmt/format.h>

#include "weft/ir/geometry.h"

namespace weft::weftc {

std::optional<ir::Algorithm> load_or_report(const std::string& path,
                                            const ir::LimitsProfile& limits) {
  ir::LoadResult loaded = ir::load_xml_file(path, limits, ir::kCommandLineFile);
  for (const Diagnostic& finding : loaded.diagnostics.items) {
    fmt::print(stderr, "{}\n", finding.str());
  }
  if (!loaded.ok()) {
    fmt::print(stderr, "{}: {} error(s); not loaded (limits profile '{}')\n", path,
               loaded.diagnostics.error_count(), limits.name);
    return std::nullopt;
  }
  return std::move(loaded.algorithm);
}

void add_profile_option(CLI::App& cmd, std::string& name) {
  cmd.add_option("--profile", name,
                 "Limits profile to validate against: 'msccl' (MSCCL executor's limits) or "
                 "'weft' (Weft's runtime)")
      ->capture_default_str()
      ->check(CLI::IsMember({"msccl", "weft"}));
}

ir::LimitsProfile profile_or_throw(const std::string& name) {
  auto limits = ir::limits_by_name(name);
  if (!limits) throw CLI::ValidationError("--profile", "unknown limits profile '" + name + "'");
  return *limits;
}

CollectiveSpec spec_for(const ir::Algorithm& algo, int root, bool& has_postcondition) {
  CollectiveSpec spec = standard_spec(algo, root);
  has_postcondition = spec.ngpus != 0;
  if (!has_postcondition) {
    spec.name = algo.collective_name;
    spec.ngpus = algo.ngpus;
    for (int r = 0; r < algo.ngpus; ++r) {
      spec.input_chunks.push_back(ir::input_extent_chunks(algo, r));
      spec.output_chunks.push_back(ir::output_extent_chunks(algo, r));
      spec.expected.add_rank(spec.output_chunks.back());
    }
  }
  return spec;
}

}  // namespace weft::weftc
