// Standalone mode: the shim serves communicators and collectives itself, meeting its peers
// through Weft's socket rendezvous, and refuses what it cannot run. Two Shim objects stand for
// two processes (they share nothing), each on its own thread.
#include <thread>

#include <catch2/catch.hpp>

#include "shim_test_support.h"
#include "weft/plugin/standalone_id.h"

namespace {

using namespace weft::plugin;
using namespace weft::plugin::testing;

alignas(64) char send_buffer[4096];
alignas(64) char recv_buffer[4096];
cudaStream_t const kStream = reinterpret_cast<cudaStream_t>(0x7000);

ShimConfig standalone_config() {
  ShimConfig config;
  config.standalone = true;
  config.xml_files = {data_xml("pair_allreduce.xml")};  // 2 ranks, 2 chunks, out-of-place
  return config;
}

// Both ranks initialise at once, as two processes would; returns their communicators.
std::pair<ncclComm_t, ncclComm_t> init_pair(ShimUnderTest& a, ShimUnderTest& b) {
  ncclUniqueId id;
  REQUIRE(a.shim->get_unique_id(&id) == ncclSuccess);
  ncclComm_t comm_a = nullptr;
  ncclComm_t comm_b = nullptr;
  ncclResult_t result_b = ncclInternalError;
  std::thread peer([&] { result_b = b.shim->comm_init_rank(&comm_b, 2, id, 1, nullptr, false); });
  const ncclResult_t result_a = a.shim->comm_init_rank(&comm_a, 2, id, 0, nullptr, false);
  peer.join();
  INFO(a.all_log() << b.all_log());
  REQUIRE(result_a == ncclSuccess);
  REQUIRE(result_b == ncclSuccess);
  return {comm_a, comm_b};
}

}  // namespace

TEST_CASE("standalone: two ranks meet through the unique id and run collectives on Weft") {
  ShimUnderTest a(standalone_config());
  ShimUnderTest b(standalone_config());
  auto [comm_a, comm_b] = init_pair(a, b);
  // By default a local socket, which only this user's processes can reach.
  CHECK(a.logged("ncclGetUniqueId: standalone rendezvous at unix:weft-"));

  int count = 0, rank = -1, device = -1;
  CHECK(b.shim->comm_count(comm_b, &count) == ncclSuccess);
  CHECK(b.shim->comm_user_rank(comm_b, &rank) == ncclSuccess);
  CHECK(b.shim->comm_cu_device(comm_b, &device) == ncclSuccess);
  CHECK(count == 2);
  CHECK(rank == 1);
  CHECK(device == 0);

  CHECK(all_reduce(*a.shim, send_buffer, recv_buffer, 32, ncclFloat, ncclSum, comm_a, kStream) ==
        ncclSuccess);
  CHECK(a.backend->count_starting("run handle 100 rank 0 allreduce count 32") == 1);
  CHECK(a.logged("-> Weft 'pair_allreduce'"));

  // Groups work the same way, without NCCL underneath.
  REQUIRE(b.shim->group_start() == ncclSuccess);
  REQUIRE(all_reduce(*b.shim, send_buffer, recv_buffer, 32, ncclFloat, ncclSum, comm_b, kStream) ==
          ncclSuccess);
  REQUIRE(b.shim->group_end() == ncclSuccess);
  CHECK(b.backend->count_starting("run handle 100 rank 1") == 1);

  CHECK(a.shim->comm_destroy(comm_a) == ncclSuccess);
  CHECK(b.shim->comm_destroy(comm_b) == ncclSuccess);
  CHECK(a.backend->count_starting("destroy rank 0") == 1);
}

