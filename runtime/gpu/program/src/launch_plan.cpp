#include "weft/program/launch_plan.h"

#include <cstring>

#include <fmt/format.h>

#include "weft/ir/ir.h"

namespace weft::gpu {

namespace {

constexpr std::size_t kAlignment = 256;

std::size_t align_up(std::size_t value) {
  return (value + kAlignment - 1) / kAlignment * kAlignment;
}

template <class T>
T* at(std::uintptr_t base, std::size_t offset) {
  return reinterpret_cast<T*>(base + offset);
}

bool sends_any(const RankProgram& program, const DeviceThreadblock& tb) {
  for (int f = 0; f < tb.step_count; ++f) {
    if (ir::sends(static_cast<ir::StepType>(
            program.steps[static_cast<std::size_t>(tb.first_step + f)].type))) {
      return true;
    }
  }
  return false;
}

bool receives_any(const RankProgram& program, const DeviceThreadblock& tb) {
  for (int f = 0; f < tb.step_count; ++f) {
    if (ir::receives(static_cast<ir::StepType>(
            program.steps[static_cast<std::size_t>(tb.first_step + f)].type))) {
      return true;
    }
  }
  return false;
}

const ProxiedSend* find_proxied_send(const LocalRankMemory& memory, int channel, int receiver) {
  for (const ProxiedSend& p : memory.proxied_sends) {
    if (p.channel == channel && p.receiver == receiver) return &p;
  }
  return nullptr;
}

const ProxiedReceive* find_proxied_receive(const LocalRankMemory& memory, int channel, int sender) {
  for (const ProxiedReceive& p : memory.proxied_receives) {
    if (p.channel == channel && p.sender == sender) return &p;
  }
  return nullptr;
}

}  // namespace

PrivateLayout layout_private(const RankProgram& program, int nranks) {
  PrivateLayout layout;
  std::size_t offset = 0;
  layout.regions_offset = offset;
  offset = align_up(offset + static_cast<std::size_t>(std::max(nranks, 0)) * sizeof(char*));
  layout.steps_offset = offset;
  offset = align_up(offset + program.steps.size() * sizeof(DeviceStep));
  layout.dependencies_offset = offset;
  offset = align_up(offset + program.dependencies.size() * sizeof(DeviceDependency));
  layout.sources_offset = offset;
  offset = align_up(offset + program.sources.size() * sizeof(DeviceSource));
  layout.flags_offset = offset;
  offset = align_up(offset +
                    program.threadblocks.size() * device::kFlagStrideWords * sizeof(std::uint64_t));
  layout.states_offset = offset;
  offset = align_up(offset + program.threadblocks.size() * sizeof(device::ThreadblockState));
  layout.total_bytes = std::max(offset, kAlignment);
  return layout;
}

std::vector<std::byte> pack_private(const RankProgram& program, const PrivateLayout& layout,
                                    std::span<const std::uintptr_t> regions) {
  std::vector<std::byte> bytes(layout.total_bytes, std::byte{0});
  auto copy = [&](std::size_t offset, const auto& items) {
    if (!items.empty()) {
      std::memcpy(bytes.data() + offset, items.data(), items.size() * sizeof(items[0]));
    }
  };
  copy(layout.regions_offset, regions);
  copy(layout.steps_offset, program.steps);
  copy(layout.dependencies_offset, program.dependencies);
  copy(layout.sources_offset, program.sources);
  return bytes;
}

Result<std::vector<device::CtaDescriptor>> build_cta_descriptors(
    std::span<const LocalRankMemory> ranks, std::span<const RegionLayout> layouts) {
  std::vector<device::CtaDescriptor> ctas;
  for (std::size_t local = 0; local < ranks.size(); ++local) {
    const LocalRankMemory& memory = ranks[local];
    const RankProgram& program = *memory.program;
    const int rank = memory.rank;
    if (rank < 0 || static_cast<std::size_t>(rank) >= layouts.size() ||
        memory.regions.size() != layouts.size()) {
      return Status::error(ErrorCode::InternalError,
                           fmt::format("launch plan: rank {} has no layout or regions", rank));
    }
    const RegionLayout& own = layouts[static_cast<std::size_t>(rank)];
    const std::uintptr_t own_region = memory.regions[static_cast<std::size_t>(rank)];
    const PrivateLayout priv = layout_private(program, static_cast<int>(layouts.size()));
    for (const DeviceThreadblock& tb : program.threadblocks) {
      if (tb.step_count == 0) continue;
      device::CtaDescriptor d;
      d.rank = rank;
      d.local_index = static_cast<std::int32_t>(local);
      d.threadblock = tb.id;
      d.step_count = tb.step_count;
      d.send_peer = tb.send_peer;
      d.recv_peer = tb.recv_peer;
      d.channel = tb.channel;
      d.nranks = static_cast<std::int32_t>(layouts.size());
      d.peer_regions = at<char* const>(memory.private_base, priv.regions_offset);
      d.steps = at<const DeviceStep>(
          memory.private_base,
          priv.steps_offset + static_cast<std::size_t>(tb.first_step) * sizeof(DeviceStep));
      d.dependencies = at<const DeviceDependency>(memory.private_base, priv.dependencies_offset);
      d.sources = at<const DeviceSource>(memory.private_base, priv.sources_offset);
      d.flags = at<std::uint64_t>(memory.private_base, priv.flags_offset);
      d.state = at<device::ThreadblockState>(
          memory.private_base,
          priv.states_offset + static_cast<std::size_t>(tb.id) * sizeof(device::ThreadblockState));

      const std::string where = ir::element_path(rank, tb.id);
      if (sends_any(program, tb)) {
        const int peer = tb.send_peer;
        if (peer < 0 || static_cast<std::size_t>(peer) >= layouts.size()) {
          return Status::error(
              ErrorCode::InvalidAlgorithm,
              fmt::format("{}: sends, but its send peer {} is not a rank", where, peer));
        }
        const ReceiveEntry* remote =
            layouts[static_cast<std::size_t>(peer)].find_receive(tb.channel, rank);
        const SendEntry* local_entry = own.find_send(tb.channel, peer);
        if (remote == nullptr || local_entry == nullptr) {
          return Status::error(
              ErrorCode::InvalidAlgorithm,
              fmt::format("{}: sends to rank {} on channel {}, which has no threadblock receiving "
                          "from rank {} on that channel",
                          where, peer, tb.channel, rank));
        }
        if (const ProxiedSend* proxied = find_proxied_send(memory, tb.channel, peer)) {
          d.send_fifo = proxied->fifo;
          d.send_tail = proxied->tail;
          d.send_head = proxied->head;
          d.send_descriptors = proxied->descriptors;
        } else {
          const std::uintptr_t peer_region = memory.regions[static_cast<std::size_t>(peer)];
          d.send_fifo = at<char>(peer_region, remote->fifo_offset);
          d.send_tail = at<std::uint64_t>(peer_region, remote->tail_offset);
          d.send_head = at<const std::uint64_t>(own_region, local_entry->head_offset);
        }
      }
      if (receives_any(program, tb)) {
        const int peer = tb.recv_peer;
        if (peer < 0 || static_cast<std::size_t>(peer) >= layouts.size()) {
          return Status::error(
              ErrorCode::InvalidAlgorithm,
              fmt::format("{}: receives, but its receive peer {} is not a rank", where, peer));
        }
        const ReceiveEntry* local_entry = own.find_receive(tb.channel, peer);
        const SendEntry* remote =
            layouts[static_cast<std::size_t>(peer)].find_send(tb.channel, rank);
        if (remote == nullptr || local_entry == nullptr) {
          return Status::error(
              ErrorCode::InvalidAlgorithm,
              fmt::format("{}: receives from rank {} on channel {}, which has no threadblock "
                          "sending to rank {} on that channel",
                          where, peer, tb.channel, rank));
        }
        if (const ProxiedReceive* proxied = find_proxied_receive(memory, tb.channel, peer)) {
          d.recv_fifo = proxied->fifo;
          d.recv_tail = proxied->tail;
          d.recv_head = proxied->head;
        } else {
          const std::uintptr_t peer_region = memory.regions[static_cast<std::size_t>(peer)];
          d.recv_fifo = at<const char>(own_region, local_entry->fifo_offset);
          d.recv_tail = at<const std::uint64_t>(own_region, local_entry->tail_offset);
          d.recv_head = at<std::uint64_t>(peer_region, remote->head_offset);
        }
      }
      ctas.push_back(d);
    }
  }
  return ctas;
}

std::string describe_failure(const device::ErrorReport& r) {
  std::string where = fmt::format("{} (flat step {}), tile {}, launch {}",
                                  ir::element_path(r.rank, r.threadblock, r.ir_step), r.flat_step,
                                  r.tile, r.launch);
  if (r.part > 0) where += fmt::format(", message {} of the step", r.part + 1);
  const double seconds = static_cast<double>(r.waited_ns) * 1e-9;
  std::string what;
  switch (static_cast<device::WaitKind>(r.kind)) {
    case device::WaitKind::Dependency:
      what = fmt::format(
          "tb {} of the same rank to finish its step {} (flat step {}) of this "
          "tile (progress flag {:#x}, needed {:#x})",
          r.dep_threadblock, r.dep_ir_step, r.dep_step, r.observed, r.expected);
      break;
    case device::WaitKind::Message:
      what = fmt::format("message {} from rank {} on channel {} (Simple; {} arrived so far)",
                         r.expected, r.peer, r.channel, r.observed);
      break;
    case device::WaitKind::Space:
      what = fmt::format(
          "a free FIFO slot towards rank {} on channel {} (rank {} has consumed {} "
          "messages, {} needed)",
          r.peer, r.channel, r.peer, r.observed, r.expected);
      break;
    case device::WaitKind::LineFlag:
      what = fmt::format(
          "message {} from rank {} on channel {} (LL/LL128 line flag {:#x}, "
          "expected {:#x})",
          r.expected, r.peer, r.channel, r.observed, r.expected);
      break;
    case device::WaitKind::Arrival:
      return fmt::format(
          "{}: rank {} had not entered the call (launch {}) after {:.3f} s; it stopped, or is "
          "later than WEFT_ARRIVAL_TIMEOUT_S allows",
          where, r.peer, r.expected, seconds);
    case device::WaitKind::Aborted:
      return fmt::format(
          "{}: aborted because another communicator of this process failed (the process's "
          "abort word was raised); see that communicator's error",
          where);
    case device::WaitKind::None:
      what = "an unknown condition";
      break;
  }
  return fmt::format(
      "{}: timed out after {:.3f} s waiting for {}, with every rank in the call. The algorithm "
      "deadlocks, a peer stopped, or the timeout (WEFT_TIMEOUT_S) is too short",
      where, seconds, what);
}

}  // namespace weft::gpu
