#include "timeline_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <tuple>

#include "fault_kind.h"
#include "html.h"
#include "joined.h"
#include "violation_kind.h"

namespace locklab::reports {

namespace {

// Geometry, in SVG user units (the picture scales to the page width).
constexpr double kWidth = 1200;
constexpr double kLeft = 76;  // lane names
constexpr double kRight = 18;
constexpr double kPlot = kWidth - kLeft - kRight;
constexpr double kAxis = 26;      // tick labels
constexpr double kLabelRow = 16;  // one row of fault labels
constexpr int kMaxLabelRows = 4;
constexpr double kLane = 42;  // marks above the bar (0-12), bar (12-28), marks below (28-42)

// Past these counts shapes are aggregated or left out, which bounds the
// report's size whatever the history's length (or its number of clients).
constexpr size_t kShapeBudget = 4000;  // shapes drawn one by one, per picture
constexpr size_t kMaxShapesPerLane = 1500;
constexpr int kBinBudget = 1600;  // time bins of aggregated lanes, per picture
constexpr int kMinBins = 8, kMaxBins = 400;
constexpr size_t kMaxFaults = 400;
constexpr size_t kMaxDrawnViolations = 200;

const char* const kLockColours[] = {"#2563eb", "#7c3aed", "#0891b2", "#4f46e5", "#0d9488"};

// One colour per family of faults (the fault vocabulary's), so a reader learns them once.
std::string fault_colour(const std::string& kind) {
  return std::string(locklab::fault_colour(kind));
}

// What a violation is about (an unknown kind from another tool: operations).
ViolationSubject subject(const Violation& v) {
  const auto kind = violation_kind_named(v.kind);
  return kind ? info(*kind).subject : ViolationSubject::Operations;
}

// The vocabulary's colour of a violation's kind (a dark red for unknown kinds).
std::string violation_colour(const Violation& v) {
  const auto kind = violation_kind_named(v.kind);
  return std::string(kind ? info(*kind).colour : "#991b1b");
}

std::string event_ref(int64_t index) {
  return "#" + std::to_string(index);
}

// `<title>` children are the tooltips a browser shows on hover.
std::string title(const std::string& text) {
  return "<title>" + escape(text) + "</title>";
}

const char* mark_name(MarkKind kind) {
  return kMarkKinds.name(kind).data();  // a literal: terminated
}

// How many violations a picture with `budget` draws.
size_t drawn_violations(double budget) {
  return std::max<size_t>(20, size_t(double(kMaxDrawnViolations) * budget));
}

bool is_write(MarkKind kind) {
  return kind == MarkKind::WriteAccepted || kind == MarkKind::WriteRejected;
}

// The symbol of a mark centred at x in a lane whose top is y.
std::string mark_shape(MarkKind kind, double x, double y) {
  switch (kind) {
    case MarkKind::WriteAccepted:
      return "<circle class=\"mark write-ok\" cx=\"" + svg_number(x) + "\" cy=\"" +
             svg_number(y + 6) + "\" r=\"3.5\"/>";
    case MarkKind::WriteRejected:
      return "<path class=\"mark write-rejected\" d=\"M" + svg_number(x - 3.5) + " " +
             svg_number(y + 2.5) + " l7 7 m0 -7 l-7 7\"/>";
    case MarkKind::AcquireFailed:
      return "<path class=\"mark acquire-failed\" d=\"M" + svg_number(x - 3.5) + " " +
             svg_number(y + 31) + " h7 l-3.5 6 z\"/>";
    case MarkKind::Refused:
      return "<path class=\"mark refused\" d=\"M" + svg_number(x - 3.5) + " " + svg_number(y + 31) +
             " h7 l-3.5 6 z\"/>";
    case MarkKind::Unknown:
      return "<path class=\"mark unknown\" d=\"M" + svg_number(x) + " " + svg_number(y + 29.5) +
             " l4 4 l-4 4 l-4 -4 z\"/>";
  }
  return "";
}

class Drawing {
 public:
  Drawing(const Timeline& timeline, const std::vector<Violation>& violations,
          const TimelineOptions& options)
      : t_(timeline), violations_(violations), options_(options) {
    from_ = options.from_ns;
    to_ = std::max(options.to_ns.value_or(timeline.end_ns), from_ + 1);
    span_ = double(to_ - from_);
    for (size_t i = 0; i < t_.lanes.size(); ++i) lane_of_[t_.lanes[i].process] = i;
    for (const auto& lane : t_.lanes)
      for (const auto& hold : lane.holds)
        if (!lock_colour_.count(hold.lock))
          lock_colour_[hold.lock] = kLockColours[lock_colour_.size() % std::size(kLockColours)];
  }

