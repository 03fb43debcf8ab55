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

// A categorical palette that stays apart on white (Tableau 10).
constexpr const char* kColours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

}  // namespace

std::string report_markdown(const std::vector<std::uint64_t>& sizes,
                            const std::vector<Contender>& contenders,
                            const std::vector<Band>& bands, const ReportInfo& info) {
  const double factor = bus_bandwidth_factor(info.collective, info.ranks);
  std::string out = fmt::format("# {}\n\n", info.title);
  out += fmt::format("Topology: {}\n\n", info.topology);
  out += "Predicted by Weft's simulator (weftc simulate), not measured. ";
  out += "![predicted bus bandwidth](report.svg)\n\n## Bands\n\n";
  out += "| sizes | winner | file | runner-up | margin |\n|---|---|---|---|---|\n";
  for (const Band& band : bands) {
    const std::string range =
        fmt::format("{} – {}", band.min_bytes == 0 ? std::string("0") : size_text(band.min_bytes),
                    band.max_bytes == 0 ? std::string("no limit") : size_text(band.max_bytes + 1));
    const auto& winner = contenders[static_cast<std::size_t>(band.contender)];
    const std::string& file = static_cast<std::size_t>(band.contender) < info.files.size()
                                  ? info.files[static_cast<std::size_t>(band.contender)]
                                  : std::string();
    out += fmt::format(
        "| {} | {} | {} | {} | {} |\n", range, winner.name,
        winner.nccl ? std::string("tuner.csv") : (file.empty() ? std::string("-") : file),
        band.runner_up >= 0 ? contenders[static_cast<std::size_t>(band.runner_up)].name
                            : std::string("-"),
        std::isfinite(band.margin) ? fmt::format("{:.2f}×", band.margin) : std::string("-"));
  }
  out +=
      "\nmargin: the smallest, over the band's sizes, of the runner-up's time over the "
      "winner's.\n\n## Predicted bus bandwidth (GB/s)\n\n| contender |";
  for (std::uint64_t s : sizes) out += fmt::format(" {} |", size_text(s));
  out += "\n|---|";
  for (std::size_t i = 0; i < sizes.size(); ++i) out += "---|";
  out += "\n";
  for (const Contender& c : contenders) {
    out += fmt::format("| {} |", c.name);
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const double bw = busbw(c, i, sizes[i], factor);
      out += std::isfinite(bw) ? fmt::format(" {:.1f} |", bw) : std::string(" n/a |");
    }
    out += "\n";
  }
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

