// The host's memory as the tools see it: how much a run may take, and sizes in words. Shared by
// weftc and weft-perf, which refuse work that would not fit instead of growing until the kernel
// kills them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace weft::ir {

// What the machine has available now (MemAvailable of /proc/meminfo); nullopt where unknown.
std::optional<std::uint64_t> available_memory();

// This process's address space now (VmSize of /proc/self/status); nullopt where unknown.
std::optional<std::uint64_t> address_space();

// The memory a run may take: `max_memory` (a tool's --max-memory) when given, else nine tenths of
// what is available (the rest for everything else). nullopt when neither is known.
std::optional<std::uint64_t> memory_limit(std::optional<std::uint64_t> max_memory);

// Where the limit came from, for a message: "--max-memory" or "nine tenths of ...".
std::string memory_limit_source(std::optional<std::uint64_t> max_memory);

// "24.0 GB", "512.0 MB", "3.0 KB" (decimal units, as `free -h --si` and nccl-tests' sizes).
std::string human_bytes(std::uint64_t bytes);

}  // namespace weft::ir
