#include "weft/compiler/fuse.h"

#include <algorithm>
#include <cstdint>

#include "flat_map.h"
#include "fusion_candidate.h"
#include "slot_space.h"

namespace weft::compiler {

namespace {

using ir::StepType;

int merge_hint(int a, int b) {
  return a >= 0 ? a : b;
}

// Fused steps tie a receive connection to a send connection on one threadblock; these keys keep
// each rank's pairing one-to-one per channel (unhinted instructions form their own class, -1).
std::uint64_t connection_key(int rank, int channel, int peer, bool sending) {
  return (static_cast<std::uint64_t>(rank) << 40) |
         (static_cast<std::uint64_t>(channel + 1) << 21) | (static_cast<std::uint64_t>(peer) << 1) |
         (sending ? 1U : 0U);
}

}  // namespace

InstructionDag fuse(const InstructionDag& dag, FuseStats* stats, std::span<const char> keep_apart,
                    std::vector<int>* absorbed_by) {
  const detail::SlotSpace slots(dag);
  const std::size_t n = dag.size();
  const auto& in = dag.instructions;
  std::vector<int> last_writer(slots.size(), -1);
  std::vector<int> fused_send(n, -1);
  std::vector<char> absorbed(n, 0);
  detail::FlatMap partner;

  // Which sends can join the receive that produced their data.
  for (std::size_t k = 0; k < n; ++k) {
    const Instruction& send = in[k];
    if (send.type == StepType::Send && (keep_apart.empty() || !keep_apart[k])) {
      const int w = detail::joinable_receive(dag, slots, last_writer, fused_send, send);
      if (w >= 0) {
        const Instruction& recv = in[static_cast<std::size_t>(w)];
        const int channel = merge_hint(recv.channel, send.channel);
        const auto r_key = connection_key(send.rank, channel, recv.recv_peer, false);
        const auto s_key = connection_key(send.rank, channel, send.send_peer, true);
        const int* r_partner = partner.find(r_key);
        const int* s_partner = partner.find(s_key);
        if ((!r_partner || *r_partner == send.send_peer) &&
            (!s_partner || *s_partner == recv.recv_peer)) {
          partner.at_or(r_key, send.send_peer);
          partner.at_or(s_key, recv.recv_peer);
          fused_send[static_cast<std::size_t>(w)] = static_cast<int>(k);
          absorbed[k] = 1;
        }
      }
    }
    if (writes_destination(send)) {
      for (int j = 0; j < send.count; ++j) {
        last_writer[slots.slot(send.rank, send.dstbuf, send.dstoff + j)] = static_cast<int>(k);
      }
    }
  }

  if (std::none_of(fused_send.begin(), fused_send.end(), [](int s) { return s >= 0; })) {
    if (stats) *stats = {};
    if (absorbed_by) absorbed_by->assign(n, -1);
    return dag;  // nothing to fuse: the dependencies stand as they are
  }

  // Is the value a fused recv-reduce stores read again, other than by the send it absorbed? If
  // not, it becomes rrs and stores nothing.
  std::vector<char> needed(slots.size(), 0);
  for (const Slot& result : dag.results)
    needed[slots.slot(result.rank, result.buffer, result.index)] = 1;
  std::fill(last_writer.begin(), last_writer.end(), -1);
  std::vector<char> value_used(n, 0);
  auto note_read = [&](std::size_t reader, int rank, ir::BufferKind buffer, int offset, int count) {
    for (int j = 0; j < count; ++j) {
      const int w = last_writer[slots.slot(rank, buffer, offset + j)];
      if (w >= 0 && fused_send[static_cast<std::size_t>(w)] >= 0 &&
          fused_send[static_cast<std::size_t>(w)] != static_cast<int>(reader)) {
        value_used[static_cast<std::size_t>(w)] = 1;
      }
    }
  };
  for (std::size_t k = 0; k < n; ++k) {
    const Instruction& ins = in[k];
    if (reads_source(ins)) note_read(k, ins.rank, ins.srcbuf, ins.srcoff, ins.count);
    if (reads_destination(ins)) note_read(k, ins.rank, ins.dstbuf, ins.dstoff, ins.count);
    if (writes_destination(ins)) {
      for (int j = 0; j < ins.count; ++j) {
        last_writer[slots.slot(ins.rank, ins.dstbuf, ins.dstoff + j)] = static_cast<int>(k);
      }
    }
  }
  for (std::size_t s = 0; s < slots.size(); ++s) {
    if (needed[s] && last_writer[s] >= 0) value_used[static_cast<std::size_t>(last_writer[s])] = 1;
  }

  // The fused list: each fused step where its receive was.
  InstructionDag out = dag.same_buffers();
  std::vector<int> new_index(n, -1);
  int next = 0;
  for (std::size_t k = 0; k < n; ++k) {
    if (!absorbed[k]) new_index[k] = next++;
  }
  for (std::size_t k = 0; k < n; ++k) {
    const int s = fused_send[k];
    if (s >= 0) new_index[static_cast<std::size_t>(s)] = new_index[k];
  }
  FuseStats counted;
  out.instructions.reserve(static_cast<std::size_t>(next));
  if (absorbed_by) absorbed_by->assign(static_cast<std::size_t>(next), -1);
  for (std::size_t k = 0; k < n; ++k) {
    if (absorbed[k]) continue;
    Instruction ins = in[k];
    const int s = fused_send[k];
    if (s >= 0) {
      const Instruction& send = in[static_cast<std::size_t>(s)];
      if (ins.type == StepType::Recv) {
        ins.type = StepType::RecvCopySend;
        ++counted.rcs;
      } else if (value_used[k]) {
        ins.type = StepType::RecvReduceCopySend;
        ++counted.rrcs;
      } else {
        ins.type = StepType::RecvReduceSend;
        ++counted.rrs;
      }
      ins.send_peer = send.send_peer;
      ins.send_to = send.send_to;
      ins.send_operation = send.operation;
      ins.channel = merge_hint(ins.channel, send.channel);
      ins.sendtb = send.sendtb;
      if (absorbed_by) (*absorbed_by)[out.instructions.size()] = s;
    }
    if (ins.send_to >= 0) ins.send_to = new_index[static_cast<std::size_t>(ins.send_to)];
    if (ins.recv_from >= 0) ins.recv_from = new_index[static_cast<std::size_t>(ins.recv_from)];
    out.instructions.push_back(ins);
  }
  compute_dependencies(out);
  if (stats) *stats = counted;
  return out;
}

std::vector<char> msccl_unfused_sends(const InstructionDag& dag) {
  const detail::SlotSpace slots(dag);
  const std::size_t n = dag.size();
  const auto& in = dag.instructions;
  // msccl-tools' dependencies: a read depends on the slot's last writer; a write (a reduce's
  // destination too) on the reads since that write, or on the writer itself when none came.
  std::vector<int> last_writer(slots.size(), -1);
  std::vector<char> read_since(slots.size(), 0);
  std::vector<int> dependents(n, 0);
  std::vector<int> last_dependent(n, -1);  // counts each dependent once
  std::vector<int> producer(n, -1);        // per send: the last writer of its first slot
  const auto depend = [&](int writer, int k) {
    if (writer < 0 || last_dependent[static_cast<std::size_t>(writer)] == k) return;
    last_dependent[static_cast<std::size_t>(writer)] = k;
    ++dependents[static_cast<std::size_t>(writer)];
  };
  for (std::size_t k = 0; k < n; ++k) {
    const Instruction& ins = in[k];
    const int self = static_cast<int>(k);
    if (reads_source(ins)) {
      if (ins.type == StepType::Send)
        producer[k] = last_writer[slots.slot(ins.rank, ins.srcbuf, ins.srcoff)];
      for (int j = 0; j < ins.count; ++j) {
        const std::size_t slot = slots.slot(ins.rank, ins.srcbuf, ins.srcoff + j);
        depend(last_writer[slot], self);
        read_since[slot] = 1;
      }
    }
    if (writes_destination(ins)) {
      for (int j = 0; j < ins.count; ++j) {
        const std::size_t slot = slots.slot(ins.rank, ins.dstbuf, ins.dstoff + j);
        if (!read_since[slot]) depend(last_writer[slot], self);
        last_writer[slot] = self;
        read_since[slot] = 0;
      }
    }
  }
  std::vector<char> apart(n, 0);
  for (std::size_t k = 0; k < n; ++k) {
    const int w = producer[k];
    if (w < 0 || in[k].send_to < 0) continue;
    const Instruction& recv = in[static_cast<std::size_t>(w)];
    const Instruction& delivered = in[static_cast<std::size_t>(in[k].send_to)];
    const bool same_place = recv.dstbuf == delivered.dstbuf && recv.dstoff == delivered.dstoff;
    const bool only_dependent =
        recv.type != StepType::RecvReduceCopy || dependents[static_cast<std::size_t>(w)] == 1;
    if (!same_place || !only_dependent) apart[k] = 1;
  }
  return apart;
}

}  // namespace weft::compiler
