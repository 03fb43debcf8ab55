// The predicted run as an SVG timeline (pictures.h).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "step_colours.h"
#include "weft/predict/pictures.h"
#include "weft/predict/svg_text.h"

namespace weft::predict {
namespace {

using Buffer = fmt::memory_buffer;

void append(Buffer& out, std::string_view text) {
  out.append(text.data(), text.data() + text.size());
}

// 1, 2 or 5 times a power of ten, so that about `target` ticks span `range`.
double tick_step(double range, int target) {
  const double raw = range / target;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0}) {
    if (raw <= m * power) return m * power;
  }
  return 10 * power;
}

// Which records are drawn: all of them, or those of the first tiles when there are too many (a
// tile's records are the whole algorithm once, so whole tiles still show its shape), or, when
// even tile 0 is too large, the first ones to start.
struct Selection {
  std::vector<bool> drawn;
  std::size_t count = 0;
  std::string note;  // empty when everything is drawn
};

Selection select_records(const std::vector<StepRecord>& steps, std::size_t limit) {
  Selection sel;
  sel.drawn.assign(steps.size(), true);
  sel.count = steps.size();
  if (steps.size() <= limit) return sel;
  std::map<int, std::size_t> per_tile;
  for (const StepRecord& s : steps) ++per_tile[s.tile];
  std::size_t kept = 0;
  int tiles = 0;
  for (const auto& [tile, n] : per_tile) {
    if (kept + n > limit) break;
    kept += n;
    ++tiles;
  }
  if (tiles > 0) {
    const int last_tile = std::next(per_tile.begin(), tiles - 1)->first;
    for (std::size_t i = 0; i < steps.size(); ++i) sel.drawn[i] = steps[i].tile <= last_tile;
    sel.count = kept;
    sel.note = fmt::format(
        "Showing tiles {}..{} of {}: {} of {} step executions (more than the limit of {}).",
        per_tile.begin()->first, last_tile, per_tile.size(), kept, steps.size(), limit);
    return sel;
  }
  // Records are in the order they started.
  for (std::size_t i = 0; i < steps.size(); ++i) sel.drawn[i] = i < limit;
  sel.count = limit;
  sel.note = fmt::format(
      "Showing the first {} of {} step executions to start (the limit; tile {} alone has {}).",
      limit, steps.size(), per_tile.begin()->first, per_tile.begin()->second);
  return sel;
}

struct Lane {
  int rank = 0;
  int threadblock = 0;
  int channel = 0;
  double y = 0;  // top
};

constexpr double kLeft = 200;  // lane labels
constexpr double kRight = 30;
constexpr double kRankGap = 8;

// Where everything goes: the lanes, the messages drawn, the time scale and the picture's frame.
struct Geometry {
  std::map<std::pair<int, int>, Lane> lanes;  // (rank, threadblock) -> lane
  std::vector<bool> message_drawn;
  double t_max = 0;  // the time at the plot's right edge, µs
  double lane_h = 0;
  double plot_w = 0;
  double legend_y = 0;
  double plot_top = 0;
  double plot_bottom = 0;
  double width = 0;
  double height = 0;

  double x_of(double t) const {
    if (!std::isfinite(t)) t = 0;
    return kLeft + std::clamp(t / t_max, 0.0, 1.0) * plot_w;
  }
};

