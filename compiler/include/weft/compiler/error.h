// A program the compiler cannot turn into IR: an impossible manual assignment, limits that cannot
// be met. The message names the operation (file:line) and the reason.
#pragma once

#include <stdexcept>
#include <string>

namespace weft::compiler {

class CompileError : public std::runtime_error {
 public:
  explicit CompileError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace weft::compiler
