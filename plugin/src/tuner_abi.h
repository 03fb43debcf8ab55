// NCCL's tuner plugin interface, versions 4 and 5, as NCCL 2.28 expects it
// (NCCL's src/include/plugin/tuner/tuner_v5.h, v4 likewise). Every plugin carries its own copy of
// these definitions: NCCL loads the plugin by symbol name and trusts the layout.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <cstdint>

extern "C" {

typedef enum {
  WEFT_NCCL_LOG_NONE = 0,
  WEFT_NCCL_LOG_VERSION = 1,
  WEFT_NCCL_LOG_WARN = 2,
  WEFT_NCCL_LOG_INFO = 3,
  WEFT_NCCL_LOG_ABORT = 4,
  WEFT_NCCL_LOG_TRACE = 5
} weftNcclDebugLogLevel;

// NCCL's subsystem flag for tuning messages (NCCL_TUNING).
inline constexpr unsigned long kWeftNcclTuningFlag = 64;

typedef void (*weftNcclDebugLogger_t)(weftNcclDebugLogLevel level, unsigned long flags,
                                      const char* file, int line, const char* fmt, ...);

// ncclFunc_t is an int-sized enum; weft/plugin/nccl_enums.h names its values.
typedef int weftNcclFunc_t;

typedef struct {
  int nNvlDomains;
  int minRanksPerNvlDomain;
  int maxRanksPerNvlDomain;
} weftNcclNvlDomainInfo_v5_t;

typedef struct {
  double baseLatencies[7][3];
  double hwLatencies[3][7][3];
  double llMaxBws[4][3];
  double perChMaxRingLL128Bws[4][3];
  double perChMaxTreeLL128Bws[4][3];
  double perChMaxTreeBws[4][3];
  double perChMaxNVLSTreeBws[4][3];
} weftNcclTunerConstants_v5_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(void** context, uint64_t commId, size_t nRanks, size_t nNodes,
                       weftNcclDebugLogger_t logFunction, weftNcclNvlDomainInfo_v5_t* nvlDomainInfo,
                       weftNcclTunerConstants_v5_t* constants);
  ncclResult_t (*getCollInfo)(void* context, weftNcclFunc_t collType, size_t nBytes, int numPipeOps,
                              float** collCostTable, int numAlgo, int numProto, int regBuff,
                              int* nChannels);
  ncclResult_t (*finalize)(void* context);
} weftNcclTuner_v5_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(size_t nRanks, size_t nNodes, weftNcclDebugLogger_t logFunction,
                       void** context);
  ncclResult_t (*getCollInfo)(void* context, weftNcclFunc_t collType, size_t nBytes, int numPipeOps,
                              float** collCostTable, int numAlgo, int numProto, int regBuff,
                              int* nChannels);
  ncclResult_t (*destroy)(void* context);
} weftNcclTuner_v4_t;

}  // extern "C"
