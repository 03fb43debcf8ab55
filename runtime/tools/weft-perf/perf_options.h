// weft-perf's command line (nccl-tests' flags, plus Weft's) and the size sweep it implies.
// Host-only, unit-tested in tests/gpu_host.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "weft/ir/ir.h"
#include "weft/ir/types.h"
#include "weft/program/status.h"

namespace weft::perf {

struct PerfOptions {
  // What to run: an XML file, or a built-in generator ("ring", "ring:4" for 4 channels,
  // "allpairs", "allpairs-chain", "allgather-ring", "chain:8" for 8 dependent hops on 2 ranks).
  std::string xml;
  std::string builtin;
  std::optional<ir::Protocol> protocol;  // --proto: overrides the algorithm's
  bool any_size = false;                 // --any-size: the file's minBytes..maxBytes band ignored

  // nccl-tests' flags.
  std::size_t min_bytes = std::size_t{32} << 20;  // -b
  std::size_t max_bytes = std::size_t{32} << 20;  // -e
  std::size_t step_factor = 2;                    // -f
  int iterations = 20;                            // -n
  int warmup = 5;                                 // -w
  bool check = true;                              // -c
  DataType dtype = DataType::Float;               // -d
  ReduceOp op = ReduceOp::Sum;                    // -o
  int graph_launches = 0;                         // -G: replay a captured graph this often
  int root = 0;                                   // -r

  // Emulation: all ranks in this process on one GPU.
  int ranks = 0;  // --ranks
  // Multi-process: one rank per process, meeting at --rendezvous.
  int rank = -1;           // --rank
  int nranks = 0;          // --nranks
  int local_ranks = 1;     // --local-ranks: this process drives ranks rank .. rank + K − 1
  std::string rendezvous;  // --rendezvous host:port
  int device = -1;         // --device N (default: local rank modulo the devices)
  bool host = false;       // --device host: host mode, the interpreter on CPU threads
  double timeout_s = 0;    // --timeout (0: WEFT_TIMEOUT_S)
  // --max-memory: the host memory the run may take (default: what the machine has available).
  std::optional<std::uint64_t> max_memory;
};

struct ParseOutcome {
  std::optional<PerfOptions> options;  // nothing when help was asked for or parsing failed
  std::string text;                    // the help text, or the error
  int exit_code = 0;                   // 0 after --help, 2 after an error
};

ParseOutcome parse_perf_options(int argc, const char* const* argv);

// Sizes from min to max (inclusive), multiplying by `factor` (≥ 2), as nccl-tests does.
std::vector<std::size_t> size_sweep(std::size_t min_bytes, std::size_t max_bytes,
                                    std::size_t factor);

// The call for a row of `bytes` (the total buffer, as in nccl-tests): NCCL's per-rank count,
// rounded down to what the algorithm divides into chunks (at least one chunk per rank), and
// the bytes that count really covers.
struct RowCall {
  std::size_t count = 0;  // NCCL's count (per-peer / per-rank as in docs/architecture.md §2.2)
  std::size_t total_elements = 0;  // count × m: the "count" column of nccl-tests
  std::size_t bytes = 0;           // total_elements × element size
};
RowCall row_call(const ir::Algorithm& algo, std::size_t bytes, DataType dtype);

// nccl-tests' bus-bandwidth factor: allreduce 2(n−1)/n, allgather/reducescatter/alltoall
// (n−1)/n, broadcast/reduce 1.
double bus_factor(ir::Collective collective, int nranks);

// The longest chain:HOPS (a hop is a step on each of its two ranks).
inline constexpr int kMaxChainHops = 256;

// "ring", "ring:4", "allpairs", "allpairs-chain", "allgather-ring", "chain:8": the algorithm, or
// why not.
gpu::Result<ir::Algorithm> builtin_algorithm(const std::string& spec, int nranks,
                                             ir::Protocol protocol);

}  // namespace weft::perf
