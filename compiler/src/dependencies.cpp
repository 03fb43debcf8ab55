#include "weft/compiler/dependencies.h"

#include <algorithm>

namespace weft::compiler {

namespace {

// What one threadblock knows of the others on its rank: known[u] is the last step (final index)
// of threadblock u it has waited for, directly or through another wait. Sparse: threadblocks
// usually wait on few others.
struct Knowledge {
  std::vector<int> known;
  std::vector<int> touched;

  void reset(std::size_t tbs) {
    for (const int t : touched) known[static_cast<std::size_t>(t)] = -1;
    touched.clear();
    if (known.size() < tbs) known.resize(tbs, -1);
  }
  int get(int tb) const { return known[static_cast<std::size_t>(tb)]; }
  void raise(int tb, int step) {
    int& k = known[static_cast<std::size_t>(tb)];
    if (k < 0) touched.push_back(tb);
    if (k < step) k = step;
  }
};

}  // namespace

ir::Algorithm resolve_dependencies(const InstructionDag& dag, const Schedule& schedule,
                                   const Assignment& assignment) {
  const std::size_t n = dag.size();
  const auto& ins = dag.instructions;
  ir::Algorithm algo;
  algo.ngpus = dag.ranks;
  algo.nchannels = assignment.channels;
  algo.gpus.resize(static_cast<std::size_t>(dag.ranks));
  for (int r = 0; r < dag.ranks; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    ir::Gpu& gpu = algo.gpus[ur];
    gpu.id = r;
    gpu.input_chunks = dag.input_chunks[ur];
    gpu.output_chunks = dag.output_chunks[ur];
    gpu.scratch_chunks = dag.scratch_chunks[ur];
    const auto& tbs = assignment.threadblocks[ur];
    gpu.threadblocks.resize(tbs.size());
    for (std::size_t t = 0; t < tbs.size(); ++t) {
      ir::Threadblock& tb = gpu.threadblocks[t];
      tb.id = static_cast<int>(t);
      tb.send = tbs[t].send;
      tb.recv = tbs[t].recv;
      tb.channel = tbs[t].channel;
    }
  }

  // Steps that some other threadblock waits on keep a snapshot of what their threadblock knew.
  std::vector<char> is_target(n, 0);
  for (std::size_t k = 0; k < n; ++k) {
    const int t = assignment.threadblock[k];
    for (const int d : dag.dependencies(static_cast<int>(k))) {
      if (assignment.threadblock[static_cast<std::size_t>(d)] != t)
        is_target[static_cast<std::size_t>(d)] = 1;
    }
  }
  std::vector<int> snapshot_begin(n, -1);
  std::vector<int> snapshot_size(n, 0);
  std::vector<std::pair<int, int>> snapshots;  // (threadblock, step)
  std::vector<int> final_index(n, -1);

  // Per-rank state, rebuilt for each rank.
  std::vector<Knowledge> knowledge;
  struct Wait {
    int tb;
    int step;
    int instruction;
  };
  std::vector<Wait> candidates;
  std::vector<Wait> waits;

  // Visit ranks one at a time, each in schedule order.
  std::vector<std::vector<int>> rank_order(static_cast<std::size_t>(dag.ranks));
  for (const int k : schedule.order)
    rank_order[static_cast<std::size_t>(ins[static_cast<std::size_t>(k)].rank)].push_back(k);

  for (int r = 0; r < dag.ranks; ++r) {
    ir::Gpu& gpu = algo.gpus[static_cast<std::size_t>(r)];
    const std::size_t tb_count = gpu.threadblocks.size();
    if (knowledge.size() < tb_count) knowledge.resize(tb_count);
    for (std::size_t t = 0; t < tb_count; ++t) knowledge[t].reset(tb_count);

    for (const int k : rank_order[static_cast<std::size_t>(r)]) {
      const auto uk = static_cast<std::size_t>(k);
      const int t = assignment.threadblock[uk];
      Knowledge& mine = knowledge[static_cast<std::size_t>(t)];
      candidates.clear();
      for (const int d : dag.dependencies(k)) {
        const int u = assignment.threadblock[static_cast<std::size_t>(d)];
        if (u == t) continue;  // program order already orders them
        candidates.push_back({u, final_index[static_cast<std::size_t>(d)], d});
      }
      // Latest first: waiting for it may already imply the earlier ones.
      std::sort(candidates.begin(), candidates.end(), [&](const Wait& a, const Wait& b) {
        return schedule.position[static_cast<std::size_t>(a.instruction)] >
               schedule.position[static_cast<std::size_t>(b.instruction)];
      });
      waits.clear();
      for (const Wait& w : candidates) {
        if (mine.get(w.tb) >= w.step) continue;
        waits.push_back(w);
        mine.raise(w.tb, w.step);
        const auto ud = static_cast<std::size_t>(w.instruction);
        for (int s = 0; s < snapshot_size[ud]; ++s) {
          const auto& [v, step] = snapshots[static_cast<std::size_t>(snapshot_begin[ud] + s)];
          if (v != t) mine.raise(v, step);
        }
      }
      auto& steps = gpu.threadblocks[static_cast<std::size_t>(t)].steps;
      auto mark_target = [&](const Wait& w) {
        gpu.threadblocks[static_cast<std::size_t>(w.tb)]
            .steps[static_cast<std::size_t>(w.step)]
            .hasdep = true;
      };
      // All waits but one go on nops just before the step.
      for (std::size_t w = 1; w < waits.size(); ++w) {
        ir::Step nop;
        nop.type = ir::StepType::Nop;
        nop.count = 0;
        nop.depid = waits[w].tb;
        nop.deps = waits[w].step;
        mark_target(waits[w]);
        steps.push_back(nop);
      }
      const Instruction& i = ins[uk];
      ir::Step step;
      step.type = i.type;
      step.srcbuf = i.srcbuf;
      step.srcoff = i.srcoff;
      step.dstbuf = i.dstbuf;
      step.dstoff = i.dstoff;
      step.count = i.count;
      // Operands a step does not use repeat the ones it does, as msccl-tools writes them.
      if (step.srcbuf == ir::BufferKind::None) {
        step.srcbuf = step.dstbuf;
        step.srcoff = step.dstoff;
      }
      if (step.dstbuf == ir::BufferKind::None) {
        step.dstbuf = step.srcbuf;
        step.dstoff = step.srcoff;
      }
      if (!waits.empty()) {
        step.depid = waits.front().tb;
        step.deps = waits.front().step;
        mark_target(waits.front());
      }
      final_index[uk] = static_cast<int>(steps.size());
      steps.push_back(step);
      if (is_target[uk]) {
        mine.raise(t, final_index[uk]);
        snapshot_begin[uk] = static_cast<int>(snapshots.size());
        for (const int v : mine.touched) snapshots.emplace_back(v, mine.get(v));
        snapshot_size[uk] = static_cast<int>(mine.touched.size());
      }
    }
  }
  return algo;
}

}  // namespace weft::compiler
