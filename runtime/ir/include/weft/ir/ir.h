// The IR: an MSCCL algorithm as data (docs/architecture.md §2). algorithm → gpu (one per rank) →
// threadblock → step. Everything that produces or consumes algorithms speaks this model;
// XML is only its serialised form.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weft::ir {

enum class Collective { AllReduce, AllGather, ReduceScatter, AllToAll, Broadcast, Reduce, Custom };
enum class Protocol { Simple, LL, LL128 };
enum class BufferKind : std::int8_t { None = -1, Input = 0, Output = 1, Scratch = 2 };

enum class StepType : std::uint8_t {
  Send,                // s
  Recv,                // r
  RecvCopySend,        // rcs
  RecvReduceSend,      // rrs
  RecvReduceCopy,      // rrc
  RecvReduceCopySend,  // rrcs
  Copy,                // cpy
  Reduce,              // re
  Nop,                 // nop
};

// What a step does with the network and memory, so passes and runtimes ask instead of listing
// step types again.
bool receives(StepType type);
bool sends(StepType type);
bool reduces(StepType type);             // combines with a local operand (rrs, rrc, rrcs, re)
bool reads_source(StepType type);        // reads srcbuf (s, rrs, rrc, rrcs, cpy, re)
bool writes_destination(StepType type);  // writes dstbuf (r, rcs, rrc, rrcs, cpy, re)

std::string_view to_string(Collective coll);  // executor dialect: "reducescatter"
std::string_view to_string(Protocol proto);   // "Simple", "LL", "LL128"
std::string_view to_string(StepType type);    // "s", "rrcs", ...
char to_char(BufferKind buffer);              // 'i', 'o', 's'; '-' for None
std::optional<Collective> parse_collective(std::string_view name);  // also "reduce_scatter"
std::optional<Protocol> parse_protocol(std::string_view name);
std::optional<StepType> parse_step_type(std::string_view name);
std::optional<BufferKind> parse_buffer(std::string_view name);  // "i", "o", "s"

// Where an element came from in its XML file (0 when built in memory).
struct SourceLine {
  int line = 0;
};

struct Step {
  StepType type = StepType::Nop;
  BufferKind srcbuf = BufferKind::None;
  int srcoff = -1;
  BufferKind dstbuf = BufferKind::None;
  int dstoff = -1;
  int count = 0;   // `cnt`: chunks touched (and sent as one message)
  int depid = -1;  // threadblock of the same rank waited on, -1 for none
  int deps = -1;   // its step index
  bool hasdep = false;
  SourceLine where;
};

struct Threadblock {
  int id = 0;
  int send = -1;  // peer rank this threadblock sends to, -1 for none
  int recv = -1;  // peer rank it receives from
  int channel = 0;
  std::vector<Step> steps;
  SourceLine where;
};

struct Gpu {
  int id = 0;  // the rank
  int input_chunks = 0;
  int output_chunks = 0;
  int scratch_chunks = 0;
  std::vector<Threadblock> threadblocks;
  SourceLine where;
};

struct Algorithm {
  std::string name;
  Collective collective = Collective::AllReduce;
  std::string collective_name;  // as written; kept for custom collectives
  Protocol protocol = Protocol::Simple;
  int nchannels = 1;
  int nchunksperloop = 1;
  int ngpus = 0;
  bool inplace = false;
  bool outofplace = true;
  std::uint64_t min_bytes = 0;
  std::uint64_t max_bytes = 0;  // 0: no upper bound
  int nthreads = 0;             // older runtimes only; 0 when absent
  int root = -1;                // broadcast/reduce root when the file names one; -1: unknown
  // Weft's extension: the nodes (hosts) the algorithm was written for, ranks in contiguous blocks
  // of ngpus / nnodes, block k on node k; 0 when the file does not say (one node).
  int nnodes = 0;
  std::vector<Gpu> gpus;
  std::string source;  // file name it was read from, for messages
  SourceLine where;
};

// A connection: the FIFO (channel, sender, receiver) of docs/architecture.md §2.4.
struct Connection {
  int channel = 0;
  int sender = 0;
  int receiver = 0;
  auto operator<=>(const Connection&) const = default;
};

// "gpu 3 / tb 5 / step 12": the element path used in every message about an IR.
std::string element_path(int gpu, int tb = -1, int step = -1);

}  // namespace weft::ir
