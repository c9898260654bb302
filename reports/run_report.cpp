// The report of one run directory: a page that answers, per algorithm, "did
// it do what we expected?" at a glance, then shows why on a timeline and in
// the very history events that prove each violation.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "atomic_file.h"
#include "html.h"
#include "plots.h"
#include "report.h"
#include "run_results.h"
#include "story.h"
#include "timeline.h"
#include "timeline_svg.h"

namespace locklab::reports {

namespace {

// Events shown in full under the violations. Past this many, later
// violations are listed without their events, so a run that broke
// everywhere still gives a page of bounded size.
constexpr size_t kMaxDetailedEvents = 2000;
constexpr size_t kMaxListedViolations = 1000;
// A page larger than this is drawn again with less detail (see
// write_run_report), a few times at most.
constexpr size_t kMaxPageBytes = 4'500'000;
constexpr int kMaxShrinks = 5;
// Close-ups of violation clusters narrower than this share of the run.
constexpr size_t kMaxCloseUps = 3;
constexpr double kCloseUpShare = 0.2;
// Causes told as a story; the others are listed with their headline only.
constexpr size_t kMaxStories = 20;

// A field of a history event for people: 1,234; an object as "L: 198, M: 3".
std::string text_of(const nlohmann::ordered_json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) return format_count(value.get<int64_t>());
  if (value.is_object() && !value.empty()) {
    std::string out;
    for (const auto& [key, item] : value.items())
      out += (out.empty() ? "" : ", ") + key + ": " + text_of(item);
    return out;
  }
  return value.dump();
}

// JSON text that may wrap after its commas, so a long event fits the table.
std::string breakable(const std::string& text) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == ',') out += "<wbr>";
  }
  return out;
}

// "set-nx-px", or "set-nx-px run 2" when a suite repeated it.
std::string run_name(const RunResult& run) {
  return run.algorithm + (run.run ? " run " + std::to_string(*run.run) : "");
}

// The violations the run's checkers listed (none without a check).
const std::vector<Violation>& violations_of(const RunResult& run) {
  static const std::vector<Violation> none;
  return run.check ? run.check->violations : none;
}

// Milliseconds since the run started, for people.
std::string ms_text(double ms) {
  return format_duration(int64_t(std::llround(ms * 1e6)));
}

// The table of what became of each of the scenario's faults in the run.
std::string faults_table(const RunResult& run) {
  if (run.faults.empty()) return "";
  std::string out =
      "<h3>Faults</h3><table class=\"faults\"><thead><tr><th>#</th><th>kind</th><th>trigger</th>"
      "<th>fired at</th><th>ended at</th></tr></thead><tbody>";
  for (const auto& fault : run.faults) {
    const bool missing = !fault.fired && !stood_in_for(fault, run.faults);
    out += std::string(missing ? "<tr class=\"never-fired\">" : "<tr>") + "<td>" +
           std::to_string(fault.index) + "</td><td>" + escape(fault.kind) + "</td><td>" +
           escape(fault.trigger) +
           (fault.one_of.empty()
                ? ""
                : " <span class=\"one-of\">(one of “" + escape(fault.one_of) + "”)</span>") +
           "</td>";
    if (!fault.fired) {
      out += missing ? "<td colspan=\"2\" class=\"never-fired\">never fired</td></tr>"
                     : "<td colspan=\"2\">never fired: another of “" + escape(fault.one_of) +
                           "” told its moment</td></tr>";
      continue;
    }
    out += "<td>" + (fault.fired_at_ms ? escape(ms_text(*fault.fired_at_ms)) : "—") + "</td><td>" +
           (fault.ended_at_ms ? escape(ms_text(*fault.ended_at_ms)) : "—") + "</td></tr>";
  }
  return out + "</tbody></table>";
}

// The first `detailed` violations whose events, together, fit the budget.
size_t detailed_prefix(const std::vector<Violation>& violations, size_t max_events) {
  std::set<int64_t> events;
  size_t n = 0;
  for (; n < violations.size(); ++n) {
    std::set<int64_t> fresh;
    for (int64_t e : violations[n].events)
      if (!events.count(e)) fresh.insert(e);
    if (n > 0 && events.size() + fresh.size() > max_events) break;
    events.insert(fresh.begin(), fresh.end());
  }
  return n;
}

