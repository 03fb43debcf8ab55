#include "fuse_and_schedule.h"

#include <utility>

#include <fmt/format.h>

namespace weft::compiler::detail {

Scheduled fuse_and_schedule(const InstructionDag& lowered, const InstructionDag* forwarded,
                            const ForwardStats& forward_stats, bool fusion, ScheduleOrder first,
                            const Lap& lap, bool unbounded, bool msccl_fusion) {
  Scheduled out;
  out.order = first;
  out.unbounded = unbounded;
  out.msccl_fusion = msccl_fusion;
  out.forwarded = forward_stats;
  // Depth 2 first: what every runtime guarantees (docs/architecture.md §2.4); unbounded leaves
  // deadlock freedom to the executor's verdict.
  struct Attempt {
    bool forwarded;
    bool fused;
    ScheduleOrder order;
    int depth;
  };
  std::vector<Attempt> attempts;
  for (const bool forward : {true, false}) {
    if (!forward && !forwarded) break;
    if (unbounded) {
      // Only the order asked for: this schedule is a candidate beside the others, not a fallback.
      if (fusion) attempts.push_back({forward, true, first, 0});
      attempts.push_back({forward, false, first, 0});
      continue;
    }
    for (const int depth : {2, 0}) {
      if (fusion) {
        attempts.push_back({forward, true, first, depth});
        attempts.push_back({forward, true, ScheduleOrder::ProgramOrder, depth});
      }
      attempts.push_back({forward, false, first, depth});
      attempts.push_back({forward, false, ScheduleOrder::ProgramOrder, depth});
    }
  }
  // The DAG `out.dag` holds now: (forwarded, fused).
  std::optional<std::pair<bool, bool>> built;
  const InstructionDag* base = nullptr;
  std::vector<char> keep_apart;  // per instruction of `base`: a send kept out of fusion
  std::vector<int> absorbed;     // per instruction of `out.dag`: the send of `base` it absorbed
  for (const Attempt& attempt : attempts) {
    const std::pair<bool, bool> wanted{attempt.forwarded, attempt.fused};
    if (built != wanted) {
      base = attempt.forwarded && forwarded ? forwarded : &lowered;
      if (attempt.fused) {
        if (msccl_fusion) {
          keep_apart = msccl_unfused_sends(*base);
        } else {
          keep_apart.assign(base->size(), 0);
        }
        out.dag = fuse(*base, &out.fused, keep_apart, &absorbed);
        lap("fuse");
      } else {
        out.dag = *base;
        out.fused = {};
      }
      if (!attempt.forwarded) out.forwarded = {};
      built = wanted;
    }
    const std::string tried = fmt::format(
        "{}{}, {}, FIFO depth {}", attempt.fused ? "fused" : "unfused",
        attempt.forwarded || !forwarded ? "" : ", copies not forwarded", to_string(attempt.order),
        attempt.depth > 0 ? std::to_string(attempt.depth) : std::string("unbounded"));
    const std::string label = fmt::format("schedule ({})", tried);
    ScheduleFailure failure;
    out.schedule = schedule(out.dag, ScheduleOptions{attempt.order, attempt.depth}, &failure);
    lap("schedule");
    // A fused step that waits for room towards its send peer holds the message it received,
    // and with it every later message from that peer: where the order stuck on such steps,
    // those fusions alone are undone and the same order is tried again.
    constexpr int kUndoRounds = 16;
    for (int round = 0; !out.schedule && attempt.fused && attempt.depth > 0 && round < kUndoRounds;
         ++round) {
      std::vector<int> undone;
      for (const int k : failure.waiting_sends) {
        if (absorbed[static_cast<std::size_t>(k)] >= 0) undone.push_back(k);
      }
      if (undone.empty()) break;
      std::string names;
      for (std::size_t u = 0; u < undone.size() && u < 3; ++u) {
        const Instruction& step = out.dag.instructions[static_cast<std::size_t>(undone[u])];
        names +=
            fmt::format("{}{} (rank {}: from rank {} to rank {})", u == 0 ? "" : "; ",
                        out.dag.describe(undone[u]), step.rank, step.recv_peer, step.send_peer);
      }
      if (undone.size() > 3) names += fmt::format("; and {} more", undone.size() - 3);
      out.notes.push_back(fmt::format(
          "{}: fusion undone, the rest kept: {}: fused, it waits for room towards its send peer "
          "holding the message it received, on which later messages wait",
          label, names));
      for (const int k : undone)
        keep_apart[static_cast<std::size_t>(absorbed[static_cast<std::size_t>(k)])] = 1;
      out.dag = fuse(*base, &out.fused, keep_apart, &absorbed);
      lap("fuse");
      failure = ScheduleFailure{};
      out.schedule = schedule(out.dag, ScheduleOptions{attempt.order, attempt.depth}, &failure);
      lap("schedule");
    }
    if (out.schedule) {
      out.fifo_depth = attempt.depth;
      out.attempt = tried;
      break;
    }
    out.notes.push_back(fmt::format("{}: {}", label, failure.why));
    // The next attempt starts again from every fusion.
    built.reset();
  }
  return out;
}

bool same_schedule(const Scheduled& a, const Scheduled& b) {
  if (!a.schedule || !b.schedule || a.dag.size() != b.dag.size()) return false;
  if (a.schedule->order != b.schedule->order) return false;
  for (std::size_t k = 0; k < a.dag.size(); ++k) {
    const Instruction& x = a.dag.instructions[k];
    const Instruction& y = b.dag.instructions[k];
    if (x.type != y.type || x.rank != y.rank || x.srcoff != y.srcoff || x.dstoff != y.dstoff ||
        x.send_to != y.send_to || x.recv_from != y.recv_from || x.operation != y.operation) {
      return false;
    }
  }
  return true;
}

}  // namespace weft::compiler::detail
