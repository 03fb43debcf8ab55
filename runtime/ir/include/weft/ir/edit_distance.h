// The edit (Levenshtein) distance between two words: how many letters to insert, delete or
// change to turn one into the other. For the "did you mean" of a misspelt name — weftc's commands
// and options, the compiler's passes — each with its own rule of what is near enough.
#pragma once

#include <cstddef>
#include <string_view>

namespace weft::ir {

std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace weft::ir
