// No exception crosses the C ABI: every exported NCCL function runs its body through guarded(),
// which turns anything thrown (memory exhaustion included) into an NCCL error code that is
// reported, instead of std::terminate inside the application.
#pragma once

#include <nccl.h>

#include <exception>
#include <new>

namespace weft::plugin {

// `report(api, what, code)` says what escaped and returns the code to give the caller; it must
// not throw.
template <class Body, class Report>
ncclResult_t guarded(const char* api, Body&& body, Report&& report) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return report(api, "out of memory", ncclSystemError);
  } catch (const std::exception& e) {
    return report(api, e.what(), ncclInternalError);
  } catch (...) {
    return report(api, "an exception of unknown type", ncclInternalError);
  }
}

}  // namespace weft::plugin
