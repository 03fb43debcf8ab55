#include "weft/proxy/peer_record.h"

#include <cstring>

#include <fmt/format.h>

namespace weft::proxy {

// [state][address length, 8 bytes][address][key]   (Ready)
// [state][text]                                    (Failed)
// [state]                                          (NotNeeded)
std::vector<std::byte> encode_peer_record(const PeerRecord& record) {
  // Sized first and filled by offset (GCC 12 misjudges inserts that grow a one-byte vector).
  const std::uint64_t length = record.address.size();
  std::size_t total = 1;
  if (record.state == EngineState::Ready) {
    total += sizeof(length) + record.address.size() + record.hello_key.size();
  } else if (record.state == EngineState::Failed) {
    total += record.failure.size();
  }
  std::vector<std::byte> bytes(total);
  bytes[0] = static_cast<std::byte>(record.state);
  std::byte* at = bytes.data() + 1;
  if (record.state == EngineState::Ready) {
    std::memcpy(at, &length, sizeof(length));
    at += sizeof(length);
    if (!record.address.empty()) std::memcpy(at, record.address.data(), record.address.size());
    at += record.address.size();
    if (!record.hello_key.empty()) {
      std::memcpy(at, record.hello_key.data(), record.hello_key.size());
    }
  } else if (record.state == EngineState::Failed && !record.failure.empty()) {
    std::memcpy(at, record.failure.data(), record.failure.size());
  }
  return bytes;
}

gpu::Result<PeerRecord> decode_peer_record(std::span<const std::byte> bytes, int participant) {
  const auto malformed = [participant] {
    return gpu::Status::error(gpu::ErrorCode::SystemError,
                              fmt::format("participant {} sent a malformed engine record",
                                          participant));
  };
  if (bytes.empty()) return malformed();
  PeerRecord record;
  record.state = static_cast<EngineState>(bytes[0]);
  switch (record.state) {
    case EngineState::NotNeeded:
      return record;
    case EngineState::Failed:
      record.failure.assign(reinterpret_cast<const char*>(bytes.data()) + 1, bytes.size() - 1);
      return record;
    case EngineState::Ready: {
      std::uint64_t length = 0;
      if (bytes.size() < 1 + sizeof(length)) return malformed();
      std::memcpy(&length, bytes.data() + 1, sizeof(length));
      const std::size_t begin = 1 + sizeof(length);
      if (length > bytes.size() - begin) return malformed();
      record.address.assign(bytes.begin() + static_cast<std::ptrdiff_t>(begin),
                            bytes.begin() + static_cast<std::ptrdiff_t>(begin + length));
      record.hello_key.assign(bytes.begin() + static_cast<std::ptrdiff_t>(begin + length),
                              bytes.end());
      return record;
    }
  }
  return malformed();
}

}  // namespace weft::proxy
