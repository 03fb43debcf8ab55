// weftc's work within a memory limit: its process may grow by at most the limit (the rest of the
// machine's memory stays the machine's), and what would grow past it fails as std::bad_alloc,
// which the command reports with the limit and the way out, instead of the kernel killing
// weftc or the whole machine slowing to a crawl (`weftc compile alltoall_direct --ranks 8192`
// grew to 7.9 GB in two minutes).
#pragma once

#include <sys/resource.h>

#include <cstdint>
#include <optional>
#include <string>

namespace weft::weftc {

class MemoryCap {
 public:
  // `max_memory`: a command's --max-memory; without it, nine tenths of what the machine has
  // available. Sanitizer builds are not capped (their shadow memory is reserved address space).
  explicit MemoryCap(std::optional<std::uint64_t> max_memory);
  ~MemoryCap();  // the process's limit as it was
  MemoryCap(const MemoryCap&) = delete;
  MemoryCap& operator=(const MemoryCap&) = delete;

  std::optional<std::uint64_t> limit() const { return limit_; }
  // "the 21.3 GB it may take (nine tenths of what /proc/meminfo says is available)".
  std::string describe() const;

 private:
  std::optional<std::uint64_t> max_memory_;
  std::optional<std::uint64_t> limit_;
  bool capped_ = false;
  rlimit saved_{};
};

// "--max-memory 8G" for weftc's commands: a size as weft-perf and nccl-tests write them.
std::optional<std::uint64_t> parse_memory_size(const std::string& text);

}  // namespace weft::weftc
