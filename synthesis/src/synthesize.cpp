#include "weft/synthesis/synthesize.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "weft/compiler/compiler.h"
#include "weft/compiler/verify.h"
#include "weft/dsl/error.h"
#include "weft/ir/validate.h"
#include "weft/synthesis/families.h"
#include "weft/synthesis/fit.h"
#include "weft/synthesis/nccl_algorithms.h"
#include "weft/synthesis/sketches.h"

namespace weft::synthesis {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Sizes every sketch divides: a whole number of 16-byte elements in each of up to 64 pieces of
// every rank's block. Powers of two already are on a power of two of ranks; with 6 ranks,
// 64 MB becomes 67,107,840 bytes. Smaller sizes stay (sketches that do not divide them sit out).
std::vector<std::uint64_t> sizes_for(const std::vector<std::uint64_t>& sizes, int ranks) {
  const std::uint64_t granule = static_cast<std::uint64_t>(ranks) * 64 * 16;
  std::vector<std::uint64_t> out;
  for (const std::uint64_t bytes : sizes) {
    const std::uint64_t size = bytes >= granule ? bytes / granule * granule : bytes;
    if (out.empty() || size > out.back()) out.push_back(size);
  }
  return out;
}

std::string size_label(std::uint64_t bytes) {
  static const char* const units[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++u;
  }
  return fmt::format("{}{}", bytes, units[u]);
}

struct Row {
  std::uint64_t bytes = 0;
  double bound_us = 0;
  std::string chosen;
  std::string chosen_threadblocks;  // per rank (tuning::threadblocks_text)
  double chosen_us = 0;
  double synthesized_us = std::numeric_limits<double>::infinity();
  double nccl_us = std::numeric_limits<double>::infinity();  // NCCL's best by NCCL's model
  // NCCL's algorithms written as Weft algorithms, on Weft's model (Tuning::info.nccl_as_weft_us)
  double nccl_as_weft_us = std::numeric_limits<double>::infinity();
  double others_us = std::numeric_limits<double>::infinity();
  std::string over_budget;  // what more threadblocks would gain (tuning::over_budget_text)
};

std::vector<Row> rows(const Synthesis& s) {
  const tuning::Tuning& t = s.tuning;
  std::vector<Row> out;
  for (std::size_t i = 0; i < t.sizes.size(); ++i) {
    Row row;
    row.bytes = t.sizes[i];
    row.bound_us = s.bound.time_us(row.bytes);
    if (i < t.info.nccl_as_weft_us.size()) row.nccl_as_weft_us = t.info.nccl_as_weft_us[i];
    for (const tuning::Band& band : t.bands) {
      if (i < band.first || i > band.last) continue;
      const tuning::Contender& c = t.contenders[static_cast<std::size_t>(band.contender)];
      row.chosen = c.name;
      row.chosen_threadblocks = tuning::threadblocks_text(c);
      row.chosen_us = c.time_us[i];
      row.over_budget = tuning::over_budget_text(
          t.contenders, tuning::over_budget_gain(t.contenders, i, band.contender));
    }
    for (std::size_t k = 0; k < t.contenders.size(); ++k) {
      const tuning::Contender& c = t.contenders[k];
      if (c.over_budget) continue;                 // in the over-budget column instead
      if (!c.nccl && k >= s.others_end) continue;  // NCCL's as Weft's: their own column
      double& slot = c.nccl ? row.nccl_us : k < s.synthesized ? row.synthesized_us : row.others_us;
      slot = std::min(slot, c.time_us[i]);
    }
    out.push_back(std::move(row));
  }
  return out;
}

std::string time_or_dash(double us) {
  return us < std::numeric_limits<double>::infinity() ? fmt::format("{:.1f}", us) : "-";
}

}  // namespace

