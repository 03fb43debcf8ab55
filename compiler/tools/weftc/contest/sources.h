// The library's algorithms as tuning candidates: every variant asked for, compiled and proved.
// `weftc tune` offers them; `weftc synthesize --library` lets them contend with its own.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "algorithms.h"
#include "weft/predict/topology.h"
#include "weft/tuning/contenders.h"

namespace weft::weftc {

struct LibraryVariants {
  std::string collective;  // "allreduce", ...
  std::vector<std::string> protocols{"Simple", "LL", "LL128"};
  std::vector<int> instances{1, 2, 4};
  std::vector<int> channels{1, 4};
  std::string profile = "weft";
  bool in_place = false;
};

// `on_candidate` (when set) hears each variant before it is compiled and proved: k of n, 1-based.
// Each candidate's schedules are judged by predicted time on `machine` (weft/compiler/judge.h).
void library_candidates(const LibraryVariants& args, const KnownAlgorithms& known,
                        const predict::Topology& machine, std::vector<tuning::Candidate>& out,
                        std::vector<std::string>& rejected,
                        const std::function<void(std::size_t k, std::size_t n,
                                                 const std::string& name)>& on_candidate = {});

}  // namespace weft::weftc