// One algorithm's section, built from its results entry and its history.
class Section {
 public:
  // Reads the history: the events of as many violations as a full page shows.
  Section(const RunResult& run, std::string id, const std::filesystem::path& run_dir)
      : run_(run), violations_(violations_of(run)), id_(std::move(id)) {
    // Paths as the reader of the run directory knows them, wherever it was moved.
    const std::filesystem::path history = history_path(run_dir, run);
    auto relative = history.lexically_relative(run_dir);
    history_name_ = relative.empty() ? history.string() : relative.string();
    std::set<int64_t> kept, located;
    size_t detailed = detailed_prefix(violations_, kMaxDetailedEvents);
    for (size_t k = 0; k < violations_.size(); ++k)
      for (int64_t e : violations_[k].events) {
        located.insert(e);
        if (k < detailed) kept.insert(e);
      }
    // The stories quote events beyond those the page lists in full.
    std::set<int64_t> quoted = story_candidate_events(violations_);
    kept.insert(quoted.begin(), quoted.end());
    if (!run.not_applicable && std::filesystem::exists(history)) {
      timeline_ = read_timeline(history, kept, located);
      has_history_ = true;
    }
    causes_ = group_by_cause(timeline_, violations_);
  }

  // The plots of this run; nullopt without a history to draw them from.
  std::optional<RunPlot> plot() const {
    if (!has_history_ || timeline_.event_count == 0) return std::nullopt;
    return run_plot(timeline_, run_name(run_), id_);
  }

  // "1 cause: 44 overlapping acquisitions", or "none".
  std::string causes_text() const {
    if (causes_.empty()) return "none";
    std::map<std::string, size_t> kinds;
    for (const auto& cause : causes_)
      for (const auto& [kind, n] : cause.kinds) kinds[kind] += n;
    std::string out = format_count(int64_t(causes_.size())) +
                      (causes_.size() == 1 ? " cause, " : " causes, ") + kinds_text(kinds);
    const std::string unlisted = unlisted_text();
    return unlisted.empty() ? out : out + " listed (" + unlisted + ")";
  }

  // "200 mutual-exclusion found in all": the kinds the checkers counted more
  // of than they listed (they list the first 100 of each); "" when none.
  std::string unlisted_text() const {
    if (!run_.check) return "";
    std::map<std::string, int64_t> listed;
    for (const auto& v : violations_) ++listed[v.kind];
    std::string out;
    for (const auto& [kind, n] : listed) {
      int64_t found = run_.check->found(kind);
      if (found > n) out += (out.empty() ? "" : ", ") + format_count(found) + " " + kind;
    }
    return out.empty() ? "" : out + " found in all";
  }

  // The section's HTML with `budget` (0, 1] of the full detail.
  std::string html(double budget) {
    budget_ = budget;
    detailed_ = detailed_prefix(violations_, scaled(kMaxDetailedEvents));
    shown_.clear();
    violations_of_.clear();
    for (size_t k = 0; k < detailed_; ++k)
      for (int64_t e : violations_[k].events) {
        shown_.insert(e);
        auto& numbers = violations_of_[e];
        if (numbers.empty() || numbers.back() != k + 1) numbers.push_back(k + 1);
      }

    std::string out = "<section class=\"algorithm " + outcome_class(run_.outcome) + "\" id=\"" +
                      escape(id_) + "\">";
    out += head();
    if (run_.error)
      out += "<div class=\"error\"><b>The run failed:</b> <pre>" + escape(*run_.error) +
             "</pre></div>";
    if (run_.not_applicable)
      return out + "<p class=\"notice not-applicable\"><b>Not applicable:</b> " +
             escape(*run_.not_applicable) + "</p>" + faults_table(run_) + "</section>";
    if (run_.outcome == RunOutcome::kNotExercised)
      out += "<p class=\"notice not-exercised\"><b>Not exercised:</b> " +
             escape(never_fired(run_)) +
             ", so this run did not play the scenario's story; its verdict says nothing about "
             "it.</p>";
    out += facts();
    out += faults_table(run_);
    out += harm();
    out += unavailable();
    out += timeline();
    out += violations();
    out += events();
    out += "</section>";
    return out;
  }

