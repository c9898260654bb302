// The timeline picture of one algorithm's run: an inline SVG with one lane
// per client, faults as shaded bands across the lanes, and every violation
// drawn on top, each shape carrying a tooltip and, for violations, a link to
// its explanation and events further down the page.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "run_results.h"
#include "timeline.h"

namespace locklab::reports {

struct TimelineDrawing {
  std::string svg;                 // one <svg> element
  std::vector<std::string> notes;  // plain text: what was aggregated or left out
};

struct TimelineOptions {
  // Violation n (counting from 1) links to "#PREFIX-violation-n"; the events
  // of the first `detailed` violations link to "#PREFIX-event-INDEX".
  std::string anchor_prefix;
  size_t detailed = 0;
  std::string svg_id;  // unique in the page; the picture's own ids derive from it
  // The time window drawn; to_ns nullopt = the end of the history.
  int64_t from_ns = 0;
  std::optional<int64_t> to_ns;
  // Share (0, 1] of the usual size budget: a page with many pictures gives
  // each a smaller one, so the page stays small.
  double budget = 1;
};

// Draws `timeline` with `violations` on top. A lane with too many shapes in
// the window to draw one by one is drawn as time bins (and said so in the
// notes), so the picture stays small for any history length.
TimelineDrawing draw_timeline(const Timeline& timeline, const std::vector<Violation>& violations,
                              const TimelineOptions& options);

// Time windows around the clusters of violations, in time order, at most
// `max`: where a close-up of a long run tells what the whole picture cannot.
std::vector<std::pair<int64_t, int64_t>> violation_windows(const Timeline& timeline,
                                                           const std::vector<Violation>& violations,
                                                           size_t max);

// The key to the symbols of draw_timeline, as HTML.
std::string timeline_legend();

}  // namespace locklab::reports
