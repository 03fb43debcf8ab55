#include "weft/proxy/participants.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace weft::proxy {

bool Participants::participants_cross(int p, int q) const {
  if (p == q) return false;
  if (every_process) return true;
  return hosts[static_cast<std::size_t>(p)] != hosts[static_cast<std::size_t>(q)];
}

bool Participants::crosses(int rank_a, int rank_b) const {
  return participants_cross(owner[static_cast<std::size_t>(rank_a)],
                            owner[static_cast<std::size_t>(rank_b)]);
}

bool Participants::any_crossing() const {
  for (int p = 0; p < size(); ++p) {
    for (int q = p + 1; q < size(); ++q) {
      if (participants_cross(p, q)) return true;
    }
  }
  return false;
}

std::string Participants::where(int rank) const {
  if (rank < 0 || rank >= static_cast<int>(owner.size())) return fmt::format("rank {}", rank);
  const int p = owner[static_cast<std::size_t>(rank)];
  const std::string& host = hosts[static_cast<std::size_t>(p)];
  const auto on_host = std::count(hosts.begin(), hosts.end(), host);
  if (on_host > 1) return fmt::format("host '{}' (process {} there)", host, p);
  return fmt::format("host '{}'", host);
}

gpu::Result<std::string> host_id(const gpu::EnvLookup& lookup) {
  if (const char* value = lookup("WEFT_HOSTID"); value != nullptr) {
    const std::string_view text(value);
    const bool valid =
        !text.empty() && text.size() <= kMaxHostIdLength &&
        std::all_of(text.begin(), text.end(), [](char c) {
          return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == ':' || c == '-';
        });
    if (!valid) {
      return gpu::Status::error(
          gpu::ErrorCode::InvalidArgument,
          fmt::format("WEFT_HOSTID='{}': 1 to {} characters of A-Z a-z 0-9 . _ : -",
                      text.substr(0, 80), kMaxHostIdLength));
    }
    return std::string(text);
  }
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return std::string("localhost");
  std::string host(name);
  if (host.size() > kMaxHostIdLength) host.resize(kMaxHostIdLength);
  return host;
}

namespace {

constexpr std::uint32_t kMagic = 0x57465048;  // "WFPH"
constexpr int kMaxLocal = 64;

struct Record {
  std::uint32_t magic = kMagic;
  std::int32_t nranks = 0;
  std::int32_t local_count = 0;
  std::int32_t unused = 0;
  char host[kMaxHostIdLength + 1] = {};
  std::int32_t ranks[kMaxLocal] = {};
};

}  // namespace

gpu::Result<Participants> gather_participants(gpu::Bootstrap& bootstrap, int nranks,
                                              std::span<const int> local_ranks,
                                              const std::string& host, bool every_process) {
  if (local_ranks.empty() || local_ranks.size() > static_cast<std::size_t>(kMaxLocal)) {
    return gpu::Status::error(gpu::ErrorCode::InvalidArgument,
                              fmt::format("a participant drives 1 to {} ranks, not {}", kMaxLocal,
                                          local_ranks.size()));
  }
  std::vector<Record> records(static_cast<std::size_t>(bootstrap.size()));
  Record& mine = records[static_cast<std::size_t>(bootstrap.rank())];
  mine.nranks = nranks;
  mine.local_count = static_cast<std::int32_t>(local_ranks.size());
  host.copy(mine.host, kMaxHostIdLength);
  std::copy(local_ranks.begin(), local_ranks.end(), mine.ranks);
  if (auto s = bootstrap.allgather(std::as_writable_bytes(std::span(records)), sizeof(Record));
      !s.ok()) {
    return s;
  }
  Participants who;
  who.me = bootstrap.rank();
  who.every_process = every_process;
  who.owner.assign(static_cast<std::size_t>(nranks), -1);
  for (std::size_t p = 0; p < records.size(); ++p) {
    const Record& r = records[p];
    if (r.magic != kMagic || r.local_count < 1 || r.local_count > kMaxLocal) {
      return gpu::Status::error(gpu::ErrorCode::SystemError,
                                fmt::format("participant {} sent a malformed record", p));
    }
    if (r.nranks != nranks) {
      return gpu::Status::error(gpu::ErrorCode::Mismatch,
                                fmt::format("participant {} has {} ranks, participant {} has {}",
                                            p, r.nranks, who.me, nranks));
    }
    who.hosts.emplace_back(r.host, ::strnlen(r.host, sizeof(r.host)));
    for (int k = 0; k < r.local_count; ++k) {
      const int rank = r.ranks[k];
      if (rank < 0 || rank >= nranks || who.owner[static_cast<std::size_t>(rank)] >= 0) {
        return gpu::Status::error(gpu::ErrorCode::Mismatch,
                                  fmt::format("rank {} is claimed twice or is out of range "
                                              "(participant {})",
                                              rank, p));
      }
      who.owner[static_cast<std::size_t>(rank)] = static_cast<int>(p);
    }
  }
  for (int rank = 0; rank < nranks; ++rank) {
    if (who.owner[static_cast<std::size_t>(rank)] < 0) {
      return gpu::Status::error(gpu::ErrorCode::Mismatch,
                                fmt::format("no participant drives rank {}", rank));
    }
  }
  return who;
}

}  // namespace weft::proxy
