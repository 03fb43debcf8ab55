// Pictures of an algorithm and of its predicted run (docs/architecture.md §7): a timeline as SVG
// and as Chrome trace events (Perfetto, chrome://tracing) from a simulation's records, and the step
// dependency graph of an IR for Graphviz. Pure functions from data to text: callers decide where
// the text goes, so the same pictures serve weftc, tests and notebooks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "weft/ir/ir.h"
#include "weft/predict/simulator.h"

namespace weft::predict {

struct TimelineOptions {
  // The title; empty: "ALGORITHM: BYTES bytes, predicted TIME µs" from `algorithm` and the
  // result's bytes and time.
  std::string title;
  std::string algorithm;
  // More step records than this are not drawn one by one (a browser slows to a crawl on a few
  // hundred thousand elements): only the first tiles are, and the picture says so.
  std::size_t max_steps = 20000;
  int plot_width_px = 1400;  // the time axis; labels and legend add to it
  int lane_height_px = 16;
};

// A self-contained SVG: one lane per (rank, threadblock), grouped by rank; a rectangle per step
// execution coloured by step type, with a tooltip; messages as arrows drawn over the bars; the
// critical path's steps outlined and its messages highlighted. Needs the result's records
// (SimulationOptions::record); without them the picture says there is nothing to draw.
std::string timeline_svg(const SimulationResult& result, const TimelineOptions& options);

struct TraceOptions {
  std::string algorithm;  // recorded in the trace's metadata
};

// Chrome's trace event format (a JSON object with "traceEvents"): one complete event ("X") per
// step execution, a process per rank and a thread per threadblock (ids are rank + 1 and
// threadblock + 1: viewers treat id 0 as the kernel's; names and args give the real numbers), and
// a flow ("s"/"f") per message, which Perfetto and chrome://tracing draw as arrows. Times in µs,
// rounded to the nanosecond.
std::string chrome_trace_json(const SimulationResult& result, const TraceOptions& options);

struct DotOptions {
  std::vector<int> ranks;        // ranks to draw; empty: all of them
  std::size_t max_nodes = 5000;  // Graphviz takes minutes and draws a blur beyond a few thousand
};

// Thrown by step_graph_dot when the options cannot be honoured: a rank that the algorithm does not
// have, or more steps than DotOptions::max_nodes. The message says which and what to do.
class PictureError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The step dependency graph of an IR in Graphviz's DOT language: a cluster per rank, within it a
// cluster per threadblock with its steps in program order; edges for program order, explicit
// dependencies (depid/deps) and messages (the k-th send on a connection to its k-th receive,
// docs/architecture.md §2.4). Peers outside `ranks` appear as one placeholder node each.
std::string step_graph_dot(const ir::Algorithm& algorithm, const DotOptions& options);

}  // namespace weft::predict
