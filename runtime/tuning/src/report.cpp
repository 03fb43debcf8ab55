// report.md and report.svg of `weftc tune`: what won where, by how much, and every candidate's
// predicted bus bandwidth.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "weft/predict/nccl_model.h"
#include "weft/predict/svg_text.h"
#include "weft/tuning/bands.h"

namespace weft::tuning {

namespace {

namespace detail = predict::detail;
using predict::bus_bandwidth_factor;

std::string size_text(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KB", "MB", "GB", "TB"};
  int unit = 0;
  double value = static_cast<double>(bytes);
  while (unit < 4 && value >= 1024) {
    value /= 1024;
    ++unit;
  }
  return value == std::floor(value) ? fmt::format("{:.0f} {}", value, kUnits[unit])
                                    : fmt::format("{:.1f} {}", value, kUnits[unit]);
}

double busbw(const Contender& c, std::size_t i, std::uint64_t bytes, double factor) {
  const double t = c.time_us[i];
  if (!std::isfinite(t) || t <= 0) return kNotApplicable;
  return static_cast<double>(bytes) / (t * 1e3) * factor;
}

// A categorical palette that stays apart on white (Tableau 10, and two more): one colour per
// drawn line, never reused, since the picture draws at most kDrawn.
constexpr const char* kColours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                    "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                                    "#9c755f", "#bab0ac", "#17becf", "#1b1b1b"};
constexpr std::size_t kDrawn = std::size(kColours);

// Per size, the chosen time against NCCL's by each comparison; empty where NCCL has nothing.
std::string nccl_markdown(const std::vector<std::uint64_t>& sizes,
                          const std::vector<Contender>& contenders, const std::vector<Band>& bands,
                          const ReportInfo& info) {
  const auto times = [](double us) {
    return std::isfinite(us) ? fmt::format("{:.1f}", us) : std::string("-");
  };
  const auto ratio = [](double x) {
    return std::isfinite(x) ? fmt::format("{:.2f}×", x) : std::string("-");
  };
  std::string rows;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const VsNccl vs = vs_nccl(contenders, bands, info, i);
    if (!std::isfinite(vs.model) && !std::isfinite(vs.as_weft)) continue;
    double model_us = kNotApplicable;
    for (const Contender& c : contenders) {
      if (c.nccl) model_us = std::min(model_us, c.time_us[i]);
    }
    const double as_weft_us =
        i < info.nccl_as_weft_us.size() ? info.nccl_as_weft_us[i] : kNotApplicable;
    rows += fmt::format("| {} | {} | {} | {} | {} |\n", size_text(sizes[i]), times(model_us),
                        ratio(vs.model), times(as_weft_us), ratio(vs.as_weft));
  }
  if (rows.empty()) return {};
  return "\n## Against NCCL\n\nTwo comparisons. *NCCL's model*: NCCL's best ring or tree by "
         "NCCL's own cost model (tuning.cc's formula), which contends for the bands. *NCCL's "
         "algorithms on Weft's model*: its ring (one per channel, each crossing nodes on its own "
         "NIC) and tree written as Weft algorithms, proved, and predicted by Weft's simulator, "
         "the fastest at each size; `weftc synthesize` lets them contend as Weft files too "
         "(`weftc tune` shows them for comparison only). The first "
         "sets two models side by side, the second two schedules on one model. vs: the "
         "comparison's time over the chosen algorithm's.\n\n| size | NCCL's model (us) | vs "
         "NCCL's model | NCCL's algorithms on Weft's model (us) | vs NCCL's algorithms |\n"
         "|---|---|---|---|---|\n" +
         rows;
}

}  // namespace

VsNccl vs_nccl(const std::vector<Contender>& contenders, const std::vector<Band>& bands,
               const ReportInfo& info, std::size_t size) {
  VsNccl vs;
  double chosen = kNotApplicable;
  for (const Band& band : bands) {
    if (size >= band.first && size <= band.last) {
      chosen = contenders[static_cast<std::size_t>(band.contender)].time_us[size];
    }
  }
  if (!std::isfinite(chosen) || chosen <= 0) return vs;
  double model = kNotApplicable;
  for (const Contender& c : contenders) {
    if (c.nccl) model = std::min(model, c.time_us[size]);
  }
  if (std::isfinite(model)) vs.model = model / chosen;
  if (size < info.nccl_as_weft_us.size() && std::isfinite(info.nccl_as_weft_us[size])) {
    vs.as_weft = info.nccl_as_weft_us[size] / chosen;
  }
  return vs;
}