  TimelineDrawing draw() {
    place_fault_labels();
    lanes_top_ = kAxis + label_rows_ * kLabelRow + (label_rows_ ? 6 : 0);
    double height = lane_top(std::max<size_t>(t_.lanes.size(), 1)) + 10;
    // The geometry as data, for the page's script to mark a story step on it.
    std::string lane_names;
    for (const auto& lane : t_.lanes) lane_names += (lane_names.empty() ? "" : " ") + lane.process;
    out_.svg = "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
               svg_number(kWidth) + " " + svg_number(height) + "\" role=\"img\" id=\"" +
               escape(options_.svg_id) + "-timeline\" data-from=\"" + std::to_string(from_) +
               "\" data-to=\"" + std::to_string(to_) + "\" data-x0=\"" + svg_number(kLeft) +
               "\" data-w=\"" + svg_number(kPlot) + "\" data-top=\"" + svg_number(lanes_top_) +
               "\" data-lane-h=\"" + svg_number(kLane) + "\" data-lanes=\"" + escape(lane_names) +
               "\">";
    hatch_patterns();
    lane_backgrounds();
    axis(height);
    faults();
    if (t_.lanes.empty())
      out_.svg += "<text class=\"empty\" x=\"" + svg_number(kLeft + 8) + "\" y=\"" +
                  svg_number(lanes_top_ + 25) + "\">no client events in this history</text>";
    size_t lanes = std::max<size_t>(t_.lanes.size(), 1);
    size_t allowance =
        std::min(kMaxShapesPerLane, size_t(double(kShapeBudget) * options_.budget) / lanes);
    bins_ = std::clamp(int(kBinBudget * options_.budget) / int(lanes), kMinBins, kMaxBins);
    for (size_t i = 0; i < t_.lanes.size(); ++i) {
      const Lane& lane = t_.lanes[i];
      size_t shapes = 0;
      for (const auto& h : lane.holds) shapes += visible(h.start_ns, h.end_ns);
      for (const auto& m : lane.marks) shapes += visible(m.time_ns, m.time_ns);
      for (const auto& w : lane.acquire_waits) shapes += visible(w.start_ns, w.end_ns);
      if (shapes > allowance)
        aggregated_lane(lane, lane_top(i));
      else
        detailed_lane(lane, lane_top(i));
    }
    aggregation_note();
    draw_violations();
    out_.svg += "</svg>";
    return std::move(out_);
  }

 private:
  double x(int64_t ns) const {
    return kLeft + kPlot * std::clamp(double(ns - from_) / span_, 0.0, 1.0);
  }
  bool visible(int64_t from, int64_t to) const { return to >= from_ && from <= to_; }
  double lane_top(size_t i) const { return lanes_top_ + double(i) * kLane; }
  double lanes_bottom() const { return lane_top(std::max<size_t>(t_.lanes.size(), 1)); }
  std::string anchor(const std::string& what, int64_t n) const {
    return options_.anchor_prefix + "-" + what + "-" + std::to_string(n);
  }
  std::string hatch_id(const std::string& colour) const {
    return options_.svg_id + "-hatch-" + colour.substr(1);
  }

  // Fault labels go in rows above the lanes; a label that fits in no row
  // keeps only its tooltip.
  void place_fault_labels() {
    std::vector<double> row_end;
    size_t count = std::min(t_.faults.size(), kMaxFaults);
    label_row_.assign(count, -1);
    for (size_t i = 0; i < count; ++i) {
      const Fault& f = t_.faults[i];
      if (!visible(f.start_ns, f.end_ns)) continue;
      double left = x(f.start_ns);
      double width = 6.6 * double(fault_label(f).size()) + 8;
      for (size_t r = 0; r <= row_end.size() && r < size_t(kMaxLabelRows); ++r) {
        if (r == row_end.size()) row_end.push_back(-1e9);
        if (row_end[r] <= left) {
          row_end[r] = left + width;
          label_row_[i] = int(r);
          break;
        }
      }
    }
    label_rows_ = int(row_end.size());
    if (t_.faults.size() > kMaxFaults)
      out_.notes.push_back("Only the first " + format_count(kMaxFaults) + " of " +
                           format_count(int64_t(t_.faults.size())) + " faults are drawn.");
  }

  static std::string fault_label(const Fault& f) {
    std::string label = f.kind;
    if (!f.targets.empty()) label += " " + joined(f.targets, ",");
    return label;
  }

  void hatch_patterns() {
    std::set<std::string> colours;
    for (size_t i = 0; i < std::min(t_.faults.size(), kMaxFaults); ++i)
      colours.insert(fault_colour(t_.faults[i].kind));
    out_.svg += "<defs>";
    for (const auto& colour : colours)
      out_.svg += "<pattern id=\"" + hatch_id(colour) +
                  "\" width=\"7\" height=\"7\" patternUnits=\"userSpaceOnUse\" "
                  "patternTransform=\"rotate(45)\"><rect width=\"2.5\" height=\"7\" fill=\"" +
                  colour + "\" opacity=\"0.35\"/></pattern>";
    out_.svg += "</defs>";
  }

