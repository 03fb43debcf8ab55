#include "memory_cap.h"

#include <fmt/format.h>

#include "weft/ir/host_memory.h"
#include "weft/program/options.h"

namespace weft::weftc {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

}  // namespace

MemoryCap::MemoryCap(std::optional<std::uint64_t> max_memory)
    : max_memory_(max_memory), limit_(ir::memory_limit(max_memory)) {
  if (kSanitized || !limit_) return;
  const std::optional<std::uint64_t> now = ir::address_space();
  if (!now || getrlimit(RLIMIT_AS, &saved_) != 0) return;
  rlimit cap = saved_;
  const std::uint64_t wanted = *now + *limit_;
  if (saved_.rlim_max != RLIM_INFINITY && wanted > saved_.rlim_max) return;
  cap.rlim_cur = static_cast<rlim_t>(wanted);
  capped_ = setrlimit(RLIMIT_AS, &cap) == 0;
}

MemoryCap::~MemoryCap() {
  if (capped_) setrlimit(RLIMIT_AS, &saved_);
}

std::string MemoryCap::describe() const {
  if (!limit_) return "the memory it may take";
  return fmt::format("the {} it may take ({})", ir::human_bytes(*limit_),
                     ir::memory_limit_source(max_memory_));
}

std::optional<std::uint64_t> parse_memory_size(const std::string& text) {
  const std::optional<std::size_t> bytes = gpu::parse_byte_size(text);
  if (!bytes || *bytes == 0) return std::nullopt;
  return *bytes;
}

}  // namespace weft::weftc
