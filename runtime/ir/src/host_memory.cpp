#include "weft/ir/host_memory.h"

#include <fstream>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

namespace weft::ir {

namespace {

// "Key:   1234 kB" lines of a /proc file: the value of `key`, in bytes.
std::optional<std::uint64_t> kilobyte_field(const char* file, std::string_view key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string name;
    std::uint64_t kilobytes = 0;
    if (fields >> name >> kilobytes && name == key) return kilobytes * 1024;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::uint64_t> available_memory() {
  return kilobyte_field("/proc/meminfo", "MemAvailable:");
}

std::optional<std::uint64_t> address_space() { return kilobyte_field("/proc/self/status", "VmSize:"); }

std::optional<std::uint64_t> memory_limit(std::optional<std::uint64_t> max_memory) {
  if (max_memory) return max_memory;
  if (const auto available = available_memory()) return *available / 10 * 9;
  return std::nullopt;
}

std::string memory_limit_source(std::optional<std::uint64_t> max_memory) {
  return max_memory ? "--max-memory" : "nine tenths of what /proc/meminfo says is available";
}

std::string human_bytes(std::uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1e9) return fmt::format("{:.1f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.1f} MB", b / 1e6);
  return fmt::format("{:.1f} KB", b / 1e3);
}

}  // namespace weft::ir
