// What a participant of the CUDA transports believes of the records the others send: forged or
// inconsistent records are an init error naming the participant, never an address mapped.
#include <catch2/catch.hpp>

#include <vector>

#include "weft/communicator/transport_records.h"

namespace weft::gpu {
namespace {

// Two participants of one host: participant 0 drives ranks 0 and 1, participant 1 rank 2.
std::vector<ParticipantRecord> two_participants() {
  std::vector<ParticipantRecord> records(2);
  for (std::size_t p = 0; p < records.size(); ++p) {
    records[p].nranks = 3;
    records[p].host = 42;
    records[p].process = process_token();
    records[p].process[0] = static_cast<std::uint8_t>(p);  // two processes
  }
  records[0].local_count = 2;
  records[0].ranks[0] = 0;
  records[0].ranks[1] = 1;
  records[1].local_count = 1;
  records[1].ranks[0] = 2;
  return records;
}

std::vector<WindowRecord> windows_for(const std::vector<ParticipantRecord>& participants) {
  std::vector<WindowRecord> all(participants.size());
  for (std::size_t p = 0; p < participants.size(); ++p) {
    all[p].fingerprint = 7;
    all[p].count = participants[p].local_count;
    for (int k = 0; k < participants[p].local_count; ++k) {
      all[p].entries[k].rank = participants[p].ranks[k];
    }
  }
  return all;
}

TEST_CASE("transport records: consistent records are accepted and name each rank's owner",
          "[transport]") {
  const auto records = two_participants();
  std::vector<int> owner;
  REQUIRE(check_participants(records, 3, 0, false, "cuda-ipc", owner).ok());
  CHECK(owner == std::vector<int>{0, 0, 1});
  CHECK(check_window_records(windows_for(records), records, owner, 3, 0, 7).ok());
}

TEST_CASE("transport records: forged participant records are refused", "[transport]") {
  std::vector<int> owner;
  auto records = two_participants();
  records[1].ranks[0] = 1;  // claims participant 0's rank
  CHECK_THAT(check_participants(records, 3, 0, false, "cuda-ipc", owner).message,
             Catch::Contains("rank 1 is claimed twice"));
  records = two_participants();
  records[1].local_count = 1000;
  CHECK_THAT(check_participants(records, 3, 0, false, "cuda-ipc", owner).message,
             Catch::Contains("participant 1 claims 1000 ranks"));
  records = two_participants();
  records[1].nranks = 4;
  CHECK(check_participants(records, 3, 0, false, "cuda-ipc", owner).code == ErrorCode::Mismatch);
  records = two_participants();
  records[1].magic = 0;
  CHECK_THAT(check_participants(records, 3, 0, false, "cuda-ipc", owner).message,
             Catch::Contains("participant 1 sent a malformed record"));
  records = two_participants();
  records[1].local_count = 0;  // nobody drives rank 2
  CHECK_THAT(check_participants(records, 3, 0, false, "cuda-ipc", owner).message,
             Catch::Contains("no participant drives rank 2"));
  records = two_participants();
  records[1].host = 43;
  CHECK_THAT(check_participants(records, 3, 0, false, "cuda-ipc", owner).message,
             Catch::Contains("runs on another host"));
}

TEST_CASE("transport records: one process is one random value, not one pid", "[transport]") {
  std::vector<int> owner;
  auto records = two_participants();
  // Same pid (separate PID namespaces), different processes: not in-process.
  records[0].pid = records[1].pid = 1;
  CHECK_THAT(check_participants(records, 3, 0, true, "in-process", owner).message,
             Catch::Contains("participant 1 is another process"));
  records[1].process = records[0].process;
  CHECK(check_participants(records, 3, 0, true, "in-process", owner).ok());
  // The value is drawn once per process.
  CHECK(process_token() == process_token());
  CHECK(process_token() != ProcessToken{});
}

TEST_CASE("transport records: forged window records are refused", "[transport]") {
  const auto records = two_participants();
  std::vector<int> owner;
  REQUIRE(check_participants(records, 3, 0, false, "cuda-ipc", owner).ok());
  auto all = windows_for(records);
  all[1].entries[0].rank = 0;  // memory offered for participant 0's rank
  CHECK_THAT(check_window_records(all, records, owner, 3, 0, 7).message,
             Catch::Contains("participant 1 sent a window entry for rank 0, which it does not "
                             "drive"));
  all = windows_for(records);
  all[1].count = 2;  // one more entry than ranks driven
  CHECK_THAT(check_window_records(all, records, owner, 3, 0, 7).message,
             Catch::Contains("participant 1 sent 2 window entries for the 1 ranks it drives"));
  all = windows_for(records);
  all[0].entries[1].rank = 0;  // the same rank twice
  CHECK_FALSE(check_window_records(all, records, owner, 3, 0, 7).ok());
  all = windows_for(records);
  all[1].fingerprint = 8;
  CHECK(check_window_records(all, records, owner, 3, 0, 7).code == ErrorCode::Mismatch);
  all = windows_for(records);
  all[1].count = -1;
  CHECK_THAT(check_window_records(all, records, owner, 3, 0, 7).message,
             Catch::Contains("participant 1 failed to allocate its window"));
}

}  // namespace
}  // namespace weft::gpu
