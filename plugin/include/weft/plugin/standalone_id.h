// In standalone mode (WEFT_STANDALONE=1) ncclGetUniqueId does not ask NCCL: the 128-byte id
// carries where rank 0 will listen for Weft's socket rendezvous and the job's rendezvous secret,
// and every rank that receives the id (however the application distributes it) meets there and
// proves the secret.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "weft/communicator/bootstrap.h"

namespace weft::plugin {

inline constexpr std::size_t kUniqueIdBytes = 128;  // NCCL_UNIQUE_ID_BYTES
using UniqueIdBytes = std::array<char, kUniqueIdBytes>;

struct StandaloneId {
  std::string address;  // as gpu::parse_socket_address reads it: "unix:NAME" or "host:port"
  gpu::RendezvousSecret secret{};
  bool operator==(const StandaloneId&) const = default;
};

// "weft-standalone:<address>#<secret, 32 hex digits>", zero-padded. Nothing when the address
// is empty, holds '#', or does not fit.
std::optional<UniqueIdBytes> encode_standalone_id(const StandaloneId& id);
// The address and secret, or nothing when the bytes are not such an id (a real NCCL id, say).
std::optional<StandaloneId> decode_standalone_id(const UniqueIdBytes& id);

}  // namespace weft::plugin
