// Misuse of the DSL (a rank or index out of range, reading a slot that holds nothing, sizes that
// do not match, a chunk copied onto itself) is reported where the user wrote it: every recording
// call takes the caller's std::source_location, and the error names it and the call. A program
// built on behalf of another language (the Python face) names that language's place instead.
#pragma once

#include <source_location>
#include <stdexcept>
#include <string>
#include <string_view>

namespace weft::dsl {

class DslError : public std::runtime_error {
 public:
  // `origin`, when not empty, is named instead of `where` ("script.py:12").
  DslError(std::source_location where, std::string_view call, std::string_view what,
           std::string origin = {});

  const std::source_location& where() const { return where_; }
  const std::string& origin() const { return origin_; }
  const std::string& call() const { return call_; }
  const std::string& reason() const { return reason_; }

 private:
  std::source_location where_;
  std::string call_;
  std::string reason_;
  std::string origin_;
};

// "ring.cpp:42" (the file's path as the compiler saw it, shortened to its last component).
std::string describe_location(const std::source_location& where);

}  // namespace weft::dsl
