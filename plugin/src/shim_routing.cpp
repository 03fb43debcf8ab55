// Where a collective goes: to the Weft algorithm chosen for it, or unchanged to the real NCCL;
// and whether a call may go to the real NCCL at all.
#include <fmt/format.h>

#include "shim.h"
#include "shim_records.h"

namespace weft::plugin {

std::optional<ncclResult_t> Shim::refuse_unforwardable(const char* api) {
  if (config_.standalone) {
    const std::string why = fmt::format(
        "{} is not available in standalone mode (WEFT_STANDALONE=1): the shim "
        "serves communicator set-up, queries, groups and collectives that have a "
        "loaded algorithm, and forwards nothing",
        api);
    ThreadState& state = thread_state();
    if (state.group_depth > 0 && state.group_failure.empty()) {
      state.group_failure = why;
      state.collectives.clear();
    }
    return fail(ncclInvalidUsage, why);
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

Shim::Route Shim::route_call(CollectiveCall& call, ncclComm_t comm) const {
  Route route;
  route.record = find(comm);
  if (!route.record) {
    route.selection.reason = "the communicator was not created through the shim";
    return route;
  }
  const CommRecord& record = *route.record;
  call.rank = record.rank;
  call.nranks = record.nranks;
  if (!record.weft) {
    route.selection.reason = record.no_weft_reason;
    return route;
  }
  const WeftSide& side = *record.weft;
  // Selection stops at the first candidate the runtime accepts, so the plan kept last is the
  // chosen algorithm's.
  route.selection =
      select_algorithm(record.algorithms, call,
                       [&](std::size_t k, const gpu::CallShape& shape) -> gpu::Applicability {
                         auto planned = side.plan(record.handles[k], shape);
                         if (!planned.ok()) return {false, planned.status().message};
                         route.plan = std::move(planned).value();
                         return {true, {}};
                       });
  return route;
}

ncclResult_t Shim::run_on_weft(const char* api, const CollectiveCall& call, const Route& route,
                               cudaStream_t stream) {
  const ir::Algorithm& algo =
      *route.record->algorithms[static_cast<std::size_t>(route.selection.index)];
  logger_.info("{}: {} on {} ranks -> Weft '{}' ({})", api, describe(call), call.nranks, algo.name,
               algo.source);
  for (const std::string& rejection : route.selection.rejections) {
    logger_.trace("{}:   passed over {}", api, rejection);
  }
  const gpu::Status status = route.record->weft->run(*route.plan, call, stream);
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
  if (state.group_depth > 0 && !state.group_failure.empty()) {
    return fail(ncclInvalidUsage,
                fmt::format("{}: refused: the open group already failed ({}); end it with "
                            "ncclGroupEnd",
                            api, state.group_failure));
  }
  Route route = route_call(call, comm);
  if (state.group_depth > 0) {
    logger_.trace("{}: {} recorded in the group", api, describe(call));
    state.collectives.push_back({api, call, stream, std::move(replay), std::move(route)});
    return ncclSuccess;
  }
  const Selection& selection = route.selection;
  if (selection.found()) return run_on_weft(api, call, route, stream);
  if (config_.standalone) {
    if (!route.record) {
      return fail(ncclInvalidArgument, fmt::format("{}: unknown communicator", api));
    }
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
