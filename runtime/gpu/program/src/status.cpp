#include "weft/program/status.h"

#include <array>

namespace weft::gpu {

namespace {
struct CodeText {
  std::string_view name;
  std::string_view meaning;
};

constexpr std::array<CodeText, 11> kCodes{{
    {"success", "no error"},
    {"invalid argument",
     "a null or misaligned pointer, or a count, type, operator, rank or option out of range"},
    {"invalid algorithm",
     "the XML or IR failed to read or validate; the message lists every finding"},
    {"not applicable",
     "the algorithm does not apply to this call (collective, ranks, size band, in-place mode, "
     "divisibility, type or operator); fall back to another implementation"},
    {"CUDA error", "a CUDA runtime call failed; the message names the call"},
    {"system error",
     "an operating-system failure: socket, file, or a bootstrap peer that did not answer"},
    {"timeout",
     "a wait inside the kernel exceeded WEFT_TIMEOUT_S; the message names rank, threadblock, "
     "step, tile and what was awaited; the communicator refuses further calls"},
    {"not resident",
     "the device cannot hold all threadblocks of the launch at once, and they wait on each other"},
    {"invalid usage",
     "a call in the wrong state (after a timeout, an unknown handle, a capture that would "
     "allocate)"},
    {"internal error", "a bug in Weft; please report the message"},
    {"mismatch",
     "participants disagree (different algorithms loaded in the same order position, or "
     "different options)"},
}};
}  // namespace

std::string_view to_string(ErrorCode code) {
  const auto index = static_cast<std::size_t>(code);
  return index < kCodes.size() ? kCodes[index].name : std::string_view("unknown error");
}

std::string_view describe(ErrorCode code) {
  const auto index = static_cast<std::size_t>(code);
  return index < kCodes.size() ? kCodes[index].meaning : std::string_view("unknown error code");
}

std::string Status::str() const {
  if (ok()) return "success";
  std::string out(to_string(code));
  if (!message.empty()) {
    out += ": ";
    out += message;
  }
  return out;
}

}  // namespace weft::gpu
