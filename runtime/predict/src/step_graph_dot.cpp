// The step dependency graph of an IR in Graphviz's DOT language (pictures.h).
#include <algorithm>
#include <array>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "step_colours.h"
#include "weft/predict/pictures.h"

namespace weft::predict {
namespace {

using Buffer = fmt::memory_buffer;

void append(Buffer& out, std::string_view text) {
  out.append(text.data(), text.data() + text.size());
}

// The inside of a DOT quoted string. Line breaks become spaces: in a label "\n" is ours to place,
// and a raw control character would end the string for some readers.
std::string escaped(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

// Appended rather than `"\"" + escaped(text)`, which GCC 12 at -O3 misreads as an overlapping
// copy (-Werror=restrict, a known false positive).
std::string quoted(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  out += escaped(text);
  out += '"';
  return out;
}

// One per channel, distinct from the step colours (ColorBrewer Dark2); channels beyond eight
// repeat them, and the edge's tooltip names the channel.
constexpr std::array<std::string_view, 8> kChannelColours = {
    "#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666"};

std::string_view channel_colour(int channel) {
  const auto n = static_cast<int>(kChannelColours.size());
  return kChannelColours[static_cast<std::size_t>(((channel % n) + n) % n)];
}

std::string node_id(int rank, int tb, int step) {
  return fmt::format("r{}_t{}_s{}", rank, tb, step);
}

std::string chunks(ir::BufferKind buffer, int offset, int count) {
  if (count == 1) return fmt::format("{}[{}]", ir::to_char(buffer), offset);
  return fmt::format("{}[{}..{})", ir::to_char(buffer), offset, offset + count);
}

// What the step does, in docs/architecture.md §2.5's terms: "r0 ⊕ i[1] → i[1]" for an rrc receiving
// from rank 0. rN names a peer rank, i/o/s a buffer.
std::string operation(const ir::Threadblock& tb, const ir::Step& step) {
  const std::string src = chunks(step.srcbuf, step.srcoff, step.count);
  const std::string dst = chunks(step.dstbuf, step.dstoff, step.count);
  const std::string from = fmt::format("r{}", tb.recv);
  const std::string to = fmt::format("r{}", tb.send);
  switch (step.type) {
    case ir::StepType::Send:
      return fmt::format("{} → {}", src, to);
    case ir::StepType::Recv:
      return fmt::format("{} → {}", from, dst);
    case ir::StepType::RecvCopySend:
      return fmt::format("{} → {} → {}", from, dst, to);
    case ir::StepType::RecvReduceSend:
      return fmt::format("{} ⊕ {} → {}", from, src, to);
    case ir::StepType::RecvReduceCopy:
      return fmt::format("{} ⊕ {} → {}", from, src, dst);
    case ir::StepType::RecvReduceCopySend:
      return fmt::format("{} ⊕ {} → {} → {}", from, src, dst, to);
    case ir::StepType::Copy:
      return fmt::format("{} → {}", src, dst);
    case ir::StepType::Reduce:
      return fmt::format("{} ⊕ {} → {}", dst, src, dst);
    case ir::StepType::Nop:
      return "wait";
  }
  return {};
}

// One end of a connection: the threadblock driving it and the steps that use it, in program order.
struct End {
  int rank = -1;
  const ir::Threadblock* tb = nullptr;
  std::vector<int> steps;
};

// The ranks to draw: those asked for, each checked to exist, or all of them; refused when their
// steps are more nodes than the options allow.
std::set<int> ranks_drawn(const ir::Algorithm& algorithm, const DotOptions& options,
                          const std::string& name) {
  std::set<int> drawn;
  for (const int rank : options.ranks) {
    const bool exists = std::any_of(algorithm.gpus.begin(), algorithm.gpus.end(),
                                    [&](const ir::Gpu& g) { return g.id == rank; });
    if (!exists) {
      throw PictureError(fmt::format("rank {} is not in {}: it has {} ranks (0..{})", rank, name,
                                     algorithm.gpus.size(),
                                     static_cast<int>(algorithm.gpus.size()) - 1));
    }
    drawn.insert(rank);
  }
  if (options.ranks.empty()) {
    for (const ir::Gpu& g : algorithm.gpus) drawn.insert(g.id);
  }
  std::size_t nodes = 0;
  for (const ir::Gpu& g : algorithm.gpus) {
    if (!drawn.contains(g.id)) continue;
    for (const ir::Threadblock& tb : g.threadblocks) nodes += tb.steps.size();
  }
  if (nodes > options.max_nodes) {
    throw PictureError(fmt::format(
        "the step graph of {} has {} steps on the {} ranks drawn, more than the limit of {} "
        "nodes: draw fewer ranks or raise the limit",
        name, nodes, drawn.size(), options.max_nodes));
  }
  return drawn;
}

// The graph's opening: its title (what the algorithm is, what the edges mean) and defaults.
void write_header(Buffer& out, const ir::Algorithm& algorithm, const std::string& name,
                  const std::set<int>& drawn) {
  fmt::format_to(fmt::appender(out), "digraph {} {{\n", quoted(name));
  const std::string collective = algorithm.collective == ir::Collective::Custom
                                     ? algorithm.collective_name
                                     : std::string(ir::to_string(algorithm.collective));
  // DOT's \l ends a left-justified line; only the algorithm's own words need escaping.
  const std::string title = fmt::format(
      "{} ({}, {} ranks, {}{})\\lgrey: program order; dashed: dependency (depid/deps); bold, one "
      "colour per channel: message (k-th send on a connection to its k-th receive)\\l",
      escaped(name), escaped(collective), algorithm.gpus.size(), ir::to_string(algorithm.protocol),
      drawn.size() < algorithm.gpus.size()
          ? fmt::format("; ranks drawn: {}", fmt::join(drawn, ", "))
          : std::string());
  fmt::format_to(fmt::appender(out),
                 "  graph [label=\"{}\", labelloc=t, labeljust=l, fontname=\"Helvetica\", "
                 "newrank=true];\n"
                 "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", "
                 "fontsize=10];\n"
                 "  edge [fontname=\"Helvetica\", fontsize=9];\n",
                 title);
}

// Nodes: a cluster per rank, within it one per threadblock, steps in program order.
void write_steps(Buffer& out, const ir::Algorithm& algorithm, const std::set<int>& drawn) {
  for (const ir::Gpu& gpu : algorithm.gpus) {
    if (!drawn.contains(gpu.id)) continue;
    fmt::format_to(fmt::appender(out),
                   "  subgraph cluster_r{0} {{\n    label=\"rank {0}\"; style=rounded; "
                   "color=\"#888888\";\n",
                   gpu.id);
    for (const ir::Threadblock& tb : gpu.threadblocks) {
      std::string peers;
      if (tb.send >= 0) peers += fmt::format(", send → {}", tb.send);
      if (tb.recv >= 0) peers += fmt::format(", recv ← {}", tb.recv);
      fmt::format_to(fmt::appender(out),
                     "    subgraph cluster_r{}_t{} {{\n      label=\"tb {} (ch {}{})\"; "
                     "style=\"rounded,dashed\"; color=\"#bbbbbb\";\n",
                     gpu.id, tb.id, tb.id, tb.channel, peers);
      for (std::size_t s = 0; s < tb.steps.size(); ++s) {
        const ir::Step& step = tb.steps[s];
        fmt::format_to(fmt::appender(out),
                       "      {} [label=\"{}: {}  cnt {}\\n{}\", fillcolor=\"{}\"];\n",
                       node_id(gpu.id, tb.id, static_cast<int>(s)), s, ir::to_string(step.type),
                       step.count, operation(tb, step), step_colour(step.type));
      }
      append(out, "    }\n");
    }
    append(out, "  }\n");
  }
}

// Program order; heavy, so that each threadblock stays a straight column.
void write_program_order(Buffer& out, const ir::Algorithm& algorithm, const std::set<int>& drawn) {
  for (const ir::Gpu& gpu : algorithm.gpus) {
    if (!drawn.contains(gpu.id)) continue;
    for (const ir::Threadblock& tb : gpu.threadblocks) {
      for (std::size_t s = 1; s < tb.steps.size(); ++s) {
        fmt::format_to(fmt::appender(out), "  {} -> {} [color=\"#aaaaaa\", weight=10];\n",
                       node_id(gpu.id, tb.id, static_cast<int>(s - 1)),
                       node_id(gpu.id, tb.id, static_cast<int>(s)));
      }
    }
  }
}

// Explicit dependencies, within a rank.
void write_dependencies(Buffer& out, const ir::Algorithm& algorithm, const std::set<int>& drawn) {
  for (const ir::Gpu& gpu : algorithm.gpus) {
    if (!drawn.contains(gpu.id)) continue;
    for (const ir::Threadblock& tb : gpu.threadblocks) {
      for (std::size_t s = 0; s < tb.steps.size(); ++s) {
        const ir::Step& step = tb.steps[s];
        if (step.depid < 0) continue;
        const auto target =
            std::find_if(gpu.threadblocks.begin(), gpu.threadblocks.end(),
                         [&](const ir::Threadblock& t) { return t.id == step.depid; });
        if (target == gpu.threadblocks.end() || step.deps < 0 ||
            static_cast<std::size_t>(step.deps) >= target->steps.size()) {
          fmt::format_to(fmt::appender(out), "  // {}: depends on a missing step (tb {} step {})\n",
                         ir::element_path(gpu.id, tb.id, static_cast<int>(s)), step.depid,
                         step.deps);
          continue;
        }
        fmt::format_to(
            fmt::appender(out), "  {} -> {} [style=dashed, color=\"#555555\", label=\"dep\"];\n",
            node_id(gpu.id, step.depid, step.deps), node_id(gpu.id, tb.id, static_cast<int>(s)));
      }
    }
  }
}

// Every connection's sending and receiving ends, over all ranks (drawn or not: a message may
// come from a rank not drawn). A connection two threadblocks drive is a problem, kept apart.
struct ConnectionEnds {
  std::map<ir::Connection, End> senders;
  std::map<ir::Connection, End> receivers;
  std::vector<std::string> problems;
};

ConnectionEnds connection_ends(const ir::Algorithm& algorithm) {
  ConnectionEnds ends;
  for (const ir::Gpu& gpu : algorithm.gpus) {
    for (const ir::Threadblock& tb : gpu.threadblocks) {
      const auto add = [&](std::map<ir::Connection, End>& side, const ir::Connection& c,
                           bool (*uses)(ir::StepType), std::string_view role) {
        auto [it, added] = side.try_emplace(c, End{gpu.id, &tb, {}});
        if (!added) {
          ends.problems.push_back(fmt::format("channel {} {} → {}: tb {} and tb {} both {} on it",
                                              c.channel, c.sender, c.receiver, it->second.tb->id,
                                              tb.id, role));
          return;
        }
        for (std::size_t s = 0; s < tb.steps.size(); ++s) {
          if (uses(tb.steps[s].type)) it->second.steps.push_back(static_cast<int>(s));
        }
      };
      if (tb.send >= 0) add(ends.senders, {tb.channel, gpu.id, tb.send}, ir::sends, "send");
      if (tb.recv >= 0) {
        add(ends.receivers, {tb.channel, tb.recv, gpu.id}, ir::receives, "receive");
      }
    }
  }
  return ends;
}

// Messages: per connection, the k-th sending step of its sender to the k-th receiving step of
// its receiver (docs/architecture.md §2.4); a rank not drawn stands as one placeholder node.
void write_messages(Buffer& out, const ir::Algorithm& algorithm, const std::set<int>& drawn) {
  ConnectionEnds ends = connection_ends(algorithm);
  std::vector<std::string>& problems = ends.problems;
  std::set<int> placeholders;  // ranks not drawn that messages come from or go to
  const auto endpoint = [&](int rank, const End& end, int k) {
    if (drawn.contains(rank))
      return node_id(rank, end.tb->id, end.steps[static_cast<std::size_t>(k)]);
    placeholders.insert(rank);
    return fmt::format("rank_{}", rank);
  };
  for (const auto& [connection, sender] : ends.senders) {
    const auto receiver = ends.receivers.find(connection);
    if (receiver == ends.receivers.end()) {
      problems.push_back(fmt::format("channel {} {} → {}: nobody receives on it",
                                     connection.channel, connection.sender, connection.receiver));
      continue;
    }
    const std::size_t n = std::min(sender.steps.size(), receiver->second.steps.size());
    if (sender.steps.size() != receiver->second.steps.size()) {
      problems.push_back(fmt::format("channel {} {} → {}: {} sends, {} receives",
                                     connection.channel, connection.sender, connection.receiver,
                                     sender.steps.size(), receiver->second.steps.size()));
    }
    if (!drawn.contains(connection.sender) && !drawn.contains(connection.receiver)) continue;
    for (std::size_t k = 0; k < n; ++k) {
      fmt::format_to(fmt::appender(out),
                     "  {} -> {} [style=bold, penwidth=2, color=\"{}\", tooltip=\"channel {}, "
                     "message {} of {} → {}\"];\n",
                     endpoint(connection.sender, sender, static_cast<int>(k)),
                     endpoint(connection.receiver, receiver->second, static_cast<int>(k)),
                     channel_colour(connection.channel), connection.channel, k, connection.sender,
                     connection.receiver);
    }
  }
  for (const auto& [connection, receiver] : ends.receivers) {
    if (!ends.senders.contains(connection)) {
      problems.push_back(fmt::format("channel {} {} → {}: nobody sends on it", connection.channel,
                                     connection.sender, connection.receiver));
    }
  }
  for (const int rank : placeholders) {
    fmt::format_to(fmt::appender(out),
                   "  rank_{0} [label=\"rank {0}\\n(not drawn)\", shape=box, style=dashed, "
                   "fillcolor=white];\n",
                   rank);
  }
  // An IR that failed validation can still be drawn; what could not be paired is said here.
  for (const std::string& problem : problems) {
    fmt::format_to(fmt::appender(out), "  // not paired: {}\n", problem);
  }
}

}  // namespace

std::string step_graph_dot(const ir::Algorithm& algorithm, const DotOptions& options) {
  const std::string name = algorithm.name.empty() ? std::string("algorithm") : algorithm.name;
  const std::set<int> drawn = ranks_drawn(algorithm, options, name);
  Buffer out;
  write_header(out, algorithm, name, drawn);
  write_steps(out, algorithm, drawn);
  write_program_order(out, algorithm, drawn);
  write_dependencies(out, algorithm, drawn);
  write_messages(out, algorithm, drawn);
  append(out, "}\n");
  return fmt::to_string(out);
}

}  // namespace weft::predict
