#include "weft/ir/types.h"

#include <array>
#include <string>

namespace weft {

std::size_t size_of(DataType type) {
  switch (type) {
    case DataType::Int8:
    case DataType::Uint8:
      return 1;
    case DataType::Half:
    case DataType::Bfloat16:
      return 2;
    case DataType::Int32:
    case DataType::Uint32:
    case DataType::Float:
      return 4;
    case DataType::Int64:
    case DataType::Uint64:
    case DataType::Double:
      return 8;
  }
  return 0;
}

bool is_floating(DataType type) {
  return type == DataType::Half || type == DataType::Bfloat16 || type == DataType::Float ||
         type == DataType::Double;
}

std::string_view to_string(DataType type) {
  switch (type) {
    case DataType::Int8: return "int8";
    case DataType::Uint8: return "uint8";
    case DataType::Int32: return "int32";
    case DataType::Uint32: return "uint32";
    case DataType::Int64: return "int64";
    case DataType::Uint64: return "uint64";
    case DataType::Half: return "half";
    case DataType::Float: return "float";
    case DataType::Double: return "double";
    case DataType::Bfloat16: return "bfloat16";
  }
  return "?";
}

std::string_view to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Prod: return "prod";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
    case ReduceOp::Avg: return "avg";
  }
  return "?";
}

namespace {
struct Alias {
  std::string_view name;
  DataType type;
};
constexpr std::array kTypeAliases{
    Alias{"int8", DataType::Int8},       Alias{"char", DataType::Int8},
    Alias{"uint8", DataType::Uint8},     Alias{"int32", DataType::Int32},
    Alias{"int", DataType::Int32},       Alias{"uint32", DataType::Uint32},
    Alias{"int64", DataType::Int64},     Alias{"uint64", DataType::Uint64},
    Alias{"half", DataType::Half},       Alias{"float16", DataType::Half},
    Alias{"fp16", DataType::Half},       Alias{"float", DataType::Float},
    Alias{"float32", DataType::Float},   Alias{"fp32", DataType::Float},
    Alias{"double", DataType::Double},   Alias{"float64", DataType::Double},
    Alias{"fp64", DataType::Double},     Alias{"bfloat16", DataType::Bfloat16},
    Alias{"bf16", DataType::Bfloat16},
};
}  // namespace

std::optional<DataType> parse_data_type(std::string_view name) {
  for (const auto& alias : kTypeAliases) {
    if (alias.name == name) return alias.type;
  }
  return std::nullopt;
}

std::optional<ReduceOp> parse_reduce_op(std::string_view name) {
  for (ReduceOp op : kAllReduceOps) {
    if (to_string(op) == name) return op;
  }
  return std::nullopt;
}

}  // namespace weft
