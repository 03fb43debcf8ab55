#include "weft/dsl/error.h"

#include <fmt/format.h>

namespace weft::dsl {

std::string describe_location(const std::source_location& where) {
  std::string_view file = where.file_name();
  if (const auto slash = file.find_last_of('/'); slash != std::string_view::npos) {
    file.remove_prefix(slash + 1);
  }
  return fmt::format("{}:{}", file, where.line());
}

DslError::DslError(std::source_location where, std::string_view call, std::string_view what,
                   std::string origin)
    : std::runtime_error(fmt::format(
          "{}: {}: {}", origin.empty() ? describe_location(where) : origin, call, what)),
      where_(where),
      call_(call),
      reason_(what),
      origin_(std::move(origin)) {}

}  // namespace weft::dsl
