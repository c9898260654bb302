#include "story.h"

#include <algorithm>
#include <cstdio>

#include "fault_kind.h"
#include "html.h"
#include "violation_kind.h"

namespace locklab::reports {

namespace {

using json = nlohmann::ordered_json;

// Violations whose events a story quotes, and faults it names.
constexpr size_t kStoryViolations = 3;
constexpr size_t kStoryFaults = 6;
constexpr size_t kCandidateViolations = 200;

std::string b(const std::string& text) {
  return "<b>" + escape(text) + "</b>";
}

// The hold of `lane` on `lock` (any lock when empty) that contains time `t`.
std::optional<size_t> hold_at(const Lane& lane, const std::string& lock, int64_t t) {
  // Holds are in start order; the one containing t started at or before it.
  auto after = std::upper_bound(lane.holds.begin(), lane.holds.end(), t,
                                [](int64_t time, const Hold& h) { return time < h.start_ns; });
  for (auto it = after; it != lane.holds.begin();) {
    --it;
    if (it->end_ns < t) {
      // Holds of one lane rarely overlap (only on different locks): look a few back.
      if (after - it > 8) break;
      continue;
    }
    if (lock.empty() || it->lock == lock) return size_t(it - lane.holds.begin());
  }
  return std::nullopt;
}

std::map<std::string, size_t> lane_index(const Timeline& timeline) {
  std::map<std::string, size_t> out;
  for (size_t i = 0; i < timeline.lanes.size(); ++i) out[timeline.lanes[i].process] = i;
  return out;
}

// The earliest-starting hold, of one of the violation's processes on its
// lock, that contains one of its events (of that same process).
std::optional<HoldRef> earlier_hold(const Violation& v, const Timeline& timeline,
                                    const std::map<std::string, size_t>& lanes) {
  std::optional<HoldRef> best;
  for (int64_t index : v.events) {
    auto place = timeline.places.find(index);
    if (place == timeline.places.end()) continue;
    const std::string& process = place->second.process;
    if (!v.processes.empty() &&
        std::find(v.processes.begin(), v.processes.end(), process) == v.processes.end())
      continue;
    auto lane = lanes.find(process);
    if (lane == lanes.end()) continue;
    auto hold = hold_at(timeline.lanes[lane->second], v.lock, place->second.time_ns);
    if (!hold) continue;
    HoldRef ref{lane->second, *hold};
    const Hold& h = timeline.lanes[ref.lane].holds[ref.hold];
    if (!best || h.start_ns < timeline.lanes[best->lane].holds[best->hold].start_ns) best = ref;
  }
  return best;
}

// The first fault window (not a moment) that overlaps [from, to].
std::optional<size_t> fault_window(const Timeline& timeline, int64_t from, int64_t to) {
  for (size_t i = 0; i < timeline.faults.size(); ++i) {
    const Fault& f = timeline.faults[i];
    if (!f.instant && f.start_ns <= to && f.end_ns >= from) return i;
  }
  return std::nullopt;
}

std::pair<int64_t, int64_t> event_span(const Violation& v, const Timeline& timeline) {
  std::optional<std::pair<int64_t, int64_t>> span;
  for (int64_t index : v.events) {
    auto place = timeline.places.find(index);
    if (place == timeline.places.end()) continue;
    int64_t t = place->second.time_ns;
    span = span ? std::make_pair(std::min(span->first, t), std::max(span->second, t))
                : std::make_pair(t, t);
  }
  return span.value_or(std::make_pair(int64_t(0), int64_t(0)));
}

std::string kind_count(const std::string& kind, size_t n) {
  if (auto known = violation_kind_named(kind)) {
    const ViolationKindInfo& words = info(*known);
    return format_count(int64_t(n)) + " " + std::string(n == 1 ? words.one : words.many);
  }
  return format_count(int64_t(n)) + " " + kind + (n == 1 ? " violation" : " violations");
}

bool is(const Violation& v, ViolationKind kind) {
  return violation_kind_named(v.kind) == kind;
}

std::string text_of(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

// A field of a kept event's value, as text; "" when absent.
std::string value_field(const json& event, const char* key) {
  auto value = event.find("value");
  if (value == event.end() || !value->is_object()) return "";
  auto field = value->find(key);
  return field == value->end() || field->is_null() ? "" : text_of(*field);
}

std::string field(const json& event, const char* key) {
  auto it = event.find(key);
  return it == event.end() || it->is_null() ? "" : text_of(*it);
}

// The owner, shortened the way people quote it.
std::string short_owner(const std::string& owner) {
  return owner.size() > 12 ? owner.substr(0, 8) + "…" : owner;
}

// "(owner 9f2c, token 33)" for an acquire; "" when it recorded neither.
std::string lease_details(const std::string& owner, const std::string& token) {
  std::vector<std::string> parts;
  if (!owner.empty()) parts.push_back("owner " + escape(short_owner(owner)));
  if (!token.empty()) parts.push_back("token " + escape(token));
  if (parts.empty()) return "";
  std::string out = " (" + parts[0];
  for (size_t i = 1; i < parts.size(); ++i) out += ", " + parts[i];
  return out + ")";
}

std::string fault_targets(const Fault& f) {
  std::string out;
  for (const auto& target : f.targets) out += (out.empty() ? "" : ", ") + target;
  return out;
}

class Storyteller {
 public:
  Storyteller(const Cause& cause, const Timeline& timeline,
              const std::vector<Violation>& violations)
      : cause_(cause), t_(timeline), violations_(violations) {
    if (cause.hold) {
      lane_ = &t_.lanes[cause.hold->lane];
      hold_ = &lane_->holds[cause.hold->hold];
    }
  }

  std::vector<StoryStep> tell() {
    std::vector<size_t> quoted = story_violations(cause_, violations_);
    std::set<int64_t> events;
    for (size_t k : quoted)
      events.insert(violations_[k].events.begin(), violations_[k].events.end());
    for (size_t k : quoted)
      if (is(violations_[k], ViolationKind::LostUpdate) && violations_[k].events.size() == 2)
        lost_by_[violations_[k].events[1]] = violations_[k].events[0];

    int64_t from = INT64_MAX, to = INT64_MIN;
    for (int64_t e : events)
      if (auto place = t_.places.find(e); place != t_.places.end()) {
        from = std::min(from, place->second.time_ns);
        to = std::max(to, place->second.time_ns);
      }
    if (hold_) {
      from = std::min(from, hold_->start_ns);
      step(hold_->start_ns, lane_->process, hold_->start_index,
           b(lane_->process) + " acquires " + lock_name(hold_->lock) +
               lease_details(hold_->owner, hold_->token ? std::to_string(*hold_->token) : "") +
               " at " + at_time(hold_->start_ns) + ".");
      events.erase(hold_->start_index);
    }
    if (from > to) return steps();

    faults(from, to);
    lease(to);
    told_ = events;
    for (int64_t e : events) event_step(e);
    folded();
    if (hold_) late_writes();
    if (hold_) hold_end(to);
    return steps();
  }

 private:
  std::string lock_name(const std::string& lock) const {
    return lock.empty() ? "the lock" : b(lock);
  }

  void step(int64_t time_ns, std::string process, std::optional<int64_t> event, std::string html) {
    steps_.push_back({time_ns, std::move(process), event, std::move(html)});
  }

  std::vector<StoryStep> steps() {
    // Same time: the order the history recorded them in.
    std::stable_sort(steps_.begin(), steps_.end(), [](const StoryStep& a, const StoryStep& b) {
      if (a.time_ns != b.time_ns) return a.time_ns < b.time_ns;
      return a.event.value_or(INT64_MAX) < b.event.value_or(INT64_MAX);
    });
    return std::move(steps_);
  }

  // The faults whose window overlaps the story, each with its start and end.
  void faults(int64_t from, int64_t to) {
    size_t named = 0;
    for (const Fault& f : t_.faults) {
      if (named == kStoryFaults) break;
      if (f.start_ns > to || f.end_ns < from) continue;
      ++named;
      const std::string targets = fault_targets(f);
      const std::string process = f.targets.size() == 1 ? f.targets[0] : "";
      const FaultKindInfo* info = fault_kind_info(f.kind);
      if (f.kind == locklab::name(FaultKind::Pause) && !targets.empty()) {
        std::string text = "The nemesis pauses " + b(targets);
        if (f.ended) text += " for " + escape(format_duration(f.end_ns - f.start_ns));
        text += " at " + at_time(f.start_ns) + (f.ended ? "." : "; no end is recorded.");
        step(f.start_ns, process, f.start_index, text);
        if (f.ended)
          step(f.end_ns, process, f.end_index,
               b(targets) + (f.targets.size() > 1 ? " resume at " : " resumes at ") +
                   at_time(f.end_ns) + ".");
        continue;
      }
      std::string what = b(f.kind);
      if (!targets.empty()) what += " on " + b(targets);
      if (!f.parameters.empty()) what += " (" + escape(f.parameters) + ")";
      std::string meaning = info ? ": " + escape(std::string(info->meaning)) : "";
      if (f.instant) {
        step(f.start_ns, process, f.start_index,
             "The nemesis injects " + what + " at " + at_time(f.start_ns) + meaning + ".");
        continue;
      }
      step(f.start_ns, process, f.start_index,
           "The nemesis starts " + what + " at " + at_time(f.start_ns) + meaning + ".");
      if (f.ended)
        step(f.end_ns, process, f.end_index,
             "The " + escape(f.kind) + " ends at " + at_time(f.end_ns) + ".");
    }
  }

  // The lease the earlier holder asked for runs out while the history still
  // shows it holding the lock: said only when the history recorded its ttl_ms.
  void lease(int64_t to) {
    if (!hold_ || !hold_->ttl_ms) return;
    int64_t end = hold_->lease_from_ns + *hold_->ttl_ms * 1'000'000;
    if (end <= hold_->start_ns || end >= hold_->end_ns || end > to) return;
    step(end, lane_->process, std::nullopt,
         b(lane_->process) + "'s lease on " + lock_name(hold_->lock) + " (" +
             escape(std::to_string(*hold_->ttl_ms)) + " ms, asked for at " +
             at_time(hold_->lease_from_ns) + ") runs out at " + at_time(end) +
             " by the run's clock; " + b(lane_->process) + " has not released it.");
  }

  bool in_hold(const std::string& process, int64_t t) const {
    return hold_ && process != lane_->process && t >= hold_->start_ns && t <= hold_->end_ns;
  }

  void event_step(int64_t index) {
    auto place = t_.places.find(index);
    if (place == t_.places.end()) return;
    const int64_t t = place->second.time_ns;
    const std::string& process = place->second.process;
    auto kept = t_.kept_events.find(index);
    if (kept == t_.kept_events.end()) {
      step(t, process, index,
           b(process) + " records event #" + std::to_string(index) + " at " + at_time(t) + ".");
      return;
    }
    const json& e = kept->second;
    const std::string type = field(e, "type"), f = field(e, "f"), lock = field(e, "lock");
    const std::string who = b(process);
    if (hold_ && index == hold_->end_index) return;  // told by hold_end()
    if (process == "nemesis") {
      step(t, "", index, "The nemesis records " + b(f) + " at " + at_time(t) + ".");
      return;
    }
    if (f == "acquire" && type == "ok") {
      std::string text = who + " acquires " + lock_name(lock) +
                         lease_details(field(e, "owner"), field(e, "token")) + " at " + at_time(t);
      if (in_hold(process, t)) text += ", while " + b(lane_->process) + " still holds it";
      step(t, process, index, text + ".");
    } else if (f == "acquire" && type == "invoke") {
      step(t, process, index, who + " asks for " + lock_name(lock) + " at " + at_time(t) + ".");
    } else if (f == "write") {
      if (type == "invoke") return;  // its completion tells what became of it
      std::string wrote = value_field(e, "write"), read = value_field(e, "read");
      std::string text = who + " writes " + (wrote.empty() ? "" : b(wrote) + " ") +
                         (read.empty() ? "" : "(it read " + escape(read) + ") ") + "at " +
                         at_time(t) + ": ";
      if (type == "ok") {
        text += "accepted";
        if (auto lost = lost_by_.find(index); lost != lost_by_.end()) {
          auto other = t_.places.find(lost->second);
          auto other_event = t_.kept_events.find(lost->second);
          if (other != t_.places.end()) {
            std::string other_wrote = other_event == t_.kept_events.end()
                                          ? ""
                                          : value_field(other_event->second, "write");
            text += ", so " + b(other->second.process) + "'s write" +
                    (other_wrote.empty() ? "" : " of " + escape(other_wrote)) + " is lost";
          }
        }
      } else if (type == "fail") {
        text += "rejected";
        if (!field(e, "error").empty()) text += " (" + escape(field(e, "error")) + ")";
      } else {
        text += "outcome unknown";
      }
      step(t, process, index, text + ".");
    } else if (f == "release") {
      std::string result = value_field(e, "result");
      std::string text = type == "invoke" ? who + " releases " + lock_name(lock)
                         : type == "ok"   ? who + "'s release of " + lock_name(lock) + " succeeds"
                         : type == "fail"
                             ? who + "'s release of " + lock_name(lock) + " is refused"
                             : who + "'s release of " + lock_name(lock) + "has an unknown outcome";
      if (!value_field(e, "deleted").empty())
        text += " (DEL removed " + escape(value_field(e, "deleted")) + " key)";
      if (!result.empty() && type != "invoke") text += " (" + escape(result) + ")";
      step(t, process, index, text + " at " + at_time(t) + ".");
    } else if (f == "lost") {
      step(t, process, index,
           who + " concludes it no longer holds " + lock_name(lock) + " at " + at_time(t) + ".");
    } else {
      std::string text = who + ": " + escape(f) + " " + escape(type);
      if (!field(e, "error").empty()) text += " (" + escape(field(e, "error")) + ")";
      step(t, process, index, text + " at " + at_time(t) + ".");
    }
  }

  // The overlapping acquisitions the story does not tell one by one.
  void folded() {
    if (!hold_) return;
    std::map<std::string, size_t> others;
    size_t more = 0;
    int64_t last = 0;
    for (size_t k : cause_.violations) {
      const Violation& v = violations_[k];
      if (!is(v, ViolationKind::MutualExclusion)) continue;
      // An acquisition the story already told (it is another kind's event too) is not "more".
      bool told = std::any_of(v.events.begin(), v.events.end(), [&](int64_t e) {
        return told_.count(e) && (!hold_ || (e != hold_->start_index && e != hold_->end_index));
      });
      if (told) continue;
      ++more;
      for (const auto& p : v.processes)
        if (p != lane_->process) ++others[p];
      for (int64_t e : v.events)
        if (auto place = t_.places.find(e); place != t_.places.end())
          if (place->second.process != lane_->process) last = std::max(last, place->second.time_ns);
    }
    if (more == 0) return;
    std::string who;
    for (const auto& [p, n] : others)
      who += (who.empty() ? "" : ", ") + b(p) + (n > 1 ? " ×" + std::to_string(n) : "");
    step(last, "", std::nullopt,
         format_count(int64_t(more)) + " more " + (more == 1 ? "acquisition" : "acquisitions") +
             " of " + lock_name(hold_->lock) + " overlap " + b(lane_->process) +
             "'s hold, the last at " + at_time(last) + (who.empty() ? "" : ", by " + who) +
             " (listed below).");
  }

  // What became of the earlier holder's writes once another process had
  // acquired the lock: accepted or rejected, as its lane recorded them.
  void late_writes() {
    constexpr size_t kMaxWrites = 3;
    int64_t overtaken = INT64_MAX;
    for (size_t k : cause_.violations)
      if (is(violations_[k], ViolationKind::MutualExclusion))
        for (int64_t e : violations_[k].events)
          if (auto place = t_.places.find(e);
              place != t_.places.end() && place->second.process != lane_->process)
            overtaken = std::min(overtaken, place->second.time_ns);
    size_t told = 0;
    for (const Mark& m : lane_->marks) {
      if (told == kMaxWrites) break;
      if (m.time_ns < std::max(overtaken, hold_->start_ns) || m.time_ns > hold_->end_ns) continue;
      if ((m.kind != MarkKind::WriteAccepted && m.kind != MarkKind::WriteRejected) ||
          told_.count(m.index))
        continue;
      ++told;
      step(m.time_ns, lane_->process, m.index,
           b(lane_->process) + "'s write at " + at_time(m.time_ns) + " (" + escape(m.detail) +
               ") is " +
               (m.kind == MarkKind::WriteAccepted ? "accepted." : "rejected by fencing."));
    }
  }

  void hold_end(int64_t to) {
    const std::string who = b(lane_->process), lock = lock_name(hold_->lock);
    switch (hold_->end) {
      case HoldEnd::Release:
        step(hold_->end_ns, lane_->process, hold_->end_index,
             who + " releases " + lock + " at " + at_time(hold_->end_ns) + ".");
        break;
      case HoldEnd::Lost:
        step(hold_->end_ns, lane_->process, hold_->end_index,
             who + " concludes it no longer holds " + lock + " at " + at_time(hold_->end_ns) + ".");
        break;
      case HoldEnd::Crash:
        step(hold_->end_ns, lane_->process, hold_->end_index,
             "The nemesis crashes " + who + " at " + at_time(hold_->end_ns) +
                 "; it holds nothing from then on.");
        break;
      case HoldEnd::EndOfHistory:
        step(std::max(hold_->end_ns, to), lane_->process, std::nullopt,
             who + " still holds " + lock + " when the history ends.");
        break;
    }
  }

  const Cause& cause_;
  const Timeline& t_;
  const std::vector<Violation>& violations_;
  const Lane* lane_ = nullptr;
  const Hold* hold_ = nullptr;
  std::map<int64_t, int64_t> lost_by_;  // write ok -> the earlier write whose increment it lost
  std::set<int64_t> told_;              // the events told as steps of their own
  std::vector<StoryStep> steps_;
};

}  // namespace

std::string at_time(int64_t ns) {
  if (ns < 1'000'000 && ns > -1'000'000) return escape(format_duration(ns));
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f s", double(ns) / 1e9);
  return buffer;
}

std::vector<Cause> group_by_cause(const Timeline& timeline,
                                  const std::vector<Violation>& violations) {
  const auto lanes = lane_index(timeline);
  std::vector<Cause> causes;
  std::map<HoldRef, size_t> by_hold;
  std::map<std::pair<size_t, std::string>, size_t> by_fault;  // (fault, first process)
  auto add = [&](size_t at, size_t k, std::optional<HoldRef> hold, std::optional<size_t> fault) {
    if (at == causes.size()) {
      causes.emplace_back();
      causes.back().hold = hold;
      causes.back().fault = fault;
    }
    causes[at].violations.push_back(k);
    ++causes[at].kinds[violations[k].kind];
  };
  // A lost update follows from whatever put the counter back, which may be
  // long before its own two writes: those come last, to join the cause they
  // follow from.
  std::vector<size_t> lost_updates;
  for (size_t k = 0; k < violations.size(); ++k) {
    const Violation& v = violations[k];
    if (is(v, ViolationKind::LostUpdate)) {
      lost_updates.push_back(k);
      continue;
    }
    size_t at = causes.size();
    // A stretch without a holder, or a wrong nesting depth, is not caused by
    // the hold its events touch: those group by fault window only.
    const auto kind = violation_kind_named(v.kind);
    const bool about_a_hold = !kind || info(*kind).subject != ViolationSubject::Lock;
    std::optional<HoldRef> hold =
        about_a_hold ? earlier_hold(v, timeline, lanes) : std::optional<HoldRef>();
    std::optional<size_t> fault;
    if (hold) {
      auto [it, fresh] = by_hold.try_emplace(*hold, causes.size());
      at = it->second;
    } else {
      auto [from, to] = event_span(v, timeline);
      fault = fault_window(timeline, from, to);
      if (fault) {
        std::string first = v.processes.empty() ? "" : v.processes.front();
        auto [it, fresh] = by_fault.try_emplace({*fault, first}, causes.size());
        at = it->second;
      }
    }
    add(at, k, hold, fault);
  }
  // Each lost update joins the cause of a hold one of its writes was made
  // under; else the latest cause of a hold that began before its first
  // write (the overlap that put the counter back); else its own earlier hold.
  const size_t hold_causes = causes.size();
  for (size_t k : lost_updates) {
    const Violation& v = violations[k];
    std::optional<size_t> at;
    for (int64_t index : v.events) {
      auto place = timeline.places.find(index);
      if (place == timeline.places.end()) continue;
      auto lane = lanes.find(place->second.process);
      if (lane == lanes.end()) continue;
      if (auto hold = hold_at(timeline.lanes[lane->second], v.lock, place->second.time_ns))
        if (auto it = by_hold.find({lane->second, *hold});
            it != by_hold.end() && it->second < hold_causes)
          at = it->second;
      if (at) break;
    }
    if (!at) {
      const int64_t first = event_span(v, timeline).first;
      int64_t latest = INT64_MIN;
      for (size_t c = 0; c < hold_causes; ++c) {
        if (!causes[c].hold) continue;
        const Hold& h = timeline.lanes[causes[c].hold->lane].holds[causes[c].hold->hold];
        if (h.lock == v.lock && h.start_ns <= first && h.start_ns > latest) {
          latest = h.start_ns;
          at = c;
        }
      }
    }
    if (at) {
      add(*at, k, std::nullopt, std::nullopt);
      continue;
    }
    std::optional<HoldRef> hold = earlier_hold(v, timeline, lanes);
    size_t own = causes.size();
    if (hold) own = by_hold.try_emplace(*hold, causes.size()).first->second;
    add(own, k, hold, std::nullopt);
  }
  // In the order of each cause's first violation, each cause's in order.
  for (auto& cause : causes) std::sort(cause.violations.begin(), cause.violations.end());
  std::stable_sort(causes.begin(), causes.end(), [](const Cause& a, const Cause& b) {
    return a.violations.front() < b.violations.front();
  });
  return causes;
}

std::vector<size_t> story_violations(const Cause& cause, const std::vector<Violation>& violations) {
  std::vector<size_t> out;
  std::set<std::string> kinds;
  for (size_t k : cause.violations)
    if (out.size() < kStoryViolations && kinds.insert(violations[k].kind).second) out.push_back(k);
  for (size_t k : cause.violations)
    if (out.size() < kStoryViolations && std::find(out.begin(), out.end(), k) == out.end() &&
        !is(violations[k], ViolationKind::MutualExclusion))
      out.push_back(k);
  std::sort(out.begin(), out.end());
  return out;
}

std::set<int64_t> story_candidate_events(const std::vector<Violation>& violations) {
  std::map<int64_t, size_t> per_first;  // earliest event -> violations taken
  std::set<int64_t> out;
  size_t taken = 0;
  for (const auto& v : violations) {
    if (v.events.empty() || taken == kCandidateViolations) continue;
    int64_t first = *std::min_element(v.events.begin(), v.events.end());
    if (per_first[first]++ >= kStoryViolations) continue;
    ++taken;
    out.insert(v.events.begin(), v.events.end());
  }
  return out;
}

std::vector<StoryStep> tell_story(const Cause& cause, const Timeline& timeline,
                                  const std::vector<Violation>& violations) {
  return Storyteller(cause, timeline, violations).tell();
}

std::string cause_headline(const Cause& cause, const Timeline& timeline,
                           const std::vector<Violation>& violations) {
  std::string out;
  int64_t from = 0, to = 0;
  if (cause.hold) {
    const Lane& lane = timeline.lanes[cause.hold->lane];
    const Hold& h = lane.holds[cause.hold->hold];
    out = b(lane.process) + "'s hold of " + (h.lock.empty() ? "the lock" : b(h.lock)) + " from " +
          at_time(h.start_ns) + " to " + at_time(h.end_ns) +
          (h.end == HoldEnd::EndOfHistory ? " (the end of the history)" : "") +
          (h.ttl_ms ? " on a " + escape(format_duration(*h.ttl_ms * 1'000'000)) + " lease" : "");
    from = h.start_ns;
    to = h.end_ns;
  } else {
    const Violation& v = violations[cause.violations.front()];
    std::tie(from, to) = event_span(v, timeline);
    out = escape(v.kind);
    if (!v.processes.empty()) {
      out += " by";
      for (const auto& p : v.processes) out += " " + b(p);
    }
    out += " at " + at_time(from);
  }
  std::optional<size_t> fault = cause.fault;
  if (!fault && cause.hold) {
    // The fault that hit the holder itself tells the story better than any other.
    const std::string& holder = timeline.lanes[cause.hold->lane].process;
    for (size_t i = 0; i < timeline.faults.size() && !fault; ++i) {
      const Fault& f = timeline.faults[i];
      if (!f.instant && f.start_ns <= to && f.end_ns >= from &&
          std::find(f.targets.begin(), f.targets.end(), holder) != f.targets.end())
        fault = i;
    }
  }
  if (!fault) fault = fault_window(timeline, from, to);
  if (fault) {
    const Fault& f = timeline.faults[*fault];
    std::string targets = fault_targets(f);
    out += ", during " + escape(f.kind) + (targets.empty() ? "" : " " + escape(targets));
    if (f.ended && !f.instant) out += " for " + escape(format_duration(f.end_ns - f.start_ns));
  }
  return out;
}

std::string kinds_text(const std::map<std::string, size_t>& kinds) {
  // In the vocabulary's order (the overlapping acquisitions, which a reader
  // counts, first), then any kind it does not know.
  std::string out;
  auto add = [&](const std::string& kind, size_t n) {
    out += (out.empty() ? "" : ", ") + kind_count(kind, n);
  };
  for (const auto& row : violation_kinds())
    if (auto it = kinds.find(std::string(row.name)); it != kinds.end()) add(it->first, it->second);
  for (const auto& [kind, n] : kinds)
    if (!violation_kind_named(kind)) add(kind, n);
  return out;
}

}  // namespace locklab::reports