Geometry lay_out(const SimulationResult& result, const TimelineOptions& options,
                 const Selection& sel) {
  const std::vector<StepRecord>& steps = result.steps;
  Geometry g;
  g.lane_h = std::max(options.lane_height_px, 4);
  g.plot_w = std::max(options.plot_width_px, 100);

  // Lanes, ordered by rank then threadblock; each knows its channel from its records.
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (!sel.drawn[i]) continue;
    const StepRecord& s = steps[i];
    g.lanes.try_emplace({s.rank, s.threadblock}, Lane{s.rank, s.threadblock, s.channel, 0});
    g.t_max = std::max(g.t_max, s.end_us);
  }
  g.message_drawn.assign(result.messages.size(), false);
  for (std::size_t m = 0; m < result.messages.size(); ++m) {
    const MessageRecord& msg = result.messages[m];
    const auto valid = [&](int r) {
      return r >= 0 && static_cast<std::size_t>(r) < steps.size() &&
             sel.drawn[static_cast<std::size_t>(r)];
    };
    g.message_drawn[m] = valid(msg.from) && valid(msg.to);
    if (g.message_drawn[m]) g.t_max = std::max(g.t_max, msg.arrived_us);
  }
  if (!(g.t_max > 0) || !std::isfinite(g.t_max)) g.t_max = 1;

  // Header: title, summary, note, legend; then the lanes; then the time axis.
  g.legend_y = sel.note.empty() ? 64 : 82;
  g.plot_top = g.legend_y + 24;
  double y = g.plot_top;
  int previous_rank = -1;
  bool first = true;
  for (auto& [key, lane] : g.lanes) {
    if (!first && lane.rank != previous_rank) y += kRankGap;
    first = false;
    previous_rank = lane.rank;
    lane.y = y;
    y += g.lane_h;
  }
  g.plot_bottom = g.lanes.empty() ? g.plot_top + 40 : y;
  g.width = kLeft + g.plot_w + kRight;
  g.height = g.plot_bottom + 44;
  return g;
}

