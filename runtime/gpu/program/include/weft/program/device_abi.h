// Private to the GPU runtime: what the host hands the interpreter kernel. Plain data only,
// included by the host code and by both builds of the kernels, so every field has a fixed width.
#pragma once

#include <cstddef>
#include <cstdint>

#include "weft/program/device_program.h"

namespace weft::gpu::device {

// The protocols, as the interpreter kernel's template argument (instantiate.cuh maps ir::Protocol
// onto them). loader.cpp checks that they are ir::Protocol's values.
enum : int { kSimple = 0, kLL = 1, kLL128 = 2, kProtocolCount };

// ir::StepType values, as the flat program stores them (DeviceStep::type): every type but Nop,
// ir::StepType's last, which loading folds away. loader.cpp checks each value and the count.
enum : std::uint8_t {
  kSend = 0,
  kRecv = 1,
  kRecvCopySend = 2,
  kRecvReduceSend = 3,
  kRecvReduceCopy = 4,
  kRecvReduceCopySend = 5,
  kCopy = 6,
  kReduce = 7,
  kStepTypeCount,  // not a type: how many there are
};

// Ranks one launch can carry (emulation puts every rank in one launch). The per-rank buffer
// pointers travel in the kernel parameters, which stay well under 4 KB.
inline constexpr int kMaxLocalRanks = 64;

// Progress flags of one rank's threadblocks: one per 128-byte line so that a threadblock's
// publishing does not disturb the lines others poll.
inline constexpr int kFlagStrideWords = 16;

// Every rank's region begins with its arrival table: word p holds the last launch in which rank
// p's threadblocks started (each rank writes its word in every region when a launch begins). A
// wait's timeout only starts once every rank has arrived in the current launch, so a rank that
// is merely late (data loading, a checkpoint) is waited for up to the arrival limit instead.
inline constexpr std::size_t kArrivalTableOffset = 0;

// LL: a slot's lines are all rewritten (padding lines carry the flag too) by the messages k with
// k mod kLLCleanPeriod < depth, so that no line of a slot is ever older than 2^30 messages and a
// stale flag can never match after the 32-bit flags wrap.
inline constexpr std::uint64_t kLLCleanPeriod = std::uint64_t{1} << 30;

// The LL flag of message k: 1 .. 2^32 − 1, never 0, so that a line nobody has written yet (zero
// from allocation) never matches.
WEFT_HOST_DEVICE constexpr std::uint32_t ll_flag(std::uint64_t message) {
  return static_cast<std::uint32_t>(message % 0xffffffffull) + 1u;
}

// What a threadblock carries from one launch to the next (device memory, only it touches its
// own): the launch number it completed last and its message counts, which make every flag and
// counter monotone so that the host never resets anything between calls or graph replays.
struct ThreadblockState {
  std::uint64_t launches = 0;
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  std::uint64_t unused = 0;
};

// One launched CTA: a threadblock of a local rank with at least one step.
struct CtaDescriptor {
  std::int32_t rank = 0;
  std::int32_t local_index = 0;  // into LaunchArgs::buffers
  std::int32_t threadblock = 0;  // index in the rank's program (== IR tb id)
  std::int32_t step_count = 0;
  std::int32_t send_peer = -1;
  std::int32_t recv_peer = -1;
  std::int32_t channel = 0;
  std::int32_t nranks = 0;                         // entries of peer_regions
  const DeviceStep* steps = nullptr;               // this threadblock's flat steps
  const DeviceDependency* dependencies = nullptr;  // the rank's dependency array
  const DeviceSource* sources = nullptr;           // the rank's merged-reduce sources
  std::uint64_t* flags = nullptr;                  // the rank's flags, kFlagStrideWords apart
  ThreadblockState* state = nullptr;
  // Every rank's region as this rank addresses it (its own included), for the arrival tables.
  char* const* peer_regions = nullptr;
  // Sending: the receiver's FIFO and tail (peer memory); our head, which the receiver advances.
  char* send_fifo = nullptr;
  std::uint64_t* send_tail = nullptr;
  const std::uint64_t* send_head = nullptr;
  // Receiving: our FIFO and tail; the sender's head (peer memory), which we advance.
  const char* recv_fifo = nullptr;
  const std::uint64_t* recv_tail = nullptr;
  std::uint64_t* recv_head = nullptr;
  // Sending to a rank on another host (docs/architecture.md §6): send_fifo, send_tail and
  // send_head are this process's proxy's staging slots and counters, and message k's size in
  // bytes goes at send_descriptors[k mod depth] before its tail is posted, for every protocol,
  // so that the proxy knows what to forward. Null when the receiver's memory is reached
  // directly.
  std::uint64_t* send_descriptors = nullptr;
};

struct RankPointers {
  char* input = nullptr;
  char* output = nullptr;
  char* scratch = nullptr;
};

// What a wait was for, in an ErrorReport.
enum class WaitKind : std::uint32_t {
  None = 0,
  Dependency = 1,  // another threadblock of the rank to finish a step
  Message = 2,     // the next message on the receive connection (Simple: tail counter)
  Space = 3,       // a free slot on the send connection (the receiver's acknowledgement)
  LineFlag = 4,    // LL/LL128: the flags of the next message's lines
  Arrival = 5,     // another rank to enter the launch at all (the arrival limit)
  Aborted = 6,     // nothing: another communicator of the process failed, every wait gave up
};

// The first failure of a launch, written by the failing thread into host-mapped memory so that
// the host can read it without touching the (possibly still running) stream. `valid` is written
// last, after a system-scope fence.
struct ErrorReport {
  std::uint32_t valid = 0;
  std::uint32_t kind = 0;  // WaitKind
  std::int32_t rank = -1;
  std::int32_t threadblock = -1;
  std::int32_t ir_step = -1;
  std::int32_t flat_step = -1;
  std::int32_t peer = -1;
  std::int32_t channel = -1;
  std::int32_t dep_threadblock = -1;
  std::int32_t dep_step = -1;  // flat step index in dep_threadblock
  std::int32_t dep_ir_step = -1;
  std::int32_t part = 0;  // which message of a step that sends its pieces as several
  std::uint64_t tile = 0;
  std::uint64_t launch = 0;
  std::uint64_t expected = 0;
  std::uint64_t observed = 0;
  std::uint64_t waited_ns = 0;
};

// Device memory shared by the CTAs of one communicator's launches.
struct Control {
  std::uint32_t claimed = 0;  // 0 until a failing thread claims the report
  std::uint32_t unused = 0;
};

struct LaunchArgs {
  const CtaDescriptor* ctas = nullptr;
  Control* control = nullptr;
  ErrorReport* report = nullptr;  // host-mapped
  // The process's abort word (host-mapped, one per process): every communicator's waits give up
  // once it differs from the value it had when the communicator was created.
  std::uint32_t* abort = nullptr;
  std::uint32_t abort_epoch = 0;
  // 1 when some peer may be on another device (system-scope ordering), 0 when every rank of the
  // communicator shares this device (GPU scope suffices).
  std::uint32_t system_scope = 1;
  std::uint64_t arrival_timeout_ns = 0;
  std::uint64_t chunk_elements = 0;
  std::uint64_t tile_elements = 0;
  std::uint64_t tiles = 0;
  std::uint64_t piece_stride_bytes = 0;  // bytes between a message's pieces (16-byte multiple)
  std::uint64_t slot_bytes = 0;
  std::uint64_t timeout_ns = 0;
  std::uint32_t element_bytes = 0;
  std::uint32_t fifo_depth = 0;
  std::uint32_t pieces_per_message = 0;  // a step with more pieces sends several messages
  // 1: the lean step (RuntimeOptions::step, interpreter.cuh), 0: the full one.
  std::uint32_t lean_steps = 0;
  // 1: the overlap step (lean, with Simple's warp roles), 0: lean_steps says.
  std::uint32_t overlap_steps = 0;
  // Simple: tiles a step moves one after another, each a message (slice), before the next step
  // (RuntimeOptions::simple_slices); dependencies are per group of them. 1 for LL and LL128.
  std::uint32_t slices = 1;
  RankPointers buffers[kMaxLocalRanks];
};

// Arguments of the avg premultiplication (one launch per local rank that needs it).
struct ScaleArgs {
  const char* source = nullptr;
  char* destination = nullptr;
  std::uint64_t elements = 0;
  double factor = 1.0;
};

}  // namespace weft::gpu::device
