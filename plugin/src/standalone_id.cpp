#include "weft/plugin/standalone_id.h"

#include <algorithm>
#include <cstring>

namespace weft::plugin {

namespace {

constexpr std::string_view kPrefix = "weft-standalone:";
constexpr char kSecretMark = '#';

}  // namespace

std::optional<UniqueIdBytes> encode_standalone_id(const StandaloneId& id) {
  const std::string text =
      std::string(kPrefix) + id.address + kSecretMark + gpu::secret_to_hex(id.secret);
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
  if (mark == std::string_view::npos || mark == kPrefix.size()) return std::nullopt;
  const auto secret = gpu::secret_from_hex(text.substr(mark + 1));
  if (!secret) return std::nullopt;
  StandaloneId id;
  id.address = std::string(text.substr(kPrefix.size(), mark - kPrefix.size()));
  id.secret = *secret;
  return id;
}

}  // namespace weft::plugin
