#include <fmt/format.h>

#include "weft/runtime/cpu_executor.h"

namespace weft::cpu {

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
  }
  return "?";
}

std::string BlockedThreadblock::str() const {
  return fmt::format("rank {} tb {} tile {} step {} ({}): {}", rank, threadblock, tile, step,
                     step_type, waiting_for);
}

std::string Mismatch::str() const {
  const char* name = buffer == ir::BufferKind::Input    ? "input"
                     : buffer == ir::BufferKind::Output ? "output"
                                                        : "scratch";
  return fmt::format("rank {} {} chunk {} element {}: expected {} found {}", rank, name, chunk,
                     element, expected, found);
}

std::string RunResult::report() const {
  std::string out = fmt::format("outcome: {}\n", to_string(outcome));
  if (!message.empty()) out += message + "\n";
  if (!blocked.empty()) {
    out += "blocked threadblocks:\n";
    for (const auto& tb : blocked) out += "  " + tb.str() + "\n";
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
