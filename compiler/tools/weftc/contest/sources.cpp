#include "candidates.h"

#include <algorithm>
#include <exception>

#include <fmt/format.h>

#include "weft/compiler/compiler.h"
#include "weft/ir/xml.h"

namespace weft::weftc {

using tuning::Candidate;

// The library's algorithms of the collective in every variant asked for, compiled
// and proved (1 seed per case: race freedom, which the first seed decides, makes the result
// independent of the interleaving). Identical IRs from different knobs are kept once.
void library_candidates(const LibraryVariants& args, const KnownAlgorithms& known,
                        const predict::Topology& machine, std::vector<Candidate>& out,
                        std::vector<std::string>& rejected,
                        const std::function<void(std::size_t k, std::size_t n,
                                                 const std::string& name)>& on_candidate) {
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
      rejected.push_back(fmt::format("{}: {}", info.name, *why));
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
            const dsl::Program program = info.build(params);
            compiler::CompileOptions options;
            options.verify.seeds = 1;
            options.judge.machine = &machine;
            compiler::CompileResult result = compiler::compile(program, options);
            if (!result.ok()) {
              std::string why = result.error_text();
              if (const auto nl = why.find('\n'); nl != std::string::npos) why.resize(nl);
              rejected.push_back(fmt::format("{}: {}", name, why));
              continue;
            }
            ir::Algorithm algo = std::move(*result.algorithm);
            ir::Algorithm unnamed = algo;
            unnamed.name.clear();
            std::string text = ir::write_xml(unnamed);
            if (std::find(seen.begin(), seen.end(), text) != seen.end()) continue;
            seen.push_back(std::move(text));
            out.push_back({name, std::move(algo)});
          } catch (const std::exception& e) {
            rejected.push_back(fmt::format("{}: {}", name, e.what()));
          }
        }
      }
    }
  }
}

}  // namespace weft::weftc
