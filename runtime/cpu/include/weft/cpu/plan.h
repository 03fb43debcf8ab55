// The algorithm flattened for execution, built once per Executor: global threadblock numbers,
// connections as indices, dependencies as global threadblocks, and for each call mode the steps'
// buffer offsets resolved to the buffers that really exist (in-place calls alias input and
// output). Everything validation should have caught but the executor relies on is checked here,
// so that a bad IR ends a run with an error instead of a crash.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "weft/ir/ir.h"

namespace weft::cpu::detail {

// The buffers a rank really has in a run: index into PlanStep's src_slot/dst_slot.
inline constexpr std::uint8_t kInputSlot = 0;
inline constexpr std::uint8_t kOutputSlot = 1;
inline constexpr std::uint8_t kScratchSlot = 2;
inline constexpr std::uint8_t kNoSlot = 3;

struct PlanStep {
  ir::StepType type = ir::StepType::Nop;
  std::uint8_t src_slot = kNoSlot;
  std::uint8_t dst_slot = kNoSlot;
  int src_chunk = 0;  // first chunk in the slot's buffer
  int dst_chunk = 0;
  int count = 0;
  int dep_threadblock = -1;  // global threadblock number, -1 for none
  int dep_step = -1;
};

struct PlanThreadblock {
  int rank = 0;
  int id = 0;
  int channel = 0;
  int send_peer = -1;
  int recv_peer = -1;
  int send_connection = -1;  // index into Plan::connections
  int recv_connection = -1;
  std::size_t first_step = 0;  // into ModeLayout::steps
  int step_count = 0;
};

struct PlanConnection {
  ir::Connection key;
  int sender_threadblock = -1;  // global numbers; -1: nobody drives that end
  int receiver_threadblock = -1;
  int sends_per_tile = 0;  // messages the sender puts on it in one tile
};

// Steps and buffer sizes of one call mode (out-of-place or in-place).
struct ModeLayout {
  std::vector<PlanStep> steps;
  // Per rank, chunks of the input, output and scratch buffers that exist in this mode (an
  // aliased buffer has 0).
  std::vector<std::array<int, 3>> extents;
  std::string error;  // non-empty: this mode cannot run (an offset outside its buffer, ...)
};

struct Plan {
  int ngpus = 0;
  std::vector<PlanThreadblock> threadblocks;  // rank by rank, by id
  std::vector<int> first_threadblock;         // per rank, into threadblocks; plus one end entry
  std::vector<PlanConnection> connections;
  ModeLayout out_of_place;
  ModeLayout in_place;
  std::string error;  // non-empty: the algorithm cannot run at all

  const ModeLayout& layout(bool in_place_call) const {
    return in_place_call ? in_place : out_of_place;
  }
};

Plan build_plan(const ir::Algorithm& algo);

}  // namespace weft::cpu::detail
