// Which calls the shim runs on Weft, beside a (recording) NCCL communicator, and the group rule.
#include <catch2/catch.hpp>

#include "shim_test_support.h"

namespace {

using namespace weft::plugin;
using namespace weft::plugin::testing;

alignas(64) char send_buffer[4096];
alignas(64) char recv_buffer[4096];
cudaStream_t const kStream = reinterpret_cast<cudaStream_t>(0x6000);

// ring_allreduce_4r.xml: 4 ranks, 4 chunks, out-of-place only.
ShimConfig ring4_config() {
  ShimConfig config;
  config.xml_files = {data_xml("ring_allreduce_4r.xml")};
  return config;
}

ncclComm_t init_rank(Shim& shim, int nranks, int rank) {
  ncclUniqueId id{};
  ncclComm_t comm = nullptr;
  REQUIRE(shim.comm_init_rank(&comm, nranks, id, rank, nullptr, false) == ncclSuccess);
  return comm;
}

}  // namespace

TEST_CASE("routing: a communicator gets a Weft side with the algorithms for its size") {
  RecordingNccl nccl;
  ShimUnderTest t(ring4_config());
  REQUIRE(t.shim->catalog().entries.size() == 1);
  init_rank(*t.shim, 4, 1);
  CHECK(t.backend->snapshot() == std::vector<std::string>{"nccl bootstrap rank 1/4",
                                                          "create rank 1/4 device 0",
                                                          "load ring_allreduce_4 rank 1"});
  CHECK(t.logged("algorithm 'ring_allreduce_4'"));
  // A communicator of another size gets none.
  init_rank(*t.shim, 2, 0);
  CHECK(t.backend->count_starting("create") == 1);
}

TEST_CASE("routing: matching calls run on Weft, the others go to NCCL unchanged") {
  RecordingNccl nccl;
  ShimUnderTest t(ring4_config());
  ncclComm_t comm = init_rank(*t.shim, 4, 1);
  nccl.clear();

  CHECK(all_reduce(*t.shim, send_buffer, recv_buffer, 64, ncclFloat, ncclSum, comm, kStream) ==
        ncclSuccess);
  CHECK(t.backend->count_starting("run handle 100 rank 1 allreduce count 64") == 1);
  CHECK(nccl.lines().empty());
  CHECK(
      t.logged("ncclAllReduce: allreduce of 64 × float (sum, out-of-place) on 4 ranks -> Weft "
               "'ring_allreduce_4'"));

  // 66 is not divisible into 4 chunks; in-place is not what the algorithm does; avg of ints
  // is not supported: all three go to NCCL.
  CHECK(all_reduce(*t.shim, send_buffer, recv_buffer, 66, ncclFloat, ncclSum, comm, kStream) ==
        ncclSuccess);
  CHECK(all_reduce(*t.shim, send_buffer, send_buffer, 64, ncclFloat, ncclSum, comm, kStream) ==
        ncclSuccess);
  CHECK(all_reduce(*t.shim, send_buffer, recv_buffer, 64, ncclInt32, ncclAvg, comm, kStream) ==
        ncclSuccess);
  CHECK(t.backend->count_starting("run") == 1);
  const auto lines = nccl.lines();
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].find("count=66") != std::string::npos);
  CHECK(lines[1].find(fmt::format("send={}, recv={}", hex(send_buffer), hex(send_buffer))) !=
        std::string::npos);
  CHECK(lines[2].find("type=2, op=4") != std::string::npos);
  CHECK(t.logged("-> NCCL: count 66 × 1 is not divisible"));
  CHECK(t.logged("-> NCCL: algorithm 'ring_allreduce_4' is out-of-place only"));
}

