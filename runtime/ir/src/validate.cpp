// Static validation of an IR (docs/architecture.md §2.7). Every check is a linear pass or a map
// lookup, so a 100,000-step algorithm validates in milliseconds, and every problem found is
// reported (up to DiagnosticSink's cap) rather than only the first.
#include "weft/ir/validate.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "diagnostic_sink.h"
#include "step_graph.h"
#include "weft/ir/geometry.h"
#include "weft/ir/xml.h"

namespace weft::ir {

LimitsProfile msccl_limits() {
  // Azure/msccl-executor-nccl: MSCCL_MAX_NUM_STEPS, MSCCL_MAX_COUNT, MAXCHANNELS,
  // MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL, and MSCCL_MAX_NUM_THREAD_BLOCKS (32 per channel
  // times 32 channels); its XML reader's MAX_NODES and MAX_STR_LEN.
  return LimitsProfile{"msccl", 64, 72, 32, 32, 32, 1024, 4096, 255};
}

LimitsProfile weft_limits() {
  // Weft's GPU runtime preallocates nothing per algorithm, so its limits are generous; each is
  // set by what the runtime encodes or can schedule, far above what real algorithms use:
  // - 4,096 steps per threadblock: a dependency flag keeps tile × steps + step below 2^32 per
  //   launch (device_program.h), so longer step lists leave fewer tiles per call; at 4,096 a
  //   launch still has a million tiles;
  // - cnt < 65,536: chunks per message; MSCCL's files stay below 72, and the bound keeps chunk
  //   arithmetic in the device program's 32-bit fields far from overflow;
  // - 64 channels: NCCL's MAXCHANNELS;
  // - 1,024 threadblocks per rank (so at most that many per channel and direction): each is a
  //   CTA that must be resident together with all the others, and no GPU holds many more; the
  //   launcher checks real occupancy, the IR only rejects the impossible.
  return LimitsProfile{"weft", 4096, 65536, 64, 1024, 1024, 1024};
}

std::optional<LimitsProfile> limits_by_name(std::string_view name) {
  if (name == "msccl") return msccl_limits();
  if (name == "weft") return weft_limits();
  return std::nullopt;
}

namespace {

using detail::ConnectionMap;
using detail::DiagnosticSink;
using detail::StepNumbering;

std::string located(const Algorithm& algo, int rank, int tb, int step = -1) {
  int line = 0;
  if (rank >= 0 && static_cast<std::size_t>(rank) < algo.gpus.size()) {
    const Gpu& gpu = algo.gpus[static_cast<std::size_t>(rank)];
    line = gpu.where.line;
    if (tb >= 0 && static_cast<std::size_t>(tb) < gpu.threadblocks.size()) {
      const Threadblock& block = gpu.threadblocks[static_cast<std::size_t>(tb)];
      line = block.where.line;
      if (step >= 0 && static_cast<std::size_t>(step) < block.steps.size()) {
        line = block.steps[static_cast<std::size_t>(step)].where.line;
      }
    }
  }
  std::string text = element_path(rank, tb, step);
  if (line > 0) text += fmt::format(" (line {})", line);
  return text;
}

class Validator {
 public:
  Validator(const Algorithm& algo, const LimitsProfile& limits, DiagnosticSink& sink)
      : algo_(algo), limits_(limits), sink_(sink) {}

  void run() {
    check_algorithm();
    for (std::size_t r = 0; r < algo_.gpus.size(); ++r) check_rank(static_cast<int>(r));
    check_connections();
    check_cycles();
  }

 private:
  const Gpu& gpu(int rank) const { return algo_.gpus[static_cast<std::size_t>(rank)]; }
  const Threadblock& block(int rank, int tb) const {
    return gpu(rank).threadblocks[static_cast<std::size_t>(tb)];
  }

