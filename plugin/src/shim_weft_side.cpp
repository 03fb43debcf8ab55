// The Weft side of a communicator: once NCCL (or standalone set-up) has made the communicator,
// the algorithms for its rank count are loaded into a Weft communicator beside it, and the ranks
// agree on which loaded everywhere, so that they later choose alike.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <vector>
#include <thread>

#include <fmt/format.h>

#include "shim.h"
#include "shim_records.h"
#include "weft/plugin/host_layout.h"
#include "weft/proxy/participants.h"

namespace weft::plugin {

namespace {

// Every rank contributes flags[k] ∈ {0, 1}; afterwards flags[k] is 1 only where it was 1 on
// every rank. A failed exchange clears every flag: better no Weft than ranks that disagree.
void agree(gpu::Bootstrap& bootstrap, std::vector<std::uint8_t>& flags) {
  if (flags.empty()) return;
  const std::size_t per_rank = flags.size();
  std::vector<std::byte> records(per_rank * static_cast<std::size_t>(bootstrap.size()));
  std::memcpy(records.data() + per_rank * static_cast<std::size_t>(bootstrap.rank()), flags.data(),
              per_rank);
  if (!bootstrap.allgather(records, per_rank).ok()) {
    std::fill(flags.begin(), flags.end(), std::uint8_t{0});
    return;
  }
  for (int r = 0; r < bootstrap.size(); ++r) {
    for (std::size_t k = 0; k < per_rank; ++k) {
      if (records[static_cast<std::size_t>(r) * per_rank + k] == std::byte{0}) flags[k] = 0;
    }
  }
}

// Every rank's host id, by one exchange; nothing when the exchange fails (then no Weft side,
// alike on every rank).
std::optional<std::vector<std::string>> gather_hosts(gpu::Bootstrap& bootstrap,
                                                     const std::string& host) {
  constexpr std::size_t kField = proxy::kMaxHostIdLength + 1;
  std::vector<std::byte> records(kField * static_cast<std::size_t>(bootstrap.size()));
  std::memcpy(records.data() + kField * static_cast<std::size_t>(bootstrap.rank()), host.data(),
              std::min(host.size(), kField - 1));
  if (!bootstrap.allgather(records, kField).ok()) return std::nullopt;
  std::vector<std::string> hosts;
  for (int r = 0; r < bootstrap.size(); ++r) {
    const char* field = reinterpret_cast<const char*>(records.data()) +
                        kField * static_cast<std::size_t>(r);
    hosts.emplace_back(field, ::strnlen(field, kField - 1));
  }
  return hosts;
}

}  // namespace

void Shim::attach_weft(CommRecord& record, std::shared_ptr<gpu::Bootstrap> bootstrap) {
  std::vector<const CatalogEntry*> sized;
  for (const CatalogEntry& entry : catalog_.entries) {
    if (entry.algorithm.ngpus == record.nranks) sized.push_back(&entry);
  }
  const std::string who = fmt::format("communicator {} rank {}/{}", fmt::ptr(record.handle),
                                      record.rank, record.nranks);
  if (sized.empty()) {
    record.no_weft_reason = fmt::format("no loaded algorithm is for {} ranks", record.nranks);
    logger_.info("{}: {}; its collectives go to NCCL", who, record.no_weft_reason);
    return;
  }
  if (!bootstrap) {
    record.no_weft_reason = "the bootstrap for its Weft side could not be made";
    return;
  }
  // Where the ranks are (every rank learns the same), and which algorithms were written so.
  const auto hosts = gather_hosts(*bootstrap, config_.host_id);
  if (!hosts) {
    record.no_weft_reason = "its ranks' hosts could not be exchanged";
    logger_.warn("{}: {}; its collectives go to NCCL", who, record.no_weft_reason);
    return;
  }
  const HostLayout layout = host_layout(*hosts);
  std::vector<const ir::Algorithm*> candidates;
  for (const CatalogEntry* entry : sized) {
    if (auto why = placement_mismatch(entry->algorithm, layout)) {
      logger_.info("{}: algorithm '{}' ({}) is not for this communicator: {}", who,
                   entry->algorithm.name, entry->algorithm.source, *why);
      continue;
    }
    candidates.push_back(&entry->algorithm);
  }
  if (candidates.empty()) {
    record.no_weft_reason =
        fmt::format("no loaded algorithm for {} ranks is written for {}", record.nranks,
                    layout.describe());
    logger_.info("{}: {}; its collectives go to NCCL", who, record.no_weft_reason);
    return;
  }
  auto side = backend_->create(bootstrap, record.nranks, record.rank, record.device,
                               config_.host_id);
  std::vector<std::uint8_t> created{static_cast<std::uint8_t>(side.ok() ? 1 : 0)};
  if (!side.ok()) {
    // Across hosts a missing network (no UCX in this build or on this machine) is said once per
    // process, not for every communicator.
    const bool across = layout.count() > 1;
    if (!across || !cross_host_warned_.exchange(true)) {
      logger_.warn("{}: Weft communicator not created: {}{}", who, side.status().str(),
                   across ? "; calls of communicators that span hosts go to NCCL" : "");
    } else {
      logger_.info("{}: Weft communicator not created: {}", who, side.status().str());
    }
  }
  agree(*bootstrap, created);
  if (created[0] == 0) {
    record.no_weft_reason = "the Weft communicator could not be created on every rank";
    logger_.info("{}: {}; its collectives go to NCCL", who, record.no_weft_reason);
    return;
  }
  std::unique_ptr<WeftSide> weft = std::move(side).value();
  if (layout.count() > 1) {
    logger_.info("{}: ranks on {}; across hosts: the proxy, {}", who, layout.describe(),
                 weft->network());
  }
  std::vector<int> handles(candidates.size(), -1);
  std::vector<std::uint8_t> loaded(candidates.size(), 0);
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    auto handle = weft->load(*candidates[k]);
    if (handle.ok()) {
      handles[k] = handle.value();
      loaded[k] = 1;
    } else {
      logger_.warn("{}: algorithm '{}' ({}) not loaded: {}", who, candidates[k]->name,
                   candidates[k]->source, handle.status().str());
    }
  }
  agree(*bootstrap, loaded);
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    if (loaded[k] == 0) continue;
    record.algorithms.push_back(candidates[k]);
    record.handles.push_back(handles[k]);
    logger_.info("{}: algorithm '{}' ({}) ready", who, candidates[k]->name, candidates[k]->source);
  }
  if (record.algorithms.empty()) {
    record.no_weft_reason =
        fmt::format("none of the {} algorithms for {} ranks loaded on every rank",
                    candidates.size(), record.nranks);
    return;
  }
  record.bootstrap = std::move(bootstrap);
  record.weft = std::move(weft);
}