std::string report_markdown(const std::vector<std::uint64_t>& sizes,
                            const std::vector<Contender>& contenders,
                            const std::vector<Band>& bands, const ReportInfo& info) {
  const double factor = bus_bandwidth_factor(info.collective, info.ranks);
  std::string out = fmt::format("# {}\n\n", info.title);
  out += fmt::format("Topology: {}\n\n", info.topology);
  out += "Predicted by Weft's simulator (weftc simulate), not measured. ";
  out += "![predicted bus bandwidth](report.svg)\n\n## Bands\n\n";
  out +=
      "| sizes | winner | threadblocks per rank | file | best other algorithm | margin | "
      "with more threadblocks |\n"
      "|---|---|---|---|---|---|---|\n";
  for (const Band& band : bands) {
    const std::string range =
        fmt::format("{} – {}", band.min_bytes == 0 ? std::string("0") : size_text(band.min_bytes),
                    band.max_bytes == 0 ? std::string("no limit") : size_text(band.max_bytes + 1));
    const auto& winner = contenders[static_cast<std::size_t>(band.contender)];
    const std::string& file = static_cast<std::size_t>(band.contender) < info.files.size()
                                  ? info.files[static_cast<std::size_t>(band.contender)]
                                  : std::string();
    out += fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} |\n", range, winner.name, threadblocks_text(winner),
        winner.nccl ? std::string("tuner.csv") : (file.empty() ? std::string("-") : file),
        band.runner_up >= 0 ? contenders[static_cast<std::size_t>(band.runner_up)].name
                            : std::string("-"),
        std::isfinite(band.margin) ? fmt::format("{:.2f}×", band.margin) : std::string("-"),
        over_budget_text(contenders, over_budget_gain(contenders, band)));
  }
  out +=
      "\nthreadblocks per rank: the most any rank runs, each on an SM of its own, taken from the "
      "job's kernels while the call runs (NCCL's own algorithms: its channels, its choice); best "
      "other algorithm: the fastest of another algorithm (not the winner with another "
      "channel count, protocol or split); margin: the smallest, over the band's sizes, of its "
      "time over the winner's; with more threadblocks: the most a candidate over the "
      "threadblock budget would have gained in the band (its time at its threadblocks per "
      "rank; chosen for no band), \"-\" where none is faster.\n\n## Predicted bus bandwidth "
      "(GB/s)\n\nThe picture draws the winners and the best of each other algorithm; this "
      "table has every candidate.\n\n| contender | threadblocks per rank |";
  for (std::uint64_t s : sizes) out += fmt::format(" {} |", size_text(s));
  out += "\n|---|---|";
  for (std::size_t i = 0; i < sizes.size(); ++i) out += "---|";
  out += "\n";
  for (const Contender& c : contenders) {
    out += fmt::format("| {} | {}{} |", c.name, threadblocks_text(c),
                       c.over_budget ? " (over budget)" : "");
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const double bw = busbw(c, i, sizes[i], factor);
      out += std::isfinite(bw) ? fmt::format(" {:.1f} |", bw) : std::string(" n/a |");
    }
    out += "\n";
  }
  out += nccl_markdown(sizes, contenders, bands, info);
  if (!info.rejected.empty()) {
    out += "\n## Candidates left out\n\n";
    for (const std::string& why : info.rejected) out += fmt::format("- {}\n", why);
  }
  if (!info.notes.empty()) {
    out += "\n## Notes\n\n";
    for (const std::string& note : info.notes) out += fmt::format("- {}\n", note);
  }
  return out;
}