  void check_algorithm() {
    const int line = algo_.where.line;
    const int ranks = static_cast<int>(std::min<std::size_t>(algo_.gpus.size(), INT32_MAX));
    if (algo_.ngpus < 1) sink_.errorf(line, "", "ngpus is {}; it must be at least 1", algo_.ngpus);
    if (algo_.ngpus != ranks) {
      sink_.errorf(line, "", "ngpus is {} but the algorithm has {} <gpu> element(s)", algo_.ngpus,
                   ranks);
    }
    if (algo_.nchannels < 1) {
      sink_.errorf(line, "", "nchannels is {}; it must be at least 1", algo_.nchannels);
    } else if (algo_.nchannels > limits_.max_channels) {
      sink_.errorf(line, "", "nchannels {} exceeds the '{}' profile's limit of {} channels",
                   algo_.nchannels, limits_.name, limits_.max_channels);
    }
    if (algo_.nchunksperloop < 1) {
      sink_.errorf(line, "", "nchunksperloop is {}; it must be at least 1", algo_.nchunksperloop);
    } else if (count_multiplier(algo_) != 1 && algo_.ngpus >= 1 &&
               algo_.nchunksperloop % algo_.ngpus != 0) {
      sink_.errorf(line, "",
                   "nchunksperloop {} is not divisible by ngpus {}, as {} needs (each rank owns "
                   "an equal block of chunks)",
                   algo_.nchunksperloop, algo_.ngpus, to_string(algo_.collective));
    }
    if (!algo_.inplace && !algo_.outofplace) {
      sink_.error(line, "",
                  "inplace and outofplace are both 0: the algorithm would never be selected");
    }
    if (algo_.max_bytes != 0 && algo_.min_bytes > algo_.max_bytes) {
      sink_.errorf(line, "", "minBytes {} is above maxBytes {}: the size band is empty",
                   algo_.min_bytes, algo_.max_bytes);
    }
    if (limits_.max_attribute_length > 0 &&
        algo_.name.size() > static_cast<std::size_t>(limits_.max_attribute_length)) {
      sink_.errorf(line, "",
                   "name is {} characters long; the '{}' profile's XML reader keeps at most {}",
                   algo_.name.size(), limits_.name, limits_.max_attribute_length);
    }
    if (algo_.nthreads < 0) {
      sink_.errorf(line, "", "nthreads is {}; it must not be negative", algo_.nthreads);
    }
    if (algo_.nnodes < 0 || (algo_.nnodes > 0 && algo_.ngpus > 0 && algo_.ngpus % algo_.nnodes != 0)) {
      sink_.errorf(line, "",
                   "nnodes {} does not divide ngpus {} into nodes of equal rank counts",
                   algo_.nnodes, algo_.ngpus);
    }
    if (algo_.root < -1 || (algo_.root >= 0 && algo_.root >= algo_.ngpus)) {
      sink_.errorf(line, "", "root {} is out of range (ngpus is {})", algo_.root, algo_.ngpus);
    } else if (algo_.root >= 0 && algo_.collective != Collective::Broadcast &&
               algo_.collective != Collective::Reduce && algo_.collective != Collective::Custom) {
      sink_.warning(line, "",
                    fmt::format("root {} is ignored: {} has no root", algo_.root,
                                to_string(algo_.collective)));
    }
  }