ncclResult_t Shim::attach_forwarded(ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;  // ncclCommSplit with NCCL_SPLIT_NOCOLOR
  const NcclFunctions& nccl = nccl_.functions;
  // A non-blocking communicator is usable once its asynchronous initialisation is over.
  if (nccl.CommGetAsyncError != nullptr) {
    ncclResult_t state = ncclInProgress;
    while (true) {
      const ncclResult_t query = nccl.CommGetAsyncError(comm, &state);
      if (query != ncclSuccess) return query;
      if (state != ncclInProgress) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (state != ncclSuccess) return state;
  }
  auto record = std::make_shared<CommRecord>();
  record->handle = comm;
  if (nccl.CommCount == nullptr || nccl.CommUserRank == nullptr || nccl.CommCuDevice == nullptr) {
    return fail(ncclInternalError,
                fmt::format("{} lacks ncclCommCount/UserRank/CuDevice", nccl_.origin));
  }
  if (auto r = nccl.CommCount(comm, &record->nranks); r != ncclSuccess) return r;
  if (auto r = nccl.CommUserRank(comm, &record->rank); r != ncclSuccess) return r;
  if (auto r = nccl.CommCuDevice(comm, &record->device); r != ncclSuccess) return r;
  const bool any_fits =
      std::any_of(catalog_.entries.begin(), catalog_.entries.end(),
                  [&](const CatalogEntry& e) { return e.algorithm.ngpus == record->nranks; });
  std::shared_ptr<gpu::Bootstrap> bootstrap;
  if (any_fits) {
    if (nccl.AllGather == nullptr) {
      return fail(ncclInternalError, fmt::format("{} lacks pncclAllGather", nccl_.origin));
    }
    auto made = backend_->nccl_bootstrap(comm, record->rank, record->nranks, record->device, nccl);
    if (made.ok()) {
      bootstrap = std::move(made).value();
    } else {
      // Every rank fails here alike (it involves no peer), so no rank is left waiting.
      logger_.warn("communicator {} rank {}: no Weft side: {}", fmt::ptr(comm), record->rank,
                   made.status().str());
    }
  }
  attach_weft(*record, std::move(bootstrap));
  insert(std::move(record));
  return ncclSuccess;
}

ncclResult_t Shim::create_standalone(ncclComm_t* comm, int nranks, int rank,
                                     std::shared_ptr<gpu::Bootstrap> bootstrap, int device) {
  auto record = std::make_shared<CommRecord>();
  record->standalone = true;
  record->rank = rank;
  record->nranks = nranks;
  record->device = device;
  // The record's address is the handle: unique while it lives, and never a real NCCL comm.
  record->handle = reinterpret_cast<ncclComm_t>(record.get());
  record->bootstrap = bootstrap;
  attach_weft(*record, std::move(bootstrap));
  if (!record->weft) {
    logger_.warn("standalone communicator rank {}/{}: {}; every collective on it will fail", rank,
                 nranks, record->no_weft_reason);
  }
  *comm = record->handle;
  insert(std::move(record));
  return ncclSuccess;
}

}  // namespace weft::plugin
