#include "plots.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "fault_kind.h"
#include "html.h"

namespace locklab::reports {

namespace {

// Geometry of one plot, in SVG user units (it scales to its card).
constexpr double kW = 520, kH = 170;
constexpr double kL = 52, kR = 10, kT = 10, kB = 26;
constexpr double kPlotW = kW - kL - kR, kPlotH = kH - kT - kB;
constexpr size_t kMaxFaultBands = 100;

// "12", "1.5", "0.25": a tick value for people.
std::string tick(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", std::abs(v) < 1e-12 ? 0.0 : v);
  return buffer;
}

// A round step that cuts [0, max] into about `n` parts.
double nice_step(double max, int n) {
  if (max <= 0) return 1;
  double raw = max / n, magnitude = std::pow(10, std::floor(std::log10(raw))), r = raw / magnitude;
  return magnitude * (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10);
}

double percentile(std::vector<double>& values, double p) {
  size_t k = std::min(values.size() - 1, size_t(std::ceil(p * double(values.size()))) - 1);
  std::nth_element(values.begin(), values.begin() + std::ptrdiff_t(k), values.end());
  return values[k];
}

// The frame of one plot: grid, axes, tick labels on both, fault bands.
class Frame {
 public:
  Frame(int64_t end_ns, double y_max, std::string y_unit)
      : end_ns_(std::max<int64_t>(end_ns, 1)),
        y_max_(y_max > 0 ? y_max : 1),
        unit_(std::move(y_unit)) {
    y_step_ = nice_step(y_max_, 4);
    y_max_ = std::ceil(y_max_ / y_step_) * y_step_;
  }

  double x(double ns) const { return kL + kPlotW * std::clamp(ns / double(end_ns_), 0.0, 1.0); }
  double y(double v) const { return kT + kPlotH * (1 - std::clamp(v / y_max_, 0.0, 1.0)); }

  std::string open(const std::string& label, const std::vector<Fault>& faults) const {
    std::string out = "<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
                      svg_number(kW) + " " + svg_number(kH) + "\" role=\"img\" aria-label=\"" +
                      escape(label) + "\"><title>" + escape(label) + "</title>";
    for (size_t i = 0; i < std::min(faults.size(), kMaxFaultBands); ++i) {
      const Fault& f = faults[i];
      std::string colour(fault_colour(f.kind));
      std::string tip = f.kind + (f.targets.empty() ? "" : " " + join(f.targets)) + ": " +
                        format_duration(f.start_ns) +
                        (f.instant ? "" : " → " + format_duration(f.end_ns));
      double from = x(double(f.start_ns)), to = std::max(x(double(f.end_ns)), from + 1.5);
      out += "<rect class=\"plot-fault\" x=\"" + svg_number(from) + "\" y=\"" + svg_number(kT) +
             "\" width=\"" + svg_number(to - from) + "\" height=\"" + svg_number(kPlotH) +
             "\" fill=\"" + colour + "\"><title>" + escape(tip) + "</title></rect>";
    }
    for (double v = 0; v <= y_max_ + y_step_ / 2; v += y_step_) {
      out += "<line class=\"grid\" x1=\"" + svg_number(kL) + "\" x2=\"" + svg_number(kL + kPlotW) +
             "\" y1=\"" + svg_number(y(v)) + "\" y2=\"" + svg_number(y(v)) + "\"/>";
      out += "<text x=\"" + svg_number(kL - 4) + "\" y=\"" + svg_number(y(v) + 4) +
             "\" text-anchor=\"end\">" + escape(tick(v)) + "</text>";
    }
    double seconds = double(end_ns_) / 1e9, step = nice_step(seconds, 6);
    for (double s = 0; s <= seconds + step * 1e-6; s += step)
      out += "<text x=\"" + svg_number(x(s * 1e9)) + "\" y=\"" + svg_number(kH - 8) +
             "\" text-anchor=\"middle\">" + escape(tick(s)) + " s</text>";
    out += "<line class=\"axis\" x1=\"" + svg_number(kL) + "\" x2=\"" + svg_number(kL) +
           "\" y1=\"" + svg_number(kT) + "\" y2=\"" + svg_number(kT + kPlotH) +
           "\"/><line class=\"axis\" x1=\"" + svg_number(kL) + "\" x2=\"" +
           svg_number(kL + kPlotW) + "\" y1=\"" + svg_number(kT + kPlotH) + "\" y2=\"" +
           svg_number(kT + kPlotH) + "\"/><text x=\"4\" y=\"" + svg_number(kT + 8) + "\">" +
           escape(unit_) + "</text>";
    return out;
  }

