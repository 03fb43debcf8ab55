// How the shim reports failure as NCCL does: a result code, a WARN line, and the message kept
// for the thread's next ncclGetLastError; and the error strings when there is no NCCL to ask.
#include <fmt/format.h>

#include "shim.h"
#include "shim_records.h"

namespace weft::plugin {

ncclResult_t to_nccl_result(gpu::ErrorCode code) {
  switch (code) {
    case gpu::ErrorCode::Success:
      return ncclSuccess;
    case gpu::ErrorCode::InvalidArgument:
      return ncclInvalidArgument;
    case gpu::ErrorCode::CudaError:
      return ncclUnhandledCudaError;
    case gpu::ErrorCode::SystemError:
      return ncclSystemError;
    case gpu::ErrorCode::Timeout:
      return ncclRemoteError;  // a peer did not do its part in time
    case gpu::ErrorCode::InternalError:
      return ncclInternalError;
    case gpu::ErrorCode::InvalidAlgorithm:
    case gpu::ErrorCode::NotApplicable:
    case gpu::ErrorCode::NotResident:
    case gpu::ErrorCode::InvalidUsage:
    case gpu::ErrorCode::Mismatch:
      return ncclInvalidUsage;
  }
  return ncclInternalError;
}

namespace {

const char* own_error_string(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error (run with WEFT_DEBUG=INFO for details)";
    case ncclSystemError:
      return "unhandled system error (run with WEFT_DEBUG=INFO for details)";
    case ncclInternalError:
      return "internal error - please report this issue to the Weft developers";
    case ncclInvalidArgument:
      return "invalid argument (run with WEFT_DEBUG=WARN for details)";
    case ncclInvalidUsage:
      return "invalid usage (run with WEFT_DEBUG=WARN for details)";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
    default:
      return "unknown result code";
  }
}

}  // namespace

ncclResult_t Shim::fail(ncclResult_t code, std::string message) {
  logger_.warn("{}", message);
  thread_state().last_error = std::move(message);
  return code;
}

ncclResult_t Shim::report_exception(const char* api, const char* what, ncclResult_t code) {
  return fail(code, fmt::format("{}: {} (caught at the API boundary; the call did nothing more)",
                                api, what));
}

const char* Shim::get_error_string(ncclResult_t result) {
  if (!config_.standalone && nccl_.found && nccl_.functions.GetErrorString != nullptr) {
    return nccl_.functions.GetErrorString(result);
  }
  return own_error_string(result);
}

const char* Shim::get_last_error(ncclComm_t comm) {
  ThreadState& state = thread_state();
  if (!state.last_error.empty()) return state.last_error.c_str();
  if (!config_.standalone && nccl_.found && nccl_.functions.GetLastError != nullptr) {
    return nccl_.functions.GetLastError(comm);
  }
  return "";
}

}  // namespace weft::plugin