 private:
  // What the store suffered, the overlaps by whose fault, and how near a
  // safe run came (checkers.h, "harm", "closest call"): harm is told apart
  // from overlap, for the reader who asks whether the data was corrupted.
  std::string harm() const {
    if (!run_.check || !run_.check->harm) return "";
    const checkers::Harm& h = *run_.check->harm;
    std::string out =
        "<h3>Harm</h3><p class=\"harm\"><b>" + std::string(h.harmful() ? "harmful" : "no harm") +
        "</b>: the store accepted " + std::to_string(h.lost_updates) + " lost updates and " +
        std::to_string(h.stale_writes) + " stale writes; fencing rejected " +
        std::to_string(h.rejected_by_fencing) + " writes.";
    std::string overlaps;
    for (const auto& row : overlap_classes()) {
      auto n = h.overlaps.find(std::string(row.name));
      if (n != h.overlaps.end() && n->second > 0)
        overlaps += (overlaps.empty() ? "" : ", ") + std::to_string(n->second) + " " +
                    std::string(row.label);
    }
    auto stopped = h.overlaps.find(std::string(kStoppedByFencing));
    if (!overlaps.empty() && stopped != h.overlaps.end() && stopped->second > 0)
      overlaps +=
          " (" + std::to_string(stopped->second) + " " + std::string(kStoppedByFencingLabel) + ")";
    if (!overlaps.empty()) out += " Overlaps: " + escape(overlaps) + ".";
    out += "</p>";
    const auto& closest = run_.check->closest_call;
    for (const auto* margin : {&closest.grant_after_lease, &closest.write_before_lease_end})
      if (*margin)
        out += "<p class=\"closest-call\">Closest call: " + escape((*margin)->explanation) + "</p>";
    return out;
  }

  // The stretches in which the lock refused everyone while a fault was in
  // force: what the faults cost, told apart from violations.
  std::string unavailable() const {
    if (!run_.check || run_.check->unavailable.empty()) return "";
    std::string out =
        "<h3>Availability lost under faults</h3><p class=\"hint\">Nobody could take the lock "
        "for longer than the liveness limit while a fault was in force. A lock must refuse when "
        "it cannot be sure (a lost quorum, a partitioned master): this is what the faults cost, "
        "not a violation.</p><ul class=\"unavailable\">";
    for (const auto& stretch : run_.check->unavailable) {
      std::string faults;
      for (const auto& f : stretch.faults) faults += (faults.empty() ? "" : ", ") + f;
      out += "<li><b>" + escape(stretch.lock) + "</b> refused for " +
             escape(format_duration(stretch.to_ns - stretch.from_ns)) + " (from " +
             escape(format_duration(stretch.from_ns)) + " to " +
             escape(format_duration(stretch.to_ns)) + ") under " + escape(faults) + ": " +
             escape(stretch.explanation) + "</li>";
    }
    return out + "</ul>";
  }

  std::set<std::string> found_kinds() const {
    std::vector<std::string> kinds = locklab::found_kinds(run_);
    return {kinds.begin(), kinds.end()};
  }