TEST_CASE("routing: a group whose collectives all have algorithms runs on Weft at ncclGroupEnd") {
  RecordingNccl nccl;
  ShimUnderTest t(ring4_config());
  ncclComm_t comm = init_rank(*t.shim, 4, 0);
  nccl.clear();
  REQUIRE(t.shim->group_start() == ncclSuccess);
  REQUIRE(all_reduce(*t.shim, send_buffer, recv_buffer, 64, ncclFloat, ncclSum, comm, kStream) ==
          ncclSuccess);
  REQUIRE(all_reduce(*t.shim, send_buffer, recv_buffer, 128, ncclFloat, ncclMin, comm, kStream) ==
          ncclSuccess);
  CHECK(t.backend->count_starting("run") == 0);  // nothing runs before the group ends
  REQUIRE(t.shim->group_end() == ncclSuccess);
  CHECK(t.backend->count_starting("run handle 100 rank 0 allreduce count 64") == 1);
  CHECK(t.backend->count_starting("run handle 100 rank 0 allreduce count 128") == 1);
  CHECK(nccl.lines() == std::vector<std::string>{"GroupStart", "GroupEnd"});
  CHECK(t.logged("ncclGroupEnd: all 2 collectives of the group -> Weft"));
}

TEST_CASE("routing: the runtime plans each call once, inside a group too") {
  RecordingNccl nccl;
  ShimUnderTest t(ring4_config());
  ncclComm_t comm = init_rank(*t.shim, 4, 0);
  REQUIRE(all_reduce(*t.shim, send_buffer, recv_buffer, 64, ncclFloat, ncclSum, comm, kStream) ==
          ncclSuccess);
  CHECK(t.backend->plans == 1);
  REQUIRE(t.shim->group_start() == ncclSuccess);
  REQUIRE(all_reduce(*t.shim, send_buffer, recv_buffer, 64, ncclFloat, ncclSum, comm, kStream) ==
          ncclSuccess);
  REQUIRE(all_reduce(*t.shim, send_buffer, recv_buffer, 128, ncclFloat, ncclMin, comm, kStream) ==
          ncclSuccess);
  REQUIRE(t.shim->group_end() == ncclSuccess);
  CHECK(t.backend->plans == 3);
  // The recording side refuses a plan made for another call, so each ran with its own.
  CHECK(t.backend->count_starting("run handle 100 rank 0 allreduce count 64") == 2);
  CHECK(t.backend->count_starting("run handle 100 rank 0 allreduce count 128") == 1);
}

TEST_CASE("routing: one collective without an algorithm sends the whole group to NCCL") {
  RecordingNccl nccl;
  ShimUnderTest t(ring4_config());
  ncclComm_t comm = init_rank(*t.shim, 4, 0);
  nccl.clear();
  REQUIRE(t.shim->group_start() == ncclSuccess);
  REQUIRE(all_reduce(*t.shim, send_buffer, recv_buffer, 64, ncclFloat, ncclSum, comm, kStream) ==
          ncclSuccess);
  REQUIRE(all_gather(*t.shim, send_buffer, recv_buffer, 16, ncclFloat, comm, kStream) ==
          ncclSuccess);
  REQUIRE(t.shim->group_end() == ncclSuccess);
  CHECK(t.backend->count_starting("run") == 0);
  const auto lines = nccl.lines();
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == "GroupStart");
  CHECK(lines[1].find("AllReduce(") == 0);
  CHECK(lines[1].find("count=64") != std::string::npos);
  CHECK(lines[2].find("AllGather(") == 0);
  CHECK(lines[3] == "GroupEnd");
  CHECK(t.logged("ncclGroupEnd: all 2 collectives of the group -> NCCL: ncclAllGather"));
}

TEST_CASE("routing: a send in the group keeps the group's collectives with NCCL") {
  RecordingNccl nccl;
  ShimUnderTest t(ring4_config());
  ncclComm_t comm = init_rank(*t.shim, 4, 0);
  nccl.clear();
  REQUIRE(t.shim->group_start() == ncclSuccess);
  REQUIRE(t.shim->forward_operation("ncclSend", &NcclFunctions::Send,
                                    static_cast<const void*>(send_buffer), std::size_t{4},
                                    ncclFloat, 1, comm, kStream) == ncclSuccess);
  REQUIRE(all_reduce(*t.shim, send_buffer, recv_buffer, 64, ncclFloat, ncclSum, comm, kStream) ==
          ncclSuccess);
  REQUIRE(t.shim->group_end() == ncclSuccess);
  CHECK(t.backend->count_starting("run") == 0);
  const auto lines = nccl.lines();
  REQUIRE(lines.size() == 4);
  CHECK(lines[1].find("Send(") == 0);
  CHECK(lines[2].find("AllReduce(") == 0);
  CHECK(t.logged("the group contains ncclSend"));
}

