// Plots drawn by the lab as inline SVG, like the timeline: per algorithm of
// a run, acquire latency percentiles and lock throughput over time with the
// fault windows shaded, side by side on shared scales; a sweep's breaking
// points (one mark per algorithm on the swept parameter's axis); and the
// safety envelopes, one chart per fault axis.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "timeline.h"

namespace locklab::reports {

// What the plots of one run show, per time bin of its history.
struct RunPlot {
  std::string name;  // the run, as its section is titled
  std::string id;    // its section's id
  int64_t end_ns = 0;
  int64_t bin_ns = 1;
  // Acquire latency (invoke to ok) of the acquires that completed ok in each
  // bin, in ms; nullopt for a bin without one.
  std::vector<std::optional<double>> p50, p90, p99;
  std::vector<double> throughput;  // acquires ok per second
  int64_t acquires_ok = 0;
  std::vector<Fault> faults;
};

// Bins `timeline` into `bins` equal stretches of its run.
RunPlot run_plot(const Timeline& timeline, std::string name, std::string id, int bins = 48);

// One card per run, each with its latency and throughput plots, all on the
// same time and value scales so they compare at a glance. Escaped HTML.
std::string run_plots_html(const std::vector<RunPlot>& plots);

// The breaking points of a sweep document (sweep.json; harness/suite/sweep.h)
// as a chart: the parameter on the axis, per algorithm a mark where it
// breaks (and the safe range below it), or "never breaks" at the range's
// end. `link` (relative) is where the sweep's file is. Escaped HTML.
std::string sweep_chart_html(const nlohmann::json& sweep, const std::string& link);

// The safety envelopes of an envelope document (envelope.json;
// harness/suite/envelope.h) as one chart per axis, the locks side by side:
// per lock the range measured safe, the bound where it broke (the median of
// the repeats, a whisker from their minimum to their maximum) or "never
// breaks", and the bound its design predicts as a hollow diamond ("predicted
// never" at the harsh end). `link` (relative) is where the file is. Escaped
// HTML; "" for a document without "cells".
std::string envelope_charts_html(const nlohmann::json& envelope, const std::string& link);

}  // namespace locklab::reports