namespace {

ir::LimitsProfile profile_or_throw(const std::string& name) {
  const std::optional<ir::LimitsProfile> profile = ir::limits_by_name(name);
  if (!profile) {
    throw std::invalid_argument(fmt::format("'{}' is not a limits profile (msccl, weft)", name));
  }
  return *profile;
}

dsl::Options program_options(const SynthesisRequest& request, const Variant& variant,
                             const predict::Topology& topology) {
  dsl::Options options;
  options.protocol = variant.protocol;
  options.limits = request.profile;
  options.fusion = variant.sketch.fusion;
  // The files say the machine's node count, so that the NCCL shim runs them only on
  // communicators whose ranks lie on hosts the same way.
  options.nodes = topology.nodes() > 1 ? topology.nodes() : 0;
  return options;
}

// The first line of why a sketch did not compile or prove, after its name.
std::string rejection(const std::string& name, std::string why) {
  if (const auto nl = why.find('\n'); nl != std::string::npos) why.resize(nl);
  return fmt::format("{}: {}", name, why);
}

// Proves `algorithm`, compiled from `program`, as `weftc compile` proves (one seed, as tune's).
// Empty when it proves, else why not, after the candidate's name.
std::optional<std::string> proof_failure(const std::string& name, const dsl::Program& program,
                                         const ir::Algorithm& algorithm) {
  const cpu::VerifyOptions options = compiler::compile_proof(1);
  const compiler::VerificationResult proof =
      compiler::verify_with_executor(program, algorithm, options);
  if (proof.passed) return std::nullopt;
  // The executor reports a run it had no memory for as an error case (cpu_executor.cpp).
  if (proof.report.find("out of memory") != std::string::npos) {
    return rejection(name, std::string(kLeftOutForMemory));
  }
  return rejection(name, "verification failed: " + proof.report);
}

std::optional<std::string> prove(const tuning::Candidate& candidate, const Variant& source,
                                 const SynthesisRequest& request,
                                 const predict::Topology& topology);
std::vector<int> twins_of(const std::vector<std::shared_ptr<const Variant>>& sources);

// The variant's sketch as a program, compiled; its algorithm, or why not.
CompiledVariant compile_variant(const Variant& v, const SynthesisRequest& request,
                                const predict::Topology& topology) {
  const dsl::Program program =
      to_program(v.sketch, program_options(request, v, topology), request.in_place);
  compiler::CompileOptions compile;
  // A sketch pins its channels and threadblock chains, and the synthesis predicts every
  // variant on this machine itself: the critical path places it, at no prediction's cost.
  compile.judge.enabled = false;
  compiler::CompileResult result = compiler::compile_unverified(program, compile);
  if (!result.algorithm || !result.errors.empty()) return {std::nullopt, result.error_text()};
  return {std::move(result.algorithm), {}};
}

// Every variant compiled into an entry of the contest, each with its proof: its program traced
// again from the variant it came from (kept beside it), so that only what is written is proved.
// Under a threadblock budget, a variant over it stays (its prediction says what more
// threadblocks would gain), its routes folded onto the budget follow it, and the families'
// sketches for fewer channels that fit come after all of them (fit.h).
tuning::Field compile_variants(const predict::Topology& topology, const SynthesisRequest& request,
                               const NodePlan& plan) {
  const int most_channels = profile_or_throw(request.profile).max_channels;
  const int budget = request.max_threadblocks;
  tuning::Field out;
  out.source = "synthesis";
  // One copy of the request for every sketch's proof, and one of each variant, shared by its
  // proof and the twins' pairing: a sketch for a thousand GPUs holds every piece's route.
  const auto shared_request = std::make_shared<const SynthesisRequest>(request);
  std::vector<std::shared_ptr<const Variant>> sources;
  const auto enter = [&](Variant v, ir::Algorithm algorithm) {
    tuning::Entry entry;
    entry.candidate = {fmt::format("{} {}", v.sketch.name, ir::to_string(v.protocol)),
                       std::move(algorithm)};
    auto source = std::make_shared<const Variant>(std::move(v));
    // The topology outlives the field: the contest runs on it.
    entry.prove = [source, shared_request, &topology](const tuning::Candidate& c) {
      return prove(c, *source, *shared_request, topology);
    };
    out.entries.push_back(std::move(entry));
    sources.push_back(std::move(source));
  };
  const CompileVariant compile = [&](const Variant& v) {
    return compile_variant(v, request, topology);
  };
  // Per sketch, the channels its fold fitted on (fit_variant's hint): its other protocols' folds
  // then take one compile each.
  std::map<std::string, int> fitted_channels;
  // `within`: a variant of the families' for fewer channels, entered only where it fits.
  const auto compile_entering = [&](Variant& v, bool within) {
    const std::string name = fmt::format("{} {}", v.sketch.name, ir::to_string(v.protocol));
    try {
      if (within && least_threadblocks(v.sketch) > budget) return;
      CompiledVariant compiled = compile(v);
      if (!compiled.algorithm) {
        if (!within) out.rejected.push_back(rejection(name, compiled.why));
        return;
      }
      const int threadblocks = tuning::busiest_threadblocks(*compiled.algorithm);
      if (within) {
        if (threadblocks <= budget) enter(std::move(v), std::move(*compiled.algorithm));
        return;
      }
      std::optional<FittedVariant> fitted =
          fit_variant(v, threadblocks, budget, compile,
                      &fitted_channels.try_emplace(v.sketch.name).first->second);
      enter(std::move(v), std::move(*compiled.algorithm));
      if (fitted) enter(std::move(fitted->variant), std::move(fitted->algorithm));
    } catch (const std::bad_alloc&) {
      out.rejected.push_back(rejection(name, std::string(kLeftOutForMemory)));
    } catch (const std::exception& e) {
      if (!within) out.rejected.push_back(rejection(name, e.what()));
    }
  };
  std::set<std::string> offered;
  for (Variant& v : variants(topology, request.collective, plan, most_channels)) {
    offered.insert(fmt::format("{} {}", v.sketch.name, ir::to_string(v.protocol)));
    compile_entering(v, false);
  }
  for (const int channels : budget_channels(budget, most_channels)) {
    for (Variant& v : variants(topology, request.collective, plan, channels)) {
      // A sketch of the same name is the same sketch (its parameters are in its name).
      if (offered.insert(fmt::format("{} {}", v.sketch.name, ir::to_string(v.protocol))).second) {
        compile_entering(v, true);
      }
    }
  }
  const std::vector<int> twins = twins_of(sources);
  for (std::size_t k = 0; k < twins.size(); ++k) out.entries[k].twin = twins[k];
  return out;
}

// Each twin's variant of the same sketch on the next protocol up (LL → LL128 → Simple) among the
// compiled ones, by index (TuneRequest::twins).
std::vector<int> twins_of(const std::vector<std::shared_ptr<const Variant>>& sources) {
  std::vector<int> twins(sources.size(), -1);
  for (std::size_t k = 0; k < sources.size(); ++k) {
    if (!sources[k]->twin) continue;
    // An LL twin's is the LL128 twin; an LL128 twin's the Simple variant, never a twin. (Other
    // LL128 variants, not twins, may share a sketch's name with an LL twin's: not its twin.)
    const bool to_simple = sources[k]->protocol != ir::Protocol::LL;
    const ir::Protocol up = to_simple ? ir::Protocol::Simple : ir::Protocol::LL128;
    for (std::size_t j = 0; j < sources.size(); ++j) {
      if (sources[j]->protocol == up && sources[j]->twin != to_simple &&
          sources[j]->sketch.name == sources[k]->sketch.name) {
        twins[k] = static_cast<int>(j);
      }
    }
  }
  return twins;
}

// Proves a candidate compiled from `source`, on its program traced again.
std::optional<std::string> prove(const tuning::Candidate& candidate, const Variant& source,
                                 const SynthesisRequest& request,
                                 const predict::Topology& topology) {
  try {
    const dsl::Program program =
        to_program(source.sketch, program_options(request, source, topology), request.in_place);
    return proof_failure(candidate.name, program, candidate.algorithm);
  } catch (const std::bad_alloc&) {
    return rejection(candidate.name, std::string(kLeftOutForMemory));
  } catch (const std::exception& e) {
    return rejection(candidate.name, e.what());
  }
}

}  // namespace

