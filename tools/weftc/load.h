// Loading an algorithm file for a weftc subcommand: read, validate, print every finding to
// stderr. Shared so that verify, lint and info report bad files the same way.
#pragma once

#include <optional>
#include <string>

#include "weft/ir/collective_spec.h"
#include "weft/ir/ir.h"
#include "weft/ir/validate.h"

#include <CLI/CLI.hpp>

namespace weft::weftc {

// Prints findings (warnings too) to stderr. Returns the algorithm when it has no errors.
std::optional<ir::Algorithm> load_or_report(const std::string& path,
                                            const ir::LimitsProfile& limits);

// What the CPU reference executor checks a file against: its collective's postcondition (root
// for broadcast and reduce). A custom collective read from XML carries none (has_postcondition
// false): completion only.
CollectiveSpec spec_for(const ir::Algorithm& algo, int root, bool& has_postcondition);

// Registers `--profile msccl|weft` on `cmd`, storing into `name`.
void add_profile_option(CLI::App& cmd, std::string& name);
// The profile named by `name`; throws CLI::ValidationError for unknown names.
ir::LimitsProfile profile_or_throw(const std::string& name);

}  // namespace weft::weftc
