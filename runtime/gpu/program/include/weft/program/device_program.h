// The flat device program of one rank (docs/architecture.md §5, "Loading"): what the interpreter
// kernel reads instead of the IR. Threadblocks and steps become plain arrays; `nop` steps disappear
// into the dependency lists of the steps they guard; runs of `re` steps onto one destination become
// one n-ary reduction; every dependency names a real step by its index in the flat step list of its
// threadblock. The structs are plain data shared by the host (which builds and checks them) and
// the kernel (which reads them), so this header compiles under nvcc and g++ alike.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define WEFT_HOST_DEVICE __host__ __device__
#else
#define WEFT_HOST_DEVICE
#endif

#if !defined(__CUDACC_RTC__)
#include <string>
#include <vector>

#include "weft/ir/ir.h"
#include "weft/program/status.h"
#endif

namespace weft::gpu {

// Sources of one merged reduction, the step's own srcbuf/srcoff included (MSCCL allows 16; eight
// keeps the kernel's registers in check, and longer runs are split).
inline constexpr int kMaxReduceSources = 8;

enum class DeviceBuffer : std::uint8_t { Input = 0, Output = 1, Scratch = 2, None = 255 };

// Step flags.
inline constexpr std::uint8_t kStepPublishes = 1;  // another threadblock waits on this step
// Its reads and writes overlap with a shift (e.g. `cpy` from chunks 1..2 to chunks 0..1): the
// kernel must finish each piece before the next instead of doing all pieces at once.
inline constexpr std::uint8_t kStepSerialPieces = 2;
// With kStepSerialPieces: last piece first (e.g. `cpy` from chunks 0..1 to chunks 1..2, where
// ascending order would overwrite chunk 1 before reading it).
inline constexpr std::uint8_t kStepReversePieces = 4;

struct DeviceStep {
  std::uint8_t type = 0;  // ir::StepType, never Nop
  DeviceBuffer srcbuf = DeviceBuffer::None;
  DeviceBuffer dstbuf = DeviceBuffer::None;
  std::uint8_t flags = 0;
  std::int32_t srcoff = -1;  // in chunks
  std::int32_t dstoff = -1;
  std::int32_t count = 0;             // chunks: the pieces of one tile this step touches
  std::int32_t first_dependency = 0;  // into RankProgram::dependencies
  std::int32_t dependency_count = 0;
  std::int32_t first_source = 0;  // merged `re`: further sources, into RankProgram::sources
  std::int32_t source_count = 0;
  std::int32_t ir_step = 0;  // the IR step it came from (the last one of a merged run)
};

// "Threadblock `threadblock` has finished flat step `step` of the current tile." The waiter
// compares that threadblock's flag with dependency_flag(launch, tile, steps, step).
struct DeviceDependency {
  std::int32_t threadblock = 0;  // index in RankProgram::threadblocks
  std::int32_t step = 0;         // flat step index within it
  std::int32_t steps = 0;        // its flat step count (the flag's tile stride)
  std::int32_t ir_step = 0;      // that step's IR index, for messages
};

struct DeviceSource {
  DeviceBuffer buffer = DeviceBuffer::None;
  std::int32_t offset = 0;
};

struct DeviceThreadblock {
  std::int32_t id = 0;  // the IR's tb id (== index)
  std::int32_t send_peer = -1;
  std::int32_t recv_peer = -1;
  std::int32_t channel = 0;
  std::int32_t first_step = 0;
  std::int32_t step_count = 0;
};

// A threadblock's progress flag after it finished flat step `step` of tile `tile` in launch
// `launch`: increasing over a threadblock's life, across launches too, so a waiter only asks
// whether a flag has reached its target (flag_reached) and the host never resets flags. The
// launch number takes the high 32 bits; tile × steps + step + 1 must stay below 2^32 (plan_call
// checks it).
WEFT_HOST_DEVICE constexpr std::uint64_t dependency_flag(std::uint64_t launch, std::uint64_t tile,
                                                         std::uint64_t steps, std::uint64_t step) {
  return (launch << 32) + tile * steps + step + 1;
}

// Whether a progress flag `seen` has reached `target`. Compared modulo 2^64, because launch << 32
// wraps after 2^32 launches (half a day of 10 µs calls): a flag and a target are never more than
// a few launches apart, far below 2^63, so the signed difference orders them across the wrap
// where a plain `seen >= target` would let every waiter through.
WEFT_HOST_DEVICE constexpr bool flag_reached(std::uint64_t seen, std::uint64_t target) {
  return static_cast<std::int64_t>(seen - target) >= 0;
}

#if !defined(__CUDACC_RTC__)

struct RankProgram {
  int rank = 0;
  std::vector<DeviceThreadblock> threadblocks;
  std::vector<DeviceStep> steps;
  std::vector<DeviceDependency> dependencies;
  std::vector<DeviceSource> sources;
  int max_count = 0;  // largest `cnt` of any step
  int max_steps = 0;  // longest flat step list of a threadblock
  // What flattening did, for tests and `weftc info`-style reports.
  int nops_folded = 0;
  int reduces_merged = 0;  // `re` steps absorbed into an earlier one
};

// Flattens rank `rank` of `algo`, which must have passed validation. Still checks everything it
// relies on (ids, step types, dependency targets, cycles through nops) and fails with
// InvalidAlgorithm naming the element instead of producing a program that could hang.
Result<RankProgram> flatten_rank(const ir::Algorithm& algo, int rank);

// A hash of everything about `algo` that the ranks must agree on (structure, not names or line
// numbers): loading compares it across participants so that ranks which loaded different files
// in the same position fail with Mismatch instead of exchanging wrong messages.
std::uint64_t fingerprint(const ir::Algorithm& algo);

// The flat steps of threadblock `tb`.
inline const DeviceStep* steps_of(const RankProgram& program, int tb) {
  return program.steps.data() + program.threadblocks[static_cast<std::size_t>(tb)].first_step;
}

#endif

}  // namespace weft::gpu