  std::string head() const {
    std::string out = "<header class=\"algorithm-head\"><h2>" + escape(run_name(run_)) + "</h2>" +
                      verdict_pill(verdict_name(run_.verdict)) +
                      outcome_badge(run_.outcome, run_.like.value_or(""));
    std::vector<std::string> meta;
    if (run_.target) meta.push_back("on target " + *run_.target);
    if (run_.seed) meta.push_back("seed " + std::to_string(*run_.seed));
    if (run_.seconds) meta.push_back("took " + format_duration(int64_t(*run_.seconds * 1e9)));
    for (size_t i = 0; i < meta.size(); ++i)
      out += std::string(i ? " · " : "<span class=\"run-meta\">") + escape(meta[i]);
    out += std::string(meta.empty() ? "" : "</span>") + "</header>";
    if (!run_.expected) return out;
    const Expectation& expected = *run_.expected;

    std::set<std::string> found = found_kinds();
    auto counted = [&](const std::string& kind) { return found.count(kind) > 0; };
    out += "<p class=\"expected\">Expected <b>" + escape(verdict_name(expected.verdict)) + "</b>";
    for (size_t i = 0; i < expected.kinds.size(); ++i) {
      const auto& kind = expected.kinds[i];
      bool seen = counted(kind);
      out += std::string(i ? ", " : " with ") + "<span class=\"kind " +
             (seen ? "found" : "missing") + "\">" + escape(kind) + (seen ? " ✓" : " (not found)") +
             "</span>";
    }
    for (size_t i = 0; i < expected.absent.size(); ++i) {
      const auto& kind = expected.absent[i];
      bool seen = counted(kind);
      out += std::string(i ? ", " : " and no ") + "<span class=\"kind " +
             (seen ? "missing" : "absent") + "\">" + escape(kind) + (seen ? " (found!)" : " ✓") +
             "</span>";
    }
    if (run_.like) out += " (as for " + escape(*run_.like) + ", which this lock stands in for)";
    out += "; measured <b>" + escape(verdict_name(run_.verdict)) + "</b>";
    bool first = true;
    for (const auto& kind : found) {
      out +=
          std::string(first ? " with " : ", ") + "<span class=\"kind\">" + escape(kind) + "</span>";
      first = false;
    }
    return out + ".</p>";
  }

  std::string facts() const {
    std::string out;
    using Tiles = std::vector<std::tuple<std::string, std::string, bool>>;  // name, value, bad
    auto tiles = [&](const Tiles& facts, const char* caption) {
      if (facts.empty()) return;
      out +=
          "<div class=\"facts\"><span class=\"facts-caption\">" + std::string(caption) + "</span>";
      for (const auto& [key, value, bad] : facts)
        out += "<span class=\"fact" + std::string(bad ? " bad" : "") + "\"><b>" + escape(value) +
               "</b>" + escape(key) + "</span>";
      out += "</div>";
    };
    if (run_.stats) {
      const RunStats& s = *run_.stats;
      std::string counters;
      for (const auto& [lock, value] : s.counters)
        counters += (counters.empty() ? "" : ", ") + lock + ": " + format_count(value);
      Tiles facts = {{"acquires_ok", format_count(s.acquires_ok), false},
                     {"acquires_failed", format_count(s.acquires_failed), false},
                     {"acquires_unknown", format_count(s.acquires_unknown), false},
                     {"writes_accepted", format_count(s.writes_accepted), false},
                     {"writes_rejected", format_count(s.writes_rejected), false},
                     {"lost", format_count(s.lost), false}};
      if (!counters.empty()) facts.emplace_back("counters", counters, false);
      facts.emplace_back("events", format_count(s.events), false);
      tiles(facts, "run");
    }
    if (run_.check) {
      const std::set<std::string> found = found_kinds();
      Tiles facts;
      for (const auto& [key, value] : run_.check->counts)
        facts.emplace_back(key, format_count(value), found.count(key) && value > 0);
      tiles(facts, "checker");
    }
    return out;
  }