TEST_CASE("standalone: calls it cannot serve are errors with a message, never forwarded") {
  ShimUnderTest a(standalone_config());
  ShimUnderTest b(standalone_config());
  auto [comm_a, comm_b] = init_pair(a, b);

  // Not divisible into the algorithm's 2 chunks.
  CHECK(all_reduce(*a.shim, send_buffer, recv_buffer, 33, ncclFloat, ncclSum, comm_a, kStream) ==
        ncclInvalidUsage);
  CHECK(std::string(a.shim->get_last_error(comm_a)).find("no NCCL to fall back to") !=
        std::string::npos);
  CHECK(a.shim->forward_operation("ncclSend", &NcclFunctions::Send,
                                  static_cast<const void*>(send_buffer), std::size_t{4}, ncclFloat,
                                  1, comm_a, kStream) == ncclInvalidUsage);
  CHECK(
      std::string(a.shim->get_last_error(comm_a)).find("ncclSend is not available in standalone") !=
      std::string::npos);
  CHECK(a.shim->comm_split(comm_a, 0, 0, &comm_a, nullptr) == ncclInvalidUsage);

  // A group with one call that cannot run fails whole; nothing of it runs.
  REQUIRE(a.shim->group_start() == ncclSuccess);
  REQUIRE(all_reduce(*a.shim, send_buffer, recv_buffer, 32, ncclFloat, ncclSum, comm_a, kStream) ==
          ncclSuccess);
  REQUIRE(all_gather(*a.shim, send_buffer, recv_buffer, 32, ncclFloat, comm_a, kStream) ==
          ncclSuccess);
  CHECK(a.shim->group_end() == ncclInvalidUsage);
  CHECK(a.backend->count_starting("run") == 0);

  // A refused call inside a group fails the group: what it held is dropped, and a collective
  // after it is refused naming the failure (the application may never end the group: PyTorch
  // throws out of it), never held back in silence; ncclGroupEnd then says so and clears it.
  REQUIRE(a.shim->group_start() == ncclSuccess);
  REQUIRE(all_reduce(*a.shim, send_buffer, recv_buffer, 32, ncclFloat, ncclSum, comm_a, kStream) ==
          ncclSuccess);
  CHECK(a.shim->forward_operation("ncclSend", &NcclFunctions::Send,
                                  static_cast<const void*>(send_buffer), std::size_t{4}, ncclFloat,
                                  1, comm_a, kStream) == ncclInvalidUsage);
  CHECK(all_reduce(*a.shim, send_buffer, recv_buffer, 32, ncclFloat, ncclSum, comm_a, kStream) ==
        ncclInvalidUsage);
  CHECK(std::string(a.shim->get_last_error(comm_a)).find("the open group already failed") !=
        std::string::npos);
  CHECK(a.shim->group_end() == ncclInvalidUsage);
  CHECK(std::string(a.shim->get_last_error(comm_a)).find("none of it ran: ncclSend") !=
        std::string::npos);
  CHECK(a.backend->count_starting("run") == 0);
  // The group is over: calls run again.
  CHECK(all_reduce(*a.shim, send_buffer, recv_buffer, 32, ncclFloat, ncclSum, comm_a, kStream) ==
        ncclSuccess);
  CHECK(a.backend->count_starting("run") == 1);

  int version = 0;
  CHECK(a.shim->get_version(&version) == ncclSuccess);
  CHECK(version == NCCL_VERSION_CODE);
  CHECK(std::string(a.shim->get_error_string(ncclInvalidUsage)).find("invalid usage") !=
        std::string::npos);
  CHECK(b.shim->comm_destroy(comm_b) == ncclSuccess);
}

TEST_CASE("standalone: an algorithm that fails to load on one rank is dropped on every rank") {
  ShimUnderTest a(standalone_config());
  ShimUnderTest b(standalone_config());
  b.backend->fail_load = "pair_allreduce";
  auto [comm_a, comm_b] = init_pair(a, b);
  CHECK(all_reduce(*a.shim, send_buffer, recv_buffer, 32, ncclFloat, ncclSum, comm_a, kStream) ==
        ncclInvalidUsage);
  CHECK(a.backend->count_starting("run") == 0);
  CHECK(a.logged("every collective on it will fail"));
}