Sketches sketches(const predict::Topology& topology, const SynthesisRequest& request) {
  (void)profile_or_throw(request.profile);
  Sketches found;
  auto started = Clock::now();
  found.bound = request.bound ? *request.bound : bandwidth_bound(topology, request.collective);
  found.plan = plan_node(topology, request.collective);
  found.bound_seconds = seconds_since(started);
  started = Clock::now();
  found.field = compile_variants(topology, request, found.plan);
  found.field.compile_seconds = seconds_since(started);
  // No sketch is faster than the bound for its protocol: one whose bound is no less than a
  // sketch predicted before it at a size is not predicted there. On 32 H100 nodes the LL sketch
  // at both sizes and the LL128 ones at 1 GB (each a simulation of 96 tiles, far from the best)
  // were two thirds of the predictions' 19 s. Only sketches are left out, so the best sketch at
  // every size is still predicted, and the other sources' and NCCL's times are all there.
  found.field.floor_us = [bound = found.bound](const tuning::Candidate& c, std::uint64_t bytes) {
    return bound.time_us(bytes, c.algorithm.protocol);
  };
  // The widest sketches first (they come last): at 1 GB on eight A100 nodes they leave the
  // LL128 sketches out of allreduce, whose predictions from the first were a fifth of its time.
  found.field.backwards = true;
  return found;
}