  void lane_backgrounds() {
    for (size_t i = 0; i < t_.lanes.size(); ++i) {
      const Lane& lane = t_.lanes[i];
      double top = lane_top(i);
      out_.svg += "<rect class=\"lane" + std::string(i % 2 ? " odd" : "") + "\" x=\"" +
                  svg_number(kLeft) + "\" y=\"" + svg_number(top) + "\" width=\"" +
                  svg_number(kPlot) + "\" height=\"" + svg_number(kLane) + "\"/>";
      out_.svg += "<text class=\"lane-name\" x=\"" + svg_number(kLeft - 10) + "\" y=\"" +
                  svg_number(top + 25) + "\">" + escape(lane.process) + "</text>";
      if (lane.crashed_ns && *lane.crashed_ns <= to_) {
        double from = x(*lane.crashed_ns);
        out_.svg += "<rect class=\"crashed\" x=\"" + svg_number(from) + "\" y=\"" +
                    svg_number(top) + "\" width=\"" + svg_number(kLeft + kPlot - from) +
                    "\" height=\"" + svg_number(kLane) + "\">" +
                    title(lane.process + " crashed at " + format_duration(*lane.crashed_ns) +
                          ": it holds nothing and never acts again") +
                    "</rect>";
      }
    }
  }

  void axis(double height) {
    struct Unit {
      double ns;
      const char* name;
    };
    Unit unit = span_ >= 2e9   ? Unit{1e9, "s"}
                : span_ >= 2e6 ? Unit{1e6, "ms"}
                : span_ >= 2e3 ? Unit{1e3, "µs"}
                               : Unit{1, "ns"};
    double raw = span_ / 8;
    double magnitude = std::pow(10, std::floor(std::log10(raw)));
    double r = raw / magnitude;
    double step = std::max(1.0, magnitude * (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10));
    int decimals = std::max(0, -int(std::floor(std::log10(step / unit.ns) + 1e-9)));
    for (double t = std::ceil(double(from_) / step) * step; t <= double(to_) + span_ * 1e-9;
         t += step) {
      double at = x(int64_t(t));
      char label[48];
      std::snprintf(label, sizeof label, "%.*f %s", decimals, t / unit.ns, unit.name);
      if (at + 3.2 * double(std::strlen(label)) > kWidth) break;  // would be cut at the edge
      out_.svg += "<line class=\"grid\" x1=\"" + svg_number(at) + "\" y1=\"" +
                  svg_number(kAxis - 4) + "\" x2=\"" + svg_number(at) + "\" y2=\"" +
                  svg_number(height - 10) + "\"/>";
      out_.svg += "<text class=\"tick\" x=\"" + svg_number(at) + "\" y=\"" + svg_number(kAxis - 9) +
                  "\">" + escape(label) + "</text>";
    }
  }

  void faults() {
    double top = kAxis, bottom = lanes_bottom();
    for (size_t i = 0; i < std::min(t_.faults.size(), kMaxFaults); ++i) {
      const Fault& f = t_.faults[i];
      if (!visible(f.start_ns, f.end_ns)) continue;
      std::string colour = fault_colour(f.kind);
      double from = x(f.start_ns), to = std::max(x(f.end_ns), from + 2);
      std::string tip = fault_label(f) + (f.parameters.empty() ? "" : " (" + f.parameters + ")");
      if (f.instant)
        tip += " at " + format_duration(f.start_ns) + ", event " + event_ref(f.start_index);
      else
        tip += ": " + format_duration(f.start_ns) + " → " + format_duration(f.end_ns) + " (" +
               format_duration(f.end_ns - f.start_ns) + "), events " + event_ref(f.start_index) +
               (f.ended ? " → " + event_ref(f.end_index) : ", no end recorded: drawn to the end");
      out_.svg += "<g class=\"fault\" style=\"color:" + colour + "\">" + title(tip);
      if (f.instant) {
        out_.svg += "<line class=\"fault-instant\" x1=\"" + svg_number(from) + "\" y1=\"" +
                    svg_number(top) + "\" x2=\"" + svg_number(from) + "\" y2=\"" +
                    svg_number(bottom) + "\"/>";
      } else {
        out_.svg += "<rect class=\"fault-band\" x=\"" + svg_number(from) + "\" y=\"" +
                    svg_number(top) + "\" width=\"" + svg_number(to - from) + "\" height=\"" +
                    svg_number(bottom - top) + "\"/>";
        // The lanes of the clients a fault hits directly (a pause, a stop)
        // are hatched as well: that is where the story happens.
        for (const auto& target : f.targets) {
          auto lane = lane_of_.find(target);
          if (lane == lane_of_.end()) continue;
          out_.svg += "<rect x=\"" + svg_number(from) + "\" y=\"" +
                      svg_number(lane_top(lane->second) + 2) + "\" width=\"" +
                      svg_number(to - from) + "\" height=\"" + svg_number(kLane - 4) +
                      "\" fill=\"url(#" + hatch_id(colour) + ")\"/>";
        }
      }
      if (label_row_[i] >= 0)
        out_.svg += "<text class=\"fault-label\" x=\"" + svg_number(from + 3) + "\" y=\"" +
                    svg_number(kAxis + label_row_[i] * kLabelRow + 12) + "\">" +
                    escape(fault_label(f)) + "</text>";
      out_.svg += "</g>";
    }
  }

