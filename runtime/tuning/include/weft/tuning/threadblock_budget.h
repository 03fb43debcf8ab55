// The threadblocks per rank a chosen Weft algorithm may take (TuneRequest::max_threadblocks):
// each runs on an SM of its own, which the job's own kernels lose while the call runs. By
// default as many as NCCL itself would take at most on the machine's GPUs, so that a file Weft
// writes costs the job no more SMs than NCCL's own algorithms may.
#pragma once

#include <string>

#include "weft/predict/topology.h"

namespace weft::tuning {

// NCCL's channel ceiling for a GPU of compute capability `sm` (× 10; 0 when unknown): 32 before
// Blackwell (MAXCHANNELS, Volta to Hopper), 16 from sm 100 (Blackwell, NCCL 2.28's default); 32
// where the GPU is unknown.
int nccl_channel_ceiling(int sm);

// The GPU generation of compute capability `sm` (× 10), as a reader names it: "Volta", "Turing",
// "Ampere", "Ada", "Hopper", "Blackwell"; "an unknown GPU" for 0.
std::string gpu_generation(int sm);

struct ThreadblockBudget {
  int threadblocks = 0;  // per rank
  std::string source;    // where it came from, for the commands' output
};

// The budget: `asked` where it is positive (--max-threadblocks), else NCCL's channel ceiling for
// the machine's GPUs (predict::MachineInfo::gpu_sm).
ThreadblockBudget threadblock_budget(const predict::Topology& topology, int asked);

}  // namespace weft::tuning
