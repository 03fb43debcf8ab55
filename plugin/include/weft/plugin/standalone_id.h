// In standalone mode (WEFT_STANDALONE=1) ncclGetUniqueId does not ask NCCL: the 128-byte id
// carries the address where rank 0 will listen for Weft's socket rendezvous, and every rank
// that receives the id (however the application distributes it) meets there.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace weft::plugin {

inline constexpr std::size_t kUniqueIdBytes = 128;  // NCCL_UNIQUE_ID_BYTES
using UniqueIdBytes = std::array<char, kUniqueIdBytes>;

// "weft-standalone:<host:port>", zero-padded. Fails (nothing) when the address does not fit.
std::optional<UniqueIdBytes> encode_standalone_id(std::string_view address);
// The address, or nothing when the bytes are not such an id (for instance a real NCCL id).
std::optional<std::string> decode_standalone_id(const UniqueIdBytes& id);

// "127.0.0.1:<port>" with a port the kernel reports free right now (bind to port 0). The
// processes of a standalone job share one host, since CUDA IPC does not cross hosts. Empty and
// `error` filled when no socket could be bound.
std::string pick_local_rendezvous_address(std::string* error);

}  // namespace weft::plugin