std::vector<tuning::Candidate> synthesized_candidates(const predict::Topology& topology,
                                                      const SynthesisRequest& request,
                                                      std::vector<std::string>& rejected) {
  tuning::Field field = sketches(topology, request).field;
  rejected.insert(rejected.end(), field.rejected.begin(), field.rejected.end());
  std::vector<tuning::Candidate> out;
  for (tuning::Entry& entry : field.entries) {
    if (auto why = entry.prove(entry.candidate)) {
      rejected.push_back(std::move(*why));
      continue;
    }
    out.push_back(std::move(entry.candidate));
  }
  return out;
}

namespace {

// The second "vs NCCL" at each size: the fastest of NCCL's algorithms as Weft's, the last
// `offered` candidates of the contest, as the contest predicted them. A size it has no figure
// for (one their chunks do not divide, or pruned over the threadblock budget) is simulated, at
// the nearest size below that they divide (nccl_as_weft_times).
std::vector<double> nccl_shaped_times(const Synthesis& s, std::size_t offered,
                                      const predict::Topology& topology, bool in_place) {
  const tuning::Tuning& t = s.tuning;
  std::vector<double> best(t.sizes.size(), tuning::kNotApplicable);
  std::vector<std::uint64_t> missing;
  std::vector<std::size_t> missing_at;
  for (std::size_t i = 0; i < t.sizes.size(); ++i) {
    for (std::size_t k = s.others_end; k < s.others_end + offered; ++k) {
      best[i] = std::min(best[i], t.contenders[k].time_us[i]);
    }
    if (best[i] == tuning::kNotApplicable) {
      missing.push_back(t.sizes[i]);
      missing_at.push_back(i);
    }
  }
  if (!missing.empty()) {
    const std::span<const tuning::Candidate> shaped(s.candidates.data() + s.others_end, offered);
    const std::vector<double> found = nccl_as_weft_times(shaped, topology, missing, in_place);
    for (std::size_t j = 0; j < missing.size(); ++j) best[missing_at[j]] = found[j];
  }
  return best;
}

}  // namespace

