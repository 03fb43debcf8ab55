#include <fmt/format.h>

#include "weft/cpu/cpu_executor.h"

namespace weft::cpu {

namespace {

std::string_view buffer_name(ir::BufferKind buffer) {
  return buffer == ir::BufferKind::Input    ? "input"
         : buffer == ir::BufferKind::Output ? "output"
                                            : "scratch";
}

}  // namespace

std::string_view to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::Pass:
      return "pass";
    case Outcome::WrongResult:
      return "wrong result";
    case Outcome::Deadlock:
      return "deadlock";
    case Outcome::Error:
      return "error";
    case Outcome::Race:
      return "data race";
  }
  return "?";
}

std::string BlockedThreadblock::str() const {
  return fmt::format("rank {} tb {} tile {} step {} ({}): {}", rank, threadblock, tile, step,
                     step_type, waiting_for);
}

std::string Mismatch::str() const {
  return fmt::format("rank {} {} chunk {} element {}: expected {} found {}", rank,
                     buffer_name(buffer), chunk, element, expected, found);
}

std::string Race::str() const {
  auto side = [](const RaceAccess& access) {
    return fmt::format("tb {} step {} ({}) {}", access.threadblock, access.step, access.step_type,
                       access.writes ? "writes" : "reads");
  };
  return fmt::format("rank {} {} chunk {} tile {}: {}, {}, with no dependency ordering them", rank,
                     buffer_name(buffer), chunk, tile, side(earlier), side(later));
}

std::string RunResult::report() const {
  std::string out = fmt::format("outcome: {}\n", to_string(outcome));
  if (!message.empty()) out += message + "\n";
  if (!blocked.empty()) {
    out += "blocked threadblocks:\n";
    for (const auto& tb : blocked) out += "  " + tb.str() + "\n";
  }
  if (!races.empty()) {
    out +=
        fmt::format("data races ({} racing access pairs, the first {} distinct pairs of steps):\n",
                    race_count, races.size());
    for (const auto& r : races) out += "  " + r.str() + "\n";
  }
  if (!mismatches.empty()) {
    out += fmt::format("wrong elements ({} in all, the first {}):\n", mismatch_count,
                       mismatches.size());
    for (const auto& m : mismatches) out += "  " + m.str() + "\n";
  }
  out += fmt::format("steps executed: {}, messages: {}\n", steps_executed, messages);
  return out;
}

}  // namespace weft::cpu