 private:
  static std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : ",") + item;
    return out;
  }

  int64_t end_ns_;
  double y_max_, y_step_ = 1;
  std::string unit_;
};

// A line through the bins that have a value; a bin without one breaks it.
std::string series(const Frame& frame, const RunPlot& plot,
                   const std::vector<std::optional<double>>& values, const char* cls) {
  std::string d;
  bool pen = false;
  for (size_t b = 0; b < values.size(); ++b) {
    if (!values[b]) {
      pen = false;
      continue;
    }
    double x = frame.x((double(b) + 0.5) * double(plot.bin_ns));
    d += std::string(pen ? " L" : " M") + svg_number(x) + " " + svg_number(frame.y(*values[b]));
    pen = true;
  }
  if (d.empty()) return "";
  return "<path class=\"series " + std::string(cls) + "\" d=\"" + d + "\"/>";
}

}  // namespace

RunPlot run_plot(const Timeline& timeline, std::string name, std::string id, int bins) {
  RunPlot plot;
  plot.name = std::move(name);
  plot.id = std::move(id);
  plot.end_ns = std::max<int64_t>(timeline.end_ns, 1);
  bins = std::max(bins, 1);
  plot.bin_ns = std::max<int64_t>(1, (plot.end_ns + bins - 1) / bins);
  std::vector<std::vector<double>> latencies(static_cast<size_t>(bins));
  for (const auto& lane : timeline.lanes)
    for (const auto& wait : lane.acquire_waits) {
      if (!wait.ok) continue;
      size_t b = std::min(size_t(bins - 1), size_t(wait.end_ns / plot.bin_ns));
      latencies[b].push_back(double(wait.end_ns - wait.start_ns) / 1e6);
      ++plot.acquires_ok;
    }
  for (auto& values : latencies) {
    plot.throughput.push_back(double(values.size()) / (double(plot.bin_ns) / 1e9));
    if (values.empty()) {
      plot.p50.emplace_back();
      plot.p90.emplace_back();
      plot.p99.emplace_back();
      continue;
    }
    plot.p50.push_back(percentile(values, 0.5));
    plot.p90.push_back(percentile(values, 0.9));
    plot.p99.push_back(percentile(values, 0.99));
  }
  plot.faults = timeline.faults;
  return plot;
}

