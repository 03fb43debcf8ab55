// Findings about an input (XML, IR, arguments): where and why. Loading and validation report
// every finding rather than stopping at the first.
#pragma once

#include <string>
#include <vector>

namespace weft {

enum class Severity { Error, Warning };

struct Diagnostic {
  Severity severity = Severity::Error;
  std::string file;     // empty when the input was not a file
  int line = 0;         // 0 when unknown
  std::string element;  // "gpu 3 / tb 5 / step 12", or empty
  std::string message;

  // "file.xml:42: gpu 3 / tb 5 / step 12: error: send count 2 does not match ..."
  std::string str() const;
};

struct Diagnostics {
  std::vector<Diagnostic> items;

  void error(std::string file, int line, std::string element, std::string message);
  void warning(std::string file, int line, std::string element, std::string message);
  bool has_errors() const;
  std::size_t error_count() const;
  std::string str() const;  // one line per finding
};

}  // namespace weft