// The contenders the picture draws: every band's winner, then the best of each other family (the
// smallest geometric-mean time over the sizes it applies to), at most kDrawn in all. The rest are
// in report.md's table: sixty-nine lines in one picture tell the reader nothing.
std::vector<std::size_t> drawn_contenders(const std::vector<Contender>& contenders,
                                          const std::vector<Band>& bands) {
  std::vector<std::size_t> drawn;
  for (const Band& band : bands) {
    const auto c = static_cast<std::size_t>(band.contender);
    if (drawn.size() < kDrawn && std::find(drawn.begin(), drawn.end(), c) == drawn.end()) {
      drawn.push_back(c);
    }
  }
  struct Best {
    std::string family;
    std::size_t contender;
    double score;
  };
  std::vector<Best> best;
  for (std::size_t c = 0; c < contenders.size(); ++c) {
    double log_sum = 0;
    int applies = 0;
    for (const double t : contenders[c].time_us) {
      if (std::isfinite(t) && t > 0) {
        log_sum += std::log(t);
        ++applies;
      }
    }
    if (applies == 0) continue;
    // A contender that applies to fewer sizes ranks below one that applies to all: each size
    // it misses counts as a factor of two.
    const double score =
        log_sum / applies + std::log(2.0) * static_cast<double>(contenders[c].time_us.size() -
                                                                static_cast<std::size_t>(applies));
    const std::string f = family(contenders[c]);
    auto it = std::find_if(best.begin(), best.end(), [&](const Best& b) { return b.family == f; });
    if (it == best.end()) {
      best.push_back({f, c, score});
    } else if (score < it->score) {
      *it = {f, c, score};
    }
  }
  std::sort(best.begin(), best.end(),
            [](const Best& a, const Best& b) { return a.score < b.score; });
  for (const Best& b : best) {
    if (drawn.size() >= kDrawn) break;
    const bool family_drawn = std::any_of(drawn.begin(), drawn.end(), [&](std::size_t c) {
      return family(contenders[c]) == b.family;
    });
    if (!family_drawn) drawn.push_back(b.contender);
  }
  return drawn;
}

