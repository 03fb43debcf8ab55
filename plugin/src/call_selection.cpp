#include "weft/plugin/call_selection.h"

#include <algorithm>

#include <fmt/format.h>

#include "weft/ir/geometry.h"
#include "weft/ir/types.h"
#include "weft/plugin/nccl_enums.h"

namespace weft::plugin {

namespace {

bool reduces(ir::Collective coll) {
  return coll == ir::Collective::AllReduce || coll == ir::Collective::ReduceScatter ||
         coll == ir::Collective::Reduce;
}

bool rooted(ir::Collective coll) {
  return coll == ir::Collective::Broadcast || coll == ir::Collective::Reduce;
}

}  // namespace

bool is_in_place(const CollectiveCall& call) {
  return ir::is_in_place_call(call.collective, call.rank, call.sendbuf, call.recvbuf, call.count,
                              nccl_type_size(call.nccl_datatype));
}

ShapeResult call_shape(const CollectiveCall& call) {
  const std::optional<DataType> dtype = weft_data_type(call.nccl_datatype);
  if (!dtype) {
    return {std::nullopt,
            fmt::format("the runtime has no {} type", nccl_type_name(call.nccl_datatype))};
  }
  // Collectives without a reduction carry no operator; Sum keeps the type check neutral.
  std::optional<ReduceOp> op = ReduceOp::Sum;
  if (reduces(call.collective)) op = weft_reduce_op(call.nccl_op);
  if (!op) return {std::nullopt, fmt::format("the runtime has no {}", nccl_op_name(call.nccl_op))};
  gpu::CallShape shape;
  shape.collective = call.collective;
  shape.nranks = call.nranks;
  shape.count = call.count;
  shape.dtype = *dtype;
  shape.op = *op;
  shape.in_place = is_in_place(call);
  shape.root = rooted(call.collective) ? call.root : -1;
  return {shape, {}};
}

Selection select_algorithm(std::span<const ir::Algorithm* const> candidates,
                           const CollectiveCall& call, const RuntimeCheck& runtime_check) {
  Selection selection;
  const ShapeResult shape = call_shape(call);
  if (!shape.shape) {
    selection.reason = shape.reason;
    return selection;
  }
  std::vector<std::string> same_kind;  // reasons of candidates for this collective and size
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    const ir::Algorithm& algo = *candidates[k];
    gpu::Applicability applicability = gpu::check_applicable(algo, *shape.shape);
    if (applicability.applies && runtime_check) applicability = runtime_check(k, *shape.shape);
    if (applicability.applies) {
      selection.index = static_cast<int>(k);
      return selection;
    }
    selection.rejections.push_back(
        fmt::format("'{}' ({}): {}", algo.name, algo.source, applicability.reason));
    if (algo.collective == call.collective && algo.ngpus == call.nranks) {
      same_kind.push_back(applicability.reason);
    }
  }
  if (same_kind.empty()) {
    selection.reason = fmt::format("no loaded algorithm is a {} for {} ranks",
                                   ir::to_string(call.collective), call.nranks);
  } else {
    selection.reason = same_kind.front();
    for (std::size_t k = 1; k < same_kind.size(); ++k) selection.reason += "; " + same_kind[k];
  }
  return selection;
}

bool group_runs_on_weft(std::span<const Selection> selections) {
  return !selections.empty() &&
         std::all_of(selections.begin(), selections.end(),
                     [](const Selection& selection) { return selection.found(); });
}

std::string describe(const CollectiveCall& call) {
  std::string text = fmt::format("{} of {} × {}", ir::to_string(call.collective), call.count,
                                 nccl_type_name(call.nccl_datatype));
  std::vector<std::string> details;
  if (reduces(call.collective)) details.emplace_back(nccl_op_name(call.nccl_op));
  if (rooted(call.collective)) details.push_back(fmt::format("root {}", call.root));
  details.emplace_back(is_in_place(call) ? "in-place" : "out-of-place");
  text += " (";
  for (std::size_t k = 0; k < details.size(); ++k) text += (k ? ", " : "") + details[k];
  text += ")";
  return text;
}

}  // namespace weft::plugin
