#include "perf_options.h"

#include <algorithm>
#include <charconv>
#include <numeric>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "builtin_algorithms.h"
#include "weft/communicator/bootstrap.h"
#include "weft/ir/geometry.h"
#include "weft/ir/xml.h"
#include "weft/program/options.h"

namespace weft::perf {

namespace {

// CLI11 validator/transformer for nccl-tests' sizes ("64K", "1G").
std::string parse_size_into(const std::string& text, std::size_t& out) {
  const auto value = gpu::parse_byte_size(text);
  if (!value) return fmt::format("'{}' is not a size (bytes, or with K/M/G)", text);
  out = *value;
  return {};
}

// The options CLI11 reads as text (or as a number PerfOptions keeps in another form), turned into
// PerfOptions' fields once the whole line is parsed.
struct OptionTexts {
  std::string protocol;
  std::string min_bytes, max_bytes;
  std::string max_memory;
  int check = 1;
  std::string dtype = "float", op = "sum";
  std::string device;
  CLI::Option* device_option = nullptr;  // whether --device was given at all
};

// Every option, with its help line and the range CLI11 checks.
void declare_options(CLI::App& app, PerfOptions& o, OptionTexts& t) {
  app.set_help_flag("-h,--help", "print this help and exit");
  auto* xml = app.add_option("--xml,xml", o.xml, "algorithm file (MSCCL XML)");
  auto* builtin = app.add_option(
      "--builtin", o.builtin,
      "built-in algorithm: ring[:channels], allpairs, allpairs-chain, allgather-ring, "
      "chain:HOPS (2 ranks)");
  xml->excludes(builtin);
  app.add_option("--proto", t.protocol, "override the algorithm's protocol: Simple, LL, LL128");
  app.add_flag("--any-size", o.any_size,
               "run the algorithm at every size of the sweep, outside its file's "
               "minBytes..maxBytes band too (a tuned file's band says where it was fastest, "
               "not where it is right)");
  app.add_option("-b,--minbytes", t.min_bytes, "smallest size (default 32M)");
  app.add_option("-e,--maxbytes", t.max_bytes, "largest size (default 32M)");
  app.add_option("-f,--stepfactor", o.step_factor, "size multiplier (default 2)")
      ->check(CLI::Range(std::size_t{2}, std::size_t{1} << 20));
  app.add_option("-n,--iters", o.iterations, "timed iterations (default 20)")
      ->check(CLI::Range(1, 1 << 24));
  app.add_option("-w,--warmup_iters", o.warmup, "warm-up iterations (default 5)")
      ->check(CLI::Range(0, 1 << 24));
  app.add_option("-c,--check", t.check, "check results against the CPU reference (default 1)")
      ->check(CLI::Range(0, 1));
  app.add_option("-d,--datatype", t.dtype,
                 "int8 uint8 int32 uint32 int64 uint64 half float double bfloat16");
  app.add_option("-o,--op", t.op, "sum prod min max avg");
  app.add_option("-G,--cudagraph", o.graph_launches,
                 "capture the iterations in a CUDA graph and replay it this often (default 0)")
      ->check(CLI::Range(0, 1 << 20));
  app.add_option("-r,--root", o.root, "root of broadcast/reduce (default 0)")
      ->check(CLI::Range(0, (1 << 16) - 1));
  app.add_option("--ranks", o.ranks,
                 "emulate this many ranks on one GPU (default: the XML file's rank count)")
      ->check(CLI::Range(1, 64));
  app.add_option("--rank", o.rank, "this process's rank (multi-process mode)")
      ->check(CLI::Range(0, (1 << 16) - 1));
  app.add_option("--local-ranks", o.local_ranks,
                 "multi-process mode: this process drives --rank and the next K−1 ranks, "
                 "sharing one device (default 1); --rank a multiple of K")
      ->check(CLI::Range(1, 64));
  app.add_option("--nranks", o.nranks, "ranks in all (multi-process mode)")
      ->check(CLI::Range(1, 1 << 16));
  app.add_option("--rendezvous", o.rendezvous,
                 "where rank 0 listens (multi-process mode): host:port or unix:NAME, with "
                 "#SECRET (32 hex digits, as weftMakeRendezvous writes) for a secret every rank "
                 "proves");
  t.device_option =
      app.add_option("--device", t.device,
                     "CUDA device number (default: rank modulo device count), or 'host' for host "
                     "mode");
  app.add_option("--max-memory", t.max_memory,
                 "host memory the run may take, e.g. 8G (default: what the machine has "
                 "available); a run estimated to need more is refused before it starts");
  app.add_option("--timeout", o.timeout_s,
                 "seconds a kernel wait may last (default WEFT_TIMEOUT_S)")
      ->check(CLI::Range(0.001, 86400.0));
}

// The sizes: -b, -e (one alone moves the other along) and --max-memory. Empty, or what is wrong.
std::string read_sizes(PerfOptions& o, const OptionTexts& t) {
  if (!t.min_bytes.empty()) {
    if (auto e = parse_size_into(t.min_bytes, o.min_bytes); !e.empty()) return "-b: " + e;
  }
  if (!t.max_bytes.empty()) {
    if (auto e = parse_size_into(t.max_bytes, o.max_bytes); !e.empty()) return "-e: " + e;
  }
  if (!t.max_memory.empty()) {
    std::size_t limit = 0;
    if (auto e = parse_size_into(t.max_memory, limit); !e.empty() || limit == 0) {
      return "--max-memory: " + (e.empty() ? std::string("must be more than 0") : e);
    }
    o.max_memory = limit;
  }
  // One bound alone moves the other default along when needed (-e 1K alone means 1K..1K).
  if (t.min_bytes.empty() && o.max_bytes < o.min_bytes) o.min_bytes = o.max_bytes;
  if (t.max_bytes.empty() && o.max_bytes < o.min_bytes) o.max_bytes = o.min_bytes;
  if (o.min_bytes == 0 || o.max_bytes < o.min_bytes) {
    return fmt::format("need 0 < -b ({}) <= -e ({})", o.min_bytes, o.max_bytes);
  }
  return {};
}

// What each call computes: -d, -o, -c and --proto. Empty, or what is wrong.
std::string read_call_kind(PerfOptions& o, const OptionTexts& t) {
  const auto parsed_type = parse_data_type(t.dtype);
  if (!parsed_type) return fmt::format("-d: unknown data type '{}'", t.dtype);
  o.dtype = *parsed_type;
  const auto parsed_op = parse_reduce_op(t.op);
  if (!parsed_op) return fmt::format("-o: unknown operator '{}'", t.op);
  o.op = *parsed_op;
  o.check = t.check != 0;
  if (!t.protocol.empty()) {
    o.protocol = ir::parse_protocol(t.protocol);
    if (!o.protocol) return fmt::format("--proto: '{}' is not Simple, LL or LL128", t.protocol);
  }
  return {};
}

// Where the ranks run: the device, then emulation (--ranks, or the XML file's rank count) or one
// process per rank (--rank/--nranks/--rendezvous). Empty, or what is wrong.
std::string read_placement(PerfOptions& o, const OptionTexts& t) {
  if (o.xml.empty() && o.builtin.empty()) return "give an algorithm: --xml FILE or --builtin NAME";
  if (t.device == "host") {
    o.host = true;
  } else if (t.device_option->count() > 0) {
    const auto [end, error] =
        std::from_chars(t.device.data(), t.device.data() + t.device.size(), o.device);
    if (error != std::errc{} || end != t.device.data() + t.device.size() || o.device < 0) {
      return fmt::format("--device: '{}' is neither a device number nor 'host'", t.device);
    }
  }
  const bool multi = o.rank >= 0 || o.nranks > 0 || !o.rendezvous.empty();
  if (multi && o.ranks > 0)
    return "--ranks (emulation) and --rank/--nranks/--rendezvous exclude each other";
  if (multi) {
    if (o.rank < 0 || o.nranks <= 0 || o.rendezvous.empty()) {
      return "multi-process mode needs --rank, --nranks and --rendezvous";
    }
    if (o.rank >= o.nranks)
      return fmt::format("--rank {} is not below --nranks {}", o.rank, o.nranks);
    if (o.nranks % o.local_ranks != 0 || o.rank % o.local_ranks != 0) {
      return fmt::format("--local-ranks {} must divide --nranks {} and --rank {}", o.local_ranks,
                         o.nranks, o.rank);
    }
    if (auto point = gpu::parse_rendezvous(o.rendezvous); !point.ok()) {
      return "--rendezvous: " + point.status().message;
    }
  } else if (o.ranks == 0 && !o.xml.empty()) {
    // The file states its rank count: emulate that many, as a user who gave none expects.
    const ir::ReadResult read = ir::read_xml_file(o.xml, ir::kCommandLineFile);
    if (!read.algorithm) return fmt::format("{}:\n{}", o.xml, read.diagnostics.str());
    const int ngpus = read.algorithm->ngpus;
    if (ngpus < 1 || ngpus > 64) {
      return fmt::format(
          "{} is for {} ranks; one process emulates 1 to 64 (--ranks), more "
          "need one process per rank (--rank/--nranks/--rendezvous)",
          o.xml, ngpus);
    }
    o.ranks = ngpus;
  } else if (o.ranks == 0) {
    return "give --ranks N (emulation) or --rank/--nranks/--rendezvous (multi-process)";
  }
  return {};
}

}  // namespace

ParseOutcome parse_perf_options(int argc, const char* const* argv) {
  PerfOptions o;
  OptionTexts texts;
  CLI::App app{
      "weft-perf: nccl-tests-style benchmark of Weft algorithms on the GPU runtime.\n"
      "Emulation: --ranks N runs N ranks in this process on one GPU. Multi-process: start one\n"
      "process per rank with --rank R --nranks N --rendezvous ADDRESS[#SECRET] (rank 0 listens;\n"
      "every rank proves the secret, without sending it).\n"
      "Host mode: --device host --ranks N runs the same interpreter on CPU threads, no GPU\n"
      "needed (it proves results, not speed); with --rank/--nranks/--rendezvous, one process\n"
      "per rank, every other process reached through the proxy (WEFT_HOSTID names the host)."};
  declare_options(app, o, texts);

  ParseOutcome outcome;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    outcome.text = app.help();
    outcome.exit_code = 0;
    return outcome;
  } catch (const CLI::ParseError& e) {
    outcome.text = fmt::format("weft-perf: {}\nRun with --help for the options.", e.what());
    outcome.exit_code = 2;
    return outcome;
  }
  std::string problem = read_sizes(o, texts);
  if (problem.empty()) problem = read_call_kind(o, texts);
  if (problem.empty()) problem = read_placement(o, texts);
  if (!problem.empty()) {
    outcome.text = "weft-perf: " + problem;
    outcome.exit_code = 2;
    return outcome;
  }
  outcome.options = std::move(o);
  return outcome;
}