  std::string timeline() const {
    std::string out = "<h3>Timeline</h3>";
    if (!has_history_)
      return out + "<p class=\"notice\">No history at " + escape(history_name_) +
             (run_.error ? " (the run failed before writing one)." : ".") + "</p>";
    if (timeline_.event_count == 0)
      return out + "<p class=\"notice\">The history " + escape(history_name_) + " is empty.</p>";
    TimelineOptions options;
    options.anchor_prefix = options.svg_id = id_;
    options.detailed = detailed_;
    options.budget = budget_;
    TimelineDrawing drawing = draw_timeline(timeline_, violations_, options);
    out += "<p class=\"hint\">" + format_count(timeline_.event_count) + " events over " +
           format_duration(timeline_.end_ns) +
           ". Hover any shape for details; click a violation or one of its circled events to "
           "jump to it.</p>";
    out += "<div class=\"timeline-box\">" + drawing.svg + "</div>" + timeline_legend();
    for (const auto& note : drawing.notes) out += "<p class=\"notice\">" + escape(note) + "</p>";

    // Violations that take a sliver of a long run get a close-up of their own.
    auto windows = violation_windows(timeline_, violations_, kMaxCloseUps + 1);
    for (size_t i = 0; i < std::min(windows.size(), kMaxCloseUps); ++i) {
      auto [from, to] = windows[i];
      if (double(to - from) > kCloseUpShare * double(timeline_.end_ns)) continue;
      options.svg_id = id_ + "-closeup-" + std::to_string(i + 1);
      options.from_ns = from;
      options.to_ns = to;
      TimelineDrawing closeup = draw_timeline(timeline_, violations_, options);
      out += "<h4>Close-up: " + escape(format_duration(from)) + " → " +
             escape(format_duration(to)) + "</h4><div class=\"timeline-box\">" + closeup.svg +
             "</div>";
      for (const auto& note : closeup.notes) out += "<p class=\"notice\">" + escape(note) + "</p>";
    }
    if (windows.size() > kMaxCloseUps)
      out += "<p class=\"notice\">Only the first " + std::to_string(kMaxCloseUps) +
             " clusters of violations have a close-up.</p>";
    return out;
  }

  std::string violation_item(size_t k) const {
    const Violation& v = violations_[k];
    std::string out = "<li id=\"" + escape(id_) + "-violation-" + std::to_string(k + 1) + "\">";
    out += "<div class=\"violation-head\"><span class=\"tag\">V" + std::to_string(k + 1) +
           "</span><span class=\"kind\">" + escape(v.kind) + "</span>";
    if (v.overlap)
      out += " <span class=\"overlap-class\">" + escape(v.overlap->overlap_class) + "</span>";
    if (!v.lock.empty()) out += " on lock <b>" + escape(v.lock) + "</b>";
    if (!v.processes.empty()) {
      out += " by";
      for (const auto& p : v.processes) out += " <b>" + escape(p) + "</b>";
    }
    if (!v.events.empty()) {
      out += "<span class=\"event-links\">events";
      for (int64_t e : v.events) {
        std::string label = "#" + std::to_string(e);
        out += k < detailed_ ? " <a href=\"#" + escape(id_) + "-event-" + std::to_string(e) +
                                   "\">" + label + "</a>"
                             : " " + label;
      }
      out += "</span>";
    }
    out += "</div>";
    if (!v.explanation.empty())
      out += "<p class=\"explanation\">" + linked(escape(v.explanation)) + "</p>";
    if (v.overlap && !v.overlap->explanation.empty())
      out += "<p class=\"explanation\">" + escape(v.overlap->explanation) + "</p>";
    return out + "</li>";
  }

  // A cause's numbered steps; each links to its event (in the event table
  // when the page lists it, else on the timeline) and marks it on the timeline.
  std::string story(const Cause& cause, const std::string& cause_id) const {
    std::vector<StoryStep> steps = tell_story(cause, timeline_, violations_);
    if (steps.empty()) return "";
    const bool drawn = has_history_ && timeline_.event_count > 0;
    const std::string timeline_link = "#" + escape(id_) + "-timeline";
    std::string out = "<ol class=\"story\">";
    for (size_t i = 0; i < steps.size(); ++i) {
      const StoryStep& step = steps[i];
      out += "<li class=\"step\" id=\"" + cause_id + "-step-" + std::to_string(i + 1) + "\"";
      if (drawn)
        out += " data-t=\"" + std::to_string(step.time_ns) + "\" data-lane=\"" +
               escape(step.process) + "\" title=\"click to mark it on the timeline\"";
      out += ">" + step.html;
      if (step.event) {
        std::string label = "event #" + std::to_string(*step.event);
        if (shown_.count(*step.event))
          out += " <a class=\"step-event\" href=\"#" + escape(id_) + "-event-" +
                 std::to_string(*step.event) + "\">" + label + "</a>";
        else if (drawn)
          out += " <a class=\"step-event\" href=\"" + timeline_link + "\">" + label + "</a>";
        else
          out += " <span class=\"step-event\">" + label + "</span>";
      }
      out += "</li>";
    }
    return out + "</ol>";
  }