TEST_CASE("routing: nested groups decide once, at the outermost ncclGroupEnd") {
  RecordingNccl nccl;
  ShimUnderTest t(ring4_config());
  ncclComm_t comm = init_rank(*t.shim, 4, 0);
  nccl.clear();
  REQUIRE(t.shim->group_start() == ncclSuccess);
  REQUIRE(t.shim->group_start() == ncclSuccess);
  REQUIRE(all_reduce(*t.shim, send_buffer, recv_buffer, 64, ncclFloat, ncclSum, comm, kStream) ==
          ncclSuccess);
  REQUIRE(t.shim->group_end() == ncclSuccess);
  CHECK(t.backend->count_starting("run") == 0);
  REQUIRE(all_reduce(*t.shim, send_buffer, recv_buffer, 66, ncclFloat, ncclSum, comm, kStream) ==
          ncclSuccess);
  REQUIRE(t.shim->group_end() == ncclSuccess);
  CHECK(t.backend->count_starting("run") == 0);
  CHECK(nccl.lines().size() == 6);  // 2 starts, 2 replays, 2 ends
}

TEST_CASE("routing: communicators created inside a group get their Weft side at its end") {
  RecordingNccl nccl;
  ShimUnderTest t(ring4_config());
  ncclUniqueId id{};
  ncclComm_t comms[2] = {nullptr, nullptr};
  REQUIRE(t.shim->group_start() == ncclSuccess);
  REQUIRE(t.shim->comm_init_rank(&comms[0], 4, id, 0, nullptr, false) == ncclSuccess);
  REQUIRE(t.shim->comm_init_rank(&comms[1], 4, id, 1, nullptr, false) == ncclSuccess);
  CHECK(t.backend->count_starting("create") == 0);
  REQUIRE(t.shim->group_end() == ncclSuccess);
  CHECK(t.backend->count_starting("create rank 0/4") == 1);
  CHECK(t.backend->count_starting("create rank 1/4") == 1);
  CHECK(all_reduce(*t.shim, send_buffer, recv_buffer, 64, ncclFloat, ncclSum, comms[1], kStream) ==
        ncclSuccess);
  CHECK(t.backend->count_starting("run handle 100 rank 1") == 1);
}

TEST_CASE("routing: ncclCommInitAll gives every communicator its Weft side") {
  RecordingNccl nccl;
  ShimUnderTest t(ring4_config());
  ncclComm_t comms[4] = {};
  REQUIRE(t.shim->comm_init_all(comms, 4, nullptr) == ncclSuccess);
  for (int r = 0; r < 4; ++r) {
    CHECK(t.backend->count_starting(fmt::format("create rank {}/4 device {}", r, r)) == 1);
  }
}

TEST_CASE("routing: an algorithm that fails to load is not used") {
  RecordingNccl nccl;
  ShimUnderTest t(ring4_config());
  t.backend->fail_load = "ring_allreduce_4";
  ncclComm_t comm = init_rank(*t.shim, 4, 0);
  CHECK(t.logged("not loaded: CUDA error: out of memory (test)"));
  nccl.clear();
  CHECK(all_reduce(*t.shim, send_buffer, recv_buffer, 64, ncclFloat, ncclSum, comm, kStream) ==
        ncclSuccess);
  CHECK(t.backend->count_starting("run") == 0);
  CHECK(nccl.lines().size() == 1);
}

TEST_CASE("routing: a call the runtime would refuse goes to NCCL with the runtime's reason") {
  RecordingNccl nccl;
  ShimUnderTest t(ring4_config());
  t.backend->refuse_count_from = 128;
  ncclComm_t comm = init_rank(*t.shim, 4, 2);
  nccl.clear();
  CHECK(all_reduce(*t.shim, send_buffer, recv_buffer, 64, ncclFloat, ncclSum, comm, kStream) ==
        ncclSuccess);
  CHECK(all_reduce(*t.shim, send_buffer, recv_buffer, 128, ncclFloat, ncclSum, comm, kStream) ==
        ncclSuccess);
  CHECK(t.backend->count_starting("run handle 100 rank 2 allreduce count 64") == 1);
  CHECK(t.backend->count_starting("run") == 1);
  const auto lines = nccl.lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("count=128") != std::string::npos);
  CHECK(t.logged("-> NCCL: handle 100: the call's plan does not fit (test)"));
}
