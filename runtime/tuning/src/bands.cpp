#include "weft/tuning/bands.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "weft/tuning/tuner_config.h"

namespace weft::tuning {

namespace {

// The fastest contender at a size within the threadblock budget, leaving out `skip` and, when
// `skip_family` is given, every contender of that family.
int fastest(const std::vector<Contender>& contenders, std::size_t size, int skip,
            const std::string* skip_family = nullptr) {
  int best = -1;
  for (std::size_t c = 0; c < contenders.size(); ++c) {
    if (static_cast<int>(c) == skip) continue;
    if (contenders[c].over_budget) continue;
    if (skip_family != nullptr && family(contenders[c]) == *skip_family) continue;
    const double t = contenders[c].time_us[size];
    if (!std::isfinite(t)) continue;
    if (best < 0 || t < contenders[static_cast<std::size_t>(best)].time_us[size]) {
      best = static_cast<int>(c);
    }
  }
  return best;
}

std::string_view protocol_name(ir::Protocol proto) {
  switch (proto) {
    case ir::Protocol::LL:
      return "ll";
    case ir::Protocol::LL128:
      return "ll128";
    case ir::Protocol::Simple:
      break;
  }
  return "simple";
}

}  // namespace

std::string family(const Contender& contender) {
  const std::string& name = contender.name;
  if (contender.nccl) {
    // "NCCL ring LL": the algorithm without its protocol.
    const auto second = name.find(' ', name.find(' ') + 1);
    return name.substr(0, second);
  }
  std::string base = name.substr(0, name.find(' '));
  // Trailing "_x12" parts are a variant's parameters (paths, lanes, chunks).
  for (;;) {
    const auto underscore = base.rfind('_');
    if (underscore == std::string::npos || underscore == 0) break;
    const std::string_view tail = std::string_view(base).substr(underscore + 1);
    const bool variant = tail.size() >= 2 && std::isalpha(static_cast<unsigned char>(tail[0])) &&
                         std::all_of(tail.begin() + 1, tail.end(), [](char ch) {
                           return std::isdigit(static_cast<unsigned char>(ch)) != 0;
                         });
    if (!variant) break;
    base.resize(underscore);
  }
  return base;
}

std::vector<Band> choose_bands(const std::vector<std::uint64_t>& sizes,
                               const std::vector<Contender>& contenders) {
  std::vector<int> winner(sizes.size(), -1);
  for (std::size_t i = 0; i < sizes.size(); ++i) winner[i] = fastest(contenders, i, -1);
  // Sizes nobody takes join a neighbour, so the bands still cover every size.
  for (std::size_t i = 1; i < winner.size(); ++i) {
    if (winner[i] < 0) winner[i] = winner[i - 1];
  }
  for (std::size_t i = winner.size(); i-- > 1;) {
    if (winner[i - 1] < 0) winner[i - 1] = winner[i];
  }
  std::vector<Band> bands;
  for (std::size_t i = 0; i < winner.size(); ++i) {
    if (winner[i] < 0) continue;
    if (bands.empty() || bands.back().contender != winner[i]) {
      bands.push_back({winner[i], i, i, sizes[i], 0, -1, kNotApplicable});
    }
    Band& band = bands.back();
    band.last = i;
    const std::string winner_family = family(contenders[static_cast<std::size_t>(winner[i])]);
    const int other = fastest(contenders, i, winner[i], &winner_family);
    const double mine = contenders[static_cast<std::size_t>(winner[i])].time_us[i];
    if (other >= 0 && std::isfinite(mine)) {
      const double ratio = contenders[static_cast<std::size_t>(other)].time_us[i] / mine;
      if (ratio < band.margin) {
        band.margin = ratio;
        band.runner_up = other;
      }
    }
  }
  for (std::size_t b = 0; b < bands.size(); ++b) {
    if (b == 0) bands[b].min_bytes = 0;
    bands[b].max_bytes = b + 1 < bands.size() ? sizes[bands[b + 1].first] - 1 : 0;
  }
  return bands;
}

std::string tuner_csv(const std::vector<Band>& bands, const std::vector<Contender>& contenders,
                      ir::Collective collective, int nodes, int ranks) {
  std::vector<TunerLine> lines;
  for (const Band& band : bands) {
    const Contender& c = contenders[static_cast<std::size_t>(band.contender)];
    if (!c.nccl) continue;
    TunerLine line;
    line.collective = std::string(ir::to_string(collective));
    line.min_bytes = band.min_bytes;
    line.max_bytes = band.max_bytes;
    line.algorithm = c.nccl_algorithm;
    line.protocol = std::string(protocol_name(c.protocol));
    line.nodes = nodes;
    line.ranks = ranks;
    line.comment = c.channels > 0 ? fmt::format("{} (model: {} channel{})", c.name, c.channels,
                                                c.channels == 1 ? "" : "s")
                                  : c.name;
    lines.push_back(std::move(line));
  }
  return write_tuner_config(lines);
}

OverBudgetGain over_budget_gain(const std::vector<Contender>& contenders, std::size_t size,
                                int chosen) {
  OverBudgetGain gain;
  if (chosen < 0 || static_cast<std::size_t>(chosen) >= contenders.size()) return gain;
  const double mine = contenders[static_cast<std::size_t>(chosen)].time_us[size];
  double best = mine;
  for (std::size_t c = 0; c < contenders.size(); ++c) {
    const double t = contenders[c].time_us[size];
    if (!contenders[c].over_budget || !std::isfinite(t) || !(t < best)) continue;
    best = t;
    gain.contender = static_cast<int>(c);
  }
  // Less than half a percent reads 1.00× in a table: not worth an SM of the job's.
  if (gain.contender >= 0 && mine / best < 1.005) gain.contender = -1;
  if (gain.contender >= 0) gain.speedup = mine / best;
  return gain;
}

OverBudgetGain over_budget_gain(const std::vector<Contender>& contenders, const Band& band) {
  OverBudgetGain most;
  for (std::size_t i = band.first; i <= band.last; ++i) {
    const OverBudgetGain gain = over_budget_gain(contenders, i, band.contender);
    if (gain.contender >= 0 && gain.speedup > most.speedup) most = gain;
  }
  return most;
}

std::string over_budget_text(const std::vector<Contender>& contenders, const OverBudgetGain& gain) {
  if (gain.contender < 0) return "-";
  return fmt::format("{:.2f}× at {} tbs", gain.speedup,
                     contenders[static_cast<std::size_t>(gain.contender)].threadblocks);
}

std::string threadblocks_text(const Contender& contender) {
  return contender.nccl ? std::string("-") : std::to_string(contender.threadblocks);
}

}  // namespace weft::tuning
