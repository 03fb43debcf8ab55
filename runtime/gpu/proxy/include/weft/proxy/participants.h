// Who runs where, as the proxy needs to know it: each participant's host and each rank's
// participant, and which pairs of ranks the proxies join (docs/architecture.md §6).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weft/communicator/bootstrap.h"
#include "weft/program/options.h"
#include "weft/program/status.h"

namespace weft::proxy {

struct Participants {
  int me = 0;
  std::vector<std::string> hosts;  // per participant: its host id
  std::vector<int> owner;          // per rank: the participant that drives it
  // Ranks of different participants are joined through the proxies when their hosts differ
  // (a GPU's ranks on one host share memory by CUDA IPC), or, in host mode, whenever their
  // participants differ (each process's ranks live in its own memory).
  bool every_process = false;

  int size() const { return static_cast<int>(hosts.size()); }
  bool participants_cross(int p, int q) const;
  bool crosses(int rank_a, int rank_b) const;
  // Whether any pair of ranks goes through the proxies: then every participant starts one.
  bool any_crossing() const;
  // "host 'b'" (with the participant when a host holds several), for messages.
  std::string where(int rank) const;
};

// The participant's host id: WEFT_HOSTID when set (as NCCL_HOSTID: processes with the same value
// share a host), else the machine's hostname. A WEFT_HOSTID that is empty, longer than 63
// characters or holds a character outside [A-Za-z0-9._:-] is refused, naming the variable.
gpu::Result<std::string> host_id(const gpu::EnvLookup& lookup);

inline constexpr std::size_t kMaxHostIdLength = 63;

// Collective over `bootstrap`: every participant's host and ranks (at most 64 local ranks each),
// checked: the same rank count everywhere, every rank driven by exactly one participant.
gpu::Result<Participants> gather_participants(gpu::Bootstrap& bootstrap, int nranks,
                                              std::span<const int> local_ranks,
                                              const std::string& host, bool every_process);

}  // namespace weft::proxy
