// What `weftc tune` writes is what the shim and the tuner then do: for every size of the range,
// the shim's selection over DIR's files picks the band's winner, and where NCCL's own algorithm
// won no Weft file applies and the tuner table steers NCCL to that algorithm and protocol.
#include <catch2/catch.hpp>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "weft/plugin/algorithm_catalog.h"
#include "weft/plugin/call_selection.h"
#include "weft/tuning/tuner_config.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using namespace weft;

int run(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct BandRow {
  std::uint64_t min_bytes = 0;
  std::uint64_t max_bytes = 0;  // UINT64_MAX: no limit
  std::string kind;
  std::string file;
  std::string nccl_algorithm;
  std::string protocol;
};

std::vector<BandRow> read_bands(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // header
  std::vector<BandRow> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream fields(line);
    for (std::string field; std::getline(fields, field, ',');) f.push_back(field);
    f.resize(7);
    BandRow row;
    row.min_bytes = std::stoull(f[0]);
    row.max_bytes = f[1] == "-1" ? UINT64_MAX : std::stoull(f[1]);
    row.kind = f[2];
    row.file = f[4];
    row.nccl_algorithm = f[5];
    row.protocol = f[6];
    rows.push_back(row);
  }
  return rows;
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

TEST_CASE("A folder weftc tune wrote gives the shim and the tuner exactly the chosen algorithm") {
  const fs::path dir = fs::temp_directory_path() / ("weft-tuned-" + std::to_string(getpid()));
  fs::remove_all(dir);
  REQUIRE(run({WEFTC_PATH,     "tune",      "--topology",  "h100-nvswitch",
               "--collective", "allreduce", "--ranks",     "8",
               "-b",           "1K",        "-e",          "256M",
               "-f",           "4",         "--protocols", "LL,Simple",
               "--instances",  "1,8",       "--channels",  "1",
               "-o",           dir.string()}) == 0);
  const std::vector<BandRow> bands = read_bands(dir / "bands.csv");
  REQUIRE(bands.size() >= 2);  // small calls and large ones are not won by the same contender
  plugin::ShimConfig config;
  config.algorithm_dirs = {dir.string()};
  const plugin::Catalog catalog = plugin::load_catalog(config);
  CHECK(catalog.skipped.empty());
  std::vector<const ir::Algorithm*> candidates;
  for (const auto& entry : catalog.entries) candidates.push_back(&entry.algorithm);
  std::ifstream csv(dir / "tuner.csv");
  const std::string text((std::istreambuf_iterator<char>(csv)), std::istreambuf_iterator<char>());
  const tuning::TunerConfig tuner = tuning::parse_tuner_config(text, "tuner.csv");
  CHECK(tuner.problems.empty());

  std::size_t checked = 0;
  for (std::uint64_t bytes = 1024; bytes <= (256ull << 20); bytes *= 4) {
    const BandRow* band = nullptr;
    for (const BandRow& b : bands) {
      if (bytes >= b.min_bytes && bytes <= b.max_bytes) band = &b;
    }
    INFO(bytes << " bytes");
    REQUIRE(band != nullptr);
    plugin::CollectiveCall call;
    call.collective = ir::Collective::AllReduce;
    call.count = bytes / 4;
    call.nccl_datatype = 7;  // ncclFloat32
    call.nccl_op = 0;        // ncclSum
    call.nranks = 8;
    static char send[1];
    static char recv[1];
    call.sendbuf = send;
    call.recvbuf = recv;
    const plugin::Selection chosen = plugin::select_algorithm(candidates, call);
    if (band->kind == "weft") {
      REQUIRE(chosen.found());
      CHECK(fs::path(catalog.entries[static_cast<std::size_t>(chosen.index)].path).filename() ==
            band->file);
    } else {
      CHECK_FALSE(chosen.found());
      tuning::TunerQuery query;
      query.collective = 4;  // ncclFuncAllReduce
      query.bytes = bytes;
      query.nodes = 1;
      query.ranks = 8;
      std::vector<float> costs(tuning::kTunerAlgorithms * tuning::kTunerProtocols, 1.0f);
      int channels = 0;
      const int rule =
          tuning::apply_tuner_rules(tuner.rules, query, costs.data(), tuning::kTunerAlgorithms,
                                    tuning::kTunerProtocols, &channels);
      REQUIRE(rule >= 0);
      const tuning::TunerRule& r = tuner.rules[static_cast<std::size_t>(rule)];
      CHECK(tuning::tuner_algorithm_name(r.algorithm) == band->nccl_algorithm);
      CHECK(tuning::tuner_protocol_name(r.protocol) == lower(band->protocol));
    }
    ++checked;
  }
  CHECK(checked == 10);
  fs::remove_all(dir);
}
