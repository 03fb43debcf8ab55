// Private to the GPU runtime: the records the CUDA transports exchange when participants meet
// (transport.cpp) and the checks every participant makes on what the others sent. Plain C++, so
// the checks are tested without a GPU: a record is believed only as far as these checks go.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "weft/program/device_abi.h"
#include "weft/program/status.h"

namespace weft::gpu {

inline constexpr std::uint32_t kRecordMagic = 0x57465450;  // "WFTP"
inline constexpr int kMaxRecordRanks = device::kMaxLocalRanks;

// A random value drawn once per process: two participants are one process when their values
// agree. Process ids cannot say it: processes in separate PID namespaces (containers sharing the
// host's IPC) may have the same one, and a wrong answer turns another process's address into a
// device pointer of this one.
using ProcessToken = std::array<std::uint8_t, 16>;
const ProcessToken& process_token();

struct ParticipantRecord {
  std::uint32_t magic = kRecordMagic;
  std::int32_t nranks = 0;
  std::int32_t device = -1;
  std::int32_t local_count = 0;
  std::uint64_t pid = 0;  // for messages only
  ProcessToken process{};
  std::uint64_t host = 0;
  char bus_id[32] = {};     // the participant's GPU, for the link between two participants
  char host_name[64] = {};  // its host id (WEFT_HOSTID or the hostname), for the proxy
  std::int32_t ranks[kMaxRecordRanks] = {};
};

struct WindowEntry {
  std::int32_t rank = -1;
  std::int32_t unused = 0;
  std::uint64_t bytes = 0;
  std::uint64_t address = 0;
  std::array<std::byte, 64> ipc_handle{};  // a cudaIpcMemHandle_t
};

struct WindowRecord {
  std::uint64_t fingerprint = 0;
  std::int32_t count = 0;  // -1: the sender failed to allocate
  std::int32_t unused = 0;
  WindowEntry entries[kMaxRecordRanks];
};

// The participants' records, as participant `me` received them: well formed, one host (unless
// `across_hosts`: a proxy reaches the others), the same rank count, within `in_process`'s one
// process when set, and each rank driven by exactly one participant. Fills `owner` (rank →
// participant).
Status check_participants(std::span<const ParticipantRecord> records, int nranks, int me,
                          bool in_process, std::string_view transport, std::vector<int>& owner,
                          bool across_hosts = false);

// The window records: nobody failed, everyone loaded the same algorithm (`fingerprint`), and
// each record holds exactly one entry per rank its sender drives (per `owner`) and none for
// another participant's rank.
Status check_window_records(std::span<const WindowRecord> all,
                            std::span<const ParticipantRecord> participants,
                            const std::vector<int>& owner, int nranks, int me,
                            std::uint64_t fingerprint);

}  // namespace weft::gpu