  std::string violations() const {
    if (violations_.empty()) return "";
    const auto& all = violations_;
    std::string out = "<h3 id=\"" + escape(id_) + "-causes\">Violations: " + escape(causes_text()) +
                      "</h3><p class=\"hint\">Violations that share their earlier hold (or, "
                      "without one, a fault window and a process) are one cause, told step by "
                      "step from the history; a lost update joins the overlap that put the "
                      "counter back. Its violations are folded under it. Click a step "
                      "to mark it on the timeline; n and p jump between causes.</p>";
    if (!unlisted_text().empty())
      out += "<p class=\"notice\">The checkers found more than they list (" +
             escape(unlisted_text()) +
             "; results.json lists the first of each kind): the causes here are made of the "
             "listed violations.</p>";
    size_t budget = std::min(all.size(), scaled(kMaxListedViolations));
    size_t listed = 0, stories = std::max<size_t>(3, size_t(double(kMaxStories) * budget_));
    for (size_t c = 0; c < causes_.size(); ++c) {
      const Cause& cause = causes_[c];
      const std::string cause_id = escape(id_) + "-cause-" + std::to_string(c + 1);
      out += "<div class=\"cause\" id=\"" + cause_id +
             "\"><div class=\"cause-head\"><span "
             "class=\"tag\">Cause " +
             std::to_string(c + 1) + "</span> " + cause_headline(cause, timeline_, violations_) +
             ": <b>" + escape(kinds_text(cause.kinds)) + "</b><span class=\"cause-nav\">";
      if (c > 0)
        out += "<a href=\"#" + escape(id_) + "-cause-" + std::to_string(c) + "\">◂ previous</a>";
      if (c + 1 < causes_.size())
        out +=
            "<a href=\"#" + escape(id_) + "-cause-" + std::to_string(c + 2) + "\">next cause ▸</a>";
      out += "</span></div>";
      if (c < stories) out += story(cause, cause_id);
      size_t n = cause.violations.size();
      size_t here = std::min(n, budget - std::min(budget, listed));
      if (here > 0) {
        out += "<details class=\"folded\" id=\"" + cause_id + "-list\"><summary>" +
               (n == 1 ? std::string("Its violation")
                       : "Its " + format_count(int64_t(n)) + " violations") +
               (here < n ? " (the first " + format_count(int64_t(here)) + " listed)" : "") +
               "</summary><ol class=\"violations\">";
        for (size_t i = 0; i < here; ++i) out += violation_item(cause.violations[i]);
        out += "</ol></details>";
        listed += here;
      }
      out += "</div>";
    }
    if (causes_.size() > stories)
      out += "<p class=\"notice\">The first " + std::to_string(stories) + " of " +
             format_count(int64_t(causes_.size())) +
             " causes are told step by step; the others show their headline only.</p>";
    if (detailed_ < all.size())
      out +=
          "<p class=\"notice\">The events of violations V1–V" + std::to_string(detailed_) +
          " are shown below; the other " + format_count(int64_t(all.size() - detailed_)) +
          " violations are listed without them to keep this page small (see the history file).</p>";
    if (listed < all.size())
      out += "<p class=\"notice\">" + format_count(int64_t(all.size() - listed)) +
             " more violations are not listed; results.json has all of them.</p>";
    return out;
  }

