// How one call is cut into tiles (docs/architecture.md §2.3) and what it needs: chunk size S, tile
// size T, number of tiles, scratch, and the device-memory traffic the interpreter generates.
// Host-only and deterministic: every rank computes the same plan from the same algorithm and call,
// which is what keeps their message counts in step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "weft/ir/ir.h"
#include "weft/program/device_program.h"
#include "weft/program/options.h"
#include "weft/program/selection.h"
#include "weft/program/status.h"

namespace weft::gpu {

// Payload bytes one FIFO slot carries: all of it for Simple, half for LL (8 data bytes per
// 16-byte line), 120 of every 128 for LL128.
std::size_t slot_payload_bytes(ir::Protocol proto, std::size_t slot_bytes);

// A message holds some of a step's pieces (one piece per chunk the step touches, in this tile)
// one after another, each starting on a 16-byte boundary of the payload: piece j of a message
// begins at j × piece_stride_bytes. So vector copies stay aligned on the FIFO side and no 8-byte
// LL word straddles two pieces. For LL128 the boundary is a line's 120 payload bytes, so that
// every line belongs to one piece.
std::size_t piece_stride_bytes(ir::Protocol proto, std::size_t tile_elements,
                               std::size_t element_bytes);

// Elements per tile: the largest T for which `max_count` pieces fit a slot's payload, but at
// least 16 bytes' worth (steps with more pieces than fit are then sent as several messages),
// capped by `max_tile_bytes` (0: no cap; at least one element) and by `chunk_elements` (0: no
// cap). 0 when the payload cannot hold 16 bytes (LL128: one line).
std::size_t tile_elements(ir::Protocol proto, const ProtocolOptions& options, int max_count,
                          std::size_t element_bytes, std::size_t max_tile_bytes,
                          std::size_t chunk_elements);

// How many pieces one message carries at most: a step with cnt c sends (and its peer receives)
// ceil(c / pieces_per_message) messages per tile. Both ends compute the same from the same plan.
std::size_t pieces_per_message(ir::Protocol proto, const ProtocolOptions& options,
                               std::size_t piece_stride_bytes);

struct CallPlan {
  std::size_t chunk_elements = 0;  // S
  std::size_t tile_elements = 0;   // T
  std::size_t tiles = 0;           // ceil(S / T)
  std::size_t element_bytes = 0;
  std::size_t piece_stride_bytes = 0;
  std::size_t pieces_per_message = 0;
  // Scratch each rank needs: its s_chunks × S elements.
  std::vector<std::size_t> scratch_bytes;  // indexed by rank
};

// Checks applicability (check_applicable) and that the dependency flags can encode every
// (tile, step) of the call: tiles × max_steps < 2^32. `max_count` is the largest cnt of any step
// of any rank, `max_steps` the longest step list of any threadblock.
Result<CallPlan> plan_call(const ir::Algorithm& algo, const CallShape& call,
                           const RuntimeOptions& options, int max_count, int max_steps);

// Every runtime leaves room for two messages of one step per connection (docs/architecture.md
// §2.4); a step with more chunks than a slot holds goes as several messages, so the FIFO depth must
// hold twice as many. `max_message_count` is the largest cnt of any step that sends or receives.
// Fails with InvalidArgument naming the step's cnt, the depth needed and the knobs to turn.
Status check_fifo_depth(ir::Protocol proto, const ProtocolOptions& options, const CallPlan& plan,
                        int max_message_count);

// Bytes the interpreter reads and writes in device memory for one call of all `programs`
// (every rank), FIFO staging included: a send writes the slot, a receive reads it.
std::uint64_t device_memory_traffic(std::span<const RankProgram> programs,
                                    std::size_t chunk_elements, std::size_t element_bytes);

}  // namespace weft::gpu
