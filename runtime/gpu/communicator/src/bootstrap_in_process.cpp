// The in-process rendezvous: a generation-counted two-phase exchange under one mutex. Phase one
// collects every participant's record, phase two lets each copy the whole set out; the next
// round opens only when everyone has left, so a fast thread cannot overwrite a record a slow one
// has not read yet.
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "weft/communicator/bootstrap.h"

namespace weft::gpu {

namespace {

class Rendezvous final : public InProcessRendezvous {
 public:
  Rendezvous(int size, std::chrono::milliseconds timeout)
      : size_(size),
        timeout_(timeout),
        joined_(static_cast<std::size_t>(size), false),
        arrived_(static_cast<std::size_t>(size), false) {}

  int size() const override { return size_; }
  Result<std::unique_ptr<Bootstrap>> join(int rank) override;

  Status allgather(int rank, std::span<std::byte> data, std::size_t bytes_per_rank) {
    if (data.size() != bytes_per_rank * static_cast<std::size_t>(size_)) {
      return Status::error(ErrorCode::InvalidArgument,
                           fmt::format("allgather on rank {}: buffer of {} bytes is not {} × {}",
                                       rank, data.size(), size_, bytes_per_rank));
    }
    std::unique_lock lock(mutex_);
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    // Wait for the previous round to drain.
    if (!changed_.wait_until(lock, deadline, [&] { return broken_ || !distributing_; })) {
      return broken(rank, "the previous exchange did not finish");
    }
    if (broken_) return broken(rank, "an earlier exchange failed: " + failure_);
    if (arrivals_ == 0) {
      record_bytes_ = bytes_per_rank;
      buffer_.assign(data.size(), std::byte{0});
      mismatch_.clear();
    } else if (bytes_per_rank != record_bytes_) {
      mismatch_ = fmt::format("rank {} sent {}-byte records, others {}", rank, bytes_per_rank,
                              record_bytes_);
    }
    if (!mismatch_.empty()) {
      if (!broken_) failure_ = mismatch_;
      broken_ = true;
      changed_.notify_all();
      return Status::error(ErrorCode::Mismatch, "in-process bootstrap: " + mismatch_);
    }
    const std::size_t offset = static_cast<std::size_t>(rank) * bytes_per_rank;
    std::memcpy(buffer_.data() + offset, data.data() + offset, bytes_per_rank);
    arrived_[static_cast<std::size_t>(rank)] = true;
    const std::uint64_t generation = generation_;
    if (++arrivals_ == size_) {
      distributing_ = true;
      changed_.notify_all();
    } else if (!changed_.wait_until(lock, deadline, [&] {
                 return broken_ || (distributing_ && generation_ == generation);
               })) {
      return broken(rank, fmt::format("ranks {} never arrived", missing()));
    }
    // Whoever broke the exchange first recorded why; repeating it lets every rank name the
    // missing participants, whichever thread's deadline happened to fire first.
    if (broken_) return broken(rank, "another participant failed: " + failure_);
    std::memcpy(data.data(), buffer_.data(), data.size());
    if (++departures_ == size_) {
      arrivals_ = departures_ = 0;
      distributing_ = false;
      std::fill(arrived_.begin(), arrived_.end(), false);
      ++generation_;
      changed_.notify_all();
    }
    return {};
  }

 private:
  Status broken(int rank, const std::string& why) {
    if (!broken_) failure_ = fmt::format("rank {}: {}", rank, why);
    broken_ = true;
    changed_.notify_all();
    return Status::error(ErrorCode::SystemError,
                         fmt::format("in-process bootstrap, rank {}: {} (timeout {} ms)", rank, why,
                                     timeout_.count()));
  }

  std::string missing() const {
    std::string out;
    for (std::size_t r = 0; r < arrived_.size(); ++r) {
      if (arrived_[r]) continue;
      if (!out.empty()) out += ", ";
      out += fmt::format("{}", r);
    }
    return out;
  }

  const int size_;
  const std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<bool> joined_;
  std::vector<bool> arrived_;
  std::vector<std::byte> buffer_;
  std::size_t record_bytes_ = 0;
  std::string mismatch_;
  std::string failure_;  // why the exchange first broke, quoted to every later participant
  int arrivals_ = 0;
  int departures_ = 0;
  bool distributing_ = false;
  bool broken_ = false;
  std::uint64_t generation_ = 0;
};

class Member final : public Bootstrap {
 public:
  Member(std::shared_ptr<Rendezvous> rendezvous, int rank)
      : rendezvous_(std::move(rendezvous)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return rendezvous_->size(); }
  Status allgather(std::span<std::byte> data, std::size_t bytes_per_rank) override {
    return rendezvous_->allgather(rank_, data, bytes_per_rank);
  }

 private:
  std::shared_ptr<Rendezvous> rendezvous_;
  int rank_;
};

Result<std::unique_ptr<Bootstrap>> Rendezvous::join(int rank) {
  std::lock_guard lock(mutex_);
  if (rank < 0 || rank >= size_) {
    return Status::error(ErrorCode::InvalidArgument,
                         fmt::format("in-process bootstrap: rank {} outside [0, {})", rank, size_));
  }
  if (joined_[static_cast<std::size_t>(rank)]) {
    return Status::error(ErrorCode::InvalidUsage,
                         fmt::format("in-process bootstrap: rank {} joined twice", rank));
  }
  joined_[static_cast<std::size_t>(rank)] = true;
  auto self = std::static_pointer_cast<Rendezvous>(shared_from_this());
  return std::unique_ptr<Bootstrap>(std::make_unique<Member>(std::move(self), rank));
}

}  // namespace

std::shared_ptr<InProcessRendezvous> InProcessRendezvous::create(
    int size, std::chrono::milliseconds timeout) {
  return std::make_shared<Rendezvous>(std::max(size, 1), timeout);
}

}  // namespace weft::gpu