std::vector<std::size_t> size_sweep(std::size_t min_bytes, std::size_t max_bytes,
                                    std::size_t factor) {
  std::vector<std::size_t> sizes;
  if (min_bytes == 0 || factor < 2) return sizes;
  for (std::size_t size = min_bytes; size <= max_bytes; size *= factor) {
    sizes.push_back(size);
    if (size > max_bytes / factor) break;  // the next one would overflow or pass the end
  }
  return sizes;
}

RowCall row_call(const ir::Algorithm& algo, std::size_t bytes, DataType dtype) {
  RowCall row;
  const std::size_t element = size_of(dtype);
  const auto m = static_cast<std::size_t>(std::max(ir::count_multiplier(algo), 1));
  const auto chunks = static_cast<std::size_t>(std::max(algo.nchunksperloop, 1));
  // count × m must be a multiple of nchunksperloop: count a multiple of this unit.
  const std::size_t unit = chunks / std::gcd(chunks, m);
  std::size_t count = bytes / element / m;
  count -= count % unit;
  if (count == 0) count = unit;
  row.count = count;
  row.total_elements = count * m;
  row.bytes = row.total_elements * element;
  return row;
}

double bus_factor(ir::Collective collective, int nranks) {
  const double n = nranks;
  switch (collective) {
    case ir::Collective::AllReduce:
      return nranks > 0 ? 2.0 * (n - 1) / n : 0;
    case ir::Collective::AllGather:
    case ir::Collective::ReduceScatter:
    case ir::Collective::AllToAll:
      return nranks > 0 ? (n - 1) / n : 0;
    case ir::Collective::Broadcast:
    case ir::Collective::Reduce:
    case ir::Collective::Custom:
      break;
  }
  return 1.0;
}

