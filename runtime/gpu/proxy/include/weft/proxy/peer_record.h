// What a participant tells the others when the proxies connect (Proxy::start): whether its
// network engine started, and then the engine's address and the key of its hello words (where
// each peer's proving put lands), or why it did not start. Exchanged over the rendezvous.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weft/program/status.h"

namespace weft::proxy {

enum class EngineState : std::uint8_t { Failed = 0, Ready = 1, NotNeeded = 2 };

struct PeerRecord {
  EngineState state = EngineState::NotNeeded;
  std::vector<std::byte> address;    // Ready: the engine's address
  std::vector<std::byte> hello_key;  // Ready: its hello words' key
  std::string failure;               // Failed: why
};

std::vector<std::byte> encode_peer_record(const PeerRecord& record);
// Fails, naming the participant, on a record that is cut short or of an unknown state.
gpu::Result<PeerRecord> decode_peer_record(std::span<const std::byte> bytes, int participant);

}  // namespace weft::proxy