Synthesis synthesize(const predict::Topology& topology, const SynthesisRequest& request,
                     std::vector<tuning::Field> others) {
  if (request.sizes.empty()) throw std::invalid_argument("no sizes to synthesize for");
  Sketches found = sketches(topology, request);
  Synthesis s;
  s.bound = found.bound;
  s.plan = std::move(found.plan);
  s.bound_seconds = found.bound_seconds;
  s.compile_seconds = found.field.compile_seconds;
  std::vector<tuning::Field> fields;
  fields.push_back(std::move(found.field));
  for (tuning::Field& f : others) fields.push_back(std::move(f));
  // NCCL's algorithms written as Weft algorithms (nccl_algorithms.h): the second "vs NCCL", and
  // candidates of their own. On four and eight NVSwitch nodes within NCCL's 32 channels, a ring
  // per channel on its own NIC beat every synthesized reduce-scatter and allreduce at 64 MB.
  // The contest predicts them; nccl_shaped_times reads their figures back.
  NcclAsWeft as_weft;
  std::size_t offered = 0;
  if (request.with_nccl) {
    as_weft = nccl_as_weft_compiled(topology, request.collective, request.in_place);
    tuning::Field nccl_shaped;
    nccl_shaped.source = "NCCL's algorithms as Weft's";
    for (tuning::Candidate& c : as_weft.candidates) {
      nccl_shaped.entries.push_back({std::move(c), nullptr, -1});  // proved when compiled
    }
    offered = nccl_shaped.entries.size();
    if (offered > 0) fields.push_back(std::move(nccl_shaped));
  }

  tuning::ContestRequest contest_request;
  contest_request.collective = request.collective;
  contest_request.sizes = sizes_for(request.sizes, topology.ranks());
  contest_request.in_place = request.in_place;
  contest_request.with_nccl = request.with_nccl;
  contest_request.gap = request.gap;
  contest_request.prove_all = request.prove_all;
  contest_request.max_threadblocks = request.max_threadblocks;
  tuning::Contest contest = tuning::run_contest(std::move(fields), topology, contest_request);
  s.synthesized = contest.field_sizes.front();
  s.others_end = s.synthesized;
  for (std::size_t f = 1; f < contest.field_sizes.size(); ++f) {
    if (f + 1 < contest.field_sizes.size() || offered == 0) {
      s.others_end += contest.field_sizes[f];
    }
  }
  s.proved = static_cast<std::size_t>(
      std::count(contest.proved.begin(),
                 contest.proved.begin() + static_cast<std::ptrdiff_t>(s.synthesized), true));
  s.candidates = std::move(contest.candidates);
  s.rejected = std::move(contest.rejected.front());
  s.tuning = std::move(contest.tuning);
  // The second "vs NCCL": NCCL's algorithms written as Weft algorithms on Weft's model (each
  // size at the nearest below that their chunks divide); counted with the predictions.
  s.predict_seconds = contest.predict_seconds;
  if (offered > 0) {
    const auto started = Clock::now();
    s.tuning.info.nccl_as_weft_us = nccl_shaped_times(s, offered, topology, request.in_place);
    s.predict_seconds += seconds_since(started);
  }
  if (request.with_nccl) {
    s.tuning.info.notes.insert(s.tuning.info.notes.end(), as_weft.notes.begin(),
                               as_weft.notes.end());
    s.compile_seconds += as_weft.seconds;  // compiled and proved with the sketches
  }
  s.prove_seconds = contest.prove_seconds;
  // Both bounds: predictions are held to the links' achievable rates; their line rates give
  // the figure a datasheet would, which no copy reaches (docs/prediction.md).
  line_rate_bound(s.bound, topology);
  s.tuning.info.notes.insert(
      s.tuning.info.notes.begin(),
      fmt::format("bound: {:.1f} GB/s algbw ({}), with links at their achievable rates; at their "
                  "line rates {:.1f} GB/s",
                  s.bound.algbw_gbs, s.bound.cut, s.bound.line_rate_algbw_gbs));
  return s;
}

namespace {

// The latency Simple pays: what large calls, which Simple carries, approach the bound's time by.
double simple_latency(const Bound& bound) {
  for (const ProtocolFloor& f : bound.floors) {
    if (f.protocol == ir::Protocol::Simple) return f.latency_us;
  }
  return 0;
}

}  // namespace

