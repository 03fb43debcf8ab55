#include "nccl_contenders.h"

#include <algorithm>

#include <fmt/format.h>

#include "weft/runtime/predict/nccl_model.h"

namespace weft::weftc {

std::vector<predict::Contender> nccl_contenders(const predict::Topology& topology,
                                                ir::Collective collective,
                                                const std::vector<std::uint64_t>& sizes) {
  std::vector<predict::Contender> contenders;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    for (const predict::NcclPrediction& p : predict::predict_nccl(topology, collective, sizes[i])) {
      const std::string name = fmt::format("NCCL {} {}", p.algorithm, ir::to_string(p.protocol));
      auto it = std::find_if(contenders.begin(), contenders.end(),
                             [&name](const predict::Contender& c) { return c.name == name; });
      if (it == contenders.end()) {
        predict::Contender c;
        c.name = name;
        c.nccl = true;
        c.nccl_algorithm = p.algorithm == "Tree" ? "tree" : "ring";
        c.protocol = p.protocol;
        c.channels = p.channels;
        c.time_us.assign(sizes.size(), predict::kNotApplicable);
        contenders.push_back(std::move(c));
        it = contenders.end() - 1;
      }
      it->time_us[i] = p.time_us;
    }
  }
  return contenders;
}

}  // namespace weft::weftc