// The SVG's opening, its title, the arrowheads, and the summary and note under the title.
void write_header(Buffer& out, const SimulationResult& result, const Selection& sel,
                  const Geometry& g, const std::string& title) {
  fmt::format_to(fmt::appender(out),
                 "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
                 "viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"sans-serif\" font-size=\"11\">\n",
                 g.width, g.height);
  append(out, "<title>");
  append(out, detail::svg_escaped(title));
  append(out, "</title>\n");
  // Arrowheads: markers scale with the line, so the critical path's own is drawn smaller.
  append(out,
         "<defs>\n"
         "<marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"6\" "
         "markerHeight=\"6\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" "
         "fill=\"#555555\"/></marker>\n"
         "<marker id=\"arrow-critical\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
         "markerWidth=\"4\" markerHeight=\"4\" orient=\"auto-start-reverse\"><path "
         "d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#111111\"/></marker>\n"
         "</defs>\n"
         "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
  fmt::format_to(fmt::appender(out),
                 "<text x=\"12\" y=\"24\" font-size=\"16\" font-weight=\"bold\">{}</text>\n",
                 detail::svg_escaped(title));
  const std::size_t critical_steps = result.critical_path.size();
  fmt::format_to(fmt::appender(out),
                 "<text x=\"12\" y=\"44\" fill=\"#444444\">{} step executions, {} messages, "
                 "critical path of {} step executions; times from the call's start, launch "
                 "latency excluded</text>\n",
                 result.steps.size(), result.messages.size(), critical_steps);
  if (!sel.note.empty()) {
    fmt::format_to(fmt::appender(out),
                   "<text class=\"note\" x=\"12\" y=\"62\" fill=\"#b00000\">{}</text>\n",
                   detail::svg_escaped(sel.note));
  }
}

// Legend: the step types, then what an outline and an arrow mean.
void write_legend(Buffer& out, double legend_y) {
  double lx = 12;
  for (std::size_t i = 0; i < kStepTypes.size(); ++i) {
    fmt::format_to(fmt::appender(out),
                   "<rect class=\"legend\" x=\"{:.0f}\" y=\"{:.0f}\" width=\"12\" height=\"12\" "
                   "fill=\"{}\"/><text x=\"{:.0f}\" y=\"{:.0f}\">{}</text>\n",
                   lx, legend_y - 10, kStepColours[i], lx + 16, legend_y,
                   ir::to_string(kStepTypes[i]));
    lx += 24 + 8.0 * static_cast<double>(ir::to_string(kStepTypes[i]).size()) + 10;
  }
  fmt::format_to(fmt::appender(out),
                 "<rect class=\"legend\" x=\"{0:.0f}\" y=\"{1:.0f}\" width=\"12\" height=\"12\" "
                 "fill=\"white\" stroke=\"#111111\" stroke-width=\"2\"/><text x=\"{2:.0f}\" "
                 "y=\"{3:.0f}\">critical path</text>\n"
                 "<line x1=\"{4:.0f}\" y1=\"{5:.0f}\" x2=\"{6:.0f}\" y2=\"{5:.0f}\" "
                 "stroke=\"#555555\" stroke-width=\"0.8\" marker-end=\"url(#arrow)\"/>"
                 "<text x=\"{7:.0f}\" y=\"{3:.0f}\">message (to its arrival)</text>\n",
                 lx, legend_y - 10, lx + 16, legend_y, lx + 110, legend_y - 4, lx + 140, lx + 146);
}

// Rank bands (alternately shaded) and lane labels.
void write_lanes(Buffer& out, const Geometry& g) {
  std::map<int, std::pair<double, double>> bands;  // rank -> (top, bottom)
  for (const auto& [key, lane] : g.lanes) {
    auto [it, added] = bands.try_emplace(lane.rank, lane.y, lane.y + g.lane_h);
    if (!added) it->second.second = lane.y + g.lane_h;
  }
  int band_index = 0;
  for (const auto& [rank, band] : bands) {
    if (band_index++ % 2 == 0) {
      fmt::format_to(fmt::appender(out),
                     "<rect x=\"0\" y=\"{:.2f}\" width=\"{:.0f}\" height=\"{:.2f}\" "
                     "fill=\"#f2f2f2\"/>\n",
                     band.first, g.width, band.second - band.first);
    }
  }
  for (const auto& [key, lane] : g.lanes) {
    fmt::format_to(fmt::appender(out),
                   "<text class=\"lane\" x=\"{:.0f}\" y=\"{:.2f}\" text-anchor=\"end\" "
                   "dominant-baseline=\"middle\">rank {} / tb {} (ch {})</text>\n",
                   kLeft - 8, lane.y + g.lane_h / 2, lane.rank, lane.threadblock, lane.channel);
  }
}

// Time axis with grid lines.
void write_time_axis(Buffer& out, const Geometry& g) {
  const double step_us = tick_step(g.t_max, 8);
  append(out, "<g class=\"axis\" stroke=\"#cccccc\" stroke-width=\"0.5\">\n");
  for (double t = 0; t <= g.t_max * (1 + 1e-9); t += step_us) {
    fmt::format_to(fmt::appender(out),
                   "<line x1=\"{0:.2f}\" y1=\"{1:.2f}\" x2=\"{0:.2f}\" "
                   "y2=\"{2:.2f}\"/>\n",
                   g.x_of(t), g.plot_top, g.plot_bottom + 4);
  }
  append(out, "</g>\n<g class=\"axis-labels\" text-anchor=\"middle\" fill=\"#333333\">\n");
  for (double t = 0; t <= g.t_max * (1 + 1e-9); t += step_us) {
    fmt::format_to(fmt::appender(out), "<text x=\"{:.2f}\" y=\"{:.2f}\">{:g}</text>\n", g.x_of(t),
                   g.plot_bottom + 16, t);
  }
  fmt::format_to(fmt::appender(out),
                 "</g>\n<text x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"middle\">time (µs)</text>\n",
                 kLeft + g.plot_w / 2, g.plot_bottom + 34);
}

// A bar per step execution drawn, in its lane.
void write_steps(Buffer& out, const std::vector<StepRecord>& steps, const Selection& sel,
                 const Geometry& g) {
  const double bar_h = std::max(g.lane_h - 4, 2.0);
  append(out, "<g class=\"steps\">\n");
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (!sel.drawn[i]) continue;
    const StepRecord& s = steps[i];
    const Lane& lane = g.lanes.at({s.rank, s.threadblock});
    const double x0 = g.x_of(s.start_us);
    // Zero-length steps (nops, steps that wait only) stay visible as a sliver.
    const double w = std::max(g.x_of(s.end_us) - x0, 0.75);
    fmt::format_to(fmt::appender(out),
                   "<rect class=\"{}\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" "
                   "height=\"{:.2f}\" fill=\"{}\"{}><title>rank {} / tb {} / step {} ({}) / tile "
                   "{}\n{} bytes\n{:.3f} – {:.3f} µs{}</title></rect>\n",
                   s.critical ? "step critical" : "step", x0, lane.y + 2, w, bar_h,
                   step_colour(s.type), s.critical ? " stroke=\"#111111\" stroke-width=\"2\"" : "",
                   s.rank, s.threadblock, s.step, ir::to_string(s.type), s.tile, s.bytes,
                   s.start_us, s.end_us, s.critical ? "\non the critical path" : "");
  }
  append(out, "</g>\n");
}

