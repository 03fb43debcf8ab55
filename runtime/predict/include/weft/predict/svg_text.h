// Shared by weft_predict and weft_tuning: text inside the SVG pictures (the simulated timeline and
// the tuning report), which browsers refuse to show at all when it is not well-formed XML.
#pragma once

#include <string>
#include <string_view>

#include "weft/ir/xml_text.h"

namespace weft::predict::detail {

// Text and attribute values alike. XML 1.0 cannot hold control characters other than white
// space, not even as character references (the IR writer's "&#1;" is fine for pugixml, not for a
// browser), so they become '?'.
inline std::string svg_escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') {
      out += '?';
    } else {
      ir::detail::append_markup_escaped(out, c);
    }
  }
  return out;
}

}  // namespace weft::predict::detail
