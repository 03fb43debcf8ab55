#include "weft/dsl/trace.h"

#include <fmt/format.h>

#include "weft/dsl/error.h"

namespace weft::dsl {

std::string describe(const Operation& operation) {
  return fmt::format(
      "{} at {}", operation.kind == OperationKind::Copy ? "copy" : "reduce",
      operation.origin.empty() ? describe_location(operation.where) : operation.origin);
}

}  // namespace weft::dsl
