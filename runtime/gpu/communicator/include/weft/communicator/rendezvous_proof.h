// Private to the GPU runtime: how the two ends of a socket rendezvous connection prove that they
// hold the job's secret without showing it (bootstrap_socket.cpp). Each side sends a fresh
// random nonce; each proof is an HMAC-SHA256, keyed with the secret, over a label that names who
// proves (so that one side's proof cannot be reflected back as the other's), both nonces, the
// rank and the participant count. A proof is good for one connection only, and nothing a side
// receives before the other has proven itself is derived from the secret. The MAC is OpenSSL's
// (libcrypto), not written here.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "weft/communicator/bootstrap.h"
#include "weft/program/status.h"

namespace weft::gpu::detail {

inline constexpr std::size_t kNonceBytes = 16;
inline constexpr std::size_t kProofBytes = 32;  // HMAC-SHA256
using Nonce = std::array<std::uint8_t, kNonceBytes>;
using Proof = std::array<std::uint8_t, kProofBytes>;

// `bytes` filled from the operating system's random source (getrandom).
Status fill_random(std::span<std::uint8_t> bytes);
// 128 bits from it.
Result<Nonce> make_nonce();

enum class Prover : std::uint8_t { Peer, Root };

// The proof `prover` sends on the connection whose nonces are `root_nonce` (rank 0's) and
// `peer_nonce`, for participant `rank` of `size`; nothing when libcrypto fails (then the
// connection fails too: a side never sends or accepts a proof it could not compute).
std::optional<Proof> prove(const RendezvousSecret& secret, Prover prover, const Nonce& root_nonce,
                           const Nonce& peer_nonce, std::int32_t rank, std::int32_t size);

// Compares in constant time (CRYPTO_memcmp): the time taken says nothing about a guess.
bool same_proof(const Proof& a, const Proof& b);

}  // namespace weft::gpu::detail
