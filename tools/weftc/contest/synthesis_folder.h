// What `weftc synthesize` prints and writes besides the contest's folder (contest_command.h):
// the bound, before the long work; DIR/sketches with --all; report.md's section on the bound.
#pragma once

#include <optional>
#include <string>

#include "weft/ir/ir.h"
#include "weft/predict/topology.h"
#include "weft/synthesis/synthesize.h"

namespace weft::weftc {

// An earlier run's `--all` left every sketch it proved in DIR/sketches: refused as the folder's own
// files are, and removed with --force, so that the sketches there are this run's or none.
std::optional<std::string> clear_sketches(const std::string& dir, bool force);

// Prints the bound (and the node's cut where its hop is the slower), so that what cannot be
// synthesized says why before any work; nothing after printing why not.
std::optional<synthesis::Bound> bound_or_report(const predict::Topology& machine,
                                                ir::Collective collective);

// Every sketch within the threadblock budget, chosen or not, as DIR/<name>.xml (--all; each
// proved: prove_all), for `weftc simulate` and `weftc draw`. kOk, or kFailed after printing why.
int write_sketches(const std::string& dir, const synthesis::Synthesis& result);

// Appends the section on the bound (synthesis::bound_report) to the tuning's report.md.
int append_bound_report(const std::string& report, const synthesis::Synthesis& result);

}  // namespace weft::weftc