// Messages over the bars; the critical path's last, so that they stay on top.
void write_messages(Buffer& out, const SimulationResult& result, const Geometry& g) {
  const std::vector<StepRecord>& steps = result.steps;
  const auto on_critical_path = [&](const MessageRecord& msg) {
    const StepRecord& from = steps[static_cast<std::size_t>(msg.from)];
    const StepRecord& to = steps[static_cast<std::size_t>(msg.to)];
    return from.critical && to.critical && to.cause == msg.from;
  };
  append(out, "<g class=\"messages\">\n");
  for (const bool critical : {false, true}) {
    for (std::size_t m = 0; m < result.messages.size(); ++m) {
      if (!g.message_drawn[m]) continue;
      const MessageRecord& msg = result.messages[m];
      if (on_critical_path(msg) != critical) continue;
      const StepRecord& from = steps[static_cast<std::size_t>(msg.from)];
      const StepRecord& to = steps[static_cast<std::size_t>(msg.to)];
      const Lane& a = g.lanes.at({from.rank, from.threadblock});
      const Lane& b = g.lanes.at({to.rank, to.threadblock});
      fmt::format_to(fmt::appender(out),
                     "<line class=\"{}\" x1=\"{:.2f}\" y1=\"{:.2f}\" x2=\"{:.2f}\" y2=\"{:.2f}\" "
                     "stroke=\"{}\" stroke-width=\"{}\" marker-end=\"url(#{})\"><title>rank {} tb "
                     "{} step {} → rank {} tb {} step {}, tile {}: sent {:.3f} µs, arrived "
                     "{:.3f} µs</title></line>\n",
                     critical ? "message critical" : "message", g.x_of(msg.sent_us),
                     a.y + g.lane_h / 2, g.x_of(msg.arrived_us), b.y + g.lane_h / 2,
                     critical ? "#111111" : "#555555", critical ? "1.8" : "0.8",
                     critical ? "arrow-critical" : "arrow", from.rank, from.threadblock, from.step,
                     to.rank, to.threadblock, to.step, from.tile, msg.sent_us, msg.arrived_us);
    }
  }
  append(out, "</g>\n");
}

}  // namespace

std::string timeline_svg(const SimulationResult& result, const TimelineOptions& options) {
  const Selection sel = select_records(result.steps, options.max_steps);
  const Geometry g = lay_out(result, options, sel);
  const std::string title =
      !options.title.empty()
          ? options.title
          : fmt::format("{}{}{} bytes, predicted {:.3f} µs", options.algorithm,
                        options.algorithm.empty() ? "" : ": ", result.bytes, result.time_us);

  Buffer out;
  write_header(out, result, sel, g, title);
  write_legend(out, g.legend_y);
  if (!result.ok()) {
    fmt::format_to(fmt::appender(out),
                   "<text x=\"{:.0f}\" y=\"{:.0f}\" fill=\"#b00000\">No prediction: {}</text>\n",
                   kLeft, g.plot_top + 20, detail::svg_escaped(result.error));
  } else if (g.lanes.empty()) {
    fmt::format_to(fmt::appender(out),
                   "<text x=\"{:.0f}\" y=\"{:.0f}\">No step records: the simulation ran without "
                   "recording them.</text>\n",
                   kLeft, g.plot_top + 20);
  }
  write_lanes(out, g);
  write_time_axis(out, g);
  write_steps(out, result.steps, sel, g);
  write_messages(out, result, g);
  append(out, "</svg>\n");
  return fmt::to_string(out);
}

}  // namespace weft::predict
