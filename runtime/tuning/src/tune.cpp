#include "weft/tuning/tune.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "weft/ir/text_file.h"
#include "weft/ir/xml.h"

namespace weft::tuning {

namespace {

namespace fs = std::filesystem;

std::string file_stem(const std::string& name) {
  std::string out;
  for (char ch : name) {
    const bool plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                       (ch >= '0' && ch <= '9') || ch == '_' || ch == '-';
    out += plain ? ch : '_';
  }
  return out;
}

std::optional<std::string> write_text(const fs::path& path, const std::string& text) {
  std::string error;
  if (ir::write_text_file(path.string(), text, &error)) return std::nullopt;
  return error;
}

bool over_budget(const Candidate& candidate, const TuneRequest& request) {
  return request.max_threadblocks > 0 &&
         busiest_threadblocks(candidate.algorithm) > request.max_threadblocks;
}

// The order the candidates are predicted in: as listed, the prunable ones backwards where asked;
// those within the threadblock budget before those over it, so that what may be chosen is
// predicted first and prunes what only says what more threadblocks would gain.
std::vector<std::size_t> prediction_order(const std::vector<Candidate>& candidates,
                                          const TuneRequest& request) {
  const std::size_t first = request.prunable_first;
  const std::size_t end = first + request.prunable;
  std::vector<std::size_t> order;
  for (std::size_t position = 0; position < candidates.size(); ++position) {
    const bool in_range = position >= first && position < end;
    order.push_back(request.prunable_backwards && in_range ? first + (end - 1 - position)
                                                           : position);
  }
  std::stable_partition(order.begin(), order.end(),
                        [&](std::size_t k) { return !over_budget(candidates[k], request); });
  return order;
}

}  // namespace

Tuning tune(const std::vector<Candidate>& candidates, const predict::Topology& topology,
            const TuneRequest& request) {
  if (!(request.gap >= 0 && request.gap < 1)) {
    throw std::invalid_argument(
        fmt::format("tune: a gap of {} (a fraction from 0, below 1)", request.gap));
  }
  const std::size_t first = request.prunable_first;
  const std::size_t end = first + request.prunable;
  if (first > candidates.size() || request.prunable > candidates.size() - first) {
    // The caller's count of its own candidates is stale: reading past them would be undefined.
    throw std::invalid_argument(
        fmt::format("tune: {} prunable candidates asked of {} candidates (from index {})",
                    request.prunable, candidates.size(), first));
  }
  for (std::size_t k = 0; k < request.twins.size(); ++k) {
    const int twin = request.twins[k];
    if (twin < -1 || twin >= static_cast<int>(candidates.size()) || twin == static_cast<int>(k)) {
      throw std::invalid_argument(
          fmt::format("tune: candidate {}'s twin {} is not another of the {} candidates", k, twin,
                      candidates.size()));
    }
  }
  Tuning tuning;
  tuning.sizes = request.sizes;
  const std::size_t sizes = request.sizes.size();
  // Per size: the best of the prunable candidates predicted so far, within the budget and over it.
  std::vector<double> best(sizes, kNotApplicable);
  std::vector<double> best_over(sizes, kNotApplicable);
  LeftOut left_out;
  tuning.contenders.resize(candidates.size());
  const std::vector<std::size_t> order = prediction_order(candidates, request);
  for (std::size_t position = 0; position < order.size(); ++position) {
    const std::size_t k = order[position];
    const Candidate& candidate = candidates[k];
    std::function<void(std::uint64_t)> on_size;
    if (request.on_predict) {
      on_size = [&](std::uint64_t bytes) {
        request.on_predict(position + 1, candidates.size(), candidate.name, bytes);
      };
    }
    const bool prunable = k >= first && k < end;
    const bool over = over_budget(candidate, request);
    Pruning pruning;
    if (prunable) {
      pruning.ceiling_us = best;
      // Over the budget it need only be predicted where it could beat what may be chosen, and
      // the others over the budget (what more threadblocks would gain).
      for (std::size_t i = 0; over && i < sizes; ++i) {
        pruning.ceiling_us[i] = std::min(best[i], best_over[i]);
      }
      // Of two candidates that tie, the first wins its band. Predicted backwards, a candidate
      // that could tie one after it is predicted: left out only where its floor is above the
      // best by more than rounding (a latency-bound call's floor is its time, summed another
      // way), so that the tie goes as it would with every candidate predicted.
      if (request.prunable_backwards) {
        for (double& ceiling : pruning.ceiling_us) ceiling *= 1 + 1e-9;
      }
      for (double& ceiling : pruning.ceiling_us) ceiling /= 1 + request.gap;
      for (std::size_t i = 0; request.floor_us && i < sizes; ++i) {
        pruning.floor_us.push_back(request.floor_us(candidate, request.sizes[i]));
      }
      // Empty where the twin is not predicted yet.
      if (k < request.twins.size() && request.twins[k] >= 0) {
        pruning.twin_us = tuning.contenders[static_cast<std::size_t>(request.twins[k])].time_us;
      }
    }
    tuning.contenders[k] = predict_candidate(candidate, topology, request.sizes, request.in_place,
                                             on_size, pruning, &left_out);
    tuning.contenders[k].over_budget = over;
    if (!prunable) continue;
    std::vector<double>& best_of_kind = over ? best_over : best;
    for (std::size_t i = 0; i < sizes; ++i) {
      best_of_kind[i] = std::min(best_of_kind[i], tuning.contenders[k].time_us[i]);
    }
  }
  if (request.with_nccl) {
    for (Contender& c : nccl_contenders(topology, request.collective, request.sizes)) {
      tuning.contenders.push_back(std::move(c));
    }
  }
  if (tuning.contenders.empty()) return tuning;
  tuning.bands = choose_bands(request.sizes, tuning.contenders);

  ReportInfo& info = tuning.info;
  info.title = fmt::format("{} ({}) on {} ranks of '{}'", ir::to_string(request.collective),
                           request.in_place ? "in place" : "out of place", topology.ranks(),
                           topology.name());
  info.topology = fmt::format("{} ({} node(s) × {} GPUs)", topology.name(), topology.nodes(),
                              topology.gpus_per_node());
  info.collective = request.collective;
  info.ranks = topology.ranks();
  info.files.assign(tuning.contenders.size(), "");
  info.rejected = request.rejected;
  info.notes = topology.assumptions();
  if (left_out.by_bound > 0) {
    info.notes.push_back(fmt::format(
        "{} prediction(s) left out (n/a in the tables): at those sizes a lower bound on the "
        "candidate's time was no less than another candidate's predicted time{}",
        left_out.by_bound,
        request.gap > 0
            ? fmt::format(" less the gap ({:g} %): it could be at most that much faster",
                          request.gap * 100)
            : std::string()));
  }
  if (left_out.behind_twin > 0) {
    info.notes.push_back(fmt::format(
        "{} prediction(s) left out (n/a in the tables): past a size where the same schedule on "
        "a protocol with more payload per byte (its twin) was faster, as its lower latency pays "
        "less the larger the call",
        left_out.behind_twin));
  }
  const auto over = std::count_if(tuning.contenders.begin(), tuning.contenders.end(),
                                  [](const Contender& c) { return c.over_budget; });
  if (over > 0) {
    info.notes.push_back(fmt::format(
        "{} candidate(s) over the threadblock budget ({} per rank): predicted, for what more "
        "threadblocks would gain, but chosen for no band",
        over, request.max_threadblocks));
  }
  return tuning;
}

std::optional<std::string> prepare_folder(const std::string& output, bool force) {
  std::error_code ec;
  const fs::path dir(output);
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) return fmt::format("{}: exists and is not a folder", output);
    std::vector<fs::path> ours;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const fs::path& p = entry.path();
      const std::string file = p.filename().string();
      if (p.extension() == ".xml" || file == "tuner.csv" || file == "bands.csv" ||
          file == "report.md" || file == "report.svg") {
        ours.push_back(p);
      }
    }
    if (!ours.empty() && !force) {
      return fmt::format(
          "{}: already holds algorithm files or a tuning; --force replaces them (a stale XML "
          "there would still be loaded by WEFT_ALGO_DIR)",
          output);
    }
    for (const fs::path& p : ours) fs::remove(p, ec);
  } else if (!fs::create_directories(dir, ec)) {
    return fmt::format("{}: cannot create the folder: {}", output, ec.message());
  }
  return std::nullopt;
}