std::string run_plots_html(const std::vector<RunPlot>& plots) {
  if (plots.empty()) return "";
  int64_t end_ns = 1;
  double latency_max = 0, throughput_max = 0;
  for (const auto& plot : plots) {
    end_ns = std::max(end_ns, plot.end_ns);
    for (const auto& v : plot.p99)
      if (v) latency_max = std::max(latency_max, *v);
    for (double v : plot.throughput) throughput_max = std::max(throughput_max, v);
  }
  const Frame latency(end_ns, latency_max, "ms"), throughput(end_ns, throughput_max, "/s");
  std::string out =
      "<h2 class=\"plots-title\">Acquire latency and throughput</h2><p class=\"hint\">Per " +
      escape(format_duration(plots.front().bin_ns)) +
      " of the run: how long acquires that succeeded took (p50, p90, p99, from invoke to ok) and "
      "how many succeeded per second; shaded: the faults. Every algorithm is drawn on the same "
      "scales.</p><div class=\"plots\">";
  for (const auto& plot : plots) {
    out += "<div class=\"plot-card\"><h4><a href=\"#" + escape(plot.id) + "\">" +
           escape(plot.name) + "</a> <span class=\"hint\">" + format_count(plot.acquires_ok) +
           " acquires ok</span></h4>";
    out += latency.open(plot.name + ": acquire latency percentiles over time", plot.faults);
    out += series(latency, plot, plot.p50, "p50") + series(latency, plot, plot.p90, "p90") +
           series(latency, plot, plot.p99, "p99") + "</svg>";
    out +=
        "<div class=\"plot-key\"><span class=\"key p50\">p50</span> <span class=\"key "
        "p90\">p90</span> <span class=\"key p99\">p99</span> acquire latency</div>";
    out += throughput.open(plot.name + ": acquires ok per second over time", plot.faults);
    double bar = kPlotW * double(plot.bin_ns) / double(end_ns);
    for (size_t b = 0; b < plot.throughput.size(); ++b) {
      if (plot.throughput[b] <= 0) continue;
      double x = throughput.x(double(b) * double(plot.bin_ns)),
             y = throughput.y(plot.throughput[b]);
      out += "<rect class=\"throughput\" x=\"" + svg_number(x) + "\" y=\"" + svg_number(y) +
             "\" width=\"" + svg_number(std::max(bar - 1, 1.0)) + "\" height=\"" +
             svg_number(kT + kPlotH - y) + "\"><title>" +
             escape(format_duration(int64_t(b) * plot.bin_ns) + ": " +
                    tick(std::round(plot.throughput[b])) + " acquires ok/s") +
             "</title></rect>";
    }
    out +=
        "</svg><div class=\"plot-key\"><span class=\"key throughput\">■</span> acquires ok per "
        "second</div></div>";
  }
  return out + "</div>";
}

std::string sweep_chart_html(const nlohmann::json& sweep, const std::string& link) {
  using json = nlohmann::json;
  if (!sweep.is_object() || !sweep.contains("algorithms") || !sweep["algorithms"].is_array())
    return "";
  auto number = [](const json& v, double fallback) {
    return v.is_number() ? v.get<double>() : fallback;
  };
  const double from = number(sweep.value("from", json()), 0);
  const double to = std::max(number(sweep.value("to", json()), from + 1), from + 1e-9);
  const std::string param = sweep.value("param", std::string("value"));
  const std::string scenario = sweep.value("scenario", std::string());
  const auto& algorithms = sweep["algorithms"];
  const double row = 26, top = 10, left = 150, right = 20, width = 760;
  const double height = top + row * double(algorithms.size()) + 36;
  auto x = [&](double v) {
    return left + (width - left - right) * std::clamp((v - from) / (to - from), 0.0, 1.0);
  };
  std::string svg =
      "<svg class=\"plot sweep\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
      svg_number(width) + " " + svg_number(height) + "\" role=\"img\"><title>" +
      escape("breaking points of " + scenario + " by " + param) + "</title>";
  double step = nice_step(to - from, 6);
  for (double v = std::ceil(from / step) * step; v <= to + step * 1e-6; v += step) {
    svg += "<line class=\"grid\" x1=\"" + svg_number(x(v)) + "\" x2=\"" + svg_number(x(v)) +
           "\" y1=\"" + svg_number(top) + "\" y2=\"" + svg_number(height - 24) + "\"/><text x=\"" +
           svg_number(x(v)) + "\" y=\"" + svg_number(height - 10) + "\" text-anchor=\"middle\">" +
           escape(tick(v)) + "</text>";
  }
  for (size_t i = 0; i < algorithms.size(); ++i) {
    const json& entry = algorithms[i];
    if (!entry.is_object()) continue;
    const std::string name = entry.value("algorithm", std::string("?"));
    const std::string outcome = entry.value("outcome", std::string());
    const double y = top + row * (double(i) + 0.5);
    svg += "<text x=\"" + svg_number(left - 8) + "\" y=\"" + svg_number(y + 4) +
           "\" text-anchor=\"end\">" + escape(name) + "</text>";
    const json breaking = entry.value("breaking_value", json()),
               safe = entry.value("last_safe_value", json());
    if (outcome == search_outcome_name(SearchOutcome::kBreaks) && breaking.is_number()) {
      double at = breaking.get<double>();
      if (safe.is_number())
        svg += "<line class=\"safe-range\" x1=\"" + svg_number(x(from)) + "\" x2=\"" +
               svg_number(x(safe.get<double>())) + "\" y1=\"" + svg_number(y) + "\" y2=\"" +
               svg_number(y) + "\"/>";
      std::string tip = name + " breaks at " + param + " ≥ " + tick(at) +
                        (safe.is_number() ? " (safe at " + tick(safe.get<double>()) + ")" : "");
      svg += "<circle class=\"breaking\" cx=\"" + svg_number(x(at)) + "\" cy=\"" + svg_number(y) +
             "\" r=\"6\"><title>" + escape(tip) + "</title></circle><text x=\"" +
             svg_number(x(at) + 10) + "\" y=\"" + svg_number(y + 4) + "\">" +
             escape("breaks at " + tick(at)) + "</text>";
    } else if (outcome == search_outcome_name(SearchOutcome::kNeverBreaks)) {
      svg += "<line class=\"safe-range\" x1=\"" + svg_number(x(from)) + "\" x2=\"" +
             svg_number(x(to)) + "\" y1=\"" + svg_number(y) + "\" y2=\"" + svg_number(y) +
             "\"/><text x=\"" + svg_number(x(to) - 4) + "\" y=\"" + svg_number(y + 4) +
             "\" text-anchor=\"end\">" + escape("never breaks up to " + tick(to)) + "</text>";
    } else {
      svg += "<text x=\"" + svg_number(left + 4) + "\" y=\"" + svg_number(y + 4) + "\">" +
             escape("search failed: " + entry.value("error", std::string("unknown"))) + "</text>";
    }
  }
  svg += "</svg>";
  return "<div class=\"plot-card sweep-card\"><h4>" + escape(scenario) + ": the smallest " +
         escape(param) + " that breaks each algorithm <a href=\"" + escape(link) +
         "\">sweep.json</a></h4>" + svg + "</div>";
}

