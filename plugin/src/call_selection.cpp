#include "weft/plugin/call_selection.h"

#include <algorithm>

#include <fmt/format.h>

#include "weft/ir/geometry.h"
#include "weft/ir/types.h"

namespace weft::plugin {

namespace {

// NCCL's ncclDataType_t values 0..9 are Weft's DataType values (weft/ir/types.h says so);
// 10 and 11 are fp8 types the runtime does not have.
constexpr int kWeftTypeCount = 10;
constexpr int kWeftOpCount = 5;

const char* nccl_type_name(int type) {
  static constexpr const char* kNames[] = {"int8",   "uint8",    "int32",      "uint32",
                                           "int64",  "uint64",   "half",       "float",
                                           "double", "bfloat16", "float8e4m3", "float8e5m2"};
  if (type < 0 || type >= static_cast<int>(std::size(kNames))) return "unknown type";
  return kNames[type];
}

const char* nccl_op_name(int op) {
  static constexpr const char* kNames[] = {"sum", "prod", "max", "min", "avg"};
  if (op < 0) return "unknown operator";
  if (op >= static_cast<int>(std::size(kNames))) return "a custom operator (PreMulSum)";
  return kNames[op];
}

bool reduces(ir::Collective coll) {
  return coll == ir::Collective::AllReduce || coll == ir::Collective::ReduceScatter ||
         coll == ir::Collective::Reduce;
}

bool rooted(ir::Collective coll) {
  return coll == ir::Collective::Broadcast || coll == ir::Collective::Reduce;
}

}  // namespace

std::size_t nccl_type_size(int nccl_datatype) {
  if (nccl_datatype >= 0 && nccl_datatype < kWeftTypeCount) {
    return size_of(static_cast<DataType>(nccl_datatype));
  }
  if (nccl_datatype == 10 || nccl_datatype == 11) return 1;  // fp8
  return 0;
}

bool is_in_place(const CollectiveCall& call) {
  return ir::is_in_place_call(call.collective, call.rank, call.sendbuf, call.recvbuf, call.count,
                              nccl_type_size(call.nccl_datatype));
}

ShapeResult call_shape(const CollectiveCall& call) {
  if (call.nccl_datatype < 0 || call.nccl_datatype >= kWeftTypeCount) {
    return {std::nullopt,
            fmt::format("the runtime has no {} type", nccl_type_name(call.nccl_datatype))};
  }
  if (reduces(call.collective) && (call.nccl_op < 0 || call.nccl_op >= kWeftOpCount)) {
    return {std::nullopt, fmt::format("the runtime has no {}", nccl_op_name(call.nccl_op))};
  }
  gpu::CallShape shape;
  shape.collective = call.collective;
  shape.nranks = call.nranks;
  shape.count = call.count;
  shape.dtype = static_cast<DataType>(call.nccl_datatype);
  // Collectives without a reduction carry no operator; Sum keeps the type check neutral.
  shape.op = reduces(call.collective) ? static_cast<ReduceOp>(call.nccl_op) : ReduceOp::Sum;
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