TEST_CASE("standalone: an id that was not made in standalone mode is refused") {
  ShimUnderTest a(standalone_config());
  ncclUniqueId id;
  std::memset(&id, 0x5a, sizeof(id));
  ncclComm_t comm = nullptr;
  CHECK(a.shim->comm_init_rank(&comm, 2, id, 0, nullptr, false) == ncclInvalidArgument);
  CHECK(std::string(a.shim->get_last_error(nullptr)).find("not made by ncclGetUniqueId") !=
        std::string::npos);
  CHECK(comm == nullptr);
}

TEST_CASE("standalone: WEFT_STANDALONE_ADDR fixes the rendezvous address") {
  ShimConfig config = standalone_config();
  config.standalone_address = "127.0.0.1:29500";
  ShimUnderTest a(config);
  ncclUniqueId id;
  REQUIRE(a.shim->get_unique_id(&id) == ncclSuccess);
  UniqueIdBytes bytes;
  std::memcpy(bytes.data(), &id, bytes.size());
  const auto decoded = decode_standalone_id(bytes);
  REQUIRE(decoded.has_value());
  CHECK(decoded->address == "127.0.0.1:29500");
  // A TCP rendezvous is the user's choice, and the log says what it gives up.
  CHECK(a.logged("WEFT_STANDALONE_ADDR=127.0.0.1:29500 is a TCP rendezvous"));
}

TEST_CASE("standalone: port 0 is refused when the id is made: the ranks could not find rank 0") {
  ShimConfig config = standalone_config();
  config.standalone_address = "127.0.0.1:0";
  ShimUnderTest a(config);
  ncclUniqueId id;
  CHECK(a.shim->get_unique_id(&id) == ncclInvalidArgument);
  CHECK(std::string(a.shim->get_last_error(nullptr)).find("port 0 cannot go into an id") !=
        std::string::npos);
}

TEST_CASE("standalone: an id serves one communicator; a rank joining again with it is refused") {
  ShimUnderTest a(standalone_config());
  ShimUnderTest b(standalone_config());
  ncclUniqueId id;
  REQUIRE(a.shim->get_unique_id(&id) == ncclSuccess);
  ncclComm_t comm_a = nullptr;
  ncclComm_t comm_b = nullptr;
  std::thread peer([&] { (void)b.shim->comm_init_rank(&comm_b, 2, id, 1, nullptr, false); });
  REQUIRE(a.shim->comm_init_rank(&comm_a, 2, id, 0, nullptr, false) == ncclSuccess);
  peer.join();
  REQUIRE(comm_b != nullptr);
  // The same id again, as rank 0 of a second communicator: refused at once, nothing listens.
  ncclComm_t again = nullptr;
  CHECK(a.shim->comm_init_rank(&again, 2, id, 0, nullptr, false) == ncclInvalidUsage);
  CHECK(std::string(a.shim->get_last_error(nullptr)).find("an id serves one communicator") !=
        std::string::npos);
  CHECK(again == nullptr);
  CHECK(a.shim->comm_destroy(comm_a) == ncclSuccess);
  CHECK(b.shim->comm_destroy(comm_b) == ncclSuccess);
}

TEST_CASE("standalone: an unparsable WEFT_STANDALONE_ADDR is refused when the id is made") {
  ShimConfig config = standalone_config();
  config.standalone_address = "node7";  // no port
  ShimUnderTest a(config);
  ncclUniqueId id;
  CHECK(a.shim->get_unique_id(&id) == ncclInvalidArgument);
  CHECK(std::string(a.shim->get_last_error(nullptr)).find("WEFT_STANDALONE_ADDR") !=
        std::string::npos);
}

TEST_CASE("standalone: an absurd rank count is refused before anything is allocated for it") {
  ShimUnderTest a(standalone_config());
  ncclUniqueId id;
  REQUIRE(a.shim->get_unique_id(&id) == ncclSuccess);
  ncclComm_t comm = nullptr;
  CHECK(a.shim->comm_init_rank(&comm, 2147483647, id, 0, nullptr, false) == ncclInvalidArgument);
  CHECK(std::string(a.shim->get_last_error(nullptr))
            .find("2147483647 ranks, more than the 4096 a standalone rendezvous takes") !=
        std::string::npos);
  CHECK(comm == nullptr);
}