  void check_rank(int rank) {
    const Gpu& g = gpu(rank);
    const std::string path = element_path(rank);
    const int line = g.where.line;
    if (g.id != rank) {
      sink_.errorf(line, path,
                   "gpu id {} at position {}: gpu ids must be 0..N-1, in order, without gaps", g.id,
                   rank);
    }
    if (g.input_chunks < 0) sink_.errorf(line, path, "i_chunks {} is negative", g.input_chunks);
    if (g.output_chunks < 0) sink_.errorf(line, path, "o_chunks {} is negative", g.output_chunks);
    if (g.scratch_chunks < 0) {
      sink_.errorf(line, path, "s_chunks {} is negative", g.scratch_chunks);
    }
    if (g.threadblocks.size() > static_cast<std::size_t>(limits_.max_threadblocks_per_rank)) {
      sink_.errorf(line, path, "{} threadblocks exceed the '{}' profile's limit of {} per rank",
                   g.threadblocks.size(), limits_.name, limits_.max_threadblocks_per_rank);
    }
    if (limits_.max_xml_nodes_per_rank > 0) {
      // The executor's reader fails on a rank whose part of the file has more elements than it
      // can hold, however short each threadblock is.
      std::size_t nodes = 2 + g.threadblocks.size();  // <algo>, <gpu>, the <tb>s
      for (const Threadblock& tb : g.threadblocks) nodes += tb.steps.size();
      if (nodes > static_cast<std::size_t>(limits_.max_xml_nodes_per_rank)) {
        sink_.errorf(line, path,
                     "{} XML elements for this rank (algo, gpu, tbs and steps) exceed the '{}' "
                     "profile's limit of {}",
                     nodes, limits_.name, limits_.max_xml_nodes_per_rank);
      }
    }
    std::map<int, int> senders_per_channel;
    std::map<int, int> receivers_per_channel;
    for (std::size_t t = 0; t < g.threadblocks.size(); ++t) {
      const Threadblock& tb = g.threadblocks[t];
      check_threadblock(rank, static_cast<int>(t));
      if (tb.send >= 0) ++senders_per_channel[tb.channel];
      if (tb.recv >= 0) ++receivers_per_channel[tb.channel];
    }
    for (const auto& [channel, count] : senders_per_channel) {
      if (count > limits_.max_send_threadblocks_per_channel) {
        sink_.errorf(line, path,
                     "{} threadblocks send on channel {}; the '{}' profile allows {} per channel",
                     count, channel, limits_.name, limits_.max_send_threadblocks_per_channel);
      }
    }
    for (const auto& [channel, count] : receivers_per_channel) {
      if (count > limits_.max_recv_threadblocks_per_channel) {
        sink_.errorf(
            line, path,
            "{} threadblocks receive on channel {}; the '{}' profile allows {} per channel", count,
            channel, limits_.name, limits_.max_recv_threadblocks_per_channel);
      }
    }
  }

  void check_peer(int rank, const std::string& path, int line, int peer, const char* role) {
    if (peer == -1) return;
    if (peer == rank) {
      sink_.errorf(line, path, "{} peer {} is the rank itself", role, peer);
    } else if (!detail::peer_in_range(algo_, rank, peer)) {
      sink_.errorf(line, path, "{} peer {} is out of range (ngpus is {}; -1 means none)", role,
                   peer, algo_.ngpus);
    }
  }

  void check_threadblock(int rank, int t) {
    const Threadblock& tb = block(rank, t);
    const std::string path = element_path(rank, t);
    const int line = tb.where.line;
    if (tb.id != t) {
      sink_.errorf(line, path,
                   "tb id {} at position {}: threadblock ids must be 0..N-1, in order, without "
                   "gaps",
                   tb.id, t);
    }
    check_peer(rank, path, line, tb.send, "send");
    check_peer(rank, path, line, tb.recv, "recv");
    if (tb.channel < 0 || tb.channel >= algo_.nchannels) {
      sink_.errorf(line, path, "chan {} is outside 0..nchannels-1 (nchannels is {})", tb.channel,
                   algo_.nchannels);
    }
    if (tb.steps.size() > static_cast<std::size_t>(limits_.max_steps_per_threadblock)) {
      sink_.errorf(line, path,
                   "{} steps exceed the '{}' profile's limit of {} steps per threadblock",
                   tb.steps.size(), limits_.name, limits_.max_steps_per_threadblock);
    }
    for (std::size_t s = 0; s < tb.steps.size(); ++s) check_step(rank, t, static_cast<int>(s));
  }

