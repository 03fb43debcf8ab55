// Which loaded algorithm, if any, runs an NCCL collective call (docs/architecture.md §6): the
// first, in catalog order, for which weft::gpu::check_applicable holds — collective, rank count,
// in-place or out-of-place, divisibility into chunks, size band, root, type and operator.
// Everything here depends only on the call's arguments and the catalog, which every rank has the
// same; that is what lets the ranks of a communicator decide alike without talking to each other.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "weft/ir/ir.h"
#include "weft/plugin/nccl_enums.h"
#include "weft/program/selection.h"

namespace weft::plugin {

// One collective as the application called it. Data type and operator are NCCL's raw values
// (ncclDataType_t, ncclRedOp_t) because NCCL has some Weft does not (fp8 types, PreMulSum ops);
// nccl_enums.h maps them.
struct CollectiveCall {
  ir::Collective collective = ir::Collective::AllReduce;
  const void* sendbuf = nullptr;
  void* recvbuf = nullptr;
  std::size_t count = 0;  // NCCL's count (docs/architecture.md §2.2)
  int nccl_datatype = 0;
  int nccl_op = 0;  // ignored for collectives without reduction
  int root = -1;    // broadcast and reduce only
  int rank = 0;
  int nranks = 1;
};

// Whether a call is in-place in NCCL's sense (docs/architecture.md §2.2): allreduce, broadcast,
// reduce and alltoall send == recv; allgather send == recv + rank·count; reducescatter recv == send
// + rank·count.
bool is_in_place(const CollectiveCall& call);

// Weft's description of the call, or the reason there is none (a type or operator the runtime
// has no name for: fp8, PreMulSum).
struct ShapeResult {
  std::optional<gpu::CallShape> shape;
  std::string reason;
};
ShapeResult call_shape(const CollectiveCall& call);

struct Selection {
  int index = -1;  // into the candidates; −1 when none applies
  // When none applies: why, in one line (the reasons of the candidates of the same collective
  // and rank count, or that there is no such candidate).
  std::string reason;
  // Every candidate tried before the choice, "name (file): reason", for WEFT_DEBUG=TRACE.
  std::vector<std::string> rejections;
  bool found() const { return index >= 0; }
};

// What the runtime itself says about running candidate `index` for a call that passed
// check_applicable: whether the call's plan fits (tile/step encoding, FIFO depth). Deterministic
// for a given call on every rank, so that all ranks choose alike.
using RuntimeCheck = std::function<gpu::Applicability(std::size_t index, const gpu::CallShape&)>;

// The first of `candidates` that applies to `call` (check_applicable, then `runtime_check` when
// given), so that a chosen algorithm is one the runtime will run.
Selection select_algorithm(std::span<const ir::Algorithm* const> candidates,
                           const CollectiveCall& call, const RuntimeCheck& runtime_check = {});

// Group semantics: the collectives recorded between ncclGroupStart and ncclGroupEnd all run on
// Weft or all go to NCCL. They run on Weft only when every one of them found an algorithm (an
// operation the shim never takes, such as a send, counts as not found); an empty group has
// nothing to run on Weft.
bool group_runs_on_weft(std::span<const Selection> selections);

// "allreduce of 1048576 × float (sum, in-place)" for log lines.
std::string describe(const CollectiveCall& call);

}  // namespace weft::plugin
