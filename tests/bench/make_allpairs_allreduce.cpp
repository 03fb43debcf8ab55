// Writes an N-rank all-pairs allreduce in the shape MSCCL's Python tools give it (one
// threadblock per peer, reduce-scatter through scratch, then allgather), for benchmarking
// `weftc verify` on large files: N = 32 gives about 96,000 steps.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "weft/ir/ir.h"
#include "weft/ir/xml.h"

namespace {

using weft::ir::BufferKind;
using weft::ir::Step;
using weft::ir::StepType;

Step make_step(StepType type, BufferKind src, int srcoff, BufferKind dst, int dstoff, int count) {
  Step step;
  step.type = type;
  step.srcbuf = src;
  step.srcoff = srcoff;
  step.dstbuf = dst;
  step.dstoff = dstoff;
  step.count = count;
  return step;
}

Step nop_on(int tb, int step) {
  Step nop;
  nop.type = StepType::Nop;
  nop.depid = tb;
  nop.deps = step;
  return nop;
}

// Waits on every (tb, step) in `waits` through nops placed before `step`, which carries the last.
void append_with_waits(std::vector<Step>& steps, std::vector<std::pair<int, int>> waits, Step step) {
  for (std::size_t k = 0; k + 1 < waits.size(); ++k) {
    steps.push_back(nop_on(waits[k].first, waits[k].second));
  }
  if (!waits.empty()) {
    step.depid = waits.back().first;
    step.deps = waits.back().second;
  }
  steps.push_back(step);
}

weft::ir::Algorithm make(int n) {
  weft::ir::Algorithm algo;
  algo.name = "allreduce_allpairs_" + std::to_string(n);
  algo.collective = weft::ir::Collective::AllReduce;
  algo.collective_name = "allreduce";
  algo.protocol = weft::ir::Protocol::LL;
  algo.nchannels = 1;
  algo.nchunksperloop = n * n;
  algo.ngpus = n;
  algo.inplace = true;
  algo.outofplace = false;
  for (int r = 0; r < n; ++r) {
    weft::ir::Gpu gpu;
    gpu.id = r;
    gpu.input_chunks = n * n;
    gpu.scratch_chunks = (n - 1) * n;
    // tb 0 only reduces; tb k >= 1 talks to peer (r + k) % n and reduces chunk k of r's block.
    // Step indices of a peer threadblock: 0 send, 1 receive, then the reduction, then allgather.
    std::vector<std::pair<int, int>> receives;
    for (int k = 1; k < n; ++k) receives.push_back({k, 1});
    gpu.threadblocks.resize(static_cast<std::size_t>(n));
    for (int k = 0; k < n; ++k) {
      auto& tb = gpu.threadblocks[static_cast<std::size_t>(k)];
      tb.id = k;
      const int peer = (r + k) % n;
      if (k > 0) {
        tb.send = tb.recv = peer;
        tb.steps.push_back(make_step(StepType::Send, BufferKind::Input, peer * n, BufferKind::Scratch,
                                     (k - 1) * n, n));
        tb.steps.push_back(make_step(StepType::Recv, BufferKind::Input, r * n, BufferKind::Scratch,
                                     (k - 1) * n, n));
        tb.steps.back().hasdep = true;
      }
      std::vector<std::pair<int, int>> others;
      for (auto w : receives)
        if (w.first != k) others.push_back(w);
      for (int q = 1; q < n; ++q) {
        Step re = make_step(StepType::Reduce, BufferKind::Scratch, (q - 1) * n + k, BufferKind::Input,
                            r * n + k, 1);
        if (q == 1) {
          append_with_waits(tb.steps, others, re);
        } else {
          tb.steps.push_back(re);
        }
      }
      tb.steps.back().hasdep = true;
    }
    // Allgather: each peer threadblock sends r's reduced block once every reducer is done.
    std::vector<std::pair<int, int>> reducers;
    for (int k = 0; k < n; ++k) {
      reducers.push_back({k, static_cast<int>(gpu.threadblocks[static_cast<std::size_t>(k)].steps.size()) - 1});
    }
    for (int k = 1; k < n; ++k) {
      auto& tb = gpu.threadblocks[static_cast<std::size_t>(k)];
      const int peer = (r + k) % n;
      std::vector<std::pair<int, int>> others;
      for (auto w : reducers)
        if (w.first != k) others.push_back(w);
      append_with_waits(tb.steps, others,
                        make_step(StepType::Send, BufferKind::Input, r * n, BufferKind::Input, r * n, n));
      tb.steps.push_back(
          make_step(StepType::Recv, BufferKind::Input, peer * n, BufferKind::Input, peer * n, n));
    }
    algo.gpus.push_back(std::move(gpu));
  }
  return algo;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s RANKS OUT.xml\n", argv[0]);
    return 2;
  }
  const int n = std::atoi(argv[1]);
  if (n < 2 || n > 256) {
    std::fprintf(stderr, "RANKS must be 2..256\n");
    return 2;
  }
  std::string error;
  if (!weft::ir::write_xml_file(make(n), argv[2], &error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  return 0;
}
