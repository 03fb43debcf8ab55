#include "weft/cpu/plan.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "weft/ir/geometry.h"

namespace weft::cpu::detail {

namespace {

constexpr std::array<ir::BufferKind, 3> kBuffers{ir::BufferKind::Input, ir::BufferKind::Output,
                                                 ir::BufferKind::Scratch};

std::uint8_t slot_of(ir::BufferKind buffer) {
  switch (buffer) {
    case ir::BufferKind::Input:
      return kInputSlot;
    case ir::BufferKind::Output:
      return kOutputSlot;
    case ir::BufferKind::Scratch:
      return kScratchSlot;
    case ir::BufferKind::None:
      break;
  }
  return kNoSlot;
}

std::string_view buffer_name(ir::BufferKind buffer) {
  switch (buffer) {
    case ir::BufferKind::Input:
      return "input";
    case ir::BufferKind::Output:
      return "output";
    case ir::BufferKind::Scratch:
      return "scratch";
    case ir::BufferKind::None:
      break;
  }
  return "no";
}

// Chunks of each buffer a rank really has in a call mode. In an in-place call one buffer lives
// inside the other, so the surviving one must hold every chunk mapped into it.
std::array<int, 3> real_extents(const ir::Algorithm& algo, int rank, bool in_place) {
  std::array<int, 3> logical{};
  for (std::size_t k = 0; k < kBuffers.size(); ++k) {
    logical[k] = std::max(0, ir::extent_chunks(algo, rank, kBuffers[k]));
  }
  if (!in_place) return logical;
  std::array<int, 3> real{};
  for (std::size_t k = 0; k < kBuffers.size(); ++k) {
    if (logical[k] == 0) continue;
    const ir::Alias last = ir::resolve_in_place(algo, rank, kBuffers[k], logical[k] - 1);
    auto& extent = real[slot_of(last.buffer)];
    extent = std::max(extent, last.chunk + 1);
  }
  return real;
}

// Resolves one operand of a step (its buffer, offset and count) for a call mode; returns an
// error message, or empty.
std::string resolve_operand(const ir::Algorithm& algo, int rank, bool in_place,
                            const std::array<int, 3>& real, std::string_view role,
                            ir::BufferKind buffer, int offset, int count, std::uint8_t& slot,
                            int& chunk) {
  if (buffer == ir::BufferKind::None) return fmt::format("the step needs a {} buffer", role);
  const int extent = ir::extent_chunks(algo, rank, buffer);
  if (offset < 0 || offset + count > extent) {
    return fmt::format("{} {}[{}..{}) lies outside the {} buffer ({} chunks)", role,
                       ir::to_char(buffer), offset, offset + count, buffer_name(buffer), extent);
  }
  ir::Alias alias{buffer, offset};
  if (in_place) alias = ir::resolve_in_place(algo, rank, buffer, offset);
  slot = slot_of(alias.buffer);
  chunk = alias.chunk;
  if (slot == kNoSlot || chunk < 0 || chunk + count > real[slot]) {
    return fmt::format("{} {}[{}..{}) lies outside the in-place {} buffer ({} chunks)", role,
                       ir::to_char(buffer), offset, offset + count, buffer_name(alias.buffer),
                       slot == kNoSlot ? 0 : real[slot]);
  }
  return {};
}

void build_layout(const ir::Algorithm& algo, const Plan& plan,
                  const std::vector<const ir::Threadblock*>& sources, bool in_place,
                  ModeLayout& layout) {
  layout.extents.resize(static_cast<std::size_t>(plan.ngpus));
  for (int r = 0; r < plan.ngpus; ++r) {
    layout.extents[static_cast<std::size_t>(r)] = real_extents(algo, r, in_place);
  }
  for (std::size_t g = 0; g < plan.threadblocks.size(); ++g) {
    const PlanThreadblock& tb = plan.threadblocks[g];
    const auto& real = layout.extents[static_cast<std::size_t>(tb.rank)];
    const auto& steps = sources[g]->steps;
    for (std::size_t s = 0; s < steps.size(); ++s) {
      const ir::Step& step = steps[s];
      PlanStep& out = layout.steps[tb.first_step + s];
      std::string problem;
      if (ir::reads_source(step.type)) {
        problem = resolve_operand(algo, tb.rank, in_place, real, "source", step.srcbuf, step.srcoff,
                                  step.count, out.src_slot, out.src_chunk);
      }
      if (problem.empty() && ir::writes_destination(step.type)) {
        problem = resolve_operand(algo, tb.rank, in_place, real, "destination", step.dstbuf,
                                  step.dstoff, step.count, out.dst_slot, out.dst_chunk);
      }
      if (!problem.empty()) {
        layout.error =
            fmt::format("{}: {}{}", ir::element_path(tb.rank, tb.id, static_cast<int>(s)), problem,
                        in_place ? " (in-place call)" : "");
        return;
      }
    }
  }
}

// Builds threadblocks, connections and the mode-independent part of the steps; returns an error
// message, or empty.
std::string build_structure(const ir::Algorithm& algo, Plan& plan,
                            std::vector<const ir::Threadblock*>& sources,
                            std::vector<PlanStep>& steps) {
  if (algo.ngpus <= 0) return fmt::format("the algorithm has {} ranks", algo.ngpus);
  if (algo.gpus.size() != static_cast<std::size_t>(algo.ngpus)) {
    return fmt::format("ngpus is {} but the algorithm has {} gpu elements", algo.ngpus,
                       algo.gpus.size());
  }
  plan.ngpus = algo.ngpus;
  std::map<ir::Connection, int> connection_index;
  auto connection = [&](ir::Connection key) {
    auto [it, inserted] =
        connection_index.try_emplace(key, static_cast<int>(plan.connections.size()));
    if (inserted) plan.connections.push_back({key, -1, -1, 0});
    return it->second;
  };
  for (int r = 0; r < plan.ngpus; ++r) {
    const ir::Gpu& gpu = algo.gpus[static_cast<std::size_t>(r)];
    if (gpu.id != r) return fmt::format("gpu element {} has id {}", r, gpu.id);
    const std::size_t count = gpu.threadblocks.size();
    std::vector<const ir::Threadblock*> by_id(count, nullptr);
    for (const auto& tb : gpu.threadblocks) {
      if (tb.id < 0 || static_cast<std::size_t>(tb.id) >= count ||
          by_id[static_cast<std::size_t>(tb.id)]) {
        return fmt::format("{}: threadblock ids are not 0..{}", ir::element_path(r, tb.id),
                           count - 1);
      }
      by_id[static_cast<std::size_t>(tb.id)] = &tb;
    }
    plan.first_threadblock.push_back(static_cast<int>(plan.threadblocks.size()));
    for (const ir::Threadblock* tb : by_id) {
      const int g = static_cast<int>(plan.threadblocks.size());
      PlanThreadblock out;
      out.rank = r;
      out.id = tb->id;
      out.channel = tb->channel;
      out.send_peer = tb->send;
      out.recv_peer = tb->recv;
      out.first_step = steps.size();
      out.step_count = static_cast<int>(tb->steps.size());
      // Where a problem is, spelt out only for its message: a plan is built for every candidate
      // the compiler's judge predicts and every proof, and formatting a path for each of
      // thousands of steps cost more than the checks.
      const auto where = [&] { return ir::element_path(r, tb->id); };
      for (int peer : {tb->send, tb->recv}) {
        if (peer != -1 && (peer < 0 || peer >= plan.ngpus || peer == r)) {
          return fmt::format("{}: peer {} is not another rank", where(), peer);
        }
      }
      if (tb->channel < 0) return fmt::format("{}: channel {} is negative", where(), tb->channel);
      if (tb->send >= 0) {
        out.send_connection = connection({tb->channel, r, tb->send});
        auto& c = plan.connections[static_cast<std::size_t>(out.send_connection)];
        if (c.sender_threadblock >= 0) {
          return fmt::format("{}: a second threadblock sends to rank {} on channel {}", where(),
                             tb->send, tb->channel);
        }
        c.sender_threadblock = g;
      }
      if (tb->recv >= 0) {
        out.recv_connection = connection({tb->channel, tb->recv, r});
        auto& c = plan.connections[static_cast<std::size_t>(out.recv_connection)];
        if (c.receiver_threadblock >= 0) {
          return fmt::format("{}: a second threadblock receives from rank {} on channel {}",
                             where(), tb->recv, tb->channel);
        }
        c.receiver_threadblock = g;
      }
      for (std::size_t s = 0; s < tb->steps.size(); ++s) {
        const ir::Step& step = tb->steps[s];
        const auto at = [&] { return ir::element_path(r, tb->id, static_cast<int>(s)); };
        if (ir::receives(step.type) && tb->recv < 0) {
          return fmt::format("{}: step '{}' receives in a threadblock with no receive peer", at(),
                             ir::to_string(step.type));
        }
        if (ir::sends(step.type) && tb->send < 0) {
          return fmt::format("{}: step '{}' sends in a threadblock with no send peer", at(),
                             ir::to_string(step.type));
        }
        if (step.type != ir::StepType::Nop && step.count < 0) {
          return fmt::format("{}: cnt {} is negative", at(), step.count);
        }
        if (ir::sends(step.type)) {
          ++plan.connections[static_cast<std::size_t>(out.send_connection)].sends_per_tile;
        }
        PlanStep planned;
        planned.type = step.type;
        planned.count = step.type == ir::StepType::Nop ? 0 : step.count;
        planned.dep_step = step.deps;
        planned.dep_threadblock = step.depid;  // an id of this rank until resolved below
        steps.push_back(planned);
      }
      plan.threadblocks.push_back(out);
      sources.push_back(tb);
    }
  }
  plan.first_threadblock.push_back(static_cast<int>(plan.threadblocks.size()));

  // Dependencies name threadblock ids of the same rank; make them global numbers.
  for (const PlanThreadblock& tb : plan.threadblocks) {
    const int first = plan.first_threadblock[static_cast<std::size_t>(tb.rank)];
    const int in_rank = plan.first_threadblock[static_cast<std::size_t>(tb.rank) + 1] - first;
    for (int s = 0; s < tb.step_count; ++s) {
      PlanStep& step = steps[tb.first_step + static_cast<std::size_t>(s)];
      if (step.dep_threadblock < 0) {
        step.dep_threadblock = -1;
        continue;
      }
      const auto at = [&] { return ir::element_path(tb.rank, tb.id, s); };
      if (step.dep_threadblock >= in_rank) {
        return fmt::format("{}: depends on threadblock {}, which rank {} does not have", at(),
                           step.dep_threadblock, tb.rank);
      }
      const int target = first + step.dep_threadblock;
      const int target_steps = plan.threadblocks[static_cast<std::size_t>(target)].step_count;
      if (step.dep_step < 0 || step.dep_step >= target_steps) {
        return fmt::format("{}: depends on step {} of tb {}, which has {} steps", at(),
                           step.dep_step, step.dep_threadblock, target_steps);
      }
      step.dep_threadblock = target;
    }
  }
  return {};
}

}  // namespace

Plan build_plan(const ir::Algorithm& algo) {
  Plan plan;
  std::vector<const ir::Threadblock*> sources;
  std::vector<PlanStep> steps;
  plan.error = build_structure(algo, plan, sources, steps);
  if (!plan.error.empty()) return plan;
  plan.out_of_place.steps = steps;
  plan.in_place.steps = std::move(steps);
  build_layout(algo, plan, sources, false, plan.out_of_place);
  build_layout(algo, plan, sources, true, plan.in_place);
  return plan;
}

}  // namespace weft::cpu::detail
