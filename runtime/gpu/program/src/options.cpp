#include "weft/program/options.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

namespace weft::gpu {

const ProtocolOptions& RuntimeOptions::configured(ir::Protocol proto) const {
  switch (proto) {
    case ir::Protocol::LL:
      return ll;
    case ir::Protocol::LL128:
      return ll128;
    case ir::Protocol::Simple:
      break;
  }
  return simple;
}

ProtocolOptions RuntimeOptions::protocol(ir::Protocol proto) const {
  ProtocolOptions laid_out = configured(proto);
  if (proto == ir::Protocol::Simple && simple_slices > 1) {
    laid_out.slot_bytes /= static_cast<std::size_t>(simple_slices);
    laid_out.fifo_depth *= simple_slices;
  }
  return laid_out;
}

const char* to_string(StepVariant variant) {
  switch (variant) {
    case StepVariant::Full:
      return "full";
    case StepVariant::Overlap:
      return "overlap";
    case StepVariant::Lean:
      break;
  }
  return "lean";
}

std::optional<StepVariant> parse_step_variant(std::string_view text) {
  if (text == "full") return StepVariant::Full;
  if (text == "lean") return StepVariant::Lean;
  if (text == "overlap") return StepVariant::Overlap;
  return std::nullopt;
}

EnvLookup process_environment() {
  return [](const char* name) -> const char* { return std::getenv(name); };
}

std::optional<std::size_t> parse_byte_size(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::size_t multiplier = 1;
  switch (text.back()) {
    case 'K':
    case 'k':
      multiplier = std::size_t{1} << 10;
      break;
    case 'M':
    case 'm':
      multiplier = std::size_t{1} << 20;
      break;
    case 'G':
    case 'g':
      multiplier = std::size_t{1} << 30;
      break;
    default:
      break;
  }
  if (multiplier != 1) text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  std::size_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (value > std::numeric_limits<std::size_t>::max() / multiplier) return std::nullopt;
  return value * multiplier;
}

namespace {

Status bad(std::string_view variable, std::string_view value, std::string_view expected) {
  return Status::error(ErrorCode::InvalidArgument,
                       fmt::format("{}='{}': expected {}", variable, value, expected));
}

std::optional<double> parse_double(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<int> parse_int(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// Smallest slot that still holds a few LL128 lines and keeps FIFOs 128-byte aligned.
constexpr std::size_t kMinSlotBytes = 1024;
constexpr std::size_t kMaxSlotBytes = std::size_t{64} << 20;
constexpr double kMaxTimeoutSeconds = 24.0 * 3600.0;
// A kernel wait checks its clock every few microseconds and a launch takes longer than this to
// start: a shorter timeout (WEFT_TIMEOUT_S=1e-320) could only fail healthy calls.
constexpr double kMinTimeoutSeconds = 1e-3;

Status check_slot(std::string_view variable, std::size_t bytes) {
  if (bytes < kMinSlotBytes || bytes > kMaxSlotBytes || bytes % 128 != 0) {
    return bad(variable, fmt::format("{}", bytes),
               fmt::format("a multiple of 128 bytes in [{}, {}]", kMinSlotBytes, kMaxSlotBytes));
  }
  return {};
}

Status check_depth(std::string_view variable, int depth) {
  if (depth < kMinFifoDepth || depth > kMaxFifoDepth) {
    return bad(variable, fmt::format("{}", depth),
               fmt::format("a FIFO depth in [{}, {}]", kMinFifoDepth, kMaxFifoDepth));
  }
  return {};
}

// Each slice a slot of its own: at least the smallest slot, and a multiple of 128 bytes.
Status check_slices(std::string_view variable, int slices, const ProtocolOptions& simple) {
  if (slices < 1 || slices > kMaxSimpleSlices) {
    return bad(variable, fmt::format("{}", slices),
               fmt::format("a whole number of slices in [1, {}]", kMaxSimpleSlices));
  }
  const auto n = static_cast<std::size_t>(slices);
  if (slices > 1 && (simple.slot_bytes % (128 * n) != 0 || simple.slot_bytes / n < kMinSlotBytes)) {
    return bad(variable, fmt::format("{}", slices),
               fmt::format("slices of a {}-byte Simple slot, each a multiple of 128 bytes and at "
                           "least {} (raise WEFT_SIMPLE_SLOT_BYTES or use fewer slices)",
                           simple.slot_bytes, kMinSlotBytes));
  }
  return {};
}

}  // namespace

Status check(const RuntimeOptions& options) {
  if (!(options.timeout_s >= kMinTimeoutSeconds) || options.timeout_s > kMaxTimeoutSeconds ||
      !std::isfinite(options.timeout_s)) {
    return bad("timeout", fmt::format("{}", options.timeout_s),
               fmt::format("seconds in [{}, {}]", kMinTimeoutSeconds, kMaxTimeoutSeconds));
  }
  if (!(options.arrival_timeout_s >= kMinTimeoutSeconds) ||
      options.arrival_timeout_s > kMaxTimeoutSeconds || !std::isfinite(options.arrival_timeout_s)) {
    return bad("arrival timeout", fmt::format("{}", options.arrival_timeout_s),
               fmt::format("seconds in [{}, {}]", kMinTimeoutSeconds, kMaxTimeoutSeconds));
  }
  if (auto s = check_slot("simple slot bytes", options.simple.slot_bytes); !s.ok()) return s;
  if (auto s = check_slot("LL slot bytes", options.ll.slot_bytes); !s.ok()) return s;
  if (auto s = check_slot("LL128 slot bytes", options.ll128.slot_bytes); !s.ok()) return s;
  if (auto s = check_depth("simple FIFO depth", options.simple.fifo_depth); !s.ok()) return s;
  if (auto s = check_depth("LL FIFO depth", options.ll.fifo_depth); !s.ok()) return s;
  if (auto s = check_depth("LL128 FIFO depth", options.ll128.fifo_depth); !s.ok()) return s;
  if (options.threads < kMinThreads || options.threads > kMaxThreads || options.threads % 32 != 0) {
    return bad("threads", fmt::format("{}", options.threads),
               fmt::format("a multiple of 32 in [{}, {}]", kMinThreads, kMaxThreads));
  }
  if (auto s = check_slices("simple slices", options.simple_slices, options.simple); !s.ok()) {
    return s;
  }
  if (options.simple_slices > 1 && options.step != StepVariant::Overlap) {
    return bad("simple slices", fmt::format("{}", options.simple_slices),
               "1 unless the step is overlap (slices are the overlap step's)");
  }
  return {};
}

Result<RuntimeOptions> runtime_options_from_env(const EnvLookup& lookup, RuntimeOptions defaults) {
  RuntimeOptions options = std::move(defaults);
  auto get = [&](const char* name) -> std::optional<std::string_view> {
    const char* value = lookup ? lookup(name) : nullptr;
    if (value == nullptr || *value == '\0') return std::nullopt;
    return std::string_view(value);
  };

  if (auto text = get("WEFT_TIMEOUT_S")) {
    const auto value = parse_double(*text);
    if (!value || !(*value >= kMinTimeoutSeconds) || *value > kMaxTimeoutSeconds) {
      return bad("WEFT_TIMEOUT_S", *text,
                 fmt::format("seconds in [{}, {}]", kMinTimeoutSeconds, kMaxTimeoutSeconds));
    }
    options.timeout_s = *value;
  }
  if (auto text = get("WEFT_ARRIVAL_TIMEOUT_S")) {
    const auto value = parse_double(*text);
    if (!value || !(*value >= kMinTimeoutSeconds) || *value > kMaxTimeoutSeconds) {
      return bad("WEFT_ARRIVAL_TIMEOUT_S", *text,
                 fmt::format("seconds in [{}, {}]", kMinTimeoutSeconds, kMaxTimeoutSeconds));
    }
    options.arrival_timeout_s = *value;
  }
  if (auto text = get("WEFT_FIFO_DEPTH")) {
    const auto value = parse_int(*text);
    if (!value) return bad("WEFT_FIFO_DEPTH", *text, "an integer");
    if (auto s = check_depth("WEFT_FIFO_DEPTH", *value); !s.ok()) return s;
    options.simple.fifo_depth = options.ll.fifo_depth = options.ll128.fifo_depth = *value;
  }
  const std::pair<const char*, ProtocolOptions*> slots[] = {
      {"WEFT_SIMPLE_SLOT_BYTES", &options.simple},
      {"WEFT_LL_SLOT_BYTES", &options.ll},
      {"WEFT_LL128_SLOT_BYTES", &options.ll128}};
  for (const auto& [name, protocol] : slots) {
    if (auto text = get(name)) {
      const auto value = parse_byte_size(*text);
      if (!value) return bad(name, *text, "a byte size such as 65536 or 64K");
      if (auto s = check_slot(name, *value); !s.ok()) return s;
      protocol->slot_bytes = *value;
    }
  }
  if (auto text = get("WEFT_NTHREADS")) {
    const auto value = parse_int(*text);
    if (!value || *value < kMinThreads || *value > kMaxThreads || *value % 32 != 0) {
      return bad("WEFT_NTHREADS", *text,
                 fmt::format("a multiple of 32 in [{}, {}]", kMinThreads, kMaxThreads));
    }
    options.threads = *value;
  }
  if (auto text = get("WEFT_TILE_BYTES")) {
    const auto value = parse_byte_size(*text);
    if (!value) return bad("WEFT_TILE_BYTES", *text, "a byte size such as 4096 or 4K (0: no cap)");
    options.max_tile_bytes = *value;
  }
  if (auto text = get("WEFT_STEP")) {
    const auto value = parse_step_variant(*text);
    if (!value) return bad("WEFT_STEP", *text, "full, lean or overlap");
    options.step = *value;
  }
  if (auto text = get("WEFT_SIMPLE_SLICES")) {
    const auto value = parse_int(*text);
    if (!value) return bad("WEFT_SIMPLE_SLICES", *text, "a whole number");
    if (auto s = check_slices("WEFT_SIMPLE_SLICES", *value, options.simple); !s.ok()) return s;
    if (*value > 1 && options.step != StepVariant::Overlap) {
      return bad("WEFT_SIMPLE_SLICES", *text,
                 "1 unless WEFT_STEP=overlap (slices are the overlap step's)");
    }
    options.simple_slices = *value;
  }
  if (auto s = check(options); !s.ok()) return s;
  return options;
}

}  // namespace weft::gpu