gpu::Result<ir::Algorithm> builtin_algorithm(const std::string& spec, int nranks,
                                             ir::Protocol protocol) {
  using gpu::ErrorCode;
  using gpu::Status;
  if (nranks < 2) {
    return Status::error(ErrorCode::InvalidArgument,
                         fmt::format("built-in algorithms need at least 2 ranks, not {}", nranks));
  }
  const auto colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  if (name == "chain") {
    int hops = 0;
    const std::string arg = colon == std::string::npos ? "" : spec.substr(colon + 1);
    const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), hops);
    if (ec != std::errc() || end != arg.data() + arg.size() || hops < 1 || hops > kMaxChainHops) {
      return Status::error(ErrorCode::InvalidArgument,
                           fmt::format("'{}': chain:HOPS needs 1..{} hops", spec, kMaxChainHops));
    }
    if (nranks != 2) {
      return Status::error(ErrorCode::InvalidArgument,
                           fmt::format("'{}' runs on 2 ranks, not {}", spec, nranks));
    }
    return chain_broadcast(hops, protocol);
  }
  int channels = 1;
  if (colon != std::string::npos) {
    const std::string arg = spec.substr(colon + 1);
    const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), channels);
    if (ec != std::errc() || end != arg.data() + arg.size() || channels < 1 || channels > 32) {
      return Status::error(ErrorCode::InvalidArgument,
                           fmt::format("'{}': channels must be 1..32", spec));
    }
  }
  if (name == "ring") return ring_allreduce(nranks, protocol, channels);
  if (name == "allpairs" && colon == std::string::npos) return allpairs_allreduce(nranks, protocol);
  if (name == "allpairs-chain" && colon == std::string::npos) {
    return allpairs_chain_allreduce(nranks, protocol, true);
  }
  if (name == "allgather-ring" && colon == std::string::npos)
    return ring_allgather(nranks, protocol);
  return Status::error(ErrorCode::InvalidArgument,
                       fmt::format("unknown built-in algorithm '{}' (ring[:channels], allpairs, "
                                   "allpairs-chain, allgather-ring, chain:HOPS)",
                                   spec));
}

}  // namespace weft::perf