std::optional<std::string> write_folder(const std::string& output, Tuning& tuning,
                                        const std::vector<Candidate>& candidates,
                                        const predict::Topology& topology) {
  const fs::path dir(output);
  std::string bands_csv = "min_bytes,max_bytes,kind,winner,file,nccl_algorithm,protocol\n";
  for (std::size_t b = 0; b < tuning.bands.size(); ++b) {
    const Band& band = tuning.bands[b];
    const Contender& winner = tuning.contenders[static_cast<std::size_t>(band.contender)];
    std::string file;
    if (!winner.nccl) {
      ir::Algorithm algo = candidates[static_cast<std::size_t>(band.contender)].algorithm;
      algo.min_bytes = band.min_bytes;
      algo.max_bytes = band.max_bytes;
      algo.name = fmt::format("{} (tuned band {})", winner.name, b + 1);
      file = fmt::format("{:02}-{}.xml", b + 1, file_stem(winner.name));
      std::string error;
      if (!ir::write_xml_file(algo, (dir / file).string(), &error)) {
        return fmt::format("{}: {}", (dir / file).string(), error);
      }
      auto& listed = tuning.info.files[static_cast<std::size_t>(band.contender)];
      listed += (listed.empty() ? "" : ", ") + file;
    }
    bands_csv += fmt::format(
        "{},{},{},{},{},{},{}\n", band.min_bytes,
        band.max_bytes == 0 ? std::string("-1") : std::to_string(band.max_bytes),
        winner.nccl ? "nccl" : "weft", winner.name, file,
        winner.nccl ? winner.nccl_algorithm : std::string(), ir::to_string(winner.protocol));
  }
  const std::vector<std::uint64_t>& sizes = tuning.sizes;
  for (const auto& [name, text] :
       {std::pair<const char*, std::string>{
            "tuner.csv", tuner_csv(tuning.bands, tuning.contenders, tuning.info.collective,
                                   topology.nodes(), topology.ranks())},
        {"bands.csv", bands_csv},
        {"report.md", report_markdown(sizes, tuning.contenders, tuning.bands, tuning.info)},
        {"report.svg", report_svg(sizes, tuning.contenders, tuning.bands, tuning.info)}}) {
    if (auto error = write_text(dir / name, text)) return error;
  }
  return std::nullopt;
}