  std::string events() const {
    if (shown_.empty()) return "";
    std::string out =
        "<h3>Events of the violations</h3><table class=\"events\"><thead><tr><th>event</th>"
        "<th>time</th><th>process</th><th>type</th><th>f</th><th>shows</th><th>as written in the "
        "history</th>"
        "</tr></thead><tbody>";
    for (int64_t index : shown_) {
      out += "<tr id=\"" + escape(id_) + "-event-" + std::to_string(index) + "\">";
      auto found = timeline_.kept_events.find(index);
      if (found == timeline_.kept_events.end()) {
        out += "<td>#" + std::to_string(index) + "</td><td colspan=\"6\" class=\"missing\">" +
               (has_history_ ? "not in the history" : "no history to show it from") + "</td></tr>";
        continue;
      }
      const auto& e = found->second;
      auto cell = [&](const char* key) {
        auto it = e.find(key);
        return it == e.end() ? std::string() : escape(text_of(*it));
      };
      int64_t time_ns = e.value("time_ns", int64_t(0));
      out += "<td>#" + std::to_string(index) + "</td><td>" + escape(format_duration(time_ns)) +
             "</td><td>" + cell("process") + "</td><td class=\"type-" + cell("type") + "\">" +
             cell("type") + "</td><td>" + cell("f") + "</td><td>" + violation_links(index) +
             "</td><td><code>" + breakable(escape(e.dump())) + "</code></td></tr>";
    }
    return out + "</tbody></table>";
  }

  // `html` with each "event N" whose N is in the event table made a link to its row.
  std::string linked(const std::string& html) const {
    static const std::string word = "event ";
    std::string out;
    size_t at = 0;
    for (size_t hit = html.find(word); hit != std::string::npos; hit = html.find(word, hit + 1)) {
      size_t digits = hit + word.size(), end = digits;
      while (end < html.size() && std::isdigit(static_cast<unsigned char>(html[end]))) ++end;
      if (end == digits || end - digits > 18) continue;
      int64_t index = std::stoll(html.substr(digits, end - digits));
      if (!shown_.count(index)) continue;
      out += html.substr(at, hit - at) + "<a href=\"#" + escape(id_) + "-event-" +
             std::to_string(index) + "\">" + html.substr(hit, end - hit) + "</a>";
      at = end;
    }
    return out + html.substr(at);
  }

  // Links back to the violations an event belongs to ("V1 V3"), the first few.
  std::string violation_links(int64_t index) const {
    constexpr size_t kShown = 8;
    auto found = violations_of_.find(index);
    if (found == violations_of_.end()) return "";
    const auto& numbers = found->second;
    std::string out;
    for (size_t i = 0; i < std::min(numbers.size(), kShown); ++i)
      out += "<a class=\"tag\" href=\"#" + escape(id_) + "-violation-" +
             std::to_string(numbers[i]) + "\">V" + std::to_string(numbers[i]) + "</a> ";
    if (numbers.size() > kShown) out += "+" + std::to_string(numbers.size() - kShown);
    return out;
  }

  size_t scaled(size_t full) const { return std::max<size_t>(20, size_t(double(full) * budget_)); }

  const RunResult& run_;
  const std::vector<Violation>& violations_;
  std::string id_;
  double budget_ = 1;
  size_t detailed_ = 0;
  std::set<int64_t> shown_;                               // the events in the table
  std::map<int64_t, std::vector<size_t>> violations_of_;  // event -> violation numbers (shown only)
  std::string history_name_;
  bool has_history_ = false;
  Timeline timeline_;
  std::vector<Cause> causes_;
};

std::string page_head(const ScenarioResults& results) {
  std::string out =
      "<header class=\"page-head\"><div class=\"crumb\">locklab run report</div><h1>" +
      escape(results.scenario) + "</h1>";
  if (!results.description.empty())
    out += "<p class=\"description\">" + escape(results.description) + "</p>";
  std::vector<std::string> meta;
  if (!results.scenario_file.empty()) meta.push_back("scenario file " + results.scenario_file);
  if (results.seed) meta.push_back("seed " + std::to_string(*results.seed));
  if (!results.locklab_version.empty()) meta.push_back("locklab " + results.locklab_version);
  if (!meta.empty()) {
    out += "<p class=\"meta\">";
    for (size_t i = 0; i < meta.size(); ++i) out += (i ? " · " : "") + escape(meta[i]);
    out += "</p>";
  }
  return out + "</header>";
}