namespace {

using json = nlohmann::json;

std::optional<double> number_in(const json& v) {
  if (v.is_number()) return v.get<double>();
  return std::nullopt;
}

// Where an axis of the safety envelope is drawn: the gentle end on the
// left, the harsh end on the right, whichever is larger.
struct EnvelopeScale {
  double gentle = 0, harsh = 1;
  std::string unit;  // after a number: " leases" or "×"
  static constexpr double kRow = 24, kTop = 10, kLeft = 200, kRight = 250, kWidth = 960;

  double x(double v) const {
    return kLeft +
           (kWidth - kLeft - kRight) * std::clamp((v - gentle) / (harsh - gentle), 0.0, 1.0);
  }
};

// Where the store was first harmed, when not where the holds first
// overlapped: a square at the harm bound, and `said` prefixed with it.
std::string envelope_harm(const json& cell, const EnvelopeScale& scale, double y,
                          std::string& said) {
  if (envelope_harm_is_overlap(cell)) return "";
  const json harm = cell["harm"];
  const std::string lock = cell.value("lock", std::string("?"));
  const auto median = number_in(harm.value("median", json()));
  const std::string outcome = harm.value("outcome", std::string());
  // The overlap in a few words (the row has room for about forty characters);
  // harm comes after an overlap, so the overlap is a bound or the baseline.
  const auto overlap_at = number_in(cell.value("median", json()));
  char overlap_text[48];
  std::snprintf(overlap_text, sizeof overlap_text, "overlap at %.2f",
                cell.value("outcome", std::string()) == search_outcome_name(SearchOutcome::kBreaks)
                    ? overlap_at.value_or(0)
                    : 0.0);
  const std::string overlap = overlap_text;
  if (outcome == search_outcome_name(SearchOutcome::kNeverBreaks)) {
    said = "no harm, " + overlap;
    return "";
  }
  if (outcome != search_outcome_name(SearchOutcome::kBreaks) || !median) {
    said = "harm " + outcome + ", " + overlap;
    return "";
  }
  char bound[32];
  std::snprintf(bound, sizeof bound, "%.2f", *median);
  said = std::string("harm at ") + bound + ", " + overlap;
  return "<rect class=\"harmed\" x=\"" + svg_number(scale.x(*median) - 4.5) + "\" y=\"" +
         svg_number(y - 4.5) + "\" width=\"9\" height=\"9\"><title>" +
         escape(lock + " harmed the store from " + tick(*median) + scale.unit) + "</title></rect>";
}

// What one lock's cell measured, drawn at height `y`; sets `said` to it in words.
std::string envelope_measurement(const json& cell, const EnvelopeScale& scale, double y,
                                 std::string& said) {
  const std::string lock = cell.value("lock", std::string("?"));
  const std::string outcome = cell.value("outcome", std::string());
  const auto median = number_in(cell.value("median", json())),
             min = number_in(cell.value("min", json())), max = number_in(cell.value("max", json()));
  auto line = [&](const char* css, double from, double to) {
    return "<line class=\"" + std::string(css) + "\" x1=\"" + svg_number(scale.x(from)) +
           "\" x2=\"" + svg_number(scale.x(to)) + "\" y1=\"" + svg_number(y) + "\" y2=\"" +
           svg_number(y) + "\"/>";
  };
  std::string svg;
  if (outcome == search_outcome_name(SearchOutcome::kBreaks) && median) {
    svg += line("safe-range", scale.gentle, min.value_or(*median));
    if (min && max) svg += line("spread", *min, *max);
    const std::string tip =
        lock + " breaks at " + tick(*median) + scale.unit +
        (min && max ? " (repeats: " + tick(*min) + " to " + tick(*max) + ")" : "");
    svg += "<circle class=\"breaking\" cx=\"" + svg_number(scale.x(*median)) + "\" cy=\"" +
           svg_number(y) + "\" r=\"5\"><title>" + escape(tip) + "</title></circle>";
    char bound[32];
    std::snprintf(bound, sizeof bound, "%.2f", *median);
    said = std::string("breaks at ") + bound;
  } else if (outcome == search_outcome_name(SearchOutcome::kNeverBreaks)) {
    svg += line("safe-range", scale.gentle, scale.harsh);
    said = "never up to " + tick(scale.harsh);
  } else if (outcome == search_outcome_name(SearchOutcome::kBreaksWithoutFault)) {
    svg += "<circle class=\"breaking\" cx=\"" + svg_number(scale.x(scale.gentle)) + "\" cy=\"" +
           svg_number(y) + "\" r=\"5\"><title>" +
           escape(lock + " breaks in this story without the fault") + "</title></circle>";
    said = "breaks without the fault";
  } else {
    // The reason goes in the tooltip: the row has room for the outcome.
    said = outcome.empty() ? "unknown" : outcome;
    if (cell.value("error", json()).is_string())
      svg += "<title>" + escape(said + ": " + cell["error"].get<std::string>()) + "</title>";
    if (cell.value("gap", json()).is_string()) said += ", explained †";
    return svg;
  }
  return svg + envelope_harm(cell, scale, y, said);
}

// One lock's row of an axis's chart at height `y`: its name, what it
// measured, what its algorithm predicted, and whether the two agree.
std::string envelope_row(const json& cell, const EnvelopeScale& scale, double y) {
  const std::string lock = cell.value("lock", std::string("?"));
  const json prediction = cell.value("prediction", json());
  const json agrees = cell.value("agrees", json());
  std::string svg = "<g class=\"envelope-row\" data-lock=\"" + escape(lock) + "\"><text x=\"" +
                    svg_number(EnvelopeScale::kLeft - 8) + "\" y=\"" + svg_number(y + 4) +
                    "\" text-anchor=\"end\">" + escape(lock) + "</text>";
  std::string said;
  svg += envelope_measurement(cell, scale, y, said);
  if (prediction.is_object()) {
    const auto bound = number_in(prediction.value("bound", json()));
    const double px = scale.x(bound.value_or(scale.harsh));
    const std::string tip = "predicted: " + (bound ? tick(*bound) + scale.unit : "never") + ". " +
                            prediction.value("why", std::string());
    svg += "<path class=\"predicted\" d=\"M" + svg_number(px) + " " + svg_number(y - 7) +
           " l6 7 l-6 7 l-6 -7 z\"><title>" + escape(tip) + "</title></path>";
  }
  const bool explained = cell.value("gap", json()).is_string();
  const std::string verdict = agrees == true ? "as predicted"
                              : agrees == false
                                  ? (explained ? "differs, explained †" : "NOT as predicted")
                                  : "";
  svg += "<text class=\"" + std::string(agrees == false ? "disagrees" : "said") + "\" x=\"" +
         svg_number(EnvelopeScale::kWidth - EnvelopeScale::kRight + 10) + "\" y=\"" +
         svg_number(y + 4) + "\">" + escape(said + (verdict.empty() ? "" : ", " + verdict)) +
         "</text></g>";
  return svg;
}

// The chart of one axis: a row per cell of `cells`, over a grid of its scale.
std::string envelope_axis_svg(const std::string& name, const EnvelopeScale& scale,
                              const std::vector<const json*>& cells) {
  const double height = EnvelopeScale::kTop + EnvelopeScale::kRow * double(cells.size()) + 36;
  std::string svg =
      "<svg class=\"plot envelope\" xmlns=\"http://www.w3.org/2000/svg\" "
      "viewBox=\"0 0 " +
      svg_number(EnvelopeScale::kWidth) + " " + svg_number(height) + "\" role=\"img\"><title>" +
      escape("safety envelopes: " + name) + "</title>";
  const double low = std::min(scale.gentle, scale.harsh),
               high = std::max(scale.gentle, scale.harsh);
  const double step = nice_step(high - low, 6);
  for (double v = std::ceil(low / step) * step; v <= high + step * 1e-6; v += step)
    svg += "<line class=\"grid\" x1=\"" + svg_number(scale.x(v)) + "\" x2=\"" +
           svg_number(scale.x(v)) + "\" y1=\"" + svg_number(EnvelopeScale::kTop) + "\" y2=\"" +
           svg_number(height - 24) + "\"/><text x=\"" + svg_number(scale.x(v)) + "\" y=\"" +
           svg_number(height - 10) + "\" text-anchor=\"middle\">" + escape(tick(v)) + "</text>";
  for (size_t i = 0; i < cells.size(); ++i)
    svg += envelope_row(*cells[i], scale,
                        EnvelopeScale::kTop + EnvelopeScale::kRow * (double(i) + 0.5));
  return svg + "</svg>";
}

}  // namespace

