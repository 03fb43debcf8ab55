#include "weft/communicator/rendezvous_proof.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace weft::gpu::detail {

Status fill_random(std::span<std::uint8_t> bytes) {
  std::size_t filled = 0;
  while (filled < bytes.size()) {
    const ssize_t got = ::getrandom(bytes.data() + filled, bytes.size() - filled, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return Status::error(ErrorCode::SystemError,
                           fmt::format("getrandom: {}", std::strerror(errno)));
    }
    filled += static_cast<std::size_t>(got);
  }
  return {};
}

Result<Nonce> make_nonce() {
  Nonce nonce{};
  if (auto s = fill_random(nonce); !s.ok()) return s;
  return nonce;
}

namespace {

void append(std::vector<unsigned char>& message, const void* data, std::size_t bytes) {
  const auto* first = static_cast<const unsigned char*>(data);
  message.insert(message.end(), first, first + bytes);
}

void append_int(std::vector<unsigned char>& message, std::int32_t value) {
  // Little-endian whatever the host: both ends compute the same bytes.
  const auto bits = static_cast<std::uint32_t>(value);
  for (int shift = 0; shift < 32; shift += 8) {
    message.push_back(static_cast<unsigned char>((bits >> shift) & 0xffu));
  }
}

}  // namespace

std::optional<Proof> prove(const RendezvousSecret& secret, Prover prover, const Nonce& root_nonce,
                           const Nonce& peer_nonce, std::int32_t rank, std::int32_t size) {
  // The label is of fixed length and names the prover, so the two proofs of one connection are
  // MACs of different messages.
  const std::string_view label =
      prover == Prover::Root ? "weft rendezvous v3 root" : "weft rendezvous v3 peer";
  std::vector<unsigned char> message;
  message.reserve(label.size() + 2 * kNonceBytes + 8);
  append(message, label.data(), label.size());
  append(message, root_nonce.data(), root_nonce.size());
  append(message, peer_nonce.data(), peer_nonce.size());
  append_int(message, rank);
  append_int(message, size);
  Proof proof{};
  unsigned int length = 0;
  const unsigned char* made = ::HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
                                     message.data(), message.size(), proof.data(), &length);
  if (made == nullptr || length != proof.size()) return std::nullopt;  // libcrypto failed
  return proof;
}

bool same_proof(const Proof& a, const Proof& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace weft::gpu::detail
