// ncclGetUniqueId: NCCL's own id, or in standalone mode an id naming Weft's rendezvous.
#include <cstring>

#include <fmt/format.h>

#include "shim.h"
#include "shim_records.h"
#include "weft/plugin/standalone_id.h"

namespace weft::plugin {

ncclResult_t Shim::get_unique_id(ncclUniqueId* id) {
  if (!config_.standalone) return forward("ncclGetUniqueId", &NcclFunctions::GetUniqueId, id);
  if (id == nullptr) return fail(ncclInvalidArgument, "ncclGetUniqueId: uniqueId is NULL");
  // A fresh local socket name and the job's secret; WEFT_STANDALONE_ADDR replaces the name.
  auto fresh = gpu::make_local_rendezvous();
  if (!fresh.ok()) {
    return fail(ncclSystemError, fmt::format("ncclGetUniqueId: {}", fresh.status().str()));
  }
  StandaloneId standalone;
  standalone.address = config_.standalone_address.empty() ? gpu::to_string(fresh.value().address)
                                                          : config_.standalone_address;
  standalone.secret = fresh.value().secret;
  // Checked here, where the user can still fix it, not later on every rank.
  auto parsed = gpu::parse_socket_address(standalone.address);
  if (!parsed.ok()) {
    return fail(ncclInvalidArgument,
                fmt::format("ncclGetUniqueId: WEFT_STANDALONE_ADDR: {}", parsed.status().str()));
  }
  if (parsed.value().local_name.empty() && parsed.value().port == 0) {
    return fail(ncclInvalidArgument,
                fmt::format("ncclGetUniqueId: WEFT_STANDALONE_ADDR={}: port 0 cannot go into an "
                            "id (the other ranks must know the port rank 0 listens on); name a "
                            "free port, or leave WEFT_STANDALONE_ADDR unset for a local socket",
                            standalone.address));
  }
  if (parsed.value().local_name.empty()) {
    logger_.warn(
        "ncclGetUniqueId: WEFT_STANDALONE_ADDR={} is a TCP rendezvous: any process that reaches "
        "the port, another user's too, can connect (it is dropped unless it proves the job's "
        "secret, which is never sent); without WEFT_STANDALONE_ADDR a local socket is used, "
        "which only this user's processes can reach",
        standalone.address);
    if (gpu::listens_on_every_interface(parsed.value())) {
      logger_.warn(
          "ncclGetUniqueId: WEFT_STANDALONE_ADDR={} listens on every interface, so "
          "other hosts can reach it; name 127.0.0.1 or one interface's address",
          standalone.address);
    }
  }
  const auto encoded = encode_standalone_id(standalone);
  if (!encoded) {
    return fail(ncclInvalidArgument,
                fmt::format("ncclGetUniqueId: WEFT_STANDALONE_ADDR '{}' does not fit in an id",
                            standalone.address));
  }
  static_assert(sizeof(ncclUniqueId) == kUniqueIdBytes);
  std::memcpy(id, encoded->data(), kUniqueIdBytes);
  logger_.info("ncclGetUniqueId: standalone rendezvous at {}", standalone.address);
  return ncclSuccess;
}

}  // namespace weft::plugin
