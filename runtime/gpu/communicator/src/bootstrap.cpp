#include <vector>

#include "weft/communicator/bootstrap.h"

namespace weft::gpu {

Status Bootstrap::barrier() {
  std::vector<std::byte> records(static_cast<std::size_t>(size()));
  return allgather(records, 1);
}

namespace {
class SingleParticipant final : public Bootstrap {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  Status allgather(std::span<std::byte> data, std::size_t bytes_per_rank) override {
    if (data.size() != bytes_per_rank) {
      return Status::error(ErrorCode::InvalidArgument, "allgather: buffer size is not 1 × record");
    }
    return {};
  }
};
}  // namespace

std::unique_ptr<Bootstrap> make_single_participant_bootstrap() {
  return std::make_unique<SingleParticipant>();
}

}  // namespace weft::gpu
