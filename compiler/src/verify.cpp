#include "weft/compiler/verify.h"

#include <fmt/format.h>

#include "weft/compiler/replicate.h"
#include "weft/cpu/cpu_executor.h"

namespace weft::compiler {

CollectiveSpec executor_spec(const dsl::Program& program, const ir::Algorithm& algorithm) {
  const dsl::Collective& coll = program.collective();
  if (coll.kind() != ir::Collective::Custom) return standard_spec(algorithm, coll.root());
  const CollectiveSpec base = coll.custom_spec();
  const int n = program.options().instances;
  const dsl::Replication layout = replication_layout(program);
  if (n == 1) return base;
  CollectiveSpec spec = base;
  spec.expected = ExpectedOutputs{};
  for (std::size_t r = 0; r < base.input_chunks.size(); ++r) {
    spec.input_chunks[r] = base.input_chunks[r] * n;
    spec.output_chunks[r] = base.output_chunks[r] * n;
  }
  for (int r = 0; r < base.expected.ranks(); ++r) {
    const auto ur = static_cast<std::size_t>(r);
    std::vector<std::vector<ChunkId>> outputs(static_cast<std::size_t>(spec.output_chunks[ur]));
    for (int o = 0; o < base.expected.chunks(r); ++o) {
      for (int i = 0; i < n; ++i) {
        const int into = replicated_index(o, i, n, layout, base.output_chunks[ur]);
        auto& chunks = outputs[static_cast<std::size_t>(into)];
        for (const ChunkId& id : base.expected.at(r, o)) {
          chunks.push_back(
              {id.rank, replicated_index(id.chunk, i, n, layout,
                                         base.input_chunks[static_cast<std::size_t>(id.rank)])});
        }
      }
    }
    spec.expected.add_rank(static_cast<int>(outputs.size()));
    for (std::size_t c = 0; c < outputs.size(); ++c) {
      spec.expected.set(r, static_cast<int>(c), outputs[c]);
    }
  }
  return spec;
}

cpu::VerifyOptions compile_proof(int seeds) {
  cpu::VerifyOptions options;
  options.seeds = seeds;
  // A case whose first, race-checked run passes is proven for every interleaving; more seeds
  // would repeat its result.
  options.skip_proven_seeds = true;
  // Race freedom shown at a FIFO depth holds at every smaller one, and at every tile count.
  options.derive_race_freedom = true;
  // A smaller depth's run completing there gives the deeper race-free run's right result.
  options.derive_results = true;
  return options;
}

VerificationResult verify_with_executor(const dsl::Program& program, const ir::Algorithm& algorithm,
                                        const cpu::VerifyOptions& options) {
  VerificationResult result;
  cpu::VerifyOptions run = options;
  if (program.collective().root() >= 0) run.root = program.collective().root();
  const cpu::Executor executor(algorithm, executor_spec(program, algorithm));
  const cpu::VerifyReport report = cpu::verify(executor, run);
  result.cases = report.cases.size();
  result.failures = report.failures();
  result.passed = report.passed();
  result.min_fifo_depth = report.min_fifo_depth;
  for (const cpu::CaseResult& c : report.cases) {
    result.case_lines.push_back(fmt::format(
        "{}, S={} T={} D={} seed {}: {}{}", c.options.in_place ? "in place" : "out of place",
        c.options.chunk_elements, c.options.tile_elements,
        c.options.fifo_depth > 0 ? std::to_string(c.options.fifo_depth) : std::string("unbounded"),
        c.options.seed, cpu::to_string(c.result.outcome),
        c.options.completion_only ? " (completion only)" : ""));
  }
  for (const cpu::CaseResult& c : report.cases) {
    if (c.result.outcome == cpu::Outcome::Pass) continue;
    result.report = fmt::format(
        "chunk {} elements, tile {}, FIFO depth {}, seed {}, {}: {}", c.options.chunk_elements,
        c.options.tile_elements, c.options.fifo_depth, c.options.seed,
        c.options.in_place ? "in place" : "out of place", c.result.report());
    break;
  }
  if (!result.passed && result.report.empty()) result.report = "verification failed";
  return result;
}

}  // namespace weft::compiler
