// Executor::make_inputs: the deterministic starting buffers of a checked run.
#include <fmt/format.h>

#include "buffer_location.h"
#include "element_ops.h"
#include "input_values.h"
#include "prng.h"
#include "schedule.h"
#include "weft/cpu/cpu_executor.h"
#include "weft/cpu/plan.h"

namespace weft::cpu {

namespace {

// A hash of (rank, element index in the rank's input buffer): the same logical input in every
// call mode, tile size and seed. mix64 is a bijection, so distinct pairs never collide.
std::uint64_t input_hash(int rank, std::size_t element) {
  return detail::mix64((static_cast<std::uint64_t>(rank) << 48) ^
                       static_cast<std::uint64_t>(element) ^ 0x243F6A8885A308D3ull);
}

// Values that keep every reduction meaningful: floats in [-1, 1) (near 1 for prod, so that
// products of many ranks neither vanish nor overflow half), integers of any bits (odd for prod,
// so that products of many ranks do not collapse to zero modulo 2^k).
void store_input(const detail::ElementOps& ops, ReduceOp op, std::uint64_t hash,
                 std::byte* element) {
  if (is_floating(ops.type)) {
    const double unit = static_cast<double>(hash >> 11) * 0x1.0p-53;
    ops.store_real(element, op == ReduceOp::Prod ? 0.9 + 0.2 * unit : 2.0 * unit - 1.0);
  } else {
    ops.store_bits(element, op == ReduceOp::Prod ? hash | 1u : hash);
  }
}

}  // namespace

namespace detail {

void store_input_chunk(const ElementOps& ops, ReduceOp op, int rank, int chunk,
                       std::size_t elements, std::byte* out) {
  const std::size_t first = static_cast<std::size_t>(chunk) * elements;
  for (std::size_t e = 0; e < elements; ++e) {
    store_input(ops, op, input_hash(rank, first + e), out + e * ops.size);
  }
}

}  // namespace detail

bool Executor::fill_inputs(const RunOptions& options, std::vector<RankBuffers>& buffers) const {
  if (!plan_->error.empty()) return false;
  const detail::ModeLayout& layout = plan_->layout(options.in_place);
  if (!layout.error.empty()) return false;
  // The operator only shapes the value range; avg on integers is refused later, by execute.
  const auto ops = detail::element_ops(options.dtype, ReduceOp::Sum);
  const std::size_t size = ops->size;
  const std::size_t chunk = options.chunk_elements;
  if (!detail::check_call_size(*plan_, layout, chunk, size).empty()) return false;
  // Resized in place: buffers of an earlier run of the same shape keep their memory, which is
  // mapped already (fresh pages cost the kernel a zeroed page each).
  buffers.resize(static_cast<std::size_t>(plan_->ngpus));
  for (int r = 0; r < plan_->ngpus; ++r) {
    RankBuffers& rank = buffers[static_cast<std::size_t>(r)];
    const auto& extents = layout.extents[static_cast<std::size_t>(r)];
    rank.input.resize(static_cast<std::size_t>(extents[detail::kInputSlot]) * chunk * size);
    rank.output.resize(static_cast<std::size_t>(extents[detail::kOutputSlot]) * chunk * size);
    detail::fill_poison(options.dtype, rank.input);
    detail::fill_poison(options.dtype, rank.output);
    const int input_chunks = ir::input_extent_chunks(algo_, r);
    for (int c = 0; c < input_chunks; ++c) {
      const auto where = detail::locate(algo_, r, ir::BufferKind::Input, c, options.in_place);
      std::byte* base = detail::bytes_of(rank, where.buffer).data() +
                        static_cast<std::size_t>(where.chunk) * chunk * size;
      detail::store_input_chunk(*ops, options.op, r, c, chunk, base);
    }
  }
  return true;
}

std::vector<RankBuffers> Executor::make_inputs(const RunOptions& options) const {
  std::vector<RankBuffers> buffers;
  if (!fill_inputs(options, buffers)) return {};
  return buffers;
}

}  // namespace weft::cpu
