// Numbering of every chunk slot of every rank (input, output, scratch) for the passes that track
// who last wrote or read a slot.
#pragma once

#include <cstddef>
#include <vector>

#include "weft/compiler/instruction_dag.h"

namespace weft::compiler::detail {

class SlotSpace {
 public:
  explicit SlotSpace(const InstructionDag& dag) {
    const auto n = static_cast<std::size_t>(dag.ranks);
    base_.resize(n * 3 + 1);
    std::size_t next = 0;
    for (std::size_t r = 0; r < n; ++r) {
      base_[r * 3] = next;
      next += static_cast<std::size_t>(dag.input_chunks[r]);
      base_[r * 3 + 1] = next;
      next += static_cast<std::size_t>(dag.output_chunks[r]);
      base_[r * 3 + 2] = next;
      next += static_cast<std::size_t>(dag.scratch_chunks[r]);
    }
    base_[n * 3] = next;
  }

  std::size_t size() const { return base_.back(); }

  std::size_t slot(int rank, ir::BufferKind buffer, int index) const {
    return base_[static_cast<std::size_t>(rank) * 3 + static_cast<std::size_t>(buffer)] +
           static_cast<std::size_t>(index);
  }

 private:
  std::vector<std::size_t> base_;
};

}  // namespace weft::compiler::detail
