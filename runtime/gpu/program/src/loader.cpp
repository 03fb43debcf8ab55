// Flattening one rank of an IR into its device program (see device_program.h for the rules).
#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "weft/ir/geometry.h"
#include "weft/program/device_abi.h"
#include "weft/program/device_program.h"

namespace weft::gpu {

namespace {

using ir::StepType;

// The interpreter kernel compares DeviceStep::type, which holds an ir::StepType, with constants of
// its own (kernel/device_abi.h), and is instantiated per protocol for constants of its own too
// (instantiate.cuh maps ir::Protocol onto them): both must be the IR's values, one for one.
constexpr bool same_value(int device_value, auto ir_value) {
  return device_value == static_cast<int>(ir_value);
}
static_assert(same_value(device::kSend, StepType::Send));
static_assert(same_value(device::kRecv, StepType::Recv));
static_assert(same_value(device::kRecvCopySend, StepType::RecvCopySend));
static_assert(same_value(device::kRecvReduceSend, StepType::RecvReduceSend));
static_assert(same_value(device::kRecvReduceCopy, StepType::RecvReduceCopy));
static_assert(same_value(device::kRecvReduceCopySend, StepType::RecvReduceCopySend));
static_assert(same_value(device::kCopy, StepType::Copy));
static_assert(same_value(device::kReduce, StepType::Reduce));
// Nop is ir::StepType's last (flatten_rank refuses a type after it) and never reaches the kernel.
static_assert(same_value(device::kStepTypeCount, StepType::Nop),
              "the kernel's step types must be ir::StepType's, every one but nop");
static_assert(same_value(device::kSimple, ir::Protocol::Simple));
static_assert(same_value(device::kLL, ir::Protocol::LL));
static_assert(same_value(device::kLL128, ir::Protocol::LL128));
// ir::Protocol has no count of its own: a protocol added there fails instantiate.cuh's switch
// (-Wswitch, an error), one added to the kernel fails this.
static_assert(same_value(device::kProtocolCount - 1, ir::Protocol::LL128),
              "the kernel's protocols must be ir::Protocol's");

DeviceBuffer to_device(ir::BufferKind buffer) {
  switch (buffer) {
    case ir::BufferKind::Input:
      return DeviceBuffer::Input;
    case ir::BufferKind::Output:
      return DeviceBuffer::Output;
    case ir::BufferKind::Scratch:
      return DeviceBuffer::Scratch;
    case ir::BufferKind::None:
      break;
  }
  return DeviceBuffer::None;
}

ir::BufferKind to_ir(DeviceBuffer buffer) {
  switch (buffer) {
    case DeviceBuffer::Input:
      return ir::BufferKind::Input;
    case DeviceBuffer::Output:
      return ir::BufferKind::Output;
    case DeviceBuffer::Scratch:
      return ir::BufferKind::Scratch;
    case DeviceBuffer::None:
      break;
  }
  return ir::BufferKind::None;
}

struct ChunkRange {
  DeviceBuffer buffer = DeviceBuffer::None;
  int offset = 0;
  int count = 0;
};

// Whether piece j1 of `read` and piece j2 of `write` can be the same memory, in an out-of-place
// call or (if the algorithm allows one) an in-place call, where input and output alias.
class OverlapCheck {
 public:
  OverlapCheck(const ir::Algorithm& algo, int rank) : algo_(algo), rank_(rank) {}

  // Some piece of `read` is some piece of `write` (any j1, j2).
  bool overlaps(const ChunkRange& read, const ChunkRange& write) const {
    for (int j1 = 0; j1 < read.count; ++j1) {
      for (int j2 = 0; j2 < write.count; ++j2) {
        if (same_chunk(read.buffer, read.offset + j1, write.buffer, write.offset + j2)) {
          return true;
        }
      }
    }
    return false;
  }

  // Pieces j1 of `read` that are piece j2 ≠ j1 of `write`, by direction. Pieces done in
  // ascending order read j1 before writing j2 only when j1 < j2; descending only when j1 > j2.
  struct Shifts {
    bool read_earlier = false;  // some j1 < j2
    bool read_later = false;    // some j1 > j2
  };
  void add_shifts(const ChunkRange& read, const ChunkRange& write, Shifts& into) const {
    for (int j1 = 0; j1 < read.count; ++j1) {
      for (int j2 = 0; j2 < write.count; ++j2) {
        if (j1 == j2) continue;
        if (same_chunk(read.buffer, read.offset + j1, write.buffer, write.offset + j2)) {
          (j1 < j2 ? into.read_earlier : into.read_later) = true;
        }
      }
    }
  }