  std::string hold_tip(const Lane& lane, const Hold& h) const {
    std::string tip = lane.process + " holds";
    if (!h.lock.empty()) tip += " '" + h.lock + "'";
    if (h.token) tip += " with token " + std::to_string(*h.token);
    tip += ": " + format_duration(h.start_ns) + " → " + format_duration(h.end_ns) + " (" +
           format_duration(h.end_ns - h.start_ns) + "); acquired at event " +
           event_ref(h.start_index);
    switch (h.end) {
      case HoldEnd::Release:
        tip += ", released at " + event_ref(h.end_index);
        break;
      case HoldEnd::Lost:
        tip += ", given up as lost at " + event_ref(h.end_index);
        break;
      case HoldEnd::Crash:
        tip += ", ended by a client crash at " + event_ref(h.end_index);
        break;
      case HoldEnd::EndOfHistory:
        tip += ", still held when the history ends";
        break;
    }
    return tip;
  }

  void detailed_lane(const Lane& lane, double top) {
    for (const auto& wait : lane.acquire_waits)
      if (visible(wait.start_ns, wait.end_ns))
        out_.svg += "<line class=\"wait\" x1=\"" + svg_number(x(wait.start_ns)) + "\" y1=\"" +
                    svg_number(top + 20) + "\" x2=\"" + svg_number(x(wait.end_ns)) + "\" y2=\"" +
                    svg_number(top + 20) + "\"/>";
    for (const auto& h : lane.holds) {
      if (!visible(h.start_ns, h.end_ns)) continue;
      double from = x(h.start_ns), width = std::max(x(h.end_ns) - from, 1.5);
      out_.svg += "<rect class=\"hold\" x=\"" + svg_number(from) + "\" y=\"" +
                  svg_number(top + 12) + "\" width=\"" + svg_number(width) +
                  "\" height=\"16\" rx=\"3\" fill=\"" + lock_colour_.at(h.lock) + "\">" +
                  title(hold_tip(lane, h)) + "</rect>";
      std::string token = h.token ? "#" + std::to_string(*h.token) : "";
      if (!token.empty() && width > 6.5 * double(token.size()) + 6)
        out_.svg += "<text class=\"hold-token\" x=\"" + svg_number(from + 4) + "\" y=\"" +
                    svg_number(top + 24) + "\">" + escape(token) + "</text>";
      double end = from + width;
      if (h.end == HoldEnd::Lost)
        out_.svg += "<line class=\"end-lost\" x1=\"" + svg_number(end) + "\" y1=\"" +
                    svg_number(top + 9) + "\" x2=\"" + svg_number(end) + "\" y2=\"" +
                    svg_number(top + 31) + "\"/>";
      if (h.end == HoldEnd::Crash)
        out_.svg += "<path class=\"end-crash\" d=\"M" + svg_number(end - 4) + " " +
                    svg_number(top + 16) + " l8 8 m0 -8 l-8 8\"/>";
      if (h.end == HoldEnd::EndOfHistory)
        out_.svg += "<path class=\"end-open\" d=\"M" + svg_number(end) + " " +
                    svg_number(top + 12) + " l7 8 l-7 8 z\" fill=\"" + lock_colour_.at(h.lock) +
                    "\"/>";
    }
    double label_end = -1e9;
    for (size_t i = 0; i < lane.marks.size(); ++i) {
      const Mark& m = lane.marks[i];
      if (!visible(m.time_ns, m.time_ns)) continue;
      double at = x(m.time_ns);
      std::string tip = std::string(mark_name(m.kind)) + " (" + m.f + ") at " +
                        format_duration(m.time_ns) + ", event " + event_ref(m.index);
      if (m.token) tip += ", token " + std::to_string(*m.token);
      if (!m.detail.empty()) tip += ": " + m.detail;
      out_.svg += "<g>" + title(tip) + mark_shape(m.kind, at, top) + "</g>";
      // Writes carry their token: a rejected #33 after an accepted #34 is
      // the fencing story in two labels.
      bool write = is_write(m.kind);
      std::string label = m.token ? std::to_string(*m.token) : "";
      double next = 1e9;  // the next write: labels share the row above the bar with writes only
      for (size_t j = i + 1; j < lane.marks.size() && next == 1e9; ++j)
        if (is_write(lane.marks[j].kind)) next = x(lane.marks[j].time_ns);
      if (write && m.token && at + 5 > label_end && next > at + 8 + 6 * double(label.size())) {
        out_.svg += "<text class=\"write-token" +
                    std::string(m.kind == MarkKind::WriteRejected ? " rejected" : "") + "\" x=\"" +
                    svg_number(at + 5) + "\" y=\"" + svg_number(top + 10) + "\">" + label +
                    "</text>";
        label_end = at + 5 + 6 * double(label.size()) + 3;
      }
    }
  }

