// The colour of each step type, shared by the pictures so that a type looks the same in the
// timeline and in the step graph.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "weft/ir/ir.h"

namespace weft::predict {

// In ir::StepType order, for the legend.
inline constexpr std::array<ir::StepType, 9> kStepTypes = {
    ir::StepType::Send,           ir::StepType::Recv,           ir::StepType::RecvCopySend,
    ir::StepType::RecvReduceSend, ir::StepType::RecvReduceCopy, ir::StepType::RecvReduceCopySend,
    ir::StepType::Copy,           ir::StepType::Reduce,         ir::StepType::Nop};

// Tableau 10: categorical, distinguishable on screen and in print, dark text readable on each.
inline constexpr std::array<std::string_view, 9> kStepColours = {"#4e79a7", "#f28e2b", "#e15759",
                                                                 "#76b7b2", "#59a14f", "#edc948",
                                                                 "#b07aa1", "#ff9da7", "#bab0ac"};

inline std::string_view step_colour(ir::StepType type) {
  const auto index = static_cast<std::size_t>(type);
  return index < kStepColours.size() ? kStepColours[index] : std::string_view("#888888");
}

}  // namespace weft::predict