 private:
  bool same_chunk(DeviceBuffer a, int ca, DeviceBuffer b, int cb) const {
    if (a == b && ca == cb) return true;
    if (!algo_.inplace) return false;
    const ir::Alias ra = ir::resolve_in_place(algo_, rank_, to_ir(a), ca);
    const ir::Alias rb = ir::resolve_in_place(algo_, rank_, to_ir(b), cb);
    return ra.buffer == rb.buffer && ra.chunk == rb.chunk;
  }

  const ir::Algorithm& algo_;
  int rank_;
};

struct RawDependency {
  int threadblock;
  int step;  // IR step index
};

// Where an IR step went.
struct Origin {
  int flat = -1;           // real step: its flat step (the merged one for absorbed `re`)
  int previous_flat = -1;  // nop: the last flat step before it in its threadblock, -1 for none
  int run_begin = 0;       // nop: first step of the run of nops it ends
};

class Flattener {
 public:
  Flattener(const ir::Algorithm& algo, const ir::Gpu& gpu, int rank)
      : algo_(algo), gpu_(gpu), rank_(rank), overlap_(algo, rank) {}

  Result<RankProgram> run() {
    if (!index_threadblocks()) return failure();
    if (!mark_depended_on()) return failure();
    program_.rank = rank_;
    program_.threadblocks.resize(order_.size());
    raw_.clear();
    for (std::size_t t = 0; t < order_.size(); ++t) {
      if (!flatten_threadblock(static_cast<int>(t))) return failure();
    }
    if (!resolve_dependencies()) return failure();
    return std::move(program_);
  }

 private:
  const ir::Threadblock& tb(int t) const { return *order_[static_cast<std::size_t>(t)]; }

  bool fail(int tb_id, int step, std::string message) {
    error_ = Status::error(ErrorCode::InvalidAlgorithm,
                           fmt::format("{}{}: {}", algo_.source.empty() ? "" : algo_.source + ": ",
                                       ir::element_path(rank_, tb_id, step), message));
    return false;
  }
  Status failure() const { return error_; }

  bool index_threadblocks() {
    order_.assign(gpu_.threadblocks.size(), nullptr);
    for (const auto& block : gpu_.threadblocks) {
      if (block.id < 0 || static_cast<std::size_t>(block.id) >= order_.size() ||
          order_[static_cast<std::size_t>(block.id)] != nullptr) {
        return fail(
            block.id, -1,
            fmt::format("threadblock ids must be 0..{} without repeats", order_.size() - 1));
      }
      order_[static_cast<std::size_t>(block.id)] = &block;
    }
    return true;
  }

  bool mark_depended_on() {
    depended_on_.assign(order_.size(), {});
    for (std::size_t t = 0; t < order_.size(); ++t) {
      depended_on_[t].assign(tb(static_cast<int>(t)).steps.size(), false);
    }
    for (std::size_t t = 0; t < order_.size(); ++t) {
      const auto& steps = tb(static_cast<int>(t)).steps;
      for (std::size_t k = 0; k < steps.size(); ++k) {
        const ir::Step& step = steps[k];
        if (step.depid < 0) continue;
        if (static_cast<std::size_t>(step.depid) >= order_.size() || step.deps < 0 ||
            static_cast<std::size_t>(step.deps) >= tb(step.depid).steps.size()) {
          return fail(
              static_cast<int>(t), static_cast<int>(k),
              fmt::format("depends on missing step {} of threadblock {}", step.deps, step.depid));
        }
        depended_on_[static_cast<std::size_t>(step.depid)][static_cast<std::size_t>(step.deps)] =
            true;
      }
    }
    return true;
  }

