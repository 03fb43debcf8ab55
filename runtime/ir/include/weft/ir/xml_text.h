// Private to the runtime: small text helpers shared by the XML reader and writer (weft_ir) and
// the NCCL topology reader (weft_predict).
#pragma once

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace weft::ir::detail {

enum class NumberError { None, Empty, NotANumber, OutOfRange };

// Byte offset -> 1-based line, by binary search over the newline positions (pugixml reports
// offsets).
class LineIndex {
 public:
  explicit LineIndex(std::string_view text) {
    for (std::size_t k = 0; k < text.size(); ++k) {
      if (text[k] == '\n') newlines_.push_back(k);
    }
  }
  int line_of(std::ptrdiff_t offset) const {
    if (offset < 0) return 0;
    const auto before =
        std::lower_bound(newlines_.begin(), newlines_.end(), static_cast<std::size_t>(offset));
    return static_cast<int>(before - newlines_.begin()) + 1;
  }

 private:
  std::vector<std::size_t> newlines_;
};

// Strict decimal parsing: the whole value must be the number ("12abc", " 12", "+3", "" and values
// that overflow T are refused), because a silently truncated offset or count would load a
// different algorithm than the file describes.
template <typename T>
NumberError parse_decimal(std::string_view text, T& out) {
  if (text.empty()) return NumberError::Empty;
  const char* first = text.data();
  const char* last = first + text.size();
  T value{};
  const auto [end, ec] = std::from_chars(first, last, value);
  if (ec == std::errc::result_out_of_range) return NumberError::OutOfRange;
  if (ec != std::errc() || end != last) return NumberError::NotANumber;
  out = value;
  return NumberError::None;
}

// A value quoted for a message: at most 40 characters, control bytes shown as '?', so that a
// fuzzed or binary attribute cannot flood or garble the terminal.
inline std::string quote_value(std::string_view value) {
  constexpr std::size_t kShown = 40;
  std::string out = "\"";
  for (std::size_t k = 0; k < value.size() && k < kShown; ++k) {
    const auto c = static_cast<unsigned char>(value[k]);
    out += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
  }
  if (value.size() > kShown) out += "...";
  out += '"';
  return out;
}

// One character as XML text or attribute value: the five markup characters as their entities,
// anything else as it is (control characters are the caller's policy).
inline void append_markup_escaped(std::string& out, char c) {
  switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&apos;";
      break;
    default:
      out += c;
      break;
  }
}

// Escapes an attribute value: the five XML special characters, and control characters as
// character references (a raw newline or tab would be read back as a space, a NUL cannot be
// represented at all and is dropped).
inline void append_escaped(std::string& out, std::string_view value) {
  for (char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20) {
      if (byte != 0) {
        out += "&#";
        out += std::to_string(static_cast<int>(byte));
        out += ';';
      }
      continue;
    }
    append_markup_escaped(out, c);
  }
}

}  // namespace weft::ir::detail