  // Too many shapes for one lane: time bins instead, a bar's darkness
  // telling how much of the bin was held, a mark per kind and bin, and one
  // tooltip per bin with the counts.
  void aggregated_lane(const Lane& lane, double top) {
    double bin_ns = span_ / bins_, bin_width = kPlot / bins_;
    auto bin_of = [&](int64_t ns) {
      return std::clamp(int(double(ns - from_) / bin_ns), 0, bins_ - 1);
    };
    auto bin_start = [&](int b) { return double(from_) + b * bin_ns; };
    std::vector<double> held(bins_, 0);
    std::vector<int> began(bins_, 0);
    size_t holds = 0, marks = 0;
    for (const auto& h : lane.holds) {
      if (!visible(h.start_ns, h.end_ns)) continue;
      ++holds;
      if (h.start_ns >= from_) ++began[bin_of(h.start_ns)];
      for (int b = bin_of(h.start_ns); b <= bin_of(h.end_ns); ++b) {
        double lo = std::max(double(h.start_ns), bin_start(b));
        double hi = std::min(double(h.end_ns), bin_start(b + 1));
        if (hi > lo) held[b] += hi - lo;
      }
    }
    std::map<MarkKind, std::vector<int>> counts;
    for (const auto& m : lane.marks) {
      if (!visible(m.time_ns, m.time_ns)) continue;
      ++marks;
      auto& bins = counts[m.kind];
      if (bins.empty()) bins.assign(bins_, 0);
      ++bins[bin_of(m.time_ns)];
    }
    std::string colour = lane.holds.empty() ? kLockColours[0] : lock_colour_.at(lane.holds[0].lock);
    for (int b = 0; b < bins_; ++b) {
      double share = std::min(1.0, held[b] / bin_ns);
      std::string tip = lane.process + ", " + format_duration(int64_t(bin_start(b))) + " → " +
                        format_duration(int64_t(bin_start(b + 1))) + ": held " +
                        std::to_string(int(std::lround(share * 100))) + "% of the time, " +
                        std::to_string(began[b]) + " holds began";
      std::string shapes;
      if (held[b] > 0 || began[b] > 0)
        shapes += "<rect class=\"hold-bin\" x=\"" + svg_number(kLeft + b * bin_width) + "\" y=\"" +
                  svg_number(top + 12) + "\" width=\"" + svg_number(bin_width + 0.3) +
                  "\" height=\"16\" fill=\"" + colour + "\" fill-opacity=\"" +
                  svg_number(0.2 + 0.8 * share) + "\"/>";
      for (const auto& [kind, bins] : counts) {
        if (bins[b] == 0) continue;
        tip += "; " + std::to_string(bins[b]) + " × " + mark_name(kind);
        shapes += mark_shape(kind, kLeft + (b + 0.5) * bin_width, top);
      }
      if (!shapes.empty()) out_.svg += "<g>" + title(tip) + shapes + "</g>";
    }
    aggregated_.push_back(lane.process);
    aggregated_holds_ += holds;
    aggregated_marks_ += marks;
  }

  void aggregation_note() {
    if (aggregated_.empty()) return;
    std::string lanes;
    for (const auto& name : aggregated_) lanes += (lanes.empty() ? "" : ", ") + name;
    out_.notes.push_back(std::string(aggregated_.size() == 1 ? "Lane " : "Lanes ") + lanes + ": " +
                         format_count(int64_t(aggregated_holds_)) + " holds and " +
                         format_count(int64_t(aggregated_marks_)) +
                         " marked operations are aggregated into " + std::to_string(bins_) +
                         " time bins of " + format_duration(int64_t(span_ / bins_)) +
                         " (bar darkness = share of the bin held; hover for counts).");
  }

