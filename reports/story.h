// Violations grouped by cause, and the story of each cause in numbered
// plain-language steps. One stalled holder overtaken by every other client
// shows as dozens of violations; a person needs one entry that says what
// happened, in order, and the pairs folded under it.
//
// Stories are built only from the history (the timeline's holds and faults,
// the events kept whole): a step states what an event recorded, never a
// guessed cause. A fault is named only when its window overlaps the story.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "run_results.h"
#include "timeline.h"

namespace locklab::reports {

// Where a hold is in a Timeline: lanes[lane].holds[hold].
struct HoldRef {
  size_t lane = 0, hold = 0;
  auto operator<=>(const HoldRef&) const = default;
};

// Violations that share their earliest hold (the hold of one of their
// processes, on their lock, that contains one of their events and started
// first), or, without such a hold, the same fault window and first process.
// Liveness and reentrancy violations are not about a hold: they group by
// fault window only. A lost update follows from the overlap that put the
// counter back: it joins the cause of a hold one of its writes was made
// under, else the latest cause of a hold (on its lock) that began before its
// first write, else it groups by its own earlier hold.
struct Cause {
  std::vector<size_t> violations;       // 0-based indices into the violations, ascending
  std::optional<HoldRef> hold;          // the shared earlier hold
  std::optional<size_t> fault;          // the shared fault window (index into Timeline::faults)
  std::map<std::string, size_t> kinds;  // violation kind -> how many of them
};

// Groups `violations` by cause, in the order of each cause's first violation.
std::vector<Cause> group_by_cause(const Timeline& timeline,
                                  const std::vector<Violation>& violations);

// The violations whose events a story quotes: the first few of the cause,
// one per kind first.
std::vector<size_t> story_violations(const Cause& cause, const std::vector<Violation>& violations);

// The events a reader should keep whole (Timeline::kept_events) so that the
// stories of the first causes can quote them, before the causes are known:
// the events of the first violations sharing each earliest event (capped).
std::set<int64_t> story_candidate_events(const std::vector<Violation>& violations);

struct StoryStep {
  int64_t time_ns = 0;
  std::string process;           // the lane it happens on; "" for the whole run (a server fault)
  std::optional<int64_t> event;  // the history event it rests on
  std::string html;              // the sentence, escaped
};

// The numbered steps of `cause`, in time order.
std::vector<StoryStep> tell_story(const Cause& cause, const Timeline& timeline,
                                  const std::vector<Violation>& violations);

// "c3's hold of L from 0.412 s to 1.914 s, during pause c3": what the cause is, escaped.
std::string cause_headline(const Cause& cause, const Timeline& timeline,
                           const std::vector<Violation>& violations);

// "44 overlapping acquisitions, 1 lost update" for a count per kind (plain text).
std::string kinds_text(const std::map<std::string, size_t>& kinds);

// A time since the run started, for stories: "0.412 s", "12.5 ms".
std::string at_time(int64_t ns);

}  // namespace locklab::reports
