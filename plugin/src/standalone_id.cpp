#include "weft/plugin/standalone_id.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace weft::plugin {

namespace {
constexpr std::string_view kPrefix = "weft-standalone:";
}

std::optional<UniqueIdBytes> encode_standalone_id(std::string_view address) {
  // Keep a terminating zero so that the id reads as text in a debugger.
  if (address.empty() || kPrefix.size() + address.size() >= kUniqueIdBytes) return std::nullopt;
  UniqueIdBytes id{};
  std::copy(kPrefix.begin(), kPrefix.end(), id.begin());
  std::copy(address.begin(), address.end(), id.begin() + static_cast<long>(kPrefix.size()));
  return id;
}

std::optional<std::string> decode_standalone_id(const UniqueIdBytes& id) {
  const std::string_view text(id.data(), strnlen(id.data(), id.size()));
  if (text.size() == id.size() || !text.starts_with(kPrefix) || text.size() == kPrefix.size()) {
    return std::nullopt;
  }
  // The padding must be zero: a real NCCL id that happens to start with the prefix is not ours.
  if (std::any_of(id.begin() + static_cast<long>(text.size()), id.end(),
                  [](char c) { return c != '\0'; })) {
    return std::nullopt;
  }
  return std::string(text.substr(kPrefix.size()));
}

std::string pick_local_rendezvous_address(std::string* error) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) {
    if (error) *error = fmt::format("socket(): {}", std::strerror(errno));
    return {};
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  std::string result;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    if (error) *error = fmt::format("bind(127.0.0.1:0): {}", std::strerror(errno));
  } else {
    result = fmt::format("127.0.0.1:{}", ntohs(address.sin_port));
  }
  close(fd);
  return result;
}

}  // namespace weft::plugin
