#include "pass_dump.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "weft/dsl/trace.h"

namespace weft::compiler::detail {

namespace {

// Appends `line` without the padding its last column may have left.
void append(std::string& text, std::string_view line) {
  while (line.ends_with(' ')) line.remove_suffix(1);
  text += line;
  text += '\n';
}

// "input[3]", "scratch 'gather'[0..2)": a slot of the trace, as DSL errors name slots.
std::string trace_slot(const dsl::Program& program, const dsl::Location& at, int size) {
  std::string buffer;
  switch (at.buffer.kind) {
    case ir::BufferKind::Input:
      buffer = "input";
      break;
    case ir::BufferKind::Output:
      buffer = "output";
      break;
    case ir::BufferKind::Scratch: {
      const auto id = static_cast<std::size_t>(at.buffer.scratch);
      buffer = at.buffer.scratch >= 0 && id < program.scratch_names().size()
                   ? fmt::format("scratch '{}'", program.scratch_names()[id])
                   : std::string("scratch");
      break;
    }
    case ir::BufferKind::None:
      buffer = "none";
      break;
  }
  if (size == 1) return fmt::format("rank {} {}[{}]", at.rank, buffer, at.index);
  return fmt::format("rank {} {}[{}..{})", at.rank, buffer, at.index, at.index + size);
}

std::string hints(int channel, int sendtb, int recvtb) {
  std::string text;
  const auto add = [&text](std::string_view name, int value) {
    if (value < 0) return;
    text += fmt::format("{}{} {}", text.empty() ? "hint: " : ", ", name, value);
  };
  add("channel", channel);
  add("sendtb", sendtb);
  add("recvtb", recvtb);
  return text;
}

// "i[3]", "s[0..2)": chunks of one of the IR's buffers.
std::string chunks(ir::BufferKind buffer, int offset, int count) {
  if (count == 1) return fmt::format("{}[{}]", ir::to_char(buffer), offset);
  return fmt::format("{}[{}..{})", ir::to_char(buffer), offset, offset + count);
}

// The slots a step reads and writes: "i[0] -> o[0]", "i[2]", "-> s[1]".
std::string step_slots(ir::BufferKind srcbuf, int srcoff, ir::BufferKind dstbuf, int dstoff,
                       int count) {
  const bool source = srcbuf != ir::BufferKind::None;
  const bool destination = dstbuf != ir::BufferKind::None;
  if (source && destination) {
    return chunks(srcbuf, srcoff, count) + " -> " + chunks(dstbuf, dstoff, count);
  }
  if (source) return chunks(srcbuf, srcoff, count);
  if (destination) return "-> " + chunks(dstbuf, dstoff, count);
  return "";
}

// One instruction: "#9  rank 1  rrcs  i[0] -> i[0]  from rank 0 (#0)  to rank 2 (#17)  after #4
// ; reduce at ring.cpp:30".
std::string instruction_line(const InstructionDag& dag, int k) {
  const Instruction& ins = dag.instructions[static_cast<std::size_t>(k)];
  std::string line =
      fmt::format("#{:<5} rank {:<3} {:<4} {:<22}", k, ins.rank, ir::to_string(ins.type),
                  step_slots(ins.srcbuf, ins.srcoff, ins.dstbuf, ins.dstoff, ins.count));
  if (ins.recv_from >= 0) line += fmt::format("  from rank {} (#{})", ins.recv_peer, ins.recv_from);
  if (ins.send_to >= 0) line += fmt::format("  to rank {} (#{})", ins.send_peer, ins.send_to);
  const std::span<const int> deps = dag.dependencies(k);
  if (!deps.empty()) {
    line += "  after";
    for (const int d : deps) line += fmt::format(" #{}", d);
  }
  if (const std::string h = hints(ins.channel, ins.sendtb, ins.recvtb); !h.empty())
    line += "  " + h;
  return line + "  ; " + dag.describe(k);
}

std::string fusion_counts(const FuseStats& fused) {
  return fmt::format("{} rcs, {} rrcs, {} rrs", fused.rcs, fused.rrcs, fused.rrs);
}

// The same instructions, messages and dependencies: two schedules' fused DAGs often are.
bool same_dag(const InstructionDag& a, const InstructionDag& b) {
  if (a.size() != b.size() || a.deps != b.deps || a.dep_begin != b.dep_begin) return false;
  const auto key = [](const Instruction& i) {
    return std::tie(i.type, i.rank, i.srcbuf, i.srcoff, i.dstbuf, i.dstoff, i.count, i.send_peer,
                    i.recv_peer, i.send_to, i.recv_from, i.operation, i.send_operation, i.channel,
                    i.sendtb, i.recvtb);
  };
  return std::equal(a.instructions.begin(), a.instructions.end(), b.instructions.begin(),
                    [&](const Instruction& x, const Instruction& y) { return key(x) == key(y); });
}

// "schedule 2: level order asked; held as fused, level, FIFO depth 2; placed 2nd", its fusion and
// the fallbacks it took.
std::string schedule_heading(const NamedSchedule& named) {
  const Scheduled& s = *named.scheduled;
  std::string text = fmt::format("{}: {} order asked{}{}; ", named.name, to_string(s.order),
                                 s.unbounded ? " without room kept for FIFO depth 2" : "",
                                 s.msccl_fusion ? ", msccl-tools' fusion" : "");
  text += s.schedule ? fmt::format("held as {}", s.attempt) : std::string("no order held");
  text += "; " + named.placed + "\n";
  text += fmt::format("  fused: {}", fusion_counts(s.fused));
  if (s.forwarded.changed()) {
    text += fmt::format("; forwarded: {} reads, {} copies removed, {} narrowed", s.forwarded.reads,
                        s.forwarded.copies_removed, s.forwarded.copies_narrowed);
  }
  text += '\n';
  for (const std::string& note : s.notes) append(text, "  note: " + note);
  return text;
}

// Every connection (channel, sender, receiver) of an assignment: the threadblock driving it on
// each end and the messages it carries.
std::string connections(const InstructionDag& dag, const Assignment& assignment) {
  struct Ends {
    int sending_tb = -1;
    int receiving_tb = -1;
    int messages = 0;
  };
  std::map<std::tuple<int, int, int>, Ends> by_connection;
  for (std::size_t k = 0; k < dag.size(); ++k) {
    const Instruction& ins = dag.instructions[k];
    if (ins.send_to < 0) continue;
    const auto to = static_cast<std::size_t>(ins.send_to);
    Ends& ends = by_connection[{assignment.channel[k], ins.rank, ins.send_peer}];
    ends.sending_tb = assignment.threadblock[k];
    ends.receiving_tb = assignment.threadblock[to];
    ++ends.messages;
  }
  std::string text = fmt::format(
      "connections (channel: sender -> receiver: the threadblock on each end, messages): {}\n",
      by_connection.size());
  for (const auto& [connection, ends] : by_connection) {
    const auto& [channel, sender, receiver] = connection;
    append(text, fmt::format("  channel {}: rank {} -> rank {}: tb {} -> tb {}, {} message{}",
                             channel, sender, receiver, ends.sending_tb, ends.receiving_tb,
                             ends.messages, ends.messages == 1 ? "" : "s"));
  }
  return text;
}

// The kept plan's channel and threadblock for every instruction, in schedule order, then its
// threadblocks and connections.
std::string kept_assignment(const Scheduled& scheduled, const Assignment& assignment) {
  const InstructionDag& dag = scheduled.dag;
  std::string text = "the kept plan, per instruction in schedule order (channel, threadblock):\n";
  for (const int k : scheduled.schedule->order) {
    const auto u = static_cast<std::size_t>(k);
    append(text, fmt::format("  channel {:<3} tb {:<4} {}", assignment.channel[u],
                             assignment.threadblock[u], instruction_line(dag, k)));
  }
  text += "threadblocks (peers it sends to and receives from, channel):\n";
  for (std::size_t r = 0; r < assignment.threadblocks.size(); ++r) {
    for (std::size_t t = 0; t < assignment.threadblocks[r].size(); ++t) {
      const ThreadblockInfo& tb = assignment.threadblocks[r][t];
      append(text, fmt::format("  rank {} tb {}: send {}, recv {}, channel {}", r, t, tb.send,
                               tb.recv, tb.channel));
    }
  }
  return text + connections(dag, assignment);
}

// "64K", "4M": the judged sizes as weftc writes them.
std::string size_label(std::uint64_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return fmt::format("{}M", bytes >> 20);
  if (bytes >= (1u << 10) && bytes % (1u << 10) == 0) return fmt::format("{}K", bytes >> 10);
  return fmt::format("{}", bytes);
}

std::string judged_times(const std::vector<JudgedCandidate>& candidates,
                         const std::vector<std::uint64_t>& sizes) {
  std::string text = "predicted times (us) at";
  for (const std::uint64_t bytes : sizes) text += " " + size_label(bytes);
  text += " (*: kept):\n";
  for (const JudgedCandidate& c : candidates) {
    std::string line = fmt::format("  {:1}", c.kept ? "*" : "");
    for (const double t : c.times_us) line += fmt::format(" {:>10.2f}", t);
    append(text, fmt::format("{}  {}", line, c.description));
  }
  return text;
}

}  // namespace

std::string dump_trace(const dsl::Program& program, const dsl::PostconditionReport& postcondition) {
  const dsl::Options& o = program.options();
  std::string text = fmt::format(
      "{}: {}, {} ranks, {}, {} instance{}, {}; {} operations in program order\n", program.name(),
      program.collective().name(), program.ranks(), ir::to_string(o.protocol), o.instances,
      o.instances == 1 ? "" : "s", program.collective().in_place() ? "in place" : "out of place",
      program.operations().size());
  text += postcondition.ok() ? "postcondition: holds\n" : postcondition.str();
  if (!text.ends_with('\n')) text += '\n';
  const std::vector<dsl::Operation>& operations = program.operations();
  for (std::size_t k = 0; k < operations.size(); ++k) {
    const dsl::Operation& op = operations[k];
    std::string line = fmt::format(
        "#{:<5} {:<6} {} -> {}", k, op.kind == dsl::OperationKind::Copy ? "copy" : "reduce",
        trace_slot(program, op.src, op.size), trace_slot(program, op.dst, op.size));
    if (const std::string h = hints(op.hints.channel, op.hints.sendtb, op.hints.recvtb); !h.empty())
      line += "  " + h;
    append(text, line + "  ; " + dsl::describe(op));
  }
  return text;
}

std::string dump_dag(const InstructionDag& dag, std::string_view title) {
  std::string text =
      fmt::format("{}: {} instructions over {} ranks\n", title, dag.size(), dag.ranks);
  // Runs of ranks with the same extents, as one entry: "ranks 0-7: 8/8/0".
  text += "chunks (input/output/scratch):";
  const std::size_t ranks = dag.input_chunks.size();
  for (std::size_t first = 0; first < ranks;) {
    const auto extents = [&](std::size_t r) {
      return std::tuple{dag.input_chunks[r], dag.output_chunks[r], dag.scratch_chunks[r]};
    };
    std::size_t last = first;
    while (last + 1 < ranks && extents(last + 1) == extents(first)) ++last;
    text += fmt::format(
        "{} {}: {}/{}/{}", first == 0 ? "" : ";",
        first == last ? fmt::format("rank {}", first) : fmt::format("ranks {}-{}", first, last),
        dag.input_chunks[first], dag.output_chunks[first], dag.scratch_chunks[first]);
    first = last + 1;
  }
  text += "\n";
  for (std::size_t k = 0; k < dag.size(); ++k)
    append(text, instruction_line(dag, static_cast<int>(k)));
  return text;
}

std::string dump_fused(const std::vector<NamedSchedule>& schedules) {
  std::string text;
  for (std::size_t k = 0; k < schedules.size(); ++k) {
    if (k > 0) text += '\n';
    text += schedule_heading(schedules[k]);
    const InstructionDag& dag = schedules[k].scheduled->dag;
    const auto same = std::find_if(
        schedules.begin(), schedules.begin() + static_cast<long>(k),
        [&](const NamedSchedule& before) { return same_dag(before.scheduled->dag, dag); });
    if (same != schedules.begin() + static_cast<long>(k)) {
      append(text, fmt::format("  the same fused DAG as {}", same->name));
      continue;
    }
    text += dump_dag(dag, "fused DAG");
  }
  return text;
}

std::string dump_schedules(const std::vector<NamedSchedule>& schedules) {
  std::string text;
  for (std::size_t k = 0; k < schedules.size(); ++k) {
    if (k > 0) text += '\n';
    const NamedSchedule& named = schedules[k];
    text += schedule_heading(named);
    if (!named.scheduled->schedule) continue;
    const auto same = std::find_if(
        schedules.begin(), schedules.begin() + static_cast<long>(k), [&](const NamedSchedule& b) {
          return b.scheduled->schedule && same_schedule(*b.scheduled, *named.scheduled);
        });
    if (same != schedules.begin() + static_cast<long>(k)) {
      append(text, fmt::format("  the same steps in the same order as {}", same->name));
      continue;
    }
    const Schedule& order = *named.scheduled->schedule;
    text += "  position, longest path to a sink, instruction:\n";
    for (std::size_t p = 0; p < order.order.size(); ++p) {
      const int i = order.order[p];
      append(text, fmt::format("  {:<6} {:<5} {}", p, order.priority[static_cast<std::size_t>(i)],
                               instruction_line(named.scheduled->dag, i)));
    }
  }
  return text;
}

std::string dump_channel_plan(const ChosenPlan& plan, const std::vector<std::uint64_t>& sizes,
                              const std::string& judged) {
  std::string text = fmt::format("the channel and placement search placed, in order:\n");
  for (const std::string& line : plan.tried) append(text, "  " + line);
  if (!plan.candidates.empty()) text += judged_times(plan.candidates, sizes);
  if (!plan.algorithm) {
    return text + fmt::format("no plan meets the limits profile: {}\n", plan.violation);
  }
  if (!plan.candidates.empty()) {
    text += fmt::format("kept: {} ({})\n", plan.description, judged);
  } else {
    text += fmt::format("kept: {} (by the critical path in steps, the first placed on a tie{})\n",
                        plan.description, judged.empty() ? "" : "; " + judged);
  }
  if (!plan.scheduled || !plan.assignment) return text;
  return text + kept_assignment(*plan.scheduled, *plan.assignment);
}

std::string dump_threadblocks(const ir::Algorithm& algorithm, std::string_view title) {
  int threadblocks = 0;
  int steps = 0;
  int nops = 0;
  for (const ir::Gpu& gpu : algorithm.gpus) {
    threadblocks += static_cast<int>(gpu.threadblocks.size());
    for (const ir::Threadblock& tb : gpu.threadblocks) {
      steps += static_cast<int>(tb.steps.size());
      nops +=
          static_cast<int>(std::count_if(tb.steps.begin(), tb.steps.end(), [](const ir::Step& s) {
            return s.type == ir::StepType::Nop;
          }));
    }
  }
  std::string text =
      fmt::format("{}: {} ranks, {} channel{}, {} threadblocks, {} steps ({} nops)\n", title,
                  algorithm.gpus.size(), algorithm.nchannels, algorithm.nchannels == 1 ? "" : "s",
                  threadblocks, steps, nops);
  for (const ir::Gpu& gpu : algorithm.gpus) {
    append(text, fmt::format("rank {} (chunks: input {}, output {}, scratch {})", gpu.id,
                             gpu.input_chunks, gpu.output_chunks, gpu.scratch_chunks));
    for (const ir::Threadblock& tb : gpu.threadblocks) {
      append(text, fmt::format("  tb {}: send {}, recv {}, channel {}", tb.id, tb.send, tb.recv,
                               tb.channel));
      for (std::size_t k = 0; k < tb.steps.size(); ++k) {
        const ir::Step& s = tb.steps[k];
        std::string line = fmt::format("    {:<4} {:<4} {:<22}", k, ir::to_string(s.type),
                                       step_slots(s.srcbuf, s.srcoff, s.dstbuf, s.dstoff, s.count));
        if (s.depid >= 0) line += fmt::format("  after tb {} step {}", s.depid, s.deps);
        if (s.hasdep) line += "  hasdep";
        append(text, line);
      }
    }
  }
  return text;
}

std::string dump_verification(const VerificationResult& verification) {
  std::string text = fmt::format(
      "{}: {} cases, {} failed{}\n", verification.passed ? "verified" : "verification FAILED",
      verification.cases, verification.failures,
      verification.min_fifo_depth
          ? fmt::format("; completes from FIFO depth {}", *verification.min_fifo_depth)
          : std::string("; deadlocks at every FIFO depth"));
  for (const std::string& line : verification.case_lines) append(text, "  " + line);
  if (!verification.report.empty()) append(text, "first failure: " + verification.report);
  return text;
}

}  // namespace weft::compiler::detail