  bool check_step(int t, int k, const ir::Step& step) {
    const ir::Threadblock& block = tb(t);
    if (ir::sends(step.type) && block.send < 0) {
      return fail(t, k, "sends but its threadblock has no send peer");
    }
    if (ir::receives(step.type) && block.recv < 0) {
      return fail(t, k, "receives but its threadblock has no receive peer");
    }
    if (step.count <= 0) return fail(t, k, fmt::format("cnt {} is not positive", step.count));
    if (ir::reads_source(step.type) && (step.srcbuf == ir::BufferKind::None || step.srcoff < 0)) {
      return fail(t, k, "reads a source but has no srcbuf/srcoff");
    }
    if (ir::writes_destination(step.type) &&
        (step.dstbuf == ir::BufferKind::None || step.dstoff < 0)) {
      return fail(t, k, "writes a destination but has no dstbuf/dstoff");
    }
    if (ir::reads_source(step.type) &&
        step.srcoff + step.count > ir::extent_chunks(algo_, rank_, step.srcbuf)) {
      return fail(t, k, "source chunks outside the buffer");
    }
    if (ir::writes_destination(step.type) &&
        step.dstoff + step.count > ir::extent_chunks(algo_, rank_, step.dstbuf)) {
      return fail(t, k, "destination chunks outside the buffer");
    }
    return true;
  }

  // Whether IR step `step` (a `re`) can join the flat step `last` built from the IR step just
  // before it: nobody waits on that one alone, the destination is the same, and the new source
  // does not overlap the destination (the merged step reads every source before it writes).
  bool can_merge(int t, int k, const ir::Step& step, const DeviceStep& last) const {
    if (last.type != static_cast<std::uint8_t>(StepType::Reduce)) return false;
    if (last.ir_step != k - 1) return false;  // nops in between could be waited on
    if (depended_on_[static_cast<std::size_t>(t)][static_cast<std::size_t>(last.ir_step)]) {
      return false;
    }
    if (last.dstbuf != to_device(step.dstbuf) || last.dstoff != step.dstoff ||
        last.count != step.count) {
      return false;
    }
    if (1 + last.source_count >= kMaxReduceSources) return false;
    const ChunkRange source{to_device(step.srcbuf), step.srcoff, step.count};
    const ChunkRange destination{last.dstbuf, last.dstoff, last.count};
    return !overlap_.overlaps(source, destination);
  }

  bool flatten_threadblock(int t) {
    const ir::Threadblock& block = tb(t);
    DeviceThreadblock& out = program_.threadblocks[static_cast<std::size_t>(t)];
    out.id = block.id;
    out.send_peer = block.send;
    out.recv_peer = block.recv;
    out.channel = block.channel;
    out.first_step = static_cast<std::int32_t>(program_.steps.size());

    origins_.emplace_back(block.steps.size());
    std::vector<Origin>& origin = origins_.back();
    std::vector<RawDependency> pending;  // carried by nops towards the next real step
    int run_begin = 0;
    for (std::size_t kk = 0; kk < block.steps.size(); ++kk) {
      const int k = static_cast<int>(kk);
      const ir::Step& step = block.steps[kk];
      const int flat_here = static_cast<int>(program_.steps.size()) - out.first_step;
      if (step.type == StepType::Nop) {
        if (kk == 0 || block.steps[kk - 1].type != StepType::Nop) run_begin = k;
        origin[kk].previous_flat = flat_here - 1;
        origin[kk].run_begin = run_begin;
        if (step.depid >= 0) pending.push_back({step.depid, step.deps});
        ++program_.nops_folded;
        continue;
      }
      if (static_cast<int>(step.type) > static_cast<int>(StepType::Nop)) {
        return fail(t, k, "unknown step type");
      }
      if (!check_step(t, k, step)) return false;

      if (step.type == StepType::Reduce && flat_here > 0 &&
          can_merge(t, k, step, program_.steps.back())) {
        DeviceStep& last = program_.steps.back();
        program_.sources.push_back({to_device(step.srcbuf), step.srcoff});
        ++last.source_count;
        last.ir_step = k;
        origin[kk].flat = flat_here - 1;
        auto& deps = raw_.back();
        deps.insert(deps.end(), pending.begin(), pending.end());
        if (step.depid >= 0) deps.push_back({step.depid, step.deps});
        pending.clear();
        ++program_.reduces_merged;
        continue;
      }

      DeviceStep flat;
      flat.type = static_cast<std::uint8_t>(step.type);
      flat.srcbuf = ir::reads_source(step.type) ? to_device(step.srcbuf) : DeviceBuffer::None;
      flat.srcoff = ir::reads_source(step.type) ? step.srcoff : -1;
      flat.dstbuf = ir::writes_destination(step.type) ? to_device(step.dstbuf) : DeviceBuffer::None;
      flat.dstoff = ir::writes_destination(step.type) ? step.dstoff : -1;
      flat.count = step.count;
      flat.first_source = static_cast<std::int32_t>(program_.sources.size());
      flat.ir_step = k;
      program_.steps.push_back(flat);
      origin[kk].flat = flat_here;
      raw_.emplace_back(std::move(pending));
      pending.clear();
      if (step.depid >= 0) raw_.back().push_back({step.depid, step.deps});
      program_.max_count = std::max(program_.max_count, step.count);
    }
    // Nops after the last real step guard nothing of this threadblock; steps of others that wait
    // on them are given the nops' own conditions instead (resolve_dependencies).
    out.step_count = static_cast<std::int32_t>(program_.steps.size()) - out.first_step;
    program_.max_steps = std::max(program_.max_steps, static_cast<int>(out.step_count));
    return true;
  }

