// Knobs of the GPU runtime, read from the environment (NCCL's convention) or set by the caller.
// Parsing is separate from getenv so that it can be tested and so that a bad value is reported
// naming the variable instead of being ignored.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "weft/ir/ir.h"
#include "weft/program/status.h"

namespace weft::gpu {

struct ProtocolOptions {
  std::size_t slot_bytes = 0;  // FIFO slot, in bytes of slot memory (LL: half is data)
  int fifo_depth = 0;          // slots per connection, ≥ 2 (docs/architecture.md §2.4)
};

// How the interpreter kernel synchronises a step (docs/performance.md, "Step variants"):
//  Full     every step: a CTA barrier after the wait phase and one after the data phase, and
//           an acquire fence after every poll (the kernel as first measured);
//  Lean     a barrier only where a phase needs one (a wait that acquires something, a post that
//           publishes something, and never two data phases without one between them), acquire
//           loads instead of acquire fences, and the last head or tail seen kept, so that a step
//           whose slot or message is already known to be there neither polls nor fences;
//  Overlap  Lean, and for Simple warp roles: the CTA's last warp posts (acknowledgements,
//           messages, completions) and moves no data, the other warps move it and only arrive
//           at a named barrier for the post, so the post's fence is off their path; thread 0
//           begins the next message's wait as soon as the data is moved, while the post is in
//           flight. LL and LL128 run as Lean.
// All are proved by the same host-mode and GPU tests. Lean is the default: on an H200 it was
// right on every sweep and faster on every benchmark (docs/performance.md, "Step variants");
// WEFT_STEP=full brings back the step as first measured, to compare or to rule Lean out;
// WEFT_STEP=overlap waits for a GPU to measure it.
enum class StepVariant { Full, Lean, Overlap };
const char* to_string(StepVariant variant);
std::optional<StepVariant> parse_step_variant(std::string_view text);

struct RuntimeOptions {
  // WEFT_TIMEOUT_S: seconds a wait in the kernel may last, once every rank has entered the call,
  // before the call fails with the wait's place (a deadlock, or a peer that stopped mid-call).
  double timeout_s = 5.0;
  // WEFT_ARRIVAL_TIMEOUT_S: seconds a wait may last while some rank has not yet entered the call
  // at all; a rank that is only late (loading data, writing a checkpoint) is waited for this
  // long, and named if it never comes.
  double arrival_timeout_s = 1800.0;
  // WEFT_{SIMPLE,LL,LL128}_SLOT_BYTES and WEFT_FIFO_DEPTH (all protocols).
  ProtocolOptions simple{256 * 1024, 4};
  ProtocolOptions ll{32 * 1024, 8};
  ProtocolOptions ll128{128 * 1024, 4};
  // WEFT_NTHREADS: threads per threadblock (CTA), a multiple of 32 in [64, 512].
  int threads = 512;
  // WEFT_TILE_BYTES: upper bound on a tile's bytes per chunk, 0 for what the slot allows. Small
  // values force many tiles (tests use it; results must not depend on it).
  std::size_t max_tile_bytes = 0;
  // WEFT_STEP=full|lean|overlap: the step variant.
  StepVariant step = StepVariant::Lean;
  // WEFT_SIMPLE_SLICES (the overlap step only): a Simple step moves this many tiles one after
  // another, each a message (a slice) in a slot of its own, before the next step, the receiver
  // consuming each as it lands while the sender writes the next (NCCL's slices). The FIFO's
  // memory stays the same: slots of slot_bytes / slices, a depth of fifo_depth × slices
  // (protocol()). 1 until a GPU has measured more.
  int simple_slices = 1;

  // The FIFO as set (WEFT_*_SLOT_BYTES, WEFT_FIFO_DEPTH).
  const ProtocolOptions& configured(ir::Protocol proto) const;
  // The FIFO as laid out and run: configured(), with Simple's slots cut into its slices.
  ProtocolOptions protocol(ir::Protocol proto) const;
};

inline constexpr int kMinThreads = 64;
inline constexpr int kMaxThreads = 512;  // the kernel's __launch_bounds__
inline constexpr int kMinFifoDepth = 2;
inline constexpr int kMaxFifoDepth = 64;
inline constexpr int kMaxSimpleSlices = 16;

// Returns the value of an environment variable, or nullptr when unset.
using EnvLookup = std::function<const char*(const char*)>;
EnvLookup process_environment();

// Starts from `defaults` and applies every WEFT_* variable that is set. A malformed or
// out-of-range value fails with InvalidArgument naming the variable, its value and the range.
Result<RuntimeOptions> runtime_options_from_env(const EnvLookup& lookup,
                                                RuntimeOptions defaults = {});
// Checks options built in code the same way.
Status check(const RuntimeOptions& options);

// "64K", "2M", "1G", "4096": powers of 1024, as nccl-tests. Nothing on malformed text or overflow.
std::optional<std::size_t> parse_byte_size(std::string_view text);

}  // namespace weft::gpu