  // The interval a violation is about: for mutual exclusion, where the holds
  // of its processes overlap; otherwise from its first event to its last.
  std::pair<int64_t, int64_t> violation_interval(const Violation& v,
                                                 const std::vector<int64_t>& times) const {
    int64_t first = *std::min_element(times.begin(), times.end());
    int64_t last = *std::max_element(times.begin(), times.end());
    if (subject(v) != ViolationSubject::Holds || v.processes.size() < 2) return {first, last};
    int64_t from = INT64_MIN, to = INT64_MAX;
    for (const auto& process : v.processes) {
      auto lane = lane_of_.find(process);
      if (lane == lane_of_.end()) return {first, last};
      const Hold* chosen = nullptr;
      for (const auto& h : t_.lanes[lane->second].holds) {
        if ((!v.lock.empty() && h.lock != v.lock) || h.start_ns > last || h.end_ns < first)
          continue;
        bool has_event = std::any_of(v.events.begin(), v.events.end(), [&](int64_t e) {
          return e == h.start_index || e == h.end_index;
        });
        if (!chosen || has_event) chosen = &h;
        if (has_event) break;
      }
      if (!chosen) return {first, last};
      from = std::max(from, chosen->start_ns);
      to = std::min(to, chosen->end_ns);
    }
    return from < to ? std::make_pair(from, to) : std::make_pair(first, last);
  }

  // Violations are drawn so that many stay legible: the interval each is
  // about is highlighted on its lanes, and highlights that touch merge into
  // one region (one tooltip, one label: "V1 +59"); violations between
  // distinct operations (a lost update, a stale write) are instead a dashed
  // line through their events; each event is circled once.
  void draw_violations() {
    struct Region {
      size_t lane;
      double from, to;  // x
      int64_t from_ns, to_ns;
      std::vector<size_t> violations;  // 0-based
    };
    size_t drawn = std::min(violations_.size(), drawn_violations(options_.budget));
    size_t unplaced = 0;
    std::vector<Region> regions;
    std::string links;
    std::map<int64_t, std::vector<size_t>> ring_owners;  // event -> violations circling it
    for (size_t k = 0; k < drawn; ++k) {
      const Violation& v = violations_[k];
      std::vector<std::pair<int64_t, size_t>> located;  // (time, lane) of its events
      std::vector<int64_t> times;
      std::set<size_t> lanes;
      for (const auto& process : v.processes)
        if (lane_of_.count(process)) lanes.insert(lane_of_.at(process));
      for (int64_t index : v.events) {
        auto place = t_.places.find(index);
        if (place == t_.places.end()) continue;
        times.push_back(place->second.time_ns);
        auto lane = lane_of_.find(place->second.process);
        if (lane == lane_of_.end()) continue;
        located.emplace_back(place->second.time_ns, lane->second);
        if (v.processes.empty()) lanes.insert(lane->second);
        if (k < options_.detailed) ring_owners[index].push_back(k);
      }
      if (times.empty()) {
        ++unplaced;
        continue;
      }
      if (lanes.empty())
        for (size_t i = 0; i < t_.lanes.size(); ++i) lanes.insert(i);
      auto [from_ns, to_ns] = violation_interval(v, times);
      if (!visible(from_ns, to_ns)) continue;
      if (subject(v) != ViolationSubject::Holds && located.size() >= 2) {
        std::sort(located.begin(), located.end());
        std::string points;
        for (const auto& [t, lane] : located)
          points += svg_number(x(t)) + "," + svg_number(lane_top(lane) + 20) + " ";
        links += "<a href=\"#" + anchor("violation", int64_t(k + 1)) +
                 "\"><polyline class=\"violation-link\" style=\"stroke:" + violation_colour(v) +
                 "\" points=\"" + points + "\">" + title(violation_tip(k, from_ns, to_ns)) +
                 "</polyline></a>";
        continue;
      }
      double from = x(from_ns), to = std::max(x(to_ns), from + 4);
      for (size_t lane : lanes) regions.push_back({lane, from, to, from_ns, to_ns, {k}});
    }

    // Merge the highlights that touch, lane by lane.
    std::sort(regions.begin(), regions.end(), [](const Region& a, const Region& b) {
      return std::tie(a.lane, a.from) < std::tie(b.lane, b.from);
    });
    std::vector<Region> merged;
    for (auto& region : regions) {
      if (!merged.empty() && merged.back().lane == region.lane &&
          region.from <= merged.back().to + 2) {
        merged.back().to = std::max(merged.back().to, region.to);
        merged.back().from_ns = std::min(merged.back().from_ns, region.from_ns);
        merged.back().to_ns = std::max(merged.back().to_ns, region.to_ns);
        merged.back().violations.push_back(region.violations.front());
      } else {
        merged.push_back(std::move(region));
      }
    }
    for (const auto& region : merged)
      draw_region(region.lane, region.from, region.to, region.from_ns, region.to_ns,
                  region.violations);
    out_.svg += links;

    // Rings last, so they stay clickable above everything else.
    for (const auto& [index, owners] : ring_owners) {
      const EventPlace& place = t_.places.at(index);
      if (!visible(place.time_ns, place.time_ns)) continue;
      std::string tip = "event " + event_ref(index) + " of " + place.process + " at " +
                        format_duration(place.time_ns) + ", in " + names(owners);
      out_.svg += "<a href=\"#" + anchor("event", index) +
                  "\"><circle class=\"violation-event\" cx=\"" + svg_number(x(place.time_ns)) +
                  "\" cy=\"" + svg_number(lane_top(lane_of_.at(place.process)) + 20) +
                  "\" r=\"6\">" + title(tip) + "</circle></a>";
    }
    if (violations_.size() > drawn)
      out_.notes.push_back("Only the first " + format_count(int64_t(drawn)) + " of " +
                           format_count(int64_t(violations_.size())) +
                           " violations are drawn on the timeline.");
    if (unplaced > 0)
      out_.notes.push_back(format_count(int64_t(unplaced)) +
                           " violation(s) name no event found in the history and are not drawn.");
  }

