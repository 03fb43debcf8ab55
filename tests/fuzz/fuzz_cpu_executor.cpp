// libFuzzer target for the CPU reference executor: every input the loader accepts is run, in each
// call mode it declares, with a partial last tile, shallow and unbounded FIFOs, and the race
// check on. Whatever the algorithm does (deadlock, race, wrong result, a call it cannot serve),
// the run must end with an outcome and a report, never a crash, a hang or undefined behaviour.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "weft/cpu/cpu_executor.h"
#include "weft/ir/collective_spec.h"
#include "weft/ir/geometry.h"
#include "weft/ir/validate.h"
#include "weft/ir/xml.h"

namespace {

// Keeps each input to a few milliseconds under the sanitizers, so the search goes wide rather than
// deep into one big algorithm (the loader target covers big files).
constexpr std::size_t kMaxSteps = 4096;
constexpr int kMaxRanks = 16;

// The standard collective's postcondition, or for a custom one the buffer shapes only (the run
// then checks completion), as `weftc verify` does.
weft::CollectiveSpec spec_for(const weft::ir::Algorithm& algo) {
  weft::CollectiveSpec spec = weft::standard_spec(algo, 0);
  if (spec.ngpus != 0) return spec;
  spec.name = algo.collective_name;
  spec.ngpus = algo.ngpus;
  for (int r = 0; r < algo.ngpus; ++r) {
    spec.input_chunks.push_back(weft::ir::input_extent_chunks(algo, r));
    spec.output_chunks.push_back(weft::ir::output_extent_chunks(algo, r));
    spec.expected.add_rank(spec.output_chunks.back());
  }
  return spec;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const weft::ir::LoadResult loaded =
      weft::ir::load_xml_string(text, weft::ir::weft_limits(), "fuzz.xml");
  if (!loaded.ok()) return 0;
  const weft::ir::Algorithm& algo = *loaded.algorithm;
  if (algo.ngpus > kMaxRanks) return 0;
  std::size_t steps = 0;
  for (const auto& gpu : algo.gpus) {
    for (const auto& tb : gpu.threadblocks) steps += tb.steps.size();
  }
  if (steps > kMaxSteps) return 0;

  const weft::cpu::Executor executor(algo, spec_for(algo));
  for (const bool in_place : {false, true}) {
    if (in_place ? !algo.inplace : !algo.outofplace) continue;
    for (const int depth : {1, 0}) {
      weft::cpu::RunOptions options;
      options.chunk_elements = 5;
      options.tile_elements = 2;  // three tiles, the last partial
      options.fifo_depth = depth;
      options.in_place = in_place;
      options.seed = size;
      const weft::cpu::RunResult result = executor.run(options);
      (void)result.report();
    }
  }
  return 0;
}
