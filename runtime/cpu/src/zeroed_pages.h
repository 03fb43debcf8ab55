// Large tables that start zeroed (the race check's dense clocks: hundreds of megabytes at 64
// ranks), taken from the kernel in 2 MB pages where it offers them. A table of that size written
// for the first time faults once per 4 KB page, and on a virtual machine such as this project's
// 2-core one a fault costs tens of microseconds: zeroing 160 MB took a second per run (a third of
// a 64-rank allreduce synthesis), and takes about 20 ms in huge pages, which the kernel hands out
// already zeroed. Small tables come from the heap as before.
#pragma once

#include <cstddef>
#include <type_traits>

namespace weft::cpu::detail {

// `bytes` zeroed bytes: mapped and advised for huge pages when large, else from the heap. Throws
// std::bad_alloc when neither can give them.
void* take_zeroed(std::size_t bytes);
// Gives back what take_zeroed(bytes) returned (the same `bytes`).
void give_back_zeroed(void* memory, std::size_t bytes);

// A fixed-size array of trivial T, all zero at the start.
template <typename T>
class ZeroedPages {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  ZeroedPages() = default;
  explicit ZeroedPages(std::size_t count)
      : data_(count == 0 ? nullptr : static_cast<T*>(take_zeroed(count * sizeof(T)))),
        count_(count) {}
  ZeroedPages(const ZeroedPages&) = delete;
  ZeroedPages& operator=(const ZeroedPages&) = delete;
  ZeroedPages(ZeroedPages&& other) noexcept : data_(other.data_), count_(other.count_) {
    other.data_ = nullptr;
    other.count_ = 0;
  }
  ZeroedPages& operator=(ZeroedPages&& other) noexcept {
    if (this != &other) {
      release();
      data_ = other.data_;
      count_ = other.count_;
      other.data_ = nullptr;
      other.count_ = 0;
    }
    return *this;
  }
  ~ZeroedPages() { release(); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return count_; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }

 private:
  void release() {
    if (data_ != nullptr) give_back_zeroed(data_, count_ * sizeof(T));
    data_ = nullptr;
    count_ = 0;
  }

  T* data_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace weft::cpu::detail