  void check_operand(int rank, int t, int s, const Step& step, bool source) {
    const int line = step.where.line;
    const BufferKind buffer = source ? step.srcbuf : step.dstbuf;
    const int offset = source ? step.srcoff : step.dstoff;
    const char* role = source ? "source" : "destination";
    if (buffer == BufferKind::None) {
      sink_.errorf(line, element_path(rank, t, s), "a '{}' step needs a {} but has none ({} is -1)",
                   to_string(step.type), role, source ? "srcoff" : "dstoff");
      return;
    }
    const std::int64_t extent = extent_chunks(algo_, rank, buffer);
    const std::int64_t begin = offset;
    const std::int64_t end = begin + std::max(step.count, 0);
    if (begin < 0 || end > extent) {
      sink_.errorf(line, element_path(rank, t, s),
                   "{} {}[{}..{}) is outside buffer '{}' of {} chunk(s)", role, to_char(buffer),
                   begin, end, to_char(buffer), extent);
    }
  }

  void check_step(int rank, int t, int s) {
    const Gpu& g = gpu(rank);
    const Threadblock& tb = block(rank, t);
    const Step& step = tb.steps[static_cast<std::size_t>(s)];
    const int line = step.where.line;
    // Built lazily: almost every step of a real file is fine.
    auto path = [&] { return element_path(rank, t, s); };

    if (step.type != StepType::Nop) {
      if (step.count < 1) {
        sink_.errorf(line, path(), "cnt {} must be at least 1 for a '{}' step", step.count,
                     to_string(step.type));
      } else if (step.count >= limits_.max_count) {
        sink_.errorf(line, path(), "cnt {} is not below the '{}' profile's limit of {}", step.count,
                     limits_.name, limits_.max_count);
      }
      if (sends(step.type) && tb.send == -1) {
        sink_.errorf(line, path(), "a '{}' step sends, but its threadblock has no send peer",
                     to_string(step.type));
      }
      if (receives(step.type) && tb.recv == -1) {
        sink_.errorf(line, path(), "a '{}' step receives, but its threadblock has no recv peer",
                     to_string(step.type));
      }
      if (reads_source(step.type)) check_operand(rank, t, s, step, true);
      if (writes_destination(step.type)) check_operand(rank, t, s, step, false);
    }
    check_dependency(g, rank, t, s, step, line);
  }

  void check_dependency(const Gpu& g, int rank, int t, int s, const Step& step, int line) {
    if (step.depid == -1 && step.deps == -1) return;
    if (detail::dependency_in_range(g, t, step) &&
        g.threadblocks[static_cast<std::size_t>(step.depid)]
            .steps[static_cast<std::size_t>(step.deps)]
            .hasdep) {
      return;  // the common case, decided without building any text
    }
    const std::string path = element_path(rank, t, s);
    if (step.depid < 0) {
      sink_.errorf(line, path, "depid={} deps={}: a dependency needs both (or both -1)", step.depid,
                   step.deps);
      return;
    }
    if (step.depid == t) {
      sink_.errorf(line, path,
                   "depends on its own threadblock (tb {}); steps of a threadblock already run "
                   "in order",
                   t);
      return;
    }
    if (static_cast<std::size_t>(step.depid) >= g.threadblocks.size()) {
      sink_.errorf(line, path, "depends on tb {}, which does not exist (rank {} has {})",
                   step.depid, rank, g.threadblocks.size());
      return;
    }
    const Threadblock& target = g.threadblocks[static_cast<std::size_t>(step.depid)];
    if (step.deps < 0 || static_cast<std::size_t>(step.deps) >= target.steps.size()) {
      sink_.errorf(line, path, "depends on step {} of tb {}, which does not exist (it has {})",
                   step.deps, step.depid, target.steps.size());
      return;
    }
    if (!target.steps[static_cast<std::size_t>(step.deps)].hasdep) {
      sink_.errorf(line, path,
                   "depends on {}, which lacks hasdep=\"1\" (a runtime may publish completion "
                   "only for steps marked so)",
                   located(algo_, rank, step.depid, step.deps));
    }
  }

