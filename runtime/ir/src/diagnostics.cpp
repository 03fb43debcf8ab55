#include "weft/ir/diagnostics.h"

#include <algorithm>

#include <fmt/format.h>

namespace weft {

std::string Diagnostic::str() const {
  std::string out;
  if (!file.empty()) out += file;
  if (line > 0) out += fmt::format(":{}", line);
  if (!out.empty()) out += ": ";
  if (!element.empty()) out += element + ": ";
  out += severity == Severity::Error ? "error: " : "warning: ";
  out += message;
  return out;
}

void Diagnostics::error(std::string file, int line, std::string element, std::string message) {
  items.push_back({Severity::Error, std::move(file), line, std::move(element), std::move(message)});
}

void Diagnostics::warning(std::string file, int line, std::string element, std::string message) {
  items.push_back(
      {Severity::Warning, std::move(file), line, std::move(element), std::move(message)});
}

bool Diagnostics::has_errors() const {
  return error_count() > 0;
}

std::size_t Diagnostics::error_count() const {
  return static_cast<std::size_t>(
      std::count_if(items.begin(), items.end(),
                    [](const Diagnostic& d) { return d.severity == Severity::Error; }));
}

std::string Diagnostics::str() const {
  std::string out;
  for (const auto& item : items) out += item.str() + "\n";
  return out;
}

}  // namespace weft
