// The contest's sources that weftc gathers itself (weft/tuning/contest.h): the library's
// algorithms in every variant asked for, and a user's own algorithm files. Synthesis brings its
// sketches through weft/synthesis/synthesize.h.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "../compile/algorithms.h"
#include "weft/ir/ir.h"
#include "weft/ir/validate.h"
#include "weft/predict/topology.h"
#include "weft/tuning/contest.h"

namespace weft::weftc {

struct LibraryVariants {
  std::string collective;  // "allreduce", ...
  std::vector<std::string> protocols{"Simple", "LL", "LL128"};
  std::vector<int> instances{1, 2, 4};
  std::vector<int> channels{1, 4};
  std::string profile = "weft";
  bool in_place = false;
};

// Every variant compiled (its schedules judged by predicted time on `machine`,
// weft/compiler/judge.h), each with its proof for the contest to run where it wins.
// `on_candidate` (when set) hears each variant before it is compiled: k of n, 1-based.
tuning::Field library_field(const LibraryVariants& args, const KnownAlgorithms& known,
                            const predict::Topology& machine,
                            const std::function<void(std::size_t k, std::size_t n,
                                                     const std::string& name)>& on_candidate = {});

// A user's own files: each `--xml FILE` must be a `collective` on `ranks` ranks (else an error,
// printed, and false), and of each `--candidates DIR`'s *.xml files (in name order) those that
// are contend, the others are listed as left out with why. A file that cannot be read or is
// not valid is an error (its findings printed, false). Each is proved on the CPU reference
// executor against the collective's postcondition where it wins a band.
bool file_field(const std::vector<std::string>& files, const std::vector<std::string>& dirs,
                ir::Collective collective, int ranks, const ir::LimitsProfile& limits,
                tuning::Field& out);

#ifdef WEFT_HAVE_SYNTHESIS
// The sketches synthesized for the machine (weft/synthesis/synthesize.h) as a field, those over
// `max_threadblocks` with their routes fitted to it beside them; where nothing can be synthesized
// there, an empty field that says why.
tuning::Field sketch_field(const predict::Topology& machine, ir::Collective collective,
                           const std::string& profile, bool in_place, int max_threadblocks);
#endif

}  // namespace weft::weftc
