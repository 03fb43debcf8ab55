// Where a collective goes: to the Weft algorithm chosen for it, or unchanged to the real NCCL;
// and whether a call may go to the real NCCL at all.
#include <fmt/format.h>

#include "shim.h"
#include "shim_records.h"

namespace weft::plugin {

std::optional<ncclResult_t> Shim::refuse_unforwardable(const char* api) {
  if (config_.standalone) {
    return fail(ncclInvalidUsage,
                fmt::format("{} is not available in standalone mode (WEFT_STANDALONE=1): the shim "
                            "serves communicator set-up, queries, groups and collectives that "
                            "have a loaded algorithm, and forwards nothing",
                            api));
  }
  if (!nccl_.found) return fail(ncclSystemError, fmt::format("{}: {}", api, nccl_.error));
  return std::nullopt;
}

std::optional<ncclResult_t> Shim::refuse_without(const char* api, const void* function) {
  if (function != nullptr) return std::nullopt;
  return fail(ncclInternalError,
              fmt::format("{}: {} does not define p{}; it is older than the nccl.h the shim was "
                          "built with",
                          api, nccl_.origin, api));
}

ncclResult_t Shim::run_on_weft(const char* api, CommRecord& record, const CollectiveCall& call,
                               const Selection& selection, cudaStream_t stream) {
  const auto index = static_cast<std::size_t>(selection.index);
  const ir::Algorithm& algo = *record.algorithms[index];
  logger_.info("{}: {} on {} ranks -> Weft '{}' ({})", api, describe(call), call.nranks, algo.name,
               algo.source);
  for (const std::string& rejection : selection.rejections) {
    logger_.trace("{}:   passed over {}", api, rejection);
  }
  const gpu::Status status = record.weft->run(record.handles[index], call, stream);
  if (!status.ok()) {
    // No fallback to NCCL here: the other ranks are running the Weft algorithm and wait for us.
    return fail(to_nccl_result(status.code),
                fmt::format("{}: Weft algorithm '{}' failed: {}", api, algo.name, status.str()));
  }
  return ncclSuccess;
}

ncclResult_t Shim::collective(const char* api, CollectiveCall call, ncclComm_t comm,
                              cudaStream_t stream, Replay replay) {
  if (config_.disabled) {
    if (auto refused = refuse_unforwardable(api)) return *refused;
    return replay(nccl_.functions);
  }
  ThreadState& state = thread_state();
  if (state.group_depth == 0) state.last_error.clear();
  auto record = find(comm);
  Selection selection;
  if (record) {
    call.rank = record->rank;
    call.nranks = record->nranks;
    if (record->weft) {
      const WeftSide& side = *record->weft;
      const std::vector<int>& handles = record->handles;
      selection = select_algorithm(record->algorithms, call,
                                   [&](std::size_t k, const gpu::CallShape& shape) {
                                     return side.applies(handles[k], shape);
                                   });
    } else {
      selection.reason = record->no_weft_reason;
    }
  } else {
    selection.reason = "the communicator was not created through the shim";
  }
  if (state.group_depth > 0) {
    logger_.trace("{}: {} recorded in the group", api, describe(call));
    state.collectives.push_back(
        {api, call, stream, std::move(replay), record, std::move(selection)});
    return ncclSuccess;
  }
  if (selection.found()) return run_on_weft(api, *record, call, selection, stream);
  if (config_.standalone) {
    if (!record) return fail(ncclInvalidArgument, fmt::format("{}: unknown communicator", api));
    return fail(ncclInvalidUsage,
                fmt::format("{}: {} on {} ranks has no Weft algorithm ({}); standalone mode has "
                            "no NCCL to fall back to",
                            api, describe(call), call.nranks, selection.reason));
  }
  logger_.info("{}: {} on {} ranks -> NCCL: {}", api, describe(call), call.nranks,
               selection.reason);
  for (const std::string& rejection : selection.rejections) {
    logger_.trace("{}:   {}", api, rejection);
  }
  if (auto refused = refuse_unforwardable(api)) return *refused;
  return replay(nccl_.functions);
}

}  // namespace weft::plugin
