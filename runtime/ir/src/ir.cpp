#include "weft/ir/ir.h"

#include <array>

#include <fmt/format.h>

namespace weft::ir {

bool receives(StepType type) {
  return type == StepType::Recv || type == StepType::RecvCopySend ||
         type == StepType::RecvReduceSend || type == StepType::RecvReduceCopy ||
         type == StepType::RecvReduceCopySend;
}

bool sends(StepType type) {
  return type == StepType::Send || type == StepType::RecvCopySend ||
         type == StepType::RecvReduceSend || type == StepType::RecvReduceCopySend;
}

bool reduces(StepType type) {
  return type == StepType::RecvReduceSend || type == StepType::RecvReduceCopy ||
         type == StepType::RecvReduceCopySend || type == StepType::Reduce;
}

bool reads_source(StepType type) {
  return type == StepType::Send || reduces(type) || type == StepType::Copy;
}

bool writes_destination(StepType type) {
  return type == StepType::Recv || type == StepType::RecvCopySend ||
         type == StepType::RecvReduceCopy || type == StepType::RecvReduceCopySend ||
         type == StepType::Copy || type == StepType::Reduce;
}

namespace {
constexpr std::array<std::string_view, 7> kCollectiveNames{
    "allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "reduce", "custom"};
constexpr std::array<std::string_view, 3> kProtocolNames{"Simple", "LL", "LL128"};
constexpr std::array<std::string_view, 9> kStepNames{"s",  "r",   "rcs", "rrs", "rrc",
                                                     "rrcs", "cpy", "re",  "nop"};
}  // namespace

std::string_view to_string(Collective coll) { return kCollectiveNames[static_cast<int>(coll)]; }
std::string_view to_string(Protocol proto) { return kProtocolNames[static_cast<int>(proto)]; }
std::string_view to_string(StepType type) { return kStepNames[static_cast<int>(type)]; }

char to_char(BufferKind buffer) {
  switch (buffer) {
    case BufferKind::Input: return 'i';
    case BufferKind::Output: return 'o';
    case BufferKind::Scratch: return 's';
    case BufferKind::None: break;
  }
  return '-';
}

std::optional<Collective> parse_collective(std::string_view name) {
  if (name == "reduce_scatter") return Collective::ReduceScatter;  // msccl-tools' spelling
  for (std::size_t k = 0; k < kCollectiveNames.size(); ++k) {
    if (kCollectiveNames[k] == name) return static_cast<Collective>(k);
  }
  return std::nullopt;
}

std::optional<Protocol> parse_protocol(std::string_view name) {
  for (std::size_t k = 0; k < kProtocolNames.size(); ++k) {
    if (kProtocolNames[k] == name) return static_cast<Protocol>(k);
  }
  return std::nullopt;
}

std::optional<StepType> parse_step_type(std::string_view name) {
  for (std::size_t k = 0; k < kStepNames.size(); ++k) {
    if (kStepNames[k] == name) return static_cast<StepType>(k);
  }
  return std::nullopt;
}

std::optional<BufferKind> parse_buffer(std::string_view name) {
  if (name == "i") return BufferKind::Input;
  if (name == "o") return BufferKind::Output;
  if (name == "s") return BufferKind::Scratch;
  return std::nullopt;
}

std::string element_path(int gpu, int tb, int step) {
  std::string path = fmt::format("gpu {}", gpu);
  if (tb >= 0) path += fmt::format(" / tb {}", tb);
  if (step >= 0) path += fmt::format(" / step {}", step);
  return path;
}

}  // namespace weft::ir
