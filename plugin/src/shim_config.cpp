#include "weft/plugin/shim_config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdlib>

#include <fmt/format.h>

#include "weft/communicator/bootstrap.h"
#include "weft/proxy/participants.h"

namespace weft::plugin {

Environment process_environment() {
  return [](const char* name) -> const char* { return std::getenv(name); };
}

std::optional<bool> parse_flag(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "1" || lower == "true" || lower == "yes" || lower == "on") return true;
  if (lower.empty() || lower == "0" || lower == "false" || lower == "no" || lower == "off") {
    return false;
  }
  return std::nullopt;
}

std::vector<std::string> split_path_list(std::string_view text) {
  std::vector<std::string> parts;
  while (!text.empty()) {
    const auto colon = text.find(':');
    const auto part = text.substr(0, colon);
    if (!part.empty()) parts.emplace_back(part);
    if (colon == std::string_view::npos) break;
    text.remove_prefix(colon + 1);
  }
  return parts;
}

namespace {

bool read_flag(const Environment& env, const char* name, std::vector<std::string>& problems) {
  const char* value = env(name);
  if (value == nullptr) return false;
  if (auto flag = parse_flag(value)) return *flag;
  problems.push_back(
      fmt::format("{}='{}' is not a flag (use 1 or 0); treating it as 0", name, value));
  return false;
}

// The Weft variable wins; MSCCL's name is honoured so that MSCCL deployments work unchanged.
std::vector<std::string> read_list(const Environment& env, const char* weft_name,
                                   const char* msccl_name) {
  if (const char* value = env(weft_name)) return split_path_list(value);
  if (const char* value = env(msccl_name)) return split_path_list(value);
  return {};
}

}  // namespace

ShimConfig shim_config_from_env(const Environment& env) {
  ShimConfig config;
  config.disabled = read_flag(env, "WEFT_DISABLE", config.problems);
  config.standalone = read_flag(env, "WEFT_STANDALONE", config.problems);
  if (const char* value = env("WEFT_STANDALONE_ADDR")) config.standalone_address = value;
  auto rendezvous_timeout = gpu::bootstrap_timeout_from_env(
      [&env](const char* name) -> const char* { return env(name); });
  if (!rendezvous_timeout.ok()) {
    config.problems.push_back(rendezvous_timeout.status().message + "; using 60");
  } else if (rendezvous_timeout.value()) {
    config.rendezvous_timeout = *rendezvous_timeout.value();
  }
  if (const char* value = env("WEFT_DEBUG")) {
    if (auto level = parse_log_level(value)) {
      config.debug = *level;
    } else {
      config.debug = LogLevel::Warn;
      config.problems.push_back(
          fmt::format("WEFT_DEBUG='{}' is not one of WARN, INFO, TRACE; using WARN", value));
    }
  }
  config.algorithm_dirs = read_list(env, "WEFT_ALGO_DIR", "MSCCL_ALGO_DIR");
  config.xml_files = read_list(env, "WEFT_XML_FILES", "MSCCL_XML_FILES");
  if (const char* value = env("WEFT_NCCL_LIB")) config.nccl_library = value;
  auto host = proxy::host_id([&env](const char* name) -> const char* { return env(name); });
  if (host.ok()) {
    config.host_id = host.value();
  } else {
    config.host_id = proxy::host_id([](const char*) -> const char* { return nullptr; }).value();
    config.problems.push_back(
        fmt::format("{}; using the hostname '{}'", host.status().message, config.host_id));
  }
  if (const char* value = env("WEFT_DEVICE")) {
    const std::string_view device(value);
    if (device == "host") {
      config.host_device = true;
    } else if (device != "cuda" && !device.empty()) {
      config.problems.push_back(
          fmt::format("WEFT_DEVICE='{}' is neither cuda nor host; using cuda", value));
    }
    if (config.host_device && !config.standalone) {
      config.host_device = false;
      config.problems.push_back(
          "WEFT_DEVICE=host applies to standalone mode only (WEFT_STANDALONE=1); NCCL's "
          "communicators need their GPUs: using cuda");
    }
  }
  if (const char* value = env("WEFT_TUNER_CONFIG")) config.tuner_config = value;
  return config;
}

}  // namespace weft::plugin
