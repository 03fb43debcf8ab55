#include <chrono>
#include <map>
#include <string>

#include <catch2/catch.hpp>

#include "weft/plugin/shim_config.h"

namespace {

using weft::plugin::LogLevel;
using weft::plugin::shim_config_from_env;

weft::plugin::Environment env_of(const std::map<std::string, std::string>& values) {
  return [values](const char* name) -> const char* {
    const auto it = values.find(name);
    return it == values.end() ? nullptr : it->second.c_str();
  };
}

}  // namespace

TEST_CASE("shim config: an empty environment turns nothing on") {
  const auto config = shim_config_from_env(env_of({}));
  CHECK_FALSE(config.disabled);
  CHECK_FALSE(config.standalone);
  CHECK(config.debug == LogLevel::None);
  CHECK(config.algorithm_dirs.empty());
  CHECK(config.xml_files.empty());
  CHECK(config.nccl_library.empty());
  CHECK(config.problems.empty());
}

TEST_CASE("shim config: every variable is read") {
  const auto config = shim_config_from_env(env_of({{"WEFT_DISABLE", "1"},
                                                   {"WEFT_STANDALONE", "yes"},
                                                   {"WEFT_STANDALONE_ADDR", "10.0.0.1:4000"},
                                                   {"WEFT_DEBUG", "info"},
                                                   {"WEFT_ALGO_DIR", "/a:/b"},
                                                   {"WEFT_XML_FILES", "x.xml::y.xml"},
                                                   {"WEFT_NCCL_LIB", "/lib/libnccl.so.2"},
                                                   {"WEFT_TUNER_CONFIG", "t.csv"}}));
  CHECK(config.disabled);
  CHECK(config.standalone);
  CHECK(config.standalone_address == "10.0.0.1:4000");
  CHECK(config.debug == LogLevel::Info);
  CHECK(config.algorithm_dirs == std::vector<std::string>{"/a", "/b"});
  CHECK(config.xml_files == std::vector<std::string>{"x.xml", "y.xml"});
  CHECK(config.nccl_library == "/lib/libnccl.so.2");
  CHECK(config.tuner_config == "t.csv");
  CHECK(config.problems.empty());
}

TEST_CASE("shim config: MSCCL's variables are honoured, Weft's win") {
  auto config = shim_config_from_env(
      env_of({{"MSCCL_ALGO_DIR", "/msccl"}, {"MSCCL_XML_FILES", "/m/one.xml"}}));
  CHECK(config.algorithm_dirs == std::vector<std::string>{"/msccl"});
  CHECK(config.xml_files == std::vector<std::string>{"/m/one.xml"});
  config = shim_config_from_env(env_of({{"MSCCL_ALGO_DIR", "/msccl"}, {"WEFT_ALGO_DIR", "/weft"}}));
  CHECK(config.algorithm_dirs == std::vector<std::string>{"/weft"});
}

TEST_CASE("shim config: values it cannot read are reported, never fatal") {
  const auto config =
      shim_config_from_env(env_of({{"WEFT_DISABLE", "maybe"}, {"WEFT_DEBUG", "LOUD"}}));
  CHECK_FALSE(config.disabled);
  CHECK(config.debug == LogLevel::Warn);
  REQUIRE(config.problems.size() == 2);
  CHECK(config.problems[0].find("WEFT_DISABLE='maybe'") != std::string::npos);
  CHECK(config.problems[1].find("WEFT_DEBUG='LOUD'") != std::string::npos);
}

TEST_CASE("shim config: WEFT_BOOTSTRAP_TIMEOUT_S bounds the standalone rendezvous") {
  CHECK(shim_config_from_env(env_of({})).rendezvous_timeout == std::chrono::seconds(60));
  const auto config = shim_config_from_env(env_of({{"WEFT_BOOTSTRAP_TIMEOUT_S", "2.5"}}));
  CHECK(config.rendezvous_timeout == std::chrono::milliseconds(2500));
  CHECK(config.problems.empty());
  for (const char* bad : {"0", "0.01", "-3", "soon", "1e9", "5s"}) {
    const auto refused = shim_config_from_env(env_of({{"WEFT_BOOTSTRAP_TIMEOUT_S", bad}}));
    INFO(bad);
    CHECK(refused.rendezvous_timeout == std::chrono::seconds(60));
    REQUIRE(refused.problems.size() == 1);
    CHECK(refused.problems[0].find(std::string("WEFT_BOOTSTRAP_TIMEOUT_S='") + bad + "'") !=
          std::string::npos);
  }
}

TEST_CASE("shim config: log levels follow NCCL_DEBUG's names") {
  using weft::plugin::parse_log_level;
  CHECK(parse_log_level("WARN") == LogLevel::Warn);
  CHECK(parse_log_level("Trace") == LogLevel::Trace);
  CHECK(parse_log_level("") == LogLevel::None);
  CHECK_FALSE(parse_log_level("verbose").has_value());
}

TEST_CASE("logger: NCCL-style lines, filtered by level") {
  std::vector<std::string> lines;
  weft::plugin::Logger logger(LogLevel::Info,
                              [&](std::string_view line) { lines.emplace_back(line); });
  logger.set_device_probe([] { return 3; });
  logger.warn("one {}", 1);
  logger.info("two");
  logger.trace("three");
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].find(" [3] WEFT WARN one 1") != std::string::npos);
  CHECK(lines[1].find(" [3] WEFT INFO two") != std::string::npos);
}