std::string report_svg(const std::vector<std::uint64_t>& sizes,
                       const std::vector<Contender>& contenders, const std::vector<Band>& bands,
                       const ReportInfo& info) {
  const double factor = bus_bandwidth_factor(info.collective, info.ranks);
  const std::vector<std::size_t> drawn = drawn_contenders(contenders, bands);
  const auto colour_of = [&](std::size_t contender) {
    const auto at = std::find(drawn.begin(), drawn.end(), contender);
    // A winner past the drawn dozen (a tuning of more bands than that) shades its band grey.
    return at == drawn.end() ? "#999999" : kColours[static_cast<std::size_t>(at - drawn.begin())];
  };
  constexpr double kLeft = 70, kTop = 50, kPlotWidth = 760, kPlotHeight = 380;
  const double legend_top = kTop + kPlotHeight + 60;
  const double height = legend_top + 16.0 * static_cast<double>(drawn.size() + 1) + 20;
  // A logarithmic busbw axis, whole decades: small sizes' bandwidths are as readable as large
  // ones' (a linear axis pressed every size below a few hundred KB onto the floor).
  double low_bw = kNotApplicable, high_bw = 0;
  for (const std::size_t c : drawn) {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const double bw = busbw(contenders[c], i, sizes[i], factor);
      if (!std::isfinite(bw) || bw <= 0) continue;
      low_bw = std::min(low_bw, bw);
      high_bw = std::max(high_bw, bw);
    }
  }
  if (!std::isfinite(low_bw)) low_bw = high_bw = 1;
  const double low_decade = std::floor(std::log10(low_bw));
  const double high_decade = std::max(low_decade + 1, std::ceil(std::log10(high_bw)));
  const double lo = std::log2(static_cast<double>(sizes.empty() ? 1 : sizes.front()));
  const double hi = std::log2(static_cast<double>(sizes.empty() ? 2 : sizes.back()));
  const double span = hi > lo ? hi - lo : 1;
  const auto x_of = [&](std::size_t i) {
    return kLeft + (std::log2(static_cast<double>(sizes[i])) - lo) / span * kPlotWidth;
  };
  const auto y_of = [&](double bw) {
    return kTop + kPlotHeight -
           (std::log10(bw) - low_decade) / (high_decade - low_decade) * kPlotHeight;
  };

  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n<text x=\"{}\" y=\"24\" font-size=\"16\">{}</text>\n",
      kLeft + kPlotWidth + 40, height, kLeft, detail::svg_escaped(info.title));
  // The winners' bands, shaded in the winner's colour, with its legend number at the top.
  for (const Band& band : bands) {
    const double x0 = band.first == 0 ? kLeft : (x_of(band.first - 1) + x_of(band.first)) / 2;
    const double x1 = band.last + 1 >= sizes.size() ? kLeft + kPlotWidth
                                                    : (x_of(band.last) + x_of(band.last + 1)) / 2;
    const auto winner = static_cast<std::size_t>(band.contender);
    const auto at = std::find(drawn.begin(), drawn.end(), winner);
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\" "
        "fill-opacity=\"0.10\"><title>{}</title></rect>\n",
        x0, kTop, std::max(0.0, x1 - x0), kPlotHeight, colour_of(winner),
        detail::svg_escaped(contenders[winner].name));
    if (x1 - x0 >= 14 && at != drawn.end()) {  // a number only where it fits
      out += fmt::format(
          "<text x=\"{:.1f}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\">#{}</text>\n",
          (x0 + x1) / 2, kTop - 4, at - drawn.begin() + 1);
    }
  }
  // Axes and grid: a line per decade of busbw, labelled.
  out += fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"black\"/>\n<line x1=\"{0}\" "
      "y1=\"{2}\" x2=\"{3}\" y2=\"{2}\" stroke=\"black\"/>\n",
      kLeft, kTop, kTop + kPlotHeight, kLeft + kPlotWidth);
  for (double decade = low_decade; decade <= high_decade + 1e-9; decade += 1) {
    const double bw = std::pow(10.0, decade);
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>\n<text "
        "x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        kLeft, y_of(bw), kLeft + kPlotWidth, kLeft - 6, y_of(bw) + 4,
        decade >= 0 ? fmt::format("{:.0f}", bw)
                    : fmt::format("{:.{}f}", bw, static_cast<int>(-decade)));
  }
  // Size labels far enough apart to read: every k-th size, k the least that leaves 56 px.
  const double step_px = sizes.size() > 1 ? kPlotWidth / static_cast<double>(sizes.size() - 1) : 56;
  const auto label_every = static_cast<std::size_t>(std::max(1.0, std::ceil(56.0 / step_px)));
  for (std::size_t i = 0; i < sizes.size(); i += label_every) {
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"black\"/>\n<text "
        "x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        x_of(i), kTop + kPlotHeight, kTop + kPlotHeight + 4, kTop + kPlotHeight + 18,
        detail::svg_escaped(size_text(sizes[i])));
  }
  out += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">size</text>\n<text x=\"16\" y=\"{}\" "
      "transform=\"rotate(-90 16 {})\" text-anchor=\"middle\">predicted busbw (GB/s, log "
      "scale)</text>\n",
      kLeft + kPlotWidth / 2, kTop + kPlotHeight + 40, kTop + kPlotHeight / 2,
      kTop + kPlotHeight / 2);
  // One line per drawn contender; NCCL's dashed; winners drawn thicker.
  std::vector<char> wins(contenders.size(), 0);
  for (const Band& band : bands) wins[static_cast<std::size_t>(band.contender)] = 1;
  for (const std::size_t c : drawn) {
    std::string points;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const double bw = busbw(contenders[c], i, sizes[i], factor);
      if (!std::isfinite(bw) || bw <= 0) continue;
      points += fmt::format("{:.1f},{:.1f} ", x_of(i), y_of(bw));
    }
    if (points.empty()) continue;
    out += fmt::format(
        "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{}><title>{}"
        "</title></polyline>\n",
        points, colour_of(c), wins[c] != 0 ? 2.5 : 1.2,
        contenders[c].nccl ? " stroke-dasharray=\"6,3\"" : "",
        detail::svg_escaped(contenders[c].name));
  }
  for (std::size_t k = 0; k < drawn.size(); ++k) {
    const std::size_t c = drawn[k];
    const double y = legend_top + 16.0 * static_cast<double>(k);
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"{3}\" "
        "stroke-width=\"{4}\"{5}/>\n<text x=\"{6}\" y=\"{7:.1f}\">#{8} {9}{10}</text>\n",
        kLeft, y, kLeft + 30, colour_of(c), wins[c] != 0 ? 2.5 : 1.2,
        contenders[c].nccl ? " stroke-dasharray=\"6,3\"" : "", kLeft + 38, y + 4, k + 1,
        detail::svg_escaped(contenders[c].name),
        wins[c] != 0 ? " (wins a band)" : " (best of its family)");
  }
  if (drawn.size() < contenders.size()) {
    out += fmt::format(
        "<text x=\"{}\" y=\"{:.1f}\" fill=\"#555\">{} more candidate{} in report.md's "
        "table</text>\n",
        kLeft, legend_top + 16.0 * static_cast<double>(drawn.size()) + 4,
        contenders.size() - drawn.size(), contenders.size() - drawn.size() == 1 ? "" : "s");
  }
  out += "</svg>\n";
  return out;
}

}  // namespace weft::tuning