  void check_connections() {
    const ConnectionMap connections = detail::index_connections(
        algo_, [&](const Connection& c, bool sending, int first, int second) {
          const int rank = sending ? c.sender : c.receiver;
          const Threadblock& tb = block(rank, second);
          sink_.errorf(tb.where.line, element_path(rank, second),
                       "tb {} and tb {} both {} rank {} on channel {}: one threadblock per "
                       "connection and direction",
                       first, second, sending ? "send to" : "receive from",
                       sending ? c.receiver : c.sender, c.channel);
        });
    for (const auto& [conn, ends] : connections) check_messages(conn, ends);
  }

  void check_messages(const Connection& conn, const detail::ConnectionEnds& ends) {
    const std::vector<int> sent =
        ends.sender_tb >= 0 ? detail::message_steps(block(conn.sender, ends.sender_tb), true)
                            : std::vector<int>{};
    const std::vector<int> received =
        ends.receiver_tb >= 0 ? detail::message_steps(block(conn.receiver, ends.receiver_tb), false)
                              : std::vector<int>{};
    if (sent.size() == received.size() && sent.empty()) return;
    if (ends.receiver_tb < 0) {
      const Threadblock& tb = block(conn.sender, ends.sender_tb);
      sink_.errorf(tb.where.line, element_path(conn.sender, ends.sender_tb),
                   "sends {} message(s) to rank {} on channel {}, but no threadblock of rank {} "
                   "receives from rank {} on channel {}",
                   sent.size(), conn.receiver, conn.channel, conn.receiver, conn.sender,
                   conn.channel);
      return;
    }
    if (ends.sender_tb < 0) {
      const Threadblock& tb = block(conn.receiver, ends.receiver_tb);
      sink_.errorf(tb.where.line, element_path(conn.receiver, ends.receiver_tb),
                   "receives {} message(s) from rank {} on channel {}, but no threadblock of rank "
                   "{} sends to rank {} on channel {}",
                   received.size(), conn.sender, conn.channel, conn.sender, conn.receiver,
                   conn.channel);
      return;
    }
    const Threadblock& sender = block(conn.sender, ends.sender_tb);
    const Threadblock& receiver = block(conn.receiver, ends.receiver_tb);
    const std::size_t common = std::min(sent.size(), received.size());
    for (std::size_t k = 0; k < common; ++k) {
      const Step& out = sender.steps[static_cast<std::size_t>(sent[k])];
      const Step& in = receiver.steps[static_cast<std::size_t>(received[k])];
      if (out.count != in.count) {
        sink_.errorf(out.where.line, element_path(conn.sender, ends.sender_tb, sent[k]),
                     "message {} to rank {} on channel {} has cnt {} here but cnt {} where it is "
                     "received, at {}",
                     k, conn.receiver, conn.channel, out.count, in.count,
                     located(algo_, conn.receiver, ends.receiver_tb, received[k]));
        break;
      }
    }
    if (sent.size() != received.size()) {
      const bool extra_sent = sent.size() > received.size();
      const std::string first_unmatched =
          extra_sent ? located(algo_, conn.sender, ends.sender_tb, sent[common])
                     : located(algo_, conn.receiver, ends.receiver_tb, received[common]);
      sink_.errorf(sender.where.line, element_path(conn.sender, ends.sender_tb),
                   "sends {} message(s) to rank {} on channel {}, but {} receives {}; message {} "
                   "({}) has no matching {}",
                   sent.size(), conn.receiver, conn.channel,
                   located(algo_, conn.receiver, ends.receiver_tb), received.size(), common,
                   first_unmatched, extra_sent ? "receive" : "send");
    }
  }