std::string envelope_charts_html(const nlohmann::json& envelope, const std::string& link) {
  if (!envelope.is_object() || !envelope.contains("cells") || !envelope["cells"].is_array())
    return "";
  std::string out;
  for (const json& axis : envelope.value("axes", json::array())) {
    if (!axis.is_object()) continue;
    const std::string name = axis.value("axis", std::string());
    const bool lease = axis.value("unit", std::string()) == "lease";
    EnvelopeScale scale;
    scale.gentle = number_in(axis.value("gentle", json())).value_or(0);
    scale.harsh = number_in(axis.value("harsh", json())).value_or(scale.gentle + 1);
    if (scale.harsh == scale.gentle) scale.harsh = scale.gentle + 1;
    scale.unit = lease ? " leases" : "×";
    std::vector<const json*> cells;
    for (const json& cell : envelope["cells"])
      if (cell.is_object() && cell.value("axis", std::string()) == name) cells.push_back(&cell);
    if (cells.empty()) continue;
    out += "<div class=\"plot-card envelope-card\" data-axis=\"" + escape(name) + "\"><h4>" +
           escape(name) + ": " + escape(axis.value("fault", std::string())) + " (" +
           (lease ? "in leases" : "a clock's rate") + ") <a href=\"" + escape(link) +
           "\">envelope.json</a></h4>" + envelope_axis_svg(name, scale, cells) + "</div>";
  }
  return out;
}

}  // namespace locklab::reports