  std::string violation_tip(size_t k, int64_t from_ns, int64_t to_ns) const {
    const Violation& v = violations_[k];
    return "V" + std::to_string(k + 1) + " " + v.kind + ": " + v.explanation + " (" +
           format_duration(from_ns) + " → " + format_duration(to_ns) + ")";
  }

  // "V1, V2, V7" (at most a dozen, then how many more).
  static std::string names(const std::vector<size_t>& violations) {
    std::string out;
    for (size_t i = 0; i < std::min<size_t>(violations.size(), 12); ++i)
      out += (i ? ", V" : "V") + std::to_string(violations[i] + 1);
    if (violations.size() > 12) out += " and " + std::to_string(violations.size() - 12) + " more";
    return out;
  }

  // One highlighted stretch of one lane, linking to the first violation in it.
  void draw_region(size_t lane, double from, double to, int64_t from_ns, int64_t to_ns,
                   const std::vector<size_t>& violations) {
    size_t first = violations.front();
    std::string tip = violations.size() == 1
                          ? violation_tip(first, from_ns, to_ns)
                          : std::to_string(violations.size()) + " violations overlap here (" +
                                format_duration(from_ns) + " → " + format_duration(to_ns) +
                                "): " + names(violations);
    out_.svg += "<a href=\"#" + anchor("violation", int64_t(first + 1)) +
                "\"><g class=\"violation\">" + title(tip) + "<rect x=\"" + svg_number(from) +
                "\" y=\"" + svg_number(lane_top(lane) + 7) + "\" width=\"" + svg_number(to - from) +
                "\" height=\"" + svg_number(kLane - 12) + "\" rx=\"2\"/>";
    // Labels never overlap: the longest that fits, else only the tooltip.
    std::string name = "V" + std::to_string(first + 1);
    std::vector<std::string> labels =
        violations.size() == 1
            ? std::vector<std::string>{name + " " + violations_[first].kind, name}
            : std::vector<std::string>{name + " +" + std::to_string(violations.size() - 1) + " " +
                                           violations_[first].kind,
                                       name + " +" + std::to_string(violations.size() - 1), name};
    double& label_end = violation_label_end_[lane];
    double label_x = std::min(from + 3, kWidth - kRight - 30);
    for (const auto& label : labels) {
      double width = 6.4 * double(label.size());
      if (label_x < label_end || label_x + width > kWidth) continue;
      out_.svg += "<text x=\"" + svg_number(label_x) + "\" y=\"" + svg_number(lane_top(lane) + 5) +
                  "\">" + escape(label) + "</text>";
      label_end = label_x + width + 4;
      break;
    }
    out_.svg += "</g></a>";
  }