std::string report_svg(const std::vector<std::uint64_t>& sizes,
                       const std::vector<Contender>& contenders, const std::vector<Band>& bands,
                       const ReportInfo& info) {
  const double factor = bus_bandwidth_factor(info.collective, info.ranks);
  constexpr double kLeft = 70, kTop = 50, kPlotWidth = 760, kPlotHeight = 380;
  const double legend_top = kTop + kPlotHeight + 60;
  const double height = legend_top + 16.0 * static_cast<double>(contenders.size()) + 20;
  double top_bw = 0;
  for (const Contender& c : contenders) {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const double bw = busbw(c, i, sizes[i], factor);
      if (std::isfinite(bw)) top_bw = std::max(top_bw, bw);
    }
  }
  top_bw = top_bw > 0 ? top_bw * 1.05 : 1;
  const double lo = std::log2(static_cast<double>(sizes.empty() ? 1 : sizes.front()));
  const double hi = std::log2(static_cast<double>(sizes.empty() ? 2 : sizes.back()));
  const double span = hi > lo ? hi - lo : 1;
  const auto x_of = [&](std::size_t i) {
    return kLeft + (std::log2(static_cast<double>(sizes[i])) - lo) / span * kPlotWidth;
  };
  const auto y_of = [&](double bw) { return kTop + kPlotHeight - bw / top_bw * kPlotHeight; };

  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n<text x=\"{}\" y=\"24\" font-size=\"16\">{}</text>\n",
      kLeft + kPlotWidth + 40, height, kLeft, detail::svg_escaped(info.title));
  // The winners' bands, shaded, with the winner's number at the top.
  for (std::size_t b = 0; b < bands.size(); ++b) {
    const Band& band = bands[b];
    const double x0 = band.first == 0 ? kLeft : (x_of(band.first - 1) + x_of(band.first)) / 2;
    const double x1 = band.last + 1 >= sizes.size() ? kLeft + kPlotWidth
                                                    : (x_of(band.last) + x_of(band.last + 1)) / 2;
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\" "
        "fill-opacity=\"0.10\"><title>{}</title></rect>\n<text x=\"{:.1f}\" y=\"{}\" "
        "font-size=\"10\" text-anchor=\"middle\">#{}</text>\n",
        x0, kTop, std::max(0.0, x1 - x0), kPlotHeight,
        kColours[static_cast<std::size_t>(band.contender) % std::size(kColours)],
        detail::svg_escaped(contenders[static_cast<std::size_t>(band.contender)].name),
        (x0 + x1) / 2, kTop - 4, band.contender + 1);
  }
  // Axes and grid.
  out += fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"black\"/>\n<line x1=\"{0}\" "
      "y1=\"{2}\" x2=\"{3}\" y2=\"{2}\" stroke=\"black\"/>\n",
      kLeft, kTop, kTop + kPlotHeight, kLeft + kPlotWidth);
  for (int k = 0; k <= 5; ++k) {
    const double bw = top_bw * k / 5;
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>\n<text "
        "x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:.0f}</text>\n",
        kLeft, y_of(bw), kLeft + kPlotWidth, kLeft - 6, y_of(bw) + 4, bw);
  }
  const std::size_t label_every = std::max<std::size_t>(1, sizes.size() / 12);
  for (std::size_t i = 0; i < sizes.size(); i += label_every) {
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x_of(i),
                       kTop + kPlotHeight + 18, detail::svg_escaped(size_text(sizes[i])));
  }
  out += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">size</text>\n<text x=\"16\" y=\"{}\" "
      "transform=\"rotate(-90 16 {})\" text-anchor=\"middle\">predicted busbw (GB/s)</text>\n",
      kLeft + kPlotWidth / 2, kTop + kPlotHeight + 40, kTop + kPlotHeight / 2,
      kTop + kPlotHeight / 2);
  // One line per contender; NCCL's dashed; winners drawn thicker.
  std::vector<char> wins(contenders.size(), 0);
  for (const Band& band : bands) wins[static_cast<std::size_t>(band.contender)] = 1;
  for (std::size_t c = 0; c < contenders.size(); ++c) {
    std::string points;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const double bw = busbw(contenders[c], i, sizes[i], factor);
      if (!std::isfinite(bw)) continue;
      points += fmt::format("{:.1f},{:.1f} ", x_of(i), y_of(bw));
    }
    if (points.empty()) continue;
    const char* colour = kColours[c % std::size(kColours)];
    out += fmt::format(
        "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{}><title>{}"
        "</title></polyline>\n",
        points, colour, wins[c] != 0 ? 2.5 : 1.0,
        contenders[c].nccl ? " stroke-dasharray=\"6,3\"" : "",
        detail::svg_escaped(contenders[c].name));
  }
  for (std::size_t c = 0; c < contenders.size(); ++c) {
    const double y = legend_top + 16.0 * static_cast<double>(c);
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"{3}\" "
        "stroke-width=\"{4}\"{5}/>\n<text x=\"{6}\" y=\"{7:.1f}\">#{8} {9}{10}</text>\n",
        kLeft, y, kLeft + 30, kColours[c % std::size(kColours)], wins[c] != 0 ? 2.5 : 1.0,
        contenders[c].nccl ? " stroke-dasharray=\"6,3\"" : "", kLeft + 38, y + 4, c + 1,
        detail::svg_escaped(contenders[c].name), wins[c] != 0 ? " (wins a band)" : "");
  }
  out += "</svg>\n";
  return out;
}

}  // namespace weft::tuning