std::string bands_table(const Tuning& tuning) {
  std::string out =
      fmt::format("{:>12} {:>12}  {:<40} {:>8}  {:<18}  {:>10} {:>10}  {}\n", "min_bytes",
                  "max_bytes", "winner", "tbs/rank", "more tbs would gain", "vs NCCL", "vs NCCL/W",
                  "vs the best other algorithm");
  for (const Band& band : tuning.bands) {
    const Contender& winner = tuning.contenders[static_cast<std::size_t>(band.contender)];
    // Against NCCL by its model and by its algorithms on Weft's model (vs_nccl): the least over
    // the band's sizes, as its margin.
    VsNccl least{kNotApplicable, kNotApplicable};
    for (std::size_t i = band.first; i <= band.last; ++i) {
      const VsNccl vs = vs_nccl(tuning.contenders, tuning.bands, tuning.info, i);
      least.model = std::isfinite(least.model) ? std::min(least.model, vs.model) : vs.model;
      least.as_weft =
          std::isfinite(least.as_weft) ? std::min(least.as_weft, vs.as_weft) : vs.as_weft;
    }
    const auto ratio = [](double x) {
      return std::isfinite(x) ? fmt::format("{:.2f}×", x) : std::string("-");
    };
    out += fmt::format(
        "{:>12} {:>12}  {:<40} {:>8}  {:<18}  {:>10} {:>10}  {}\n", band.min_bytes,
        band.max_bytes == 0 ? std::string("-") : std::to_string(band.max_bytes), winner.name,
        threadblocks_text(winner),
        over_budget_text(tuning.contenders, over_budget_gain(tuning.contenders, band)),
        ratio(least.model), ratio(least.as_weft),
        std::isfinite(band.margin)
            ? fmt::format("{:.2f}× faster than {}", band.margin,
                          tuning.contenders[static_cast<std::size_t>(band.runner_up)].name)
            : std::string("unopposed"));
  }
  return out;
}

}  // namespace weft::tuning
