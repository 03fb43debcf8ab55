// The shim as a whole: starting from its configuration (what it reports, which algorithms it
// loads) and the calls that concern the library rather than a communicator.
#include "shim.h"

#include <fmt/format.h>

#include "shim_records.h"
#include "weft/ir/nccl_version.h"
#include "weft/version.h"

namespace weft::plugin {

Shim::Shim(ShimConfig config, NcclLibrary nccl, std::unique_ptr<WeftBackend> backend,
           Logger::Sink log_sink)
    : config_(std::move(config)),
      logger_(config_.debug, std::move(log_sink)),
      nccl_(std::move(nccl)),
      backend_(std::move(backend)) {
  if (backend_) {
    logger_.set_device_probe([backend = backend_.get()] {
      auto device = backend->current_device();
      return device.ok() ? device.value() : -1;
    });
  }
  logger_.info("Weft {}, built against NCCL {}", WEFT_VERSION_STRING,
               ir::nccl_version_text(NCCL_VERSION_CODE));
  for (const std::string& problem : config_.problems) logger_.warn("{}", problem);
  if (config_.disabled) {
    if (config_.standalone) logger_.warn("WEFT_DISABLE=1 overrides WEFT_STANDALONE=1");
    config_.standalone = false;
    logger_.info("WEFT_DISABLE=1: every NCCL call goes to {} unchanged", nccl_.origin);
    if (!nccl_.found) logger_.warn("{}", nccl_.error);
    return;
  }
  if (config_.standalone) {
    logger_.info(
        "standalone mode (WEFT_STANDALONE=1): no NCCL; collectives without a loaded "
        "algorithm fail");
  } else if (nccl_.found) {
    // The NCCL found at run time may differ from the headers the shim was built with. Asked only
    // for the log, so that without it the shim calls NCCL only when the application does.
    if (logger_.enabled(LogLevel::Info)) {
      int code = 0;
      const bool known = nccl_.functions.GetVersion(&code) == ncclSuccess;
      logger_.info(
          "forwarding to {}: NCCL {}", nccl_.origin,
          known ? ir::nccl_version_text(code) : "of unknown version (ncclGetVersion failed)");
    }
  } else {
    logger_.warn("{}", nccl_.error);
  }
  catalog_ = load_catalog(config_);
  for (const std::string& skipped : catalog_.skipped) logger_.warn("{}", skipped);
  for (const std::string& ignored : catalog_.ignored) logger_.info("{}", ignored);
  logger_.info("{} algorithm{} loaded", catalog_.entries.size(),
               catalog_.entries.size() == 1 ? "" : "s");
  for (std::size_t k = 0; k < catalog_.entries.size(); ++k) {
    const ir::Algorithm& algo = catalog_.entries[k].algorithm;
    logger_.info("  [{}] '{}': {} on {} ranks, {}{}{}, {} ({})", k, algo.name,
                 ir::to_string(algo.collective), algo.ngpus, algo.inplace ? "in-place" : "",
                 algo.inplace && algo.outofplace ? "/" : "", algo.outofplace ? "out-of-place" : "",
                 ir::to_string(algo.protocol), catalog_.entries[k].path);
  }
}

Shim::~Shim() = default;

ncclResult_t Shim::get_version(int* version) {
  if (config_.standalone) {
    if (version == nullptr) return fail(ncclInvalidArgument, "ncclGetVersion: version is NULL");
    *version = NCCL_VERSION_CODE;  // the API this shim implements
    return ncclSuccess;
  }
  return forward("ncclGetVersion", &NcclFunctions::GetVersion, version);
}

void Shim::reset_debug_init() {
  if (!config_.standalone && nccl_.found && nccl_.functions.ResetDebugInit != nullptr) {
    nccl_.functions.ResetDebugInit();
  }
}

}  // namespace weft::plugin