std::string summary(const ScenarioResults& results, const std::vector<std::string>& ids,
                    const std::vector<std::string>& causes) {
  std::map<RunOutcome, size_t> outcomes;
  for (const auto& run : results.runs)
    if (run.outcome) ++outcomes[*run.outcome];
  auto n = [&](RunOutcome o) { return outcomes.count(o) ? outcomes[o] : size_t(0); };
  const size_t bad = n(RunOutcome::kUnmet) + n(RunOutcome::kNotExercised) + n(RunOutcome::kError);
  const size_t passed =
      n(RunOutcome::kMet) + n(RunOutcome::kSaferThan) + n(RunOutcome::kNotApplicable);
  const std::string of = " of " + std::to_string(results.runs.size());
  std::string out;
  if (bad > 0) {
    out += "<div class=\"banner bad\">" + std::to_string(bad) + of +
           " algorithms did NOT do what was expected";
    if (n(RunOutcome::kNotExercised) > 0)
      out += " (" + std::to_string(n(RunOutcome::kNotExercised)) +
             " NOT EXERCISED: a fault never fired)";
    out += "</div>";
  } else if (passed > 0) {
    out += "<div class=\"banner good\">Every algorithm with an expectation met it (" +
           std::to_string(passed) + of + ")";
    if (n(RunOutcome::kSaferThan) > 0)
      out += "; " + std::to_string(n(RunOutcome::kSaferThan)) + " safer than the built-in";
    if (n(RunOutcome::kNotApplicable) > 0)
      out += "; " + std::to_string(n(RunOutcome::kNotApplicable)) + " not applicable";
    out += "</div>";
  }
  out +=
      "<table class=\"summary\"><thead><tr><th>algorithm</th><th>measured</th><th>expected</th>"
      "<th></th><th>violations</th></tr></thead><tbody>";
  for (size_t i = 0; i < results.runs.size(); ++i) {
    const auto& run = results.runs[i];
    out += "<tr><td><a href=\"#" + escape(ids[i]) + "\">" + escape(run_name(run)) +
           "</a></td><td>" + verdict_pill(verdict_name(run.verdict)) + "</td><td>" +
           (run.expected ? escape(verdict_name(run.expected->verdict)) : "—") + "</td><td>" +
           outcome_badge(run.outcome, run.like.value_or("")) + "</td><td>" + escape(causes[i]) +
           "</td></tr>";
  }
  return out + "</tbody></table>";
}

}  // namespace

std::filesystem::path write_run_report(const std::filesystem::path& run_dir) {
  ScenarioResults results = read_run_results(run_dir);
  // Every section is built (and every history read) before anything is
  // written, so bad input leaves no report behind.
  std::vector<std::string> ids = section_ids(results);
  std::vector<Section> sections;
  sections.reserve(results.runs.size());
  for (size_t i = 0; i < results.runs.size(); ++i)
    sections.emplace_back(results.runs[i], ids[i], run_dir);
  // Many sections (a suite repeating runs) or dense histories can make a
  // large page: draw it again with half the detail until it is small enough.
  std::vector<std::string> causes;
  std::vector<RunPlot> plots;
  for (const auto& section : sections) {
    causes.push_back(section.causes_text());
    if (auto plot = section.plot()) plots.push_back(std::move(*plot));
  }
  const std::string plots_html = run_plots_html(plots);
  std::string body;
  double budget = 1;
  for (int attempt = 0; attempt <= kMaxShrinks; ++attempt, budget /= 2) {
    body = page_head(results) + summary(results, ids, causes) + plots_html;
    if (budget < 1)
      body += "<p class=\"notice\">This page is drawn with " +
              std::to_string(int(std::lround(budget * 100))) +
              "% of the usual detail to stay small; the history files have everything.</p>";
    for (auto& section : sections) body += section.html(budget);
    if (results.runs.empty()) body += "<p class=\"notice\">This run has no algorithms.</p>";
    if (body.size() <= kMaxPageBytes) break;
  }
  auto path = run_dir / "report.html";
  write_file_atomically(path, html_page(results.scenario + " — locklab", body));
  return path;
}

}  // namespace locklab::reports
