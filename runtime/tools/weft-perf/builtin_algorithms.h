// Algorithms built in code, for weft-perf (--builtin) and the GPU runtime's tests: parametrised by
// rank count and protocol so that one builder covers 2, 4 and 8 ranks and every protocol. Each
// one's correctness is checked against the CPU reference executor in
// tests/gpu_host/algorithms_test.cpp.
#pragma once

#include <string>

#include "weft/ir/ir.h"

namespace weft::perf {

inline ir::Step make_step(ir::StepType type, ir::BufferKind srcbuf, int srcoff,
                          ir::BufferKind dstbuf, int dstoff, int count = 1, int depid = -1,
                          int deps = -1, bool hasdep = false) {
  ir::Step s;
  s.type = type;
  s.srcbuf = srcbuf;
  s.srcoff = srcoff;
  s.dstbuf = dstbuf;
  s.dstoff = dstoff;
  s.count = count;
  s.depid = depid;
  s.deps = deps;
  s.hasdep = hasdep;
  return s;
}

inline ir::Step nop(int depid, int deps) {
  return make_step(ir::StepType::Nop, ir::BufferKind::None, -1, ir::BufferKind::None, -1, 0, depid,
                   deps);
}

inline ir::Algorithm base_algorithm(std::string name, ir::Collective coll, int n, int chunks,
                                    ir::Protocol proto) {
  ir::Algorithm a;
  a.name = std::move(name);
  a.collective = coll;
  a.collective_name = std::string(ir::to_string(coll));
  a.protocol = proto;
  a.nchunksperloop = chunks;
  a.ngpus = n;
  a.inplace = true;
  a.outofplace = true;
  a.gpus.resize(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) a.gpus[static_cast<std::size_t>(r)].id = r;
  return a;
}

inline int mod(int a, int n) {
  return ((a % n) + n) % n;
}

// Ring allreduce: channel c handles chunks [c·n, (c+1)·n) with one threadblock per rank sending to
// rank+1 and receiving from rank−1 (s, rrs…, rrcs, rcs…, r). Deadlocks at FIFO depth 1 only.
inline ir::Algorithm ring_allreduce(int n, ir::Protocol proto, int channels = 1) {
  using ir::BufferKind;
  using ir::StepType;
  ir::Algorithm a =
      base_algorithm("ring_allreduce", ir::Collective::AllReduce, n, n * channels, proto);
  a.nchannels = channels;
  for (int r = 0; r < n; ++r) {
    ir::Gpu& gpu = a.gpus[static_cast<std::size_t>(r)];
    gpu.input_chunks = gpu.output_chunks = n * channels;
    for (int c = 0; c < channels; ++c) {
      const int base = c * n;
      ir::Threadblock tb;
      tb.id = c;
      tb.channel = c;
      tb.send = mod(r + 1, n);
      tb.recv = mod(r - 1, n);
      tb.steps.push_back(
          make_step(StepType::Send, BufferKind::Input, base + r, BufferKind::None, -1));
      for (int k = 1; k <= n - 2; ++k) {
        tb.steps.push_back(make_step(StepType::RecvReduceSend, BufferKind::Input,
                                     base + mod(r - k, n), BufferKind::None, -1));
      }
      tb.steps.push_back(make_step(StepType::RecvReduceCopySend, BufferKind::Input,
                                   base + mod(r - n + 1, n), BufferKind::Output,
                                   base + mod(r + 1, n)));
      for (int k = 1; k <= n - 2; ++k) {
        tb.steps.push_back(make_step(StepType::RecvCopySend, BufferKind::None, -1,
                                     BufferKind::Output, base + mod(r - k + 1, n)));
      }
      tb.steps.push_back(make_step(StepType::Recv, BufferKind::None, -1, BufferKind::Output,
                                   base + mod(r + 2, n)));
      gpu.threadblocks.push_back(std::move(tb));
    }
  }
  return a;
}

// All-pairs allreduce: rank r receives chunk r from every peer into scratch (one receiving
// threadblock per peer, in parallel), adds them all to its own with a run of `re` steps (which the
// loader merges into one n-ary reduction, its waits folded from nops), and sends the result to
// every peer.
inline ir::Algorithm allpairs_allreduce(int n, ir::Protocol proto) {
  using ir::BufferKind;
  using ir::StepType;
  ir::Algorithm a = base_algorithm("allpairs_allreduce", ir::Collective::AllReduce, n, n, proto);
  for (int r = 0; r < n; ++r) {
    ir::Gpu& gpu = a.gpus[static_cast<std::size_t>(r)];
    gpu.input_chunks = gpu.output_chunks = n;
    gpu.scratch_chunks = n - 1;
    ir::Threadblock local;
    local.id = 0;
    local.steps.push_back(make_step(StepType::Copy, BufferKind::Input, r, BufferKind::Output, r));
    for (int q = 0; q < n - 1; ++q) local.steps.push_back(nop(2 + 2 * q, 0));
    for (int q = 0; q < n - 1; ++q) {
      local.steps.push_back(make_step(StepType::Reduce, BufferKind::Scratch, q, BufferKind::Output,
                                      r, 1, -1, -1, q == n - 2));
    }
    const int reduced = static_cast<int>(local.steps.size()) - 1;
    gpu.threadblocks.push_back(local);
    int q = 0;
    for (int p = 0; p < n; ++p) {
      if (p == r) continue;
      ir::Threadblock sender;
      sender.id = 1 + 2 * q;
      sender.send = p;
      sender.steps.push_back(make_step(StepType::Send, BufferKind::Input, p, BufferKind::None, -1));
      sender.steps.push_back(nop(0, reduced));
      sender.steps.push_back(
          make_step(StepType::Send, BufferKind::Output, r, BufferKind::None, -1));
      ir::Threadblock receiver;
      receiver.id = 2 + 2 * q;
      receiver.recv = p;
      receiver.steps.push_back(
          make_step(StepType::Recv, BufferKind::None, -1, BufferKind::Scratch, q, 1, -1, -1, true));
      receiver.steps.push_back(
          make_step(StepType::Recv, BufferKind::None, -1, BufferKind::Output, p));
      gpu.threadblocks.push_back(sender);
      gpu.threadblocks.push_back(receiver);
      ++q;
    }
  }
  return a;
}

// All-pairs allreduce as a dependency chain: rank r reduces chunk r from every peer into o[r] by
// a chain of rrc steps, one receiving threadblock per peer, each waiting for the previous link;
// then it sends o[r] to every peer. `with_nops` routes the waits through nop steps, as compilers
// write them. Exercises cross-threadblock dependencies more than it runs fast.
inline ir::Algorithm allpairs_chain_allreduce(int n, ir::Protocol proto, bool with_nops) {
  using ir::BufferKind;
  using ir::StepType;
  ir::Algorithm a =
      base_algorithm(with_nops ? "allpairs_chain_allreduce_nops" : "allpairs_chain_allreduce",
                     ir::Collective::AllReduce, n, n, proto);
  const int reduce_step = with_nops ? 1 : 0;  // index of the rrc in a receiving threadblock
  for (int r = 0; r < n; ++r) {
    ir::Gpu& gpu = a.gpus[static_cast<std::size_t>(r)];
    gpu.input_chunks = gpu.output_chunks = n;
    ir::Threadblock local;
    local.id = 0;
    local.steps.push_back(
        make_step(StepType::Copy, BufferKind::Input, r, BufferKind::Output, r, 1, -1, -1, true));
    gpu.threadblocks.push_back(local);
    int q = 0;
    int last_recv_tb = 0;
    for (int p = 0; p < n; ++p) {
      if (p == r) continue;
      const int send_id = 1 + 2 * q;
      const int recv_id = 2 + 2 * q;
      // The previous link of the reduction chain.
      const int chain_tb = q == 0 ? 0 : recv_id - 2;
      const int chain_step = q == 0 ? 0 : reduce_step;
      ir::Threadblock receiver;
      receiver.id = recv_id;
      receiver.recv = p;
      if (with_nops) {
        receiver.steps.push_back(nop(chain_tb, chain_step));
        receiver.steps.push_back(make_step(StepType::RecvReduceCopy, BufferKind::Output, r,
                                           BufferKind::Output, r, 1, -1, -1, true));
      } else {
        receiver.steps.push_back(make_step(StepType::RecvReduceCopy, BufferKind::Output, r,
                                           BufferKind::Output, r, 1, chain_tb, chain_step, true));
      }
      receiver.steps.push_back(
          make_step(StepType::Recv, BufferKind::None, -1, BufferKind::Output, p));
      ir::Threadblock sender;
      sender.id = send_id;
      sender.send = p;
      sender.steps.push_back(make_step(StepType::Send, BufferKind::Input, p, BufferKind::None, -1));
      gpu.threadblocks.push_back(sender);
      gpu.threadblocks.push_back(receiver);
      last_recv_tb = recv_id;
      ++q;
    }
    // Every sender's second message is the fully reduced o[r]: it waits for the chain's end.
    for (auto& tb : gpu.threadblocks) {
      if (tb.send < 0) continue;
      if (with_nops) {
        tb.steps.push_back(nop(last_recv_tb, reduce_step));
        tb.steps.push_back(make_step(StepType::Send, BufferKind::Output, r, BufferKind::None, -1));
      } else {
        tb.steps.push_back(make_step(StepType::Send, BufferKind::Output, r, BufferKind::None, -1, 1,
                                     last_recv_tb, reduce_step));
      }
    }
  }
  return a;
}

// Ring allgather, out of place: a copy threadblock puts the rank's input into its output block.
inline ir::Algorithm ring_allgather(int n, ir::Protocol proto) {
  using ir::BufferKind;
  using ir::StepType;
  ir::Algorithm a = base_algorithm("ring_allgather", ir::Collective::AllGather, n, n, proto);
  a.inplace = false;
  for (int r = 0; r < n; ++r) {
    ir::Gpu& gpu = a.gpus[static_cast<std::size_t>(r)];
    gpu.input_chunks = 1;
    gpu.output_chunks = n;
    ir::Threadblock ring;
    ring.id = 0;
    ring.send = mod(r + 1, n);
    ring.recv = mod(r - 1, n);
    ring.steps.push_back(make_step(StepType::Send, BufferKind::Input, 0, BufferKind::None, -1));
    for (int k = 1; k <= n - 2; ++k) {
      ring.steps.push_back(make_step(StepType::RecvCopySend, BufferKind::None, -1,
                                     BufferKind::Output, mod(r - k, n)));
    }
    ring.steps.push_back(
        make_step(StepType::Recv, BufferKind::None, -1, BufferKind::Output, mod(r - n + 1, n)));
    ir::Threadblock copy;
    copy.id = 1;
    copy.steps.push_back(make_step(StepType::Copy, BufferKind::Input, 0, BufferKind::Output, r));
    gpu.threadblocks.push_back(ring);
    gpu.threadblocks.push_back(copy);
  }
  return a;
}

// A chain of `hops` dependent steps between two ranks, for the step-latency benchmark
// (weft-latency): a broadcast from rank 0 whose one chunk bounces between the ranks, each hop a
// step that cannot start before the one before it ended on the other rank (s, then rcs on
// alternate ranks, then r). Rank 1 keeps what it receives in its output, rank 0 in scratch; a
// second threadblock of rank 0 copies its input to its output, off the chain.
inline ir::Algorithm chain_broadcast(int hops, ir::Protocol proto) {
  using ir::BufferKind;
  using ir::StepType;
  ir::Algorithm a = base_algorithm("chain_broadcast_" + std::to_string(hops),
                                   ir::Collective::Broadcast, 2, 1, proto);
  a.inplace = false;
  a.root = 0;
  for (int r = 0; r < 2; ++r) {
    ir::Gpu& gpu = a.gpus[static_cast<std::size_t>(r)];
    gpu.input_chunks = gpu.output_chunks = 1;
    gpu.scratch_chunks = r == 0 && hops >= 2 ? 1 : 0;
    ir::Threadblock chain;
    chain.id = 0;
    chain.send = 1 - r;
    chain.recv = 1 - r;
    const BufferKind keep = r == 0 ? BufferKind::Scratch : BufferKind::Output;
    if (r == 0) {
      chain.steps.push_back(make_step(StepType::Send, BufferKind::Input, 0, BufferKind::None, -1));
    }
    // Hop h goes from rank (h - 1) % 2 to rank h % 2.
    for (int h = 1; h <= hops; ++h) {
      if (h % 2 != r) continue;
      chain.steps.push_back(h < hops
                                ? make_step(StepType::RecvCopySend, BufferKind::None, -1, keep, 0)
                                : make_step(StepType::Recv, BufferKind::None, -1, keep, 0));
    }
    gpu.threadblocks.push_back(std::move(chain));
    if (r == 0) {
      ir::Threadblock copy;
      copy.id = 1;
      copy.steps.push_back(make_step(StepType::Copy, BufferKind::Input, 0, BufferKind::Output, 0));
      gpu.threadblocks.push_back(std::move(copy));
    }
  }
  return a;
}

// Two ranks that each receive before they send: valid, and a deadlock at any FIFO depth.
inline ir::Algorithm deadlock_pair(ir::Protocol proto) {
  using ir::BufferKind;
  using ir::StepType;
  ir::Algorithm a = base_algorithm("deadlock_pair", ir::Collective::AllReduce, 2, 1, proto);
  for (int r = 0; r < 2; ++r) {
    ir::Gpu& gpu = a.gpus[static_cast<std::size_t>(r)];
    gpu.input_chunks = gpu.output_chunks = 1;
    ir::Threadblock tb;
    tb.send = tb.recv = 1 - r;
    tb.steps.push_back(make_step(StepType::Recv, BufferKind::None, -1, BufferKind::Output, 0));
    tb.steps.push_back(make_step(StepType::Send, BufferKind::Input, 0, BufferKind::None, -1));
    gpu.threadblocks.push_back(tb);
  }
  return a;
}

// Two ranks whose tb 1 waits on tb 0's first step, which waits for a message nobody sends: the
// receive or the dependency on it times out, whichever wait expires first.
inline ir::Algorithm stuck_dependency(ir::Protocol proto) {
  using ir::BufferKind;
  using ir::StepType;
  ir::Algorithm a = base_algorithm("stuck_dependency", ir::Collective::AllReduce, 2, 1, proto);
  for (int r = 0; r < 2; ++r) {
    ir::Gpu& gpu = a.gpus[static_cast<std::size_t>(r)];
    gpu.input_chunks = gpu.output_chunks = 1;
    ir::Threadblock waiting;
    waiting.id = 0;
    waiting.recv = waiting.send = 1 - r;
    waiting.steps.push_back(
        make_step(StepType::Recv, BufferKind::None, -1, BufferKind::Output, 0, 1, -1, -1, true));
    waiting.steps.push_back(make_step(StepType::Send, BufferKind::Input, 0, BufferKind::None, -1));
    ir::Threadblock dependent;
    dependent.id = 1;
    dependent.steps.push_back(
        make_step(StepType::Copy, BufferKind::Output, 0, BufferKind::Output, 0, 1, 0, 0));
    gpu.threadblocks = {waiting, dependent};
  }
  return a;
}

// Two ranks that exchange all `chunks` chunks in one step each and add what they receive to
// their own input: with enough chunks, every step needs several messages per tile.
inline ir::Algorithm wide_exchange(int chunks, ir::Protocol proto) {
  using ir::BufferKind;
  using ir::StepType;
  ir::Algorithm a = base_algorithm("wide_exchange", ir::Collective::AllReduce, 2, chunks, proto);
  for (int r = 0; r < 2; ++r) {
    ir::Gpu& gpu = a.gpus[static_cast<std::size_t>(r)];
    gpu.input_chunks = gpu.output_chunks = chunks;
    ir::Threadblock tb;
    tb.send = tb.recv = 1 - r;
    tb.steps.push_back(
        make_step(StepType::Send, BufferKind::Input, 0, BufferKind::None, -1, chunks));
    tb.steps.push_back(
        make_step(StepType::RecvReduceCopy, BufferKind::Input, 0, BufferKind::Output, 0, chunks));
    gpu.threadblocks.push_back(tb);
  }
  return a;
}

// Two ranks that exchange `chunks` chunks one at a time (send chunk i, then add the peer's chunk
// i to their own): one threadblock of 2 × chunks steps, for the step lists longer than what the
// kernel keeps in shared memory.
inline ir::Algorithm chunkwise_exchange(int chunks, ir::Protocol proto) {
  using ir::BufferKind;
  using ir::StepType;
  ir::Algorithm a =
      base_algorithm("chunkwise_exchange", ir::Collective::AllReduce, 2, chunks, proto);
  for (int r = 0; r < 2; ++r) {
    ir::Gpu& gpu = a.gpus[static_cast<std::size_t>(r)];
    gpu.input_chunks = gpu.output_chunks = chunks;
    ir::Threadblock tb;
    tb.send = tb.recv = 1 - r;
    for (int c = 0; c < chunks; ++c) {
      tb.steps.push_back(make_step(StepType::Send, BufferKind::Input, c, BufferKind::None, -1, 1));
      tb.steps.push_back(
          make_step(StepType::RecvReduceCopy, BufferKind::Input, c, BufferKind::Output, c, 1));
    }
    gpu.threadblocks.push_back(tb);
  }
  return a;
}

// Each of two ranks sends three messages to the other before receiving any: it deadlocks at FIFO
// depth 2 (both block on their third send) and completes at depth 3 and more.
inline ir::Algorithm three_ahead(ir::Protocol proto) {
  using ir::BufferKind;
  using ir::StepType;
  ir::Algorithm a = base_algorithm("three_ahead", ir::Collective::AllReduce, 2, 3, proto);
  a.inplace = false;
  for (int r = 0; r < 2; ++r) {
    ir::Gpu& gpu = a.gpus[static_cast<std::size_t>(r)];
    gpu.input_chunks = gpu.output_chunks = 3;
    ir::Threadblock tb;
    tb.send = tb.recv = 1 - r;
    for (int c = 0; c < 3; ++c) {
      tb.steps.push_back(make_step(StepType::Send, BufferKind::Input, c, BufferKind::None, -1));
    }
    for (int c = 0; c < 3; ++c) {
      tb.steps.push_back(make_step(StepType::Recv, BufferKind::None, -1, BufferKind::Output, c));
    }
    gpu.threadblocks.push_back(tb);
  }
  return a;
}

}  // namespace weft::perf
