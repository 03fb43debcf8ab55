// libFuzzer target: what the standalone rendezvous decodes from others. Each input is
//  - written by a "client" into one end of a local socket pair whose other end rank 0 admits
//    (detail::admit: the peer-user check, rank 0's nonce, the hello and its proof);
//  - written by a "rank 0" into a socket pair whose other end a participant introduces itself
//    on (detail::introduce: rank 0's nonce, then rank 0's proof);
//  - read as a 128-byte unique id (decode_standalone_id) and as an address
//    (parse_socket_address), whose results must survive encoding and reading again.
// The job's secret is drawn per process, so no input can be admitted: one that is aborts.
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "weft/communicator/bootstrap.h"
#include "weft/communicator/socket.h"
#include "weft/plugin/standalone_id.h"

namespace {

using weft::gpu::detail::Socket;

const weft::gpu::RendezvousSecret& job_secret() {
  static const weft::gpu::RendezvousSecret secret = [] {
    auto made = weft::gpu::make_rendezvous_secret();
    if (!made.ok()) std::abort();
    return made.value();
  }();
  return secret;
}

void admit_from(const std::uint8_t* data, std::size_t size) {
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, ends) != 0) return;
  Socket root(ends[0]);
  Socket client(ends[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
  // The client's bytes are in the socket before rank 0 reads; then it stops sending.
  (void)client.send_all(std::as_bytes(std::span(data, size)), deadline, "fuzz client");
  ::shutdown(client.fd(), SHUT_WR);
  weft::gpu::SocketBootstrapOptions options;
  options.size = 4;
  options.secret = job_secret();
  options.root.local_name = "weft-fuzz";  // a local socket: the peer-user check runs too
  options.hello_timeout = std::chrono::milliseconds(20);
  const weft::gpu::detail::Admission admission =
      weft::gpu::detail::admit(std::move(root), options, deadline);
  if (admission.dropped.empty()) std::abort();  // admitted without the secret
}

void introduce_from(const std::uint8_t* data, std::size_t size) {
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, ends) != 0) return;
  Socket root(ends[0]);
  Socket peer(ends[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
  (void)root.send_all(std::as_bytes(std::span(data, size)), deadline, "fuzz rank 0");
  ::shutdown(root.fd(), SHUT_WR);
  weft::gpu::SocketBootstrapOptions options;
  options.rank = 1;
  options.size = 4;
  options.secret = job_secret();
  options.root.local_name = "weft-fuzz";
  bool retry = false;
  // Rank 0's proof is over the participant's fresh nonce: no input can be it.
  if (weft::gpu::detail::introduce(peer, options, deadline, &retry).ok()) std::abort();
}

void decode_from(const std::uint8_t* data, std::size_t size) {
  weft::plugin::UniqueIdBytes id{};
  std::memcpy(id.data(), data, std::min(size, id.size()));
  if (const auto decoded = weft::plugin::decode_standalone_id(id)) {
    const auto again = weft::plugin::encode_standalone_id(*decoded);
    if (!again || weft::plugin::decode_standalone_id(*again) != decoded) std::abort();
  }
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto address = weft::gpu::parse_socket_address(text);
  if (address.ok()) {
    const auto again = weft::gpu::parse_socket_address(weft::gpu::to_string(address.value()));
    if (!again.ok() || again.value().host != address.value().host ||
        again.value().port != address.value().port ||
        again.value().local_name != address.value().local_name) {
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 4096) return 0;
  admit_from(data, size);
  introduce_from(data, size);
  decode_from(data, size);
  return 0;
}
