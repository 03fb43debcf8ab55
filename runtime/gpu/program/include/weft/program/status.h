// What a GPU-runtime call reports: a code the caller can branch on and a message a person can act
// on. The codes are the C API's weftResult_t values (weft/weft.h), so the two faces agree.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace weft::gpu {

enum class ErrorCode : int {
  Success = 0,
  InvalidArgument = 1,   // a bad pointer, count, type, operator, rank or option
  InvalidAlgorithm = 2,  // the IR failed to load or validate (the message lists every finding)
  NotApplicable = 3,     // the algorithm does not apply to this call (collective, size, mode, ...)
  CudaError = 4,         // a CUDA runtime call failed
  SystemError = 5,       // sockets, files, bootstrap peers
  Timeout = 6,           // a kernel wait expired: rank, threadblock, step and what it waited for
  NotResident = 7,       // the device cannot hold every threadblock of the launch at once
  InvalidUsage = 8,      // a call in the wrong state (after an abort, during capture, ...)
  InternalError = 9,     // a bug in Weft
  Mismatch = 10,         // ranks disagree (different algorithms loaded, different call sizes)
};

std::string_view to_string(ErrorCode code);
// One sentence: what the code means and what to do about it.
std::string_view describe(ErrorCode code);

struct Status {
  ErrorCode code = ErrorCode::Success;
  std::string message;  // empty on success

  bool ok() const { return code == ErrorCode::Success; }
  static Status success() { return {}; }
  static Status error(ErrorCode code, std::string message) { return {code, std::move(message)}; }
  // "timeout: rank 2 / tb 1 / step 4: ..."
  std::string str() const;
};

// A value or the reason there is none (std::expected is C++23).
template <class T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}          // NOLINT: implicit, like std::expected
  Result(Status status) : status_(std::move(status)) {}  // NOLINT
  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace weft::gpu
