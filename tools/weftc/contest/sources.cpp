#include "sources.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "../load.h"
#include "weft/compiler/compiler.h"
#include "weft/compiler/verify.h"
#include "weft/cpu/cpu_executor.h"
#include "weft/cpu/verify.h"
#include "weft/ir/xml.h"
#ifdef WEFT_HAVE_SYNTHESIS
#include "weft/synthesis/synthesize.h"
#endif

namespace weft::weftc {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The first line of why, after the candidate's name.
std::string rejection(const std::string& name, std::string why) {
  if (const auto nl = why.find('\n'); nl != std::string::npos) why.resize(nl);
  return fmt::format("{}: {}", name, why);
}

// One library variant, compiled but not proved: the contest proves it where it wins, on its
// program (1 seed per case: race freedom, which the first seed decides, makes the result
// independent of the interleaving — as `weftc compile` with --seeds 1).
void add_variant(const dsl::AlgorithmInfo& info, const dsl::AlgorithmParams& params,
                 const std::string& name, const predict::Topology& machine,
                 std::vector<std::string>& seen, tuning::Field& out) {
  auto program = std::make_shared<const dsl::Program>(info.build(params));
  compiler::CompileOptions options;
  options.judge.machine = &machine;
  compiler::CompileResult result = compiler::compile_unverified(*program, options);
  if (!result.algorithm || !result.errors.empty()) {
    out.rejected.push_back(rejection(name, result.error_text()));
    return;
  }
  // Identical IRs from different knobs are kept once.
  ir::Algorithm unnamed = *result.algorithm;
  unnamed.name.clear();
  std::string text = ir::write_xml(unnamed);
  if (std::find(seen.begin(), seen.end(), text) != seen.end()) return;
  seen.push_back(std::move(text));
  tuning::Entry entry;
  entry.candidate = {name, std::move(*result.algorithm)};
  entry.prove = [program, name](const tuning::Candidate& c) -> std::optional<std::string> {
    const compiler::VerificationResult proof =
        compiler::verify_with_executor(*program, c.algorithm, compiler::compile_proof(1));
    if (proof.passed) return std::nullopt;
    return rejection(name, "verification failed: " + proof.report);
  };
  out.entries.push_back(std::move(entry));
}

// A file's proof: the CPU reference executor's sweep against its collective's postcondition.
// A broadcast or reduce is proved for the root its file names (root 0 where it names none, as
// `weftc verify` does).
std::optional<std::string> file_proof(const tuning::Candidate& file) {
  const int root = std::max(file.algorithm.root, 0);
  bool has_postcondition = true;
  const cpu::Executor executor(file.algorithm, spec_for(file.algorithm, root, has_postcondition));
  cpu::VerifyOptions options = compiler::compile_proof(1);
  options.root = root;
  const cpu::VerifyReport report = cpu::verify(executor, options);
  if (report.passed()) return std::nullopt;
  for (const cpu::CaseResult& c : report.cases) {
    if (c.result.outcome != cpu::Outcome::Pass) {
      return rejection(file.name, "verification failed: " + c.result.report());
    }
  }
  return rejection(file.name, "verification failed");
}

}  // namespace

tuning::Field library_field(const LibraryVariants& args, const KnownAlgorithms& known,
                            const predict::Topology& machine,
                            const std::function<void(std::size_t k, std::size_t n,
                                                     const std::string& name)>& on_candidate) {
  const auto started = Clock::now();
  tuning::Field out;
  out.source = "library";
  const int nodes = machine.nodes();
  const int gpus_per_node = machine.gpus_per_node();
  std::vector<std::string> seen;
  std::size_t total = 0;
  for (const dsl::AlgorithmInfo& info : known.registry.algorithms()) {
    if (info.collective == args.collective) {
      total += args.protocols.size() * args.instances.size() * args.channels.size();
    }
  }
  std::size_t attempted = 0;
  for (const dsl::AlgorithmInfo& info : known.registry.algorithms()) {
    if (info.collective != args.collective) continue;
    dsl::AlgorithmParams params;
    params.ranks = nodes * gpus_per_node;
    if (info.shape == dsl::Shape::NodesTimesGpus) {
      params.nodes = nodes;
      params.gpus_per_node = gpus_per_node;
    }
    params.limits = args.profile;
    params.in_place = args.in_place;
    if (const auto why = dsl::check_shape(info, params)) {
      out.rejected.push_back(fmt::format("{}: {}", info.name, *why));
      continue;
    }
    for (const std::string& proto_name : args.protocols) {
      for (int instances : args.instances) {
        for (int channels : args.channels) {
          params.protocol = *ir::parse_protocol(proto_name);
          params.instances = instances;
          params.channels = channels;
          const std::string name =
              fmt::format("{} {} i{} c{}", info.name, proto_name, instances, channels);
          if (on_candidate) on_candidate(++attempted, total, name);
          try {
            add_variant(info, params, name, machine, seen, out);
          } catch (const std::exception& e) {
            out.rejected.push_back(fmt::format("{}: {}", name, e.what()));
          }
        }
      }
    }
  }
  out.compile_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return out;
}

bool file_field(const std::vector<std::string>& files, const std::vector<std::string>& dirs,
                ir::Collective collective, int ranks, const ir::LimitsProfile& limits,
                tuning::Field& out) {
  out.source = "files";
  const auto what = [](const ir::Algorithm& a) {
    return fmt::format("{} on {} ranks", ir::to_string(a.collective), a.ngpus);
  };
  for (const std::string& file : files) {
    auto algo = load_or_report(file, limits);
    if (!algo) return false;
    if (algo->collective != collective || algo->ngpus != ranks) {
      fmt::print(stderr, "weftc: {}: {}, not {} on {} ranks\n", file, what(*algo),
                 ir::to_string(collective), ranks);
      return false;
    }
    const std::string name = fs::path(file).filename().string();
    out.entries.push_back({{name, std::move(*algo)}, file_proof});
  }
  for (const std::string& dir : dirs) {
    std::error_code ec;
    std::vector<fs::path> paths;
    for (const auto& item : fs::directory_iterator(dir, ec)) {
      if (item.path().extension() == ".xml") paths.push_back(item.path());
    }
    if (ec) {
      fmt::print(stderr, "weftc: {}: not a folder that can be read: {}\n", dir, ec.message());
      return false;
    }
    std::sort(paths.begin(), paths.end());
    for (const fs::path& path : paths) {
      auto algo = load_or_report(path.string(), limits);
      if (!algo) return false;
      const std::string name = path.filename().string();
      if (algo->collective != collective || algo->ngpus != ranks) {
        out.rejected.push_back(fmt::format("{}: {}, not {} on {} ranks", path.string(), what(*algo),
                                           ir::to_string(collective), ranks));
        continue;
      }
      out.entries.push_back({{name, std::move(*algo)}, file_proof});
    }
  }
  return true;
}

#ifdef WEFT_HAVE_SYNTHESIS
tuning::Field sketch_field(const predict::Topology& machine, ir::Collective collective,
                           const std::string& profile, bool in_place, int max_threadblocks) {
  synthesis::SynthesisRequest request;
  request.collective = collective;
  request.in_place = in_place;
  request.profile = profile;
  request.max_threadblocks = max_threadblocks;
  try {
    return synthesis::sketches(machine, request).field;
  } catch (const std::invalid_argument& e) {
    tuning::Field none;
    none.source = "synthesis";
    none.rejected.push_back(fmt::format("synthesis: {}", e.what()));
    return none;
  }
}
#endif

}  // namespace weft::weftc
