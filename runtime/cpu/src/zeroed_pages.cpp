#include "zeroed_pages.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>

namespace weft::cpu::detail {

namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
// Below this a table is cheap to fault in page by page, and the heap keeps its waste small.
constexpr std::size_t kMappedFrom = 4 * kHugePage;

std::size_t mapped_length(std::size_t bytes) {
  return (bytes + kHugePage - 1) / kHugePage * kHugePage;
}

}  // namespace

void* take_zeroed(std::size_t bytes) {
  if (bytes < kMappedFrom) {
    void* memory = std::calloc(bytes, 1);
    if (memory == nullptr) throw std::bad_alloc();
    return memory;
  }
  // The kernel backs only 2 MB-aligned stretches with huge pages: map one huge page more than
  // needed and give back the unaligned head and the tail.
  const std::size_t length = mapped_length(bytes);
  void* mapped =
      mmap(nullptr, length + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<std::uintptr_t>(mapped);
  const std::uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
  const std::size_t head = aligned - start;
  if (head > 0) munmap(mapped, head);
  const std::size_t tail = kHugePage - head;
  if (tail > 0) munmap(reinterpret_cast<void*>(aligned + length), tail);
  void* memory = reinterpret_cast<void*>(aligned);
#ifdef MADV_HUGEPAGE
  // Advice only: where huge pages are off, the table is faulted in 4 KB at a time as before.
  madvise(memory, length, MADV_HUGEPAGE);
#endif
  return memory;
}

void give_back_zeroed(void* memory, std::size_t bytes) {
  if (memory == nullptr) return;
  if (bytes < kMappedFrom) {
    std::free(memory);
    return;
  }
  munmap(memory, mapped_length(bytes));
}

}  // namespace weft::cpu::detail