std::string bound_report(const Synthesis& s) {
  std::string out = fmt::format(
      "\n## Against the bound\n\nNo schedule moves a call faster than its bytes over {:.1f} GB/s "
      "(algorithm bandwidth): {}. Besides, every call pays the launch, its protocol's call "
      "latency and one hop across that cut: {:.1f} us at least (LL), {:.1f} us with Simple's "
      "full payload per line. The bound's time is the best protocol's latency plus its transfer; "
      "% of bound is the bound's time over the predicted time.\n\n",
      s.bound.algbw_gbs, s.bound.cut, s.bound.min_latency_us(), simple_latency(s.bound));
  if (const Cut* node = s.bound.slower_hop_cut()) {
    out += fmt::format(
        "Across nodes, {} carry at most {:.1f} GB/s, and their last bytes cross the network "
        "({:.1f} us at least with its hop): where that takes longer, mostly at mid sizes, it is "
        "the bound's time.\n\n",
        node->cut, node->algbw_gbs, node->min_latency_us());
  }
  for (const std::string& unused : s.bound.left_out) {
    out += fmt::format("Left out of the bound: {}.\n\n", unused);
  }
  if (!s.plan.rings.empty()) {
    out += "Rings within a node (ranks in order, width per direction):\n\n";
    for (const NodeRing& r : s.plan.rings) {
      std::string order;
      for (int rank : r.order) order += fmt::format("{} ", rank);
      out += fmt::format("- {}→ ({:.1f} GB/s)\n", order, r.rate_gbs);
    }
    out += "\n";
  }
  if (!s.plan.paths.empty()) {
    out += "Paths within a node, per origin (the widest, and all of them together):\n\n";
    for (const auto& paths : s.plan.paths) {
      if (paths.empty()) continue;
      double total = 0;
      for (const BroadcastPath& p : paths) total += p.rate_gbs;
      std::string order;
      for (int rank : paths.front().order) order += fmt::format("{} ", rank);
      out += fmt::format("- {}({:.1f} GB/s); {} paths, {:.1f} GB/s\n", order,
                         paths.front().rate_gbs, paths.size(), total);
    }
    out += "\n";
  }
  out +=
      "| size | bound (us) | chosen | threadblocks per rank | time (us) | % of bound | "
      "synthesized (us) | NCCL's model (us) | NCCL's algorithms on Weft's model (us) | others "
      "(us) | with more threadblocks |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Row& r : rows(s)) {
    out += fmt::format("| {} | {:.1f} | {} | {} | {} | {:.0f} % | {} | {} | {} | {} | {} |\n",
                       size_label(r.bytes), r.bound_us, r.chosen, r.chosen_threadblocks,
                       time_or_dash(r.chosen_us), 100 * r.bound_us / r.chosen_us,
                       time_or_dash(r.synthesized_us), time_or_dash(r.nccl_us),
                       time_or_dash(r.nccl_as_weft_us), time_or_dash(r.others_us), r.over_budget);
  }
  out +=
      "\nsynthesized: the best synthesized candidate within the threadblock budget; NCCL's model: "
      "NCCL's best by its own cost model; NCCL's algorithms on Weft's model: its ring and tree "
      "written as Weft algorithms, predicted by Weft's simulator (they contend as Weft files too; "
      "section Against NCCL); with more "
      "threadblocks: the fastest candidate over the budget, where it beats the chosen (its "
      "speed-up and threadblocks per rank; predicted, never chosen, proved or written).\n";
  out += fmt::format(
      "\nSynthesis: bound and rings {:.2f} s, {} sketches compiled in {:.2f} s ({} left out), "
      "predicted in {:.2f} s, the {} written proved in {:.2f} s.\n",
      s.bound_seconds, s.synthesized, s.compile_seconds, s.rejected.size(), s.predict_seconds,
      s.proved, s.prove_seconds);
  return out;
}

std::string bound_table(const Synthesis& s) {
  std::string out = fmt::format("{:>8} {:>12} {:>12} {:>7} {:>12} {:>12} {:>8} {:>16}  {}\n",
                                "size", "bound(us)", "time(us)", "%bound", "NCCL(us)", "NCCL/W(us)",
                                "tbs/rank", "over budget", "chosen");
  for (const Row& r : rows(s)) {
    out += fmt::format("{:>8} {:>12.1f} {:>12} {:>6.0f}% {:>12} {:>12} {:>8} {:>16}  {}\n",
                       size_label(r.bytes), r.bound_us, time_or_dash(r.chosen_us),
                       100 * r.bound_us / r.chosen_us, time_or_dash(r.nccl_us),
                       time_or_dash(r.nccl_as_weft_us), r.chosen_threadblocks, r.over_budget,
                       r.chosen);
  }
  return out;
}

}  // namespace weft::synthesis