  // Program order plus dependencies must be acyclic on every rank, or some threadblock waits
  // forever. Kahn's algorithm leaves exactly the steps on or behind a cycle; walking back
  // through those from any of them must close a cycle, which is reported, one per rank.
  void check_cycles() {
    const StepNumbering numbering(algo_);
    const detail::StepGraph graph = detail::local_step_graph(algo_, numbering);
    const std::vector<std::size_t> order = graph.topological_order();
    if (order.size() == graph.size()) return;

    std::vector<char> blocked(graph.size(), 1);
    for (std::size_t v : order) blocked[v] = 0;
    std::vector<char> reported_rank(algo_.gpus.size(), 0);
    std::vector<std::size_t> walk_position(graph.size(), detail::StepGraph::kNone);
    for (std::size_t start = 0; start < graph.size(); ++start) {
      if (!blocked[start]) continue;
      const int rank = numbering.locate(start).rank;
      if (reported_rank[static_cast<std::size_t>(rank)]) continue;
      reported_rank[static_cast<std::size_t>(rank)] = 1;

      std::vector<std::size_t> walk;
      std::size_t v = start;
      bool closed = true;
      while (walk_position[v] == detail::StepGraph::kNone) {
        walk_position[v] = walk.size();
        walk.push_back(v);
        std::size_t next = detail::StepGraph::kNone;
        for (std::size_t p : graph.predecessors(v)) {
          if (p != detail::StepGraph::kNone && blocked[p]) {
            next = p;
            break;
          }
        }
        if (next == detail::StepGraph::kNone) {  // cannot happen, see above; never loop on it
          closed = false;
          break;
        }
        v = next;
      }
      if (!closed || walk[walk_position[v]] != v) continue;
      // The walk went against the edges; the cycle in execution order is its tail reversed.
      std::vector<std::size_t> cycle(walk.begin() + static_cast<std::ptrdiff_t>(walk_position[v]),
                                     walk.end());
      std::reverse(cycle.begin(), cycle.end());
      report_cycle(numbering, cycle);
    }
  }

  void report_cycle(const StepNumbering& numbering, const std::vector<std::size_t>& cycle) {
    constexpr std::size_t kShown = 12;
    std::string members;
    for (std::size_t k = 0; k < cycle.size() && k < kShown; ++k) {
      const auto at = numbering.locate(cycle[k]);
      members += fmt::format("tb {} / step {} -> ", at.tb, at.step);
    }
    if (cycle.size() > kShown) members += "... -> ";
    const auto first = numbering.locate(cycle.front());
    members += fmt::format("tb {} / step {}", first.tb, first.step);
    const Step& step = block(first.rank, first.tb).steps[static_cast<std::size_t>(first.step)];
    sink_.errorf(step.where.line, element_path(first.rank, first.tb, first.step),
                 "dependency cycle of {} step(s) on rank {}: {}", cycle.size(), first.rank,
                 members);
  }

  const Algorithm& algo_;
  const LimitsProfile& limits_;
  DiagnosticSink& sink_;
};

void validate_into(const Algorithm& algo, const LimitsProfile& limits, Diagnostics& out) {
  DiagnosticSink sink(out, algo.source);
  Validator(algo, limits, sink).run();
}

LoadResult load(ReadResult read, const LimitsProfile& limits) {
  const bool readable = read.ok();
  LoadResult result;
  result.diagnostics = std::move(read.diagnostics);
  // A file that could not be read cleanly is not validated: its defaults would only add
  // findings about values the file never stated.
  if (!readable) return result;
  validate_into(*read.algorithm, limits, result.diagnostics);
  if (!result.diagnostics.has_errors()) result.algorithm = std::move(read.algorithm);
  return result;
}

}  // namespace

Diagnostics validate(const Algorithm& algo, const LimitsProfile& limits) {
  Diagnostics out;
  validate_into(algo, limits, out);
  return out;
}

LoadResult load_xml_file(const std::string& path, const LimitsProfile& limits,
                         const FileReadPolicy& policy) {
  return load(read_xml_file(path, policy), limits);
}

LoadResult load_xml_string(std::string_view text, const LimitsProfile& limits,
                           std::string source_name) {
  return load(read_xml_string(text, std::move(source_name)), limits);
}

}  // namespace weft::ir