  const Timeline& t_;
  const std::vector<Violation>& violations_;
  TimelineOptions options_;
  int64_t from_ = 0, to_ = 1;
  double span_ = 1;
  double lanes_top_ = 0;
  int label_rows_ = 0;
  std::vector<int> label_row_;
  std::map<std::string, size_t> lane_of_;
  std::map<std::string, std::string> lock_colour_;
  std::map<size_t, double> violation_label_end_;  // per lane
  int bins_ = kMaxBins;                           // per aggregated lane
  std::vector<std::string> aggregated_;           // lanes drawn as time bins
  size_t aggregated_holds_ = 0, aggregated_marks_ = 0;
  TimelineDrawing out_;
};

// `view` is the part of the lane geometry (x y width height) the symbol sits in.
std::string legend_item(const std::string& view, const std::string& shape,
                        const std::string& text) {
  return "<span class=\"legend-item\"><svg viewBox=\"" + view + "\" width=\"18\" height=\"18\">" +
         shape + "</svg>" + escape(text) + "</span>";
}

}  // namespace

TimelineDrawing draw_timeline(const Timeline& timeline, const std::vector<Violation>& violations,
                              const TimelineOptions& options) {
  return Drawing(timeline, violations, options).draw();
}

std::vector<std::pair<int64_t, int64_t>> violation_windows(const Timeline& timeline,
                                                           const std::vector<Violation>& violations,
                                                           size_t max) {
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (size_t k = 0; k < std::min(violations.size(), drawn_violations(1)); ++k) {
    std::optional<std::pair<int64_t, int64_t>> span;
    for (int64_t index : violations[k].events) {
      auto place = timeline.places.find(index);
      if (place == timeline.places.end()) continue;
      int64_t t = place->second.time_ns;
      span = span ? std::make_pair(std::min(span->first, t), std::max(span->second, t))
                  : std::make_pair(t, t);
    }
    if (span) spans.push_back(*span);
  }
  std::sort(spans.begin(), spans.end());
  // Violations closer than 2% of the run belong to one close-up; each
  // close-up gets a margin so the lead-up and the aftermath show too.
  int64_t total = std::max<int64_t>(timeline.end_ns, 1), gap = total / 50;
  std::vector<std::pair<int64_t, int64_t>> windows;
  for (const auto& span : spans) {
    if (!windows.empty() && span.first <= windows.back().second + gap)
      windows.back().second = std::max(windows.back().second, span.second);
    else
      windows.push_back(span);
  }
  for (auto& [from, to] : windows) {
    int64_t margin = std::max({(to - from) / 4, total / 200, int64_t(1'000'000)});
    from = std::max<int64_t>(0, from - margin);
    to = std::min(total, to + margin);
  }
  if (windows.size() > max) windows.resize(max);
  return windows;
}

std::string timeline_legend() {
  const std::string blue = kLockColours[0];
  std::string out = "<div class=\"legend\">";
  out += legend_item(
      "0 8 24 24",
      "<rect x=\"0\" y=\"12\" width=\"24\" height=\"16\" rx=\"3\" fill=\"" + blue + "\"/>",
      "hold (acquire ok → release)");
  out += legend_item("0 8 24 24", "<line class=\"wait\" x1=\"0\" y1=\"20\" x2=\"24\" y2=\"20\"/>",
                     "waiting for acquire");
  out += legend_item("6 0 12 12", mark_shape(MarkKind::WriteAccepted, 12, 0),
                     "write accepted (token)");
  out += legend_item("6 0 12 12", mark_shape(MarkKind::WriteRejected, 12, 0),
                     "write rejected by fencing");
  out += legend_item("6 28 12 12", mark_shape(MarkKind::AcquireFailed, 12, 0), "acquire failed");
  out += legend_item("6 28 12 12", mark_shape(MarkKind::Refused, 12, 0), "release/extend refused");
  out += legend_item("6 28 12 12", mark_shape(MarkKind::Unknown, 12, 0), "outcome unknown");
  out += legend_item("0 8 24 24",
                     "<rect x=\"0\" y=\"12\" width=\"12\" height=\"16\" fill=\"" + blue +
                         "\"/><line class=\"end-lost\" x1=\"12\" y1=\"9\" x2=\"12\" y2=\"31\"/>",
                     "hold given up (lost)");
  out += legend_item("0 8 24 24",
                     "<rect x=\"0\" y=\"12\" width=\"12\" height=\"16\" fill=\"" + blue +
                         "\"/><path class=\"end-crash\" d=\"M8 16 l8 8 m0 -8 l-8 8\"/>",
                     "client crash");
  out += legend_item("0 8 24 24",
                     "<rect x=\"0\" y=\"12\" width=\"12\" height=\"16\" fill=\"" + blue +
                         "\"/><path class=\"end-open\" d=\"M12 12 l7 8 l-7 8 z\" fill=\"" + blue +
                         "\"/>",
                     "held when the history ends");
  out += legend_item(
      "0 0 24 24",
      "<rect x=\"1\" y=\"1\" width=\"22\" height=\"22\" fill=\"#475569\" fill-opacity=\"0.15\" "
      "stroke=\"#475569\" stroke-dasharray=\"4 3\"/>",
      "fault (its target lane hatched)");
  out += legend_item(
      "0 6 24 28",
      "<rect class=\"legend-violation\" x=\"1\" y=\"8\" width=\"22\" height=\"24\" rx=\"2\"/>"
      "<circle class=\"violation-event\" cx=\"12\" cy=\"20\" r=\"6\"/>",
      "violation and its events (click)");
  out += "</div>";
  return out;
}

}  // namespace locklab::reports
