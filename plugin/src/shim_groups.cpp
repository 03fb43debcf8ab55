// ncclGroupStart/End: a group's collectives all run on Weft or all go to NCCL, and the
// communicators created inside it are completed after the outermost ncclGroupEnd, as NCCL does.
#include <thread>

#include <fmt/format.h>

#include "shim.h"
#include "shim_records.h"

namespace weft::plugin {

void Shim::note_group_member_for_nccl(const char* api) {
  ThreadState& state = thread_state();
  if (state.group_depth > 0 && state.nccl_only_reason.empty()) {
    state.nccl_only_reason = fmt::format("the group contains {}, which only NCCL runs", api);
  }
}

ncclResult_t Shim::run_deferred(std::vector<std::function<ncclResult_t()>> tasks) {
  if (tasks.empty()) return ncclSuccess;
  if (tasks.size() == 1) return tasks.front()();
  std::vector<ncclResult_t> results(tasks.size(), ncclSuccess);
  std::vector<std::thread> threads;
  threads.reserve(tasks.size());
  for (std::size_t k = 0; k < tasks.size(); ++k) {
    threads.emplace_back([&, k] { results[k] = tasks[k](); });
  }
  for (std::thread& thread : threads) thread.join();
  for (ncclResult_t result : results) {
    if (result != ncclSuccess) return result;
  }
  return ncclSuccess;
}

ncclResult_t Shim::complete_or_defer(std::function<ncclResult_t()> task) {
  ThreadState& state = thread_state();
  if (state.group_depth > 0) {
    // NCCL finishes communicators created inside a group at ncclGroupEnd; so do we.
    state.deferred.push_back(std::move(task));
    return ncclSuccess;
  }
  return task();
}

ncclResult_t Shim::group_start() {
  if (config_.disabled) return forward("ncclGroupStart", &NcclFunctions::GroupStart);
  ThreadState& state = thread_state();
  if (state.group_depth == 0) state.last_error.clear();
  if (!config_.standalone) {
    if (auto refused = refuse_unforwardable("ncclGroupStart")) return *refused;
    // The real group opens now, so that whatever is forwarded inside it (sends, receives,
    // communicator creation) has NCCL's group meaning.
    const ncclResult_t result = nccl_.functions.GroupStart();
    if (result != ncclSuccess) return result;
  }
  ++state.group_depth;
  return ncclSuccess;
}

ncclResult_t Shim::group_end() {
  if (config_.disabled) return forward("ncclGroupEnd", &NcclFunctions::GroupEnd);
  ThreadState& state = thread_state();
  if (state.group_depth == 0) {
    if (config_.standalone) return fail(ncclInvalidUsage, "ncclGroupEnd: no group is open");
    return forward("ncclGroupEnd", &NcclFunctions::GroupEnd);  // NCCL reports it its own way
  }
  if (--state.group_depth > 0) {
    if (config_.standalone) return ncclSuccess;
    return nccl_.functions.GroupEnd();
  }
  if (!state.group_failure.empty()) {
    const std::string why = std::move(state.group_failure);
    state.group_failure.clear();
    state.collectives.clear();
    state.nccl_only_reason.clear();
    state.deferred.clear();
    return fail(ncclInvalidUsage,
                fmt::format("ncclGroupEnd: the group failed and none of it ran: {}", why));
  }
  std::vector<PendingCollective> pending = std::move(state.collectives);
  std::string nccl_only = std::move(state.nccl_only_reason);
  std::vector<std::function<ncclResult_t()>> deferred = std::move(state.deferred);
  state.collectives.clear();
  state.nccl_only_reason.clear();
  state.deferred.clear();

  std::vector<Selection> selections;
  for (const PendingCollective& p : pending) selections.push_back(p.route.selection);
  ncclResult_t result = ncclSuccess;
  if (nccl_only.empty() && group_runs_on_weft(selections)) {
    logger_.info("ncclGroupEnd: all {} collective{} of the group -> Weft", pending.size(),
                 pending.size() == 1 ? "" : "s");
    for (const PendingCollective& p : pending) {
      const ncclResult_t r = run_on_weft(p.api, p.call, p.route, p.stream);
      if (result == ncclSuccess) result = r;
    }
  } else if (!pending.empty()) {
    std::string why = nccl_only;
    if (why.empty()) {
      for (const PendingCollective& p : pending) {
        if (!p.route.selection.found()) {
          why = fmt::format("{} ({}) has no Weft algorithm: {}", p.api, describe(p.call),
                            p.route.selection.reason);
          break;
        }
      }
    }
    if (config_.standalone) {
      result = fail(ncclInvalidUsage,
                    fmt::format("ncclGroupEnd: the group's {} collectives cannot run: {}; "
                                "standalone mode has no NCCL to fall back to",
                                pending.size(), why));
    } else {
      logger_.info("ncclGroupEnd: all {} collective{} of the group -> NCCL: {}", pending.size(),
                   pending.size() == 1 ? "" : "s", why);
      for (const PendingCollective& p : pending) {
        const ncclResult_t r = p.replay(nccl_.functions);
        if (result == ncclSuccess) result = r;
      }
    }
  }
  if (!config_.standalone) {
    const ncclResult_t r = nccl_.functions.GroupEnd();
    if (result == ncclSuccess) result = r;
  }
  const ncclResult_t completed = run_deferred(std::move(deferred));
  return result != ncclSuccess ? result : completed;
}

ncclResult_t Shim::group_simulate_end(ncclSimInfo_t* info) {
  const char* api = "ncclGroupSimulateEnd";
  if (auto refused = refuse_unforwardable(api)) return *refused;
  if (auto refused =
          refuse_without(api, reinterpret_cast<const void*>(nccl_.functions.GroupSimulateEnd)))
    return *refused;
  ThreadState& state = thread_state();
  if (config_.disabled || state.group_depth == 0) return nccl_.functions.GroupSimulateEnd(info);
  if (--state.group_depth > 0) return nccl_.functions.GroupSimulateEnd(info);
  // NCCL's estimate is for NCCL running the group, so the group's collectives go to it.
  std::vector<PendingCollective> pending = std::move(state.collectives);
  std::vector<std::function<ncclResult_t()>> deferred = std::move(state.deferred);
  state.collectives.clear();
  state.deferred.clear();
  state.nccl_only_reason.clear();
  ncclResult_t result = ncclSuccess;
  for (const PendingCollective& p : pending) {
    const ncclResult_t r = p.replay(nccl_.functions);
    if (result == ncclSuccess) result = r;
  }
  const ncclResult_t r = nccl_.functions.GroupSimulateEnd(info);
  if (result == ncclSuccess) result = r;
  const ncclResult_t completed = run_deferred(std::move(deferred));
  return result != ncclSuccess ? result : completed;
}

}  // namespace weft::plugin
