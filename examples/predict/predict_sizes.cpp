// predict_sizes ALGORITHM.xml TOPOLOGY [NODES]: Weft's prediction of an MSCCL XML algorithm on a
// machine (a preset such as h100-nvswitch, or an NCCL topology XML), size by size from 1 KB to
// 256 MB, beside NCCL's own best choice on the same model — what `weftc simulate` prints, from a
// program of your own.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "weft/ir/validate.h"
#include "weft/ir/xml.h"
#include "weft/predict/nccl_model.h"
#include "weft/predict/simulator.h"
#include "weft/predict/topology.h"

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: %s ALGORITHM.xml TOPOLOGY [NODES]\n", argv[0]);
    return 2;
  }
  weft::ir::LoadResult loaded =
      weft::ir::load_xml_file(argv[1], weft::ir::weft_limits(), weft::ir::kCommandLineFile);
  for (const weft::Diagnostic& d : loaded.diagnostics.items) {
    std::fprintf(stderr, "%s\n", d.str().c_str());
  }
  if (!loaded.ok()) return 3;
  const weft::ir::Algorithm& algorithm = *loaded.algorithm;

  weft::predict::TopologyRequest request;
  request.source = argv[2];
  request.nodes = argc == 4 ? std::atoi(argv[3]) : 1;
  if (request.nodes < 1 || algorithm.ngpus % request.nodes != 0) {
    std::fprintf(stderr, "%s: NODES must be a whole number that divides the %d ranks of %s\n",
                 argv[0], algorithm.ngpus, argv[1]);
    return 2;
  }
  request.gpus_per_node = algorithm.ngpus / request.nodes;
  weft::predict::TopologyResult machine = weft::predict::load_topology(request);
  for (const weft::Diagnostic& d : machine.diagnostics.items) {
    std::fprintf(stderr, "%s\n", d.str().c_str());
  }
  if (!machine.topology) return 3;

  const weft::predict::Simulator simulator(algorithm, *machine.topology);
  std::printf("%s on %s (%d ranks)\n", algorithm.name.c_str(), machine.topology->name().c_str(),
              machine.topology->ranks());
  std::printf("%12s %12s %12s %12s %14s\n", "bytes", "time_us", "algbw_GB/s", "busbw_GB/s",
              "nccl_time_us");
  for (std::uint64_t bytes = 1024; bytes <= (std::uint64_t{256} << 20); bytes *= 4) {
    weft::predict::SimulationOptions options;
    options.bytes = bytes;
    const weft::predict::SimulationResult r = simulator.run(options);
    const auto nccl = weft::predict::best_nccl(*machine.topology, algorithm.collective, bytes);
    if (!r.ok()) {
      std::printf("%12llu %s\n", static_cast<unsigned long long>(bytes), r.error.c_str());
      continue;
    }
    std::printf("%12llu %12.1f %12.2f %12.2f %14.1f\n", static_cast<unsigned long long>(bytes),
                r.time_us, r.algbw_gbs, r.busbw_gbs, nccl ? nccl->time_us : 0.0);
  }
  return 0;
}
