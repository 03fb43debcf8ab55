#include "synthesis_folder.h"

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "../commands.h"
#include "weft/ir/text_file.h"
#include "weft/ir/xml.h"

namespace weft::weftc {

// An earlier run's `--all` left every sketch it proved in DIR/sketches: refused as the folder's own
// files are, and removed with --force, so that the sketches there are this run's or none.
std::optional<std::string> clear_sketches(const std::string& dir, bool force) {
  std::error_code ec;
  std::vector<std::filesystem::path> stale;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".xml") stale.push_back(entry.path());
  }
  if (stale.empty()) return std::nullopt;
  if (!force) {
    return fmt::format("{}: already holds {} sketch(es) from an earlier run; --force replaces them",
                       dir, stale.size());
  }
  for (const auto& p : stale) {
    if (!std::filesystem::remove(p, ec) && ec) {
      return fmt::format("{}: cannot be removed: {}", p.string(), ec.message());
    }
  }
  return std::nullopt;
}

std::optional<synthesis::Bound> bound_or_report(const predict::Topology& machine,
                                                ir::Collective collective) {
  try {
    synthesis::Bound bound = synthesis::bandwidth_bound(machine, collective);
    fmt::print(
        "bound: {} on {} ranks of '{}' moves at most {:.1f} GB/s algbw ({}), after {:.1f} us "
        "that every call pays (launch, call latency, one hop across that cut)\n",
        ir::to_string(collective), machine.ranks(), machine.name(), bound.algbw_gbs, bound.cut,
        bound.min_latency_us());
    // The node's cut, where its hop is the slower: it binds mid sizes.
    if (const synthesis::Cut* node = bound.slower_hop_cut()) {
      fmt::print(
          "  and {:.1f} GB/s ({}), after {:.1f} us (one hop across the network): every call "
          "takes the longer of the two\n",
          node->algbw_gbs, node->cut, node->min_latency_us());
    }
    // What the machine has and no route uses, which the bound leaves out (a NIC no GPU's
    // route reaches): a user who counts it expects more.
    for (const std::string& unused : bound.left_out) fmt::print("  left out: {}\n", unused);
    // Both bounds: the one predictions are held to (links at what SM copies achieve on them)
    // and the one a datasheet's line rates give, which no copy reaches. Kept in the bound,
    // which synthesize is handed, so that it is worked out once.
    synthesis::line_rate_bound(bound, machine);
    fmt::print(
        "  (links at their achievable rates, link.<type>.achievable; at their line rates the "
        "bound is {:.1f} GB/s algbw)\n",
        bound.line_rate_algbw_gbs);
    std::fflush(stdout);  // before the minutes a large machine's predictions may take
    return bound;
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "weftc synthesize: {}\n", e.what());
    return std::nullopt;
  }
}

int write_sketches(const std::string& dir, const synthesis::Synthesis& result) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (std::size_t i = 0; i < result.synthesized; ++i) {
    // Over the threadblock budget: predicted for what it would gain, neither proved nor written.
    if (i < result.tuning.contenders.size() && result.tuning.contenders[i].over_budget) continue;
    const tuning::Candidate& c = result.candidates[i];
    std::string file;
    for (char ch : c.name) {
      file += std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' ? ch : '_';
    }
    std::string error;
    if (!ir::write_text_file(fmt::format("{}/{}.xml", dir, file), ir::write_xml(c.algorithm),
                             &error)) {
      fmt::print(stderr, "weftc synthesize: {}\n", error);
      return kFailed;
    }
  }
  return kOk;
}

int append_bound_report(const std::string& report, const synthesis::Synthesis& result) {
  std::ofstream out(report, std::ios::app);
  out << synthesis::bound_report(result);
  if (!out) {
    fmt::print(stderr, "weftc synthesize: {}: could not be written\n", report);
    return kFailed;
  }
  return kOk;
}

}  // namespace weft::weftc
