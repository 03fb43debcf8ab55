// The communicators and threads the shim knows, looked up by the handle NCCL's API passes or
// by the calling thread. One mutex guards both maps and is never held across a call into NCCL.
#include "shim.h"
#include "shim_records.h"

namespace weft::plugin {

Shim::ThreadState& Shim::thread_state() {
  std::lock_guard lock(mutex_);
  auto& state = threads_[std::this_thread::get_id()];
  if (!state) state = std::make_unique<ThreadState>();
  return *state;  // stable: the map holds it by pointer and only its own thread uses it
}

std::shared_ptr<Shim::CommRecord> Shim::find(ncclComm_t comm) const {
  std::lock_guard lock(mutex_);
  const auto it = comms_.find(comm);
  return it == comms_.end() ? nullptr : it->second;
}

void Shim::insert(std::shared_ptr<CommRecord> record) {
  std::lock_guard lock(mutex_);
  comms_[record->handle] = std::move(record);
}

std::shared_ptr<Shim::CommRecord> Shim::erase(ncclComm_t comm) {
  std::lock_guard lock(mutex_);
  const auto it = comms_.find(comm);
  if (it == comms_.end()) return nullptr;
  auto record = std::move(it->second);
  comms_.erase(it);
  return record;
}

}  // namespace weft::plugin
