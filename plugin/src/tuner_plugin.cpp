// The tuner plugin NCCL loads from this same library (NCCL_TUNER_PLUGIN=libweft_nccl.so, or
// STATIC_PLUGIN when it is preloaded). It steers NCCL's own algorithm, protocol and channel
// choice for the calls that fall through to NCCL, from the rules in WEFT_TUNER_CONFIG; without
// a config it changes nothing. It never returns an error: NCCL fails the call when a tuner does.
#include <cstdlib>
#include <exception>
#include <new>
#include <string>

#include <fmt/format.h>

#include "tuner_abi.h"
#include "weft/tuning/tuner_config.h"

namespace weft::plugin {

using tuning::apply_tuner_rules;
using tuning::read_tuner_config;
using tuning::tuner_algorithm_name;
using tuning::tuner_collective_name;
using tuning::tuner_protocol_name;
using tuning::TunerConfig;
using tuning::TunerQuery;
using tuning::TunerRule;

namespace {

// One per communicator (NCCL calls init once per communicator).
struct TunerContext {
  std::size_t nranks = 0;
  std::size_t nnodes = 0;
  weftNcclDebugLogger_t log = nullptr;
  TunerConfig config;
};

template <class... Args>
void log_to_nccl(const TunerContext& context, weftNcclDebugLogLevel level,
                 fmt::format_string<Args...> format, Args&&... args) {
  if (context.log == nullptr) return;
  const std::string message = fmt::format(format, std::forward<Args>(args)...);
  context.log(level, kWeftNcclTuningFlag, __FILE__, __LINE__, "%s", message.c_str());
}

TunerContext* make_context(std::size_t nranks, std::size_t nnodes, weftNcclDebugLogger_t log) {
  auto* context = new (std::nothrow) TunerContext;
  if (context == nullptr) return nullptr;
  context->nranks = nranks;
  context->nnodes = nnodes;
  context->log = log;
  const char* path = std::getenv("WEFT_TUNER_CONFIG");
  if (path == nullptr || *path == '\0') {
    log_to_nccl(*context, WEFT_NCCL_LOG_INFO,
                "Weft tuner: WEFT_TUNER_CONFIG is not set; NCCL's choices are left unchanged");
    return context;
  }
  context->config = read_tuner_config(path);
  for (const std::string& problem : context->config.problems) {
    log_to_nccl(*context, WEFT_NCCL_LOG_WARN, "Weft tuner: {}", problem);
  }
  log_to_nccl(*context, WEFT_NCCL_LOG_INFO, "Weft tuner: {} rule{} from {} ({} ranks, {} nodes)",
              context->config.rules.size(), context->config.rules.size() == 1 ? "" : "s", path,
              nranks, nnodes);
  return context;
}

ncclResult_t init_v5(void** context, uint64_t /*commId*/, size_t nRanks, size_t nNodes,
                     weftNcclDebugLogger_t logFunction, weftNcclNvlDomainInfo_v5_t* /*nvl*/,
                     weftNcclTunerConstants_v5_t* /*constants*/) {
  try {
    if (context != nullptr) *context = make_context(nRanks, nNodes, logFunction);
  } catch (...) {
    // Nothing may cross into NCCL (memory exhaustion included): a null context tunes nothing.
    if (context != nullptr) *context = nullptr;
  }
  return ncclSuccess;
}

ncclResult_t init_v4(size_t nRanks, size_t nNodes, weftNcclDebugLogger_t logFunction,
                     void** context) {
  return init_v5(context, 0, nRanks, nNodes, logFunction, nullptr, nullptr);
}

ncclResult_t get_coll_info(void* opaque, weftNcclFunc_t collType, size_t nBytes, int numPipeOps,
                           float** collCostTable, int numAlgo, int numProto, int regBuff,
                           int* nChannels) {
  auto* context = static_cast<TunerContext*>(opaque);
  if (context == nullptr || context->config.rules.empty() || collCostTable == nullptr) {
    return ncclSuccess;
  }
  try {
    // NCCL passes its float[numAlgo][numProto] table as float**; the rows are contiguous.
    auto* table = reinterpret_cast<float*>(collCostTable);
    TunerQuery query;
    query.collective = collType;
    query.bytes = nBytes;
    query.pipe_ops = numPipeOps;
    query.reg_buff = regBuff;
    query.nodes = context->nnodes;
    query.ranks = context->nranks;
    const int rule =
        apply_tuner_rules(context->config.rules, query, table, numAlgo, numProto, nChannels);
    if (rule >= 0) {
      const TunerRule& applied = context->config.rules[static_cast<std::size_t>(rule)];
      log_to_nccl(
          *context, WEFT_NCCL_LOG_TRACE, "Weft tuner: {} of {} bytes -> {}/{}{} (config line {})",
          tuner_collective_name(collType), nBytes, tuner_algorithm_name(applied.algorithm),
          tuner_protocol_name(applied.protocol),
          applied.channels > 0
              ? fmt::format(", {} channel{}", applied.channels, applied.channels == 1 ? "" : "s")
              : "",
          applied.line);
    }
  } catch (...) {
    // Nothing may cross into NCCL: leave its choice as it was.
  }
  return ncclSuccess;
}

ncclResult_t finalize(void* opaque) {
  delete static_cast<TunerContext*>(opaque);
  return ncclSuccess;
}

}  // namespace
}  // namespace weft::plugin

extern "C" {
// NCCL looks these up by name (v5 first); their layout is NCCL's, not ours to change.
__attribute__((visibility("default"))) weftNcclTuner_v5_t ncclTunerPlugin_v5 = {
    "Weft", weft::plugin::init_v5, weft::plugin::get_coll_info, weft::plugin::finalize};
__attribute__((visibility("default"))) weftNcclTuner_v4_t ncclTunerPlugin_v4 = {
    "Weft", weft::plugin::init_v4, weft::plugin::get_coll_info, weft::plugin::finalize};
}
