#include "weft/plugin/standalone_id.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace weft::plugin {

namespace {

constexpr std::string_view kPrefix = "weft-standalone:";
constexpr char kSecretMark = '#';
constexpr std::size_t kSecretDigits = 2 * gpu::kRendezvousSecretBytes;

std::string hex(std::span<const std::uint8_t> bytes) {
  std::string text;
  for (const std::uint8_t b : bytes) text += fmt::format("{:02x}", b);
  return text;
}

std::optional<std::uint8_t> hex_digit(char c) {
  if (c >= '0' && c <= '9') return static_cast<std::uint8_t>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<std::uint8_t>(c - 'a' + 10);
  return std::nullopt;
}

}  // namespace

std::optional<UniqueIdBytes> encode_standalone_id(const StandaloneId& id) {
  const std::string text = std::string(kPrefix) + id.address + kSecretMark + hex(id.secret);
  // Keep a terminating zero so that the id reads as text in a debugger.
  if (id.address.empty() || id.address.find(kSecretMark) != std::string::npos ||
      text.size() >= kUniqueIdBytes) {
    return std::nullopt;
  }
  UniqueIdBytes bytes{};
  std::copy(text.begin(), text.end(), bytes.begin());
  return bytes;
}

std::optional<StandaloneId> decode_standalone_id(const UniqueIdBytes& bytes) {
  const std::string_view text(bytes.data(), strnlen(bytes.data(), bytes.size()));
  if (text.size() == bytes.size() || !text.starts_with(kPrefix)) return std::nullopt;
  // The padding must be zero: a real NCCL id that happens to start with the prefix is not ours.
  if (std::any_of(bytes.begin() + static_cast<long>(text.size()), bytes.end(),
                  [](char c) { return c != '\0'; })) {
    return std::nullopt;
  }
  const std::size_t mark = text.find(kSecretMark, kPrefix.size());
  if (mark == std::string_view::npos || mark <= kPrefix.size() ||
      text.size() - mark - 1 != kSecretDigits) {
    return std::nullopt;
  }
  StandaloneId id;
  id.address = std::string(text.substr(kPrefix.size(), mark - kPrefix.size()));
  for (std::size_t k = 0; k < id.secret.size(); ++k) {
    const auto high = hex_digit(text[mark + 1 + 2 * k]);
    const auto low = hex_digit(text[mark + 2 + 2 * k]);
    if (!high || !low) return std::nullopt;
    id.secret[k] = static_cast<std::uint8_t>(*high << 4 | *low);
  }
  return id;
}

std::optional<std::string> pick_local_rendezvous_address(std::string* error) {
  auto random = gpu::make_rendezvous_secret();
  if (!random.ok()) {
    if (error) *error = random.status().str();
    return std::nullopt;
  }
  // Half of a fresh random value (not the job's secret: local socket names are visible to every
  // user in /proc/net/unix).
  return "unix:weft-" + hex(std::span(random.value()).first(8));
}

}  // namespace weft::plugin
