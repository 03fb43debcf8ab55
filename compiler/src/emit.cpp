#include "weft/compiler/emit.h"

#include <algorithm>

namespace weft::compiler {

void emit_header(const dsl::Program& program, ir::Algorithm& algorithm) {
  const dsl::Collective& coll = program.collective();
  const dsl::Options& options = program.options();
  algorithm.name = program.name();
  algorithm.collective = coll.kind();
  algorithm.collective_name =
      coll.kind() == ir::Collective::Custom ? coll.name() : std::string(ir::to_string(coll.kind()));
  algorithm.protocol = options.protocol;
  algorithm.ngpus = coll.ranks();
  algorithm.nchunksperloop = coll.chunks_per_loop() * options.instances;
  algorithm.inplace = coll.in_place();
  algorithm.outofplace = !coll.in_place();
  algorithm.min_bytes = options.min_bytes;
  algorithm.max_bytes = options.max_bytes;
  algorithm.root = coll.root();
  algorithm.nnodes = options.nodes;
  int highest = 0;
  for (ir::Gpu& gpu : algorithm.gpus) {
    for (const ir::Threadblock& tb : gpu.threadblocks) highest = std::max(highest, tb.channel);
    if (!coll.in_place()) continue;
    // The buffer an in-place call does not have is written as 0 chunks, as MSCCL does.
    switch (coll.kind()) {
      case ir::Collective::AllGather:
        gpu.input_chunks = 0;
        break;
      case ir::Collective::Custom:
        break;
      default:
        gpu.output_chunks = 0;
        break;
    }
  }
  algorithm.nchannels = highest + 1;
}

Diagnostics validate_output(const ir::Algorithm& algorithm, const ir::LimitsProfile& limits) {
  return ir::validate(algorithm, limits);
}

}  // namespace weft::compiler
