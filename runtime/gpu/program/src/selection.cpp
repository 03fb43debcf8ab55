#include "weft/program/selection.h"

#include <fmt/format.h>

#include "weft/ir/geometry.h"

namespace weft::gpu {

bool supports(DataType dtype, ReduceOp op) {
  if (size_of(dtype) == 0) return false;
  // An average of integers needs a rounding rule NCCL users would not expect; NCCL's own integer
  // avg divides at the end, which no IR step expresses.
  if (op == ReduceOp::Avg) return is_floating(dtype);
  return op == ReduceOp::Sum || op == ReduceOp::Prod || op == ReduceOp::Max || op == ReduceOp::Min;
}

namespace {
Applicability no(std::string reason) {
  return {false, std::move(reason)};
}
}  // namespace

Applicability check_applicable(const ir::Algorithm& algo, const CallShape& call) {
  if (call.collective != algo.collective) {
    return no(fmt::format("algorithm '{}' is a {}, the call a {}", algo.name,
                          ir::to_string(algo.collective), ir::to_string(call.collective)));
  }
  if (call.nranks != algo.ngpus) {
    return no(fmt::format("algorithm '{}' is for {} ranks, the communicator has {}", algo.name,
                          algo.ngpus, call.nranks));
  }
  if (call.in_place && !algo.inplace) {
    return no(
        fmt::format("algorithm '{}' is out-of-place only and the call is in-place", algo.name));
  }
  if (!call.in_place && !algo.outofplace) {
    return no(
        fmt::format("algorithm '{}' is in-place only and the call is out-of-place", algo.name));
  }
  if (!supports(call.dtype, call.op)) {
    return no(fmt::format("the runtime does not support {} with {}", to_string(call.op),
                          to_string(call.dtype)));
  }
  if (call.count == 0) return no("count is 0");
  if (!ir::chunk_elements(algo, call.count)) {
    return no(fmt::format("count {} × {} is not divisible into {} chunks (algorithm '{}')",
                          call.count, ir::count_multiplier(algo), algo.nchunksperloop, algo.name));
  }
  const std::uint64_t bytes = ir::call_bytes(algo, call.count, size_of(call.dtype));
  if (bytes < algo.min_bytes || (algo.max_bytes != 0 && bytes > algo.max_bytes)) {
    return no(fmt::format(
        "{} bytes is outside algorithm '{}''s band [{}, {}]", bytes, algo.name, algo.min_bytes,
        algo.max_bytes == 0 ? std::string("unbounded") : fmt::format("{}", algo.max_bytes)));
  }
  const bool rooted =
      algo.collective == ir::Collective::Broadcast || algo.collective == ir::Collective::Reduce;
  if (rooted) {
    if (call.root < 0 || call.root >= call.nranks) {
      return no(fmt::format("{} needs a root in [0, {}), got {}", ir::to_string(algo.collective),
                            call.nranks, call.root));
    }
    if (algo.root >= 0 && call.root != algo.root) {
      return no(fmt::format("algorithm '{}' has root {}, the call root {}", algo.name, algo.root,
                            call.root));
    }
  }
  return {true, {}};
}

}  // namespace weft::gpu
