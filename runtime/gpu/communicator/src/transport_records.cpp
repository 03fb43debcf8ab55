#include "weft/communicator/transport_records.h"

#include <unistd.h>

#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "weft/communicator/bootstrap.h"

namespace weft::gpu {

const ProcessToken& process_token() {
  static const ProcessToken token = [] {
    ProcessToken value{};
    if (auto random = make_rendezvous_secret(); random.ok()) {
      value = random.value();
    } else {
      // No random source: the pid and the time still tell this process from the others.
      const auto pid = static_cast<std::uint64_t>(::getpid());
      const auto now =
          static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
      std::memcpy(value.data(), &pid, sizeof(pid));
      std::memcpy(value.data() + sizeof(pid), &now, sizeof(now));
    }
    return value;
  }();
  return token;
}

Status check_participants(std::span<const ParticipantRecord> records, int nranks, int me,
                          bool in_process, std::string_view transport, std::vector<int>& owner,
                          bool across_hosts) {
  owner.assign(static_cast<std::size_t>(nranks), -1);
  const ParticipantRecord& mine = records[static_cast<std::size_t>(me)];
  for (std::size_t p = 0; p < records.size(); ++p) {
    const ParticipantRecord& r = records[p];
    if (r.magic != kRecordMagic) {
      return Status::error(ErrorCode::SystemError,
                           fmt::format("transport: participant {} sent a malformed record", p));
    }
    if (r.nranks != nranks) {
      return Status::error(ErrorCode::Mismatch,
                           fmt::format("transport: participant {} has {} ranks, participant {} "
                                       "has {}",
                                       p, r.nranks, me, nranks));
    }
    if (r.host != mine.host && !across_hosts) {
      return Status::error(ErrorCode::InvalidUsage,
                           fmt::format("transport: participant {} runs on another host; {} "
                                       "reaches only one host",
                                       p, transport));
    }
    if (in_process && r.process != mine.process) {
      return Status::error(ErrorCode::InvalidUsage,
                           fmt::format("in-process transport: participant {} is another process "
                                       "(pid {}); use the CUDA IPC transport",
                                       p, r.pid));
    }
    if (r.local_count < 0 || r.local_count > kMaxRecordRanks) {
      return Status::error(
          ErrorCode::SystemError,
          fmt::format("transport: participant {} claims {} ranks", p, r.local_count));
    }
    for (int k = 0; k < r.local_count; ++k) {
      const int rank = r.ranks[k];
      if (rank < 0 || rank >= nranks || owner[static_cast<std::size_t>(rank)] >= 0) {
        return Status::error(ErrorCode::Mismatch,
                             fmt::format("transport: rank {} is claimed twice or is out of "
                                         "range (participant {})",
                                         rank, p));
      }
      owner[static_cast<std::size_t>(rank)] = static_cast<int>(p);
    }
  }
  for (int rank = 0; rank < nranks; ++rank) {
    if (owner[static_cast<std::size_t>(rank)] < 0) {
      return Status::error(ErrorCode::Mismatch,
                           fmt::format("transport: no participant drives rank {}", rank));
    }
  }
  return {};
}

Status check_window_records(std::span<const WindowRecord> all,
                            std::span<const ParticipantRecord> participants,
                            const std::vector<int>& owner, int nranks, int me,
                            std::uint64_t fingerprint) {
  for (std::size_t p = 0; p < all.size(); ++p) {
    if (all[p].count < 0) {
      return Status::error(
          ErrorCode::SystemError,
          fmt::format("transport: participant {} failed to allocate its window", p));
    }
    if (all[p].fingerprint != fingerprint) {
      return Status::error(
          ErrorCode::Mismatch,
          fmt::format("participants {} and {} loaded different algorithms (or options) at the "
                      "same position (fingerprints {:#x} and {:#x}); every rank must load the "
                      "same files in the same order",
                      me, p, fingerprint, all[p].fingerprint));
    }
  }
  // Every record must describe exactly the ranks its sender drives: an entry for another
  // participant's rank would make this one map memory that rank never offered.
  for (std::size_t p = 0; p < all.size(); ++p) {
    if (all[p].count != participants[p].local_count) {
      return Status::error(ErrorCode::SystemError,
                           fmt::format("transport: participant {} sent {} window entries for "
                                       "the {} ranks it drives",
                                       p, all[p].count, participants[p].local_count));
    }
    std::vector<bool> seen(static_cast<std::size_t>(nranks), false);
    for (int e = 0; e < all[p].count; ++e) {
      const int rank = all[p].entries[e].rank;
      if (rank < 0 || rank >= nranks ||
          owner[static_cast<std::size_t>(rank)] != static_cast<int>(p) ||
          seen[static_cast<std::size_t>(rank)]) {
        return Status::error(ErrorCode::SystemError,
                             fmt::format("transport: participant {} sent a window entry for rank "
                                         "{}, which it does not drive (or twice)",
                                         p, rank));
      }
      seen[static_cast<std::size_t>(rank)] = true;
    }
  }
  return {};
}

}  // namespace weft::gpu
