#include "weft/program/call_plan.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "weft/ir/geometry.h"

namespace weft::gpu {

std::size_t slot_payload_bytes(ir::Protocol proto, std::size_t slot_bytes) {
  switch (proto) {
    case ir::Protocol::LL:
      return slot_bytes / 2;
    case ir::Protocol::LL128:
      return slot_bytes / 128 * 120;
    case ir::Protocol::Simple:
      break;
  }
  return slot_bytes;
}

namespace {
constexpr std::size_t kPieceAlignment = 16;
// LL128 pieces start on a line: 120 payload bytes, itself a multiple of every element size.
constexpr std::size_t kLL128PieceAlignment = 120;

std::size_t piece_alignment(ir::Protocol proto) {
  return proto == ir::Protocol::LL128 ? kLL128PieceAlignment : kPieceAlignment;
}
}  // namespace

std::size_t piece_stride_bytes(ir::Protocol proto, std::size_t tile_elements,
                               std::size_t element_bytes) {
  const std::size_t alignment = piece_alignment(proto);
  const std::size_t bytes = tile_elements * element_bytes;
  return (bytes + alignment - 1) / alignment * alignment;
}

std::size_t tile_elements(ir::Protocol proto, const ProtocolOptions& options, int max_count,
                          std::size_t element_bytes, std::size_t max_tile_bytes,
                          std::size_t chunk_elements) {
  if (max_count <= 0 || element_bytes == 0 || element_bytes > kPieceAlignment) return 0;
  const std::size_t payload = slot_payload_bytes(proto, options.slot_bytes);
  const std::size_t alignment = piece_alignment(proto);
  if (payload < alignment) return 0;
  std::size_t per_piece = payload / static_cast<std::size_t>(max_count);
  per_piece -= per_piece % alignment;  // each piece starts aligned (LL128: on a line)
  per_piece = std::max(per_piece, alignment);
  std::size_t tile = per_piece / element_bytes;
  if (max_tile_bytes != 0) {
    tile = std::min(tile, std::max<std::size_t>(1, max_tile_bytes / element_bytes));
  }
  if (chunk_elements != 0) tile = std::min(tile, chunk_elements);
  return tile;
}

std::size_t pieces_per_message(ir::Protocol proto, const ProtocolOptions& options,
                               std::size_t piece_stride) {
  if (piece_stride == 0) return 0;
  return slot_payload_bytes(proto, options.slot_bytes) / piece_stride;
}

Result<CallPlan> plan_call(const ir::Algorithm& algo, const CallShape& call,
                           const RuntimeOptions& options, int max_count, int max_steps) {
  if (const Applicability a = check_applicable(algo, call); !a) {
    return Status::error(ErrorCode::NotApplicable, a.reason);
  }
  CallPlan plan;
  plan.element_bytes = size_of(call.dtype);
  plan.chunk_elements = *ir::chunk_elements(algo, call.count);
  plan.tile_elements =
      tile_elements(algo.protocol, options.protocol(algo.protocol), max_count, plan.element_bytes,
                    options.max_tile_bytes, plan.chunk_elements);
  if (plan.tile_elements == 0) {
    return Status::error(
        ErrorCode::InvalidArgument,
        fmt::format("a {} slot of {} bytes cannot hold {} pieces of one {}-byte element; raise "
                    "WEFT_{}_SLOT_BYTES",
                    ir::to_string(algo.protocol), options.protocol(algo.protocol).slot_bytes,
                    max_count, plan.element_bytes,
                    algo.protocol == ir::Protocol::Simple ? "SIMPLE"
                    : algo.protocol == ir::Protocol::LL   ? "LL"
                                                          : "LL128"));
  }
  plan.tiles = (plan.chunk_elements + plan.tile_elements - 1) / plan.tile_elements;
  plan.piece_stride_bytes =
      piece_stride_bytes(algo.protocol, plan.tile_elements, plan.element_bytes);
  plan.pieces_per_message =
      pieces_per_message(algo.protocol, options.protocol(algo.protocol), plan.piece_stride_bytes);
  if (plan.pieces_per_message == 0) {
    return Status::error(ErrorCode::InternalError, "a tile's piece does not fit a FIFO slot");
  }
  const std::uint64_t steps = static_cast<std::uint64_t>(std::max(max_steps, 1));
  const std::uint64_t limit = std::uint64_t{1} << 32;
  if (plan.tiles >= limit / steps || plan.tiles * steps + steps >= limit) {
    return Status::error(ErrorCode::InvalidArgument,
                         fmt::format("{} tiles × {} steps per threadblock exceed the 2^32 "
                                     "dependency-flag range; use larger tiles (WEFT_TILE_BYTES, "
                                     "slot size) or fewer elements",
                                     plan.tiles, steps));
  }
  plan.scratch_bytes.resize(static_cast<std::size_t>(std::max(algo.ngpus, 0)));
  for (int rank = 0; rank < algo.ngpus; ++rank) {
    plan.scratch_bytes[static_cast<std::size_t>(rank)] =
        static_cast<std::size_t>(ir::scratch_extent_chunks(algo, rank)) * plan.chunk_elements *
        plan.element_bytes;
  }
  return plan;
}

Status check_fifo_depth(ir::Protocol proto, const ProtocolOptions& options, const CallPlan& plan,
                        int max_message_count) {
  if (max_message_count <= 0 || plan.pieces_per_message == 0) return {};
  const std::size_t messages =
      (static_cast<std::size_t>(max_message_count) + plan.pieces_per_message - 1) /
      plan.pieces_per_message;
  if (static_cast<std::size_t>(options.fifo_depth) >= 2 * messages) return {};
  return Status::error(
      ErrorCode::InvalidArgument,
      fmt::format("a step of cnt {} goes as {} messages of at most {} chunks per tile, so a {} "
                  "FIFO of depth {} holds less than the two steps' messages every runtime "
                  "guarantees (an algorithm that completes at depth 2 could time out); set "
                  "WEFT_FIFO_DEPTH to at least {} or raise WEFT_{}_SLOT_BYTES",
                  max_message_count, messages, plan.pieces_per_message, ir::to_string(proto),
                  options.fifo_depth, 2 * messages,
                  proto == ir::Protocol::Simple ? "SIMPLE"
                  : proto == ir::Protocol::LL   ? "LL"
                                                : "LL128"));
}

std::uint64_t device_memory_traffic(std::span<const RankProgram> programs,
                                    std::size_t chunk_elements, std::size_t element_bytes) {
  std::uint64_t accesses = 0;  // element reads + writes per chunk
  for (const RankProgram& program : programs) {
    for (const DeviceStep& step : program.steps) {
      const auto type = static_cast<ir::StepType>(step.type);
      std::uint64_t per_chunk = 0;
      if (ir::receives(type)) ++per_chunk;            // read the slot
      if (ir::sends(type)) ++per_chunk;               // write the peer's slot
      if (ir::writes_destination(type)) ++per_chunk;  // write dst
      if (ir::reads_source(type)) ++per_chunk;        // read src
      if (type == ir::StepType::Reduce)
        per_chunk += 1 + static_cast<std::uint64_t>(step.source_count);  // dst, merged sources
      accesses += per_chunk * static_cast<std::uint64_t>(step.count);
    }
  }
  return accesses * chunk_elements * element_bytes;
}

}  // namespace weft::gpu