  // Per threadblock, the latest flat step that must be finished: -1 for none.
  using Frontier = std::vector<int>;

  static void join(Frontier& into, const Frontier& other) {
    for (std::size_t d = 0; d < into.size(); ++d) into[d] = std::max(into[d], other[d]);
  }

  // What "threadblock d finished IR step s" means in flat terms. For a nop: the last real step
  // before its run of nops, and whatever the nops of the run waited for (recursively). Iterative
  // so that a long chain of nops cannot exhaust the stack; a cycle is an error.
  bool expand(int d, int s, Frontier& into) {
    const Origin& o = origins_[static_cast<std::size_t>(d)][static_cast<std::size_t>(s)];
    if (o.flat >= 0) {
      into[static_cast<std::size_t>(d)] = std::max(into[static_cast<std::size_t>(d)], o.flat);
      return true;
    }
    struct Frame {
      int d, s;
      bool expanded;
    };
    std::vector<Frame> stack{{d, s, false}};
    while (!stack.empty()) {
      Frame& frame = stack.back();
      const auto key = std::pair{frame.d, frame.s};
      auto& state = nop_state_[key];
      if (state == 2) {
        stack.pop_back();
        continue;
      }
      const Origin& nop =
          origins_[static_cast<std::size_t>(frame.d)][static_cast<std::size_t>(frame.s)];
      const auto& steps = tb(frame.d).steps;
      if (!frame.expanded) {
        if (state == 1) return fail(frame.d, frame.s, "dependency cycle through nop steps");
        state = 1;
        frame.expanded = true;
        const int fd = frame.d;
        const int fs = frame.s;
        for (int n = nop.run_begin; n <= fs; ++n) {
          const ir::Step& step = steps[static_cast<std::size_t>(n)];
          if (step.depid < 0) continue;
          const Origin& target =
              origins_[static_cast<std::size_t>(step.depid)][static_cast<std::size_t>(step.deps)];
          if (target.flat < 0 && nop_state_[{step.depid, step.deps}] != 2) {
            if (nop_state_[{step.depid, step.deps}] == 1) {
              return fail(fd, n, "dependency cycle through nop steps");
            }
            stack.push_back({step.depid, step.deps, false});
          }
        }
        continue;
      }
      Frontier frontier(order_.size(), -1);
      if (nop.previous_flat >= 0) frontier[static_cast<std::size_t>(frame.d)] = nop.previous_flat;
      for (int n = nop.run_begin; n <= frame.s; ++n) {
        const ir::Step& step = steps[static_cast<std::size_t>(n)];
        if (step.depid < 0) continue;
        const Origin& target =
            origins_[static_cast<std::size_t>(step.depid)][static_cast<std::size_t>(step.deps)];
        if (target.flat >= 0) {
          auto& slot = frontier[static_cast<std::size_t>(step.depid)];
          slot = std::max(slot, target.flat);
        } else {
          join(frontier, nop_frontier_[{step.depid, step.deps}]);
        }
      }
      nop_frontier_[key] = std::move(frontier);
      state = 2;
      stack.pop_back();
    }
    join(into, nop_frontier_[{d, s}]);
    return true;
  }

