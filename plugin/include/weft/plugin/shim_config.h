// What the shim reads from the environment (docs/architecture.md §6), parsed once into plain data.
// Reading goes through a lookup function so that tests can supply an environment without touching
// the process's.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/plugin/debug_log.h"

namespace weft::plugin {

// Returns the value of an environment variable, or nullptr when unset.
using Environment = std::function<const char*(const char* name)>;
Environment process_environment();

struct ShimConfig {
  bool disabled = false;    // WEFT_DISABLE=1: forward everything, load nothing
  bool standalone = false;  // WEFT_STANDALONE=1: serve communicators without NCCL
  // WEFT_STANDALONE_ADDR: "host:port" (TCP) or "unix:NAME" rank 0 listens on; empty: a fresh
  // local socket name per id.
  std::string standalone_address;
  // WEFT_BOOTSTRAP_TIMEOUT_S: how long the standalone rendezvous waits for every rank.
  std::chrono::milliseconds rendezvous_timeout = std::chrono::seconds(60);
  LogLevel debug = LogLevel::None;  // WEFT_DEBUG
  // WEFT_ALGO_DIR (else MSCCL_ALGO_DIR) and WEFT_XML_FILES (else MSCCL_XML_FILES), each a
  // colon-separated list.
  std::vector<std::string> algorithm_dirs;
  std::vector<std::string> xml_files;
  std::string nccl_library;  // WEFT_NCCL_LIB: the libnccl to forward to instead of RTLD_NEXT
  // WEFT_HOSTID (as NCCL_HOSTID), else the machine's hostname: processes with the same id share
  // a host; a communicator whose ranks span hosts reaches the others through the proxy.
  std::string host_id;
  // WEFT_DEVICE=host, standalone only: the kernels run on CPU threads over the application's
  // host buffers (host mode), for NCCL programs tested on a machine without a GPU.
  bool host_device = false;
  std::string tuner_config;  // WEFT_TUNER_CONFIG: CSV for the tuner plugin
  // Values that could not be understood, each naming the variable, its value and what was
  // assumed instead. Reported as warnings; never fatal, the application must still run.
  std::vector<std::string> problems;
};

ShimConfig shim_config_from_env(const Environment& env);

// "1", "true", "yes", "on" → true; "0", "false", "no", "off", "" → false (any case);
// anything else: nothing.
std::optional<bool> parse_flag(std::string_view text);

// Splits "a:b::c" into {"a", "b", "c"}: empty elements are dropped.
std::vector<std::string> split_path_list(std::string_view text);

}  // namespace weft::plugin