  bool resolve_dependencies() {
    std::vector<DeviceStep>& steps = program_.steps;
    for (std::size_t t = 0; t < order_.size(); ++t) {
      const DeviceThreadblock& block = program_.threadblocks[t];
      for (int f = 0; f < block.step_count; ++f) {
        const std::size_t index = static_cast<std::size_t>(block.first_step + f);
        Frontier frontier(order_.size(), -1);
        for (const RawDependency& raw : raw_[index]) {
          if (!expand(raw.threadblock, raw.step, frontier)) return false;
        }
        DeviceStep& step = steps[index];
        // Earlier steps of its own threadblock are implied by program order.
        int& own = frontier[t];
        if (own >= f) {
          return fail(static_cast<int>(t), step.ir_step,
                      "waits on itself or a later step of its own threadblock");
        }
        own = -1;
        step.first_dependency = static_cast<std::int32_t>(program_.dependencies.size());
        for (std::size_t d = 0; d < frontier.size(); ++d) {
          if (frontier[d] < 0) continue;
          const DeviceThreadblock& target = program_.threadblocks[d];
          DeviceStep& awaited = steps[static_cast<std::size_t>(target.first_step + frontier[d])];
          awaited.flags |= kStepPublishes;
          program_.dependencies.push_back(
              {static_cast<std::int32_t>(d), frontier[d], target.step_count, awaited.ir_step});
        }
        step.dependency_count =
            static_cast<std::int32_t>(program_.dependencies.size()) - step.first_dependency;
        if (!order_pieces(static_cast<int>(t), step)) return false;
      }
    }
    return true;
  }

  // A step reads all its pieces before it writes any (as the CPU reference does). The kernel
  // moves a step's pieces side by side, so where a read piece is another written piece it must
  // instead finish them one at a time, in the order that reads each shared piece before it is
  // overwritten: ascending when the shared piece is read at a lower index than it is written,
  // descending otherwise. A receive step cannot reorder (its pieces arrive in message order, and
  // LL/LL128 move a message's words all at once), so it is refused where ascending is not right.
  bool order_pieces(int t, DeviceStep& step) {
    if (step.count <= 1 || step.dstbuf == DeviceBuffer::None) return true;
    const ChunkRange write{step.dstbuf, step.dstoff, step.count};
    OverlapCheck::Shifts shifts;
    if (step.srcbuf != DeviceBuffer::None) {
      overlap_.add_shifts({step.srcbuf, step.srcoff, step.count}, write, shifts);
    }
    for (int k = 0; k < step.source_count; ++k) {
      const DeviceSource& source =
          program_.sources[static_cast<std::size_t>(step.first_source + k)];
      overlap_.add_shifts({source.buffer, source.offset, step.count}, write, shifts);
    }
    if (!shifts.read_earlier && !shifts.read_later) return true;
    const auto type = static_cast<StepType>(step.type);
    if (shifts.read_earlier && shifts.read_later) {
      return fail(t, step.ir_step,
                  "its sources overlap its destination shifted both ways, so no order of its "
                  "chunks reads each one before overwriting it; split the step");
    }
    if (ir::receives(type) && algo_.protocol != ir::Protocol::Simple) {
      return fail(t, step.ir_step,
                  fmt::format("its source overlaps its destination at another chunk, which the "
                              "GPU runtime cannot order under {} (a message's chunks are "
                              "processed all at once); use Simple or non-overlapping chunks",
                              ir::to_string(algo_.protocol)));
    }
    if (shifts.read_later && ir::receives(type)) {
      return fail(t, step.ir_step,
                  "its source overlaps an earlier chunk of its destination, so its chunks would "
                  "have to be processed last to first, which a receive step (chunks arrive in "
                  "order) cannot do; use non-overlapping chunks");
    }
    step.flags |= kStepSerialPieces;
    if (shifts.read_later) step.flags |= kStepReversePieces;
    return true;
  }

  const ir::Algorithm& algo_;
  const ir::Gpu& gpu_;
  int rank_;
  OverlapCheck overlap_;
  std::vector<const ir::Threadblock*> order_;
  std::vector<std::vector<bool>> depended_on_;
  std::vector<std::vector<Origin>> origins_;
  std::vector<std::vector<RawDependency>> raw_;   // per flat step, before expansion
  std::map<std::pair<int, int>, int> nop_state_;  // 1: being expanded, 2: done
  std::map<std::pair<int, int>, Frontier> nop_frontier_;
  RankProgram program_;
  Status error_;
};

}  // namespace

Result<RankProgram> flatten_rank(const ir::Algorithm& algo, int rank) {
  const auto it = std::find_if(algo.gpus.begin(), algo.gpus.end(),
                               [rank](const ir::Gpu& gpu) { return gpu.id == rank; });
  if (it == algo.gpus.end()) {
    return Status::error(ErrorCode::InvalidAlgorithm,
                         fmt::format("algorithm '{}' has no gpu {}", algo.name, rank));
  }
  return Flattener(algo, *it, rank).run();
}

}  // namespace weft::gpu
