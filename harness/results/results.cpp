#include "results.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "joined.h"
#include "json_fields.h"

namespace locklab {

using nlohmann::json;

namespace {

using Fields = JsonFields<ResultsError>;

// The verdict at `key`; a word this reader does not know (a newer file) is Unknown.
std::optional<Verdict> verdict_at(Fields& f, const std::string& key) {
  std::optional<std::string> text = f.text(key);
  if (!text) return std::nullopt;
  return verdict_named(*text).value_or(Verdict::Unknown);
}

Expectation read_expectation(Fields e) {
  Expectation out;
  out.verdict = verdict_at(e, "verdict").value_or(out.verdict);
  out.kinds = e.texts("kinds").value_or(out.kinds);
  out.absent = e.texts("absent").value_or(out.absent);
  out.classes = e.texts("classes").value_or(out.classes);
  out.incidents = e.texts("incidents").value_or(out.incidents);
  out.why = e.text("why").value_or("");
  return out;
}

checkers::Overlap read_overlap(Fields o, const std::string& overlap_class) {
  checkers::Overlap out;
  out.overlap_class = overlap_class;
  out.unclassified_because = o.text("unclassified_because").value_or("");
  out.lease_source = o.text("lease_source").value_or("");
  out.lease_ms = o.number("lease_ms").value_or(0);
  out.inside_lease_ms = o.number("inside_lease_ms");
  out.past_lease_ms = o.number("past_lease_ms");
  out.clock_misjudged = o.boolean("clock_misjudged").value_or(false);
  if (o.find("late_writes")) {
    Fields late = o.child("late_writes");
    out.late_writes_accepted = late.integer("accepted").value_or(0);
    out.late_writes_rejected = late.integer("rejected").value_or(0);
  }
  out.explanation = o.text("explanation").value_or("");
  return out;
}

checkers::Violation read_violation(Fields v) {
  checkers::Violation out;
  out.kind = v.text("kind").value_or("violation");
  out.lock = v.text("lock").value_or("");
  out.processes = v.texts("processes").value_or(out.processes);
  out.events = v.integers("events");
  out.times_ns = v.integers("times_ns");
  out.explanation = v.text("explanation").value_or("");
  // A class this reader does not know (a newer file) reads as unclassified.
  if (auto overlap_class = v.text("class")) {
    if (!overlap_class_named(*overlap_class)) *overlap_class = name(OverlapClass::Unclassified);
    out.overlap = v.find("overlap") ? read_overlap(v.child("overlap"), *overlap_class)
                                    : checkers::Overlap{.overlap_class = *overlap_class};
  }
  return out;
}

checkers::Unavailability read_unavailability(Fields u) {
  checkers::Unavailability out;
  out.lock = u.text("lock").value_or("");
  out.faults = u.texts("faults").value_or(out.faults);
  out.from_ns = u.integer("from_ns").value_or(0);
  out.to_ns = u.integer("to_ns").value_or(0);
  out.events = u.integers("events");
  out.times_ns = u.integers("times_ns");
  out.explanation = u.text("explanation").value_or("");
  return out;
}

checkers::Harm read_harm(Fields h) {
  checkers::Harm out;
  out.lost_updates = h.integer("lost_updates").value_or(0);
  out.stale_writes = h.integer("stale_writes").value_or(0);
  out.rejected_by_fencing = h.integer("rejected_by_fencing").value_or(0);
  out.overlaps = h.integer_map("overlaps");
  return out;
}

std::optional<checkers::Margin> read_margin(Fields c, const std::string& key) {
  if (!c.find(key)) return std::nullopt;
  Fields m = c.child(key);
  checkers::Margin out;
  out.ms = m.number("ms").value_or(0);
  out.leases = m.number("leases").value_or(0);
  out.lock = m.text("lock").value_or("");
  out.processes = m.texts("processes").value_or(out.processes);
  out.events = m.integers("events");
  out.times_ns = m.integers("times_ns");
  out.explanation = m.text("explanation").value_or("");
  return out;
}

checkers::ClosestCall read_closest_call(Fields c) {
  return {read_margin(c, "grant_after_lease"), read_margin(c, "write_before_lease_end")};
}

Check read_check(Fields c) {
  Check out;
  out.counts = c.integer_map("counts");
  if (c.find("per_lock")) {
    Fields per_lock = c.child("per_lock");
    for (const auto& [lock, counts] : per_lock.object().items())
      out.per_lock[lock] = per_lock.integer_map(lock);
  }
  out.violations = c.list("violations", read_violation);
  out.unavailable = c.list("unavailable", read_unavailability);
  if (c.find("harm")) out.harm = read_harm(c.child("harm"));
  if (c.find("closest_call")) out.closest_call = read_closest_call(c.child("closest_call"));
  // A check without a verdict (hand-written) is violated when it found something.
  bool found = !out.violations.empty();
  for (const auto& kind : violation_kind_names()) found = found || out.found(kind) > 0;
  out.verdict = verdict_at(c, "verdict").value_or(found ? Verdict::Violated : Verdict::Safe);
  return out;
}

RunStats read_stats(Fields s) {
  RunStats out;
  out.acquires_ok = s.integer("acquires_ok").value_or(0);
  out.acquires_failed = s.integer("acquires_failed").value_or(0);
  out.acquires_unknown = s.integer("acquires_unknown").value_or(0);
  out.writes_accepted = s.integer("writes_accepted").value_or(0);
  out.writes_rejected = s.integer("writes_rejected").value_or(0);
  out.lost = s.integer("lost").value_or(0);
  out.counters = s.integer_map("counters");
  out.events = s.integer("events").value_or(0);
  return out;
}

FaultFiring read_fault(Fields f) {
  FaultFiring out;
  if (auto index = f.unsigned_integer("index")) out.index = size_t(*index);
  out.kind = f.text("kind").value_or("");
  out.trigger = f.text("trigger").value_or("");
  out.fired = f.boolean("fired").value_or(false);
  out.fired_at_ms = f.number("fired_at_ms");
  out.ended_at_ms = f.number("ended_at_ms");
  out.one_of = f.text("one_of").value_or("");
  return out;
}

Incident read_incident(Fields f) {
  Incident out;
  out.client = f.text("client").value_or("");
  const std::string kind = f.text("kind").value_or("");
  if (auto known = incident_named(kind))
    out.kind = *known;
  else
    f.fail(f.path("kind"), "names no incident kind (one of " + kIncidentKinds.list() + ")");
  out.message = f.text("message").value_or("");
  out.at_ms = f.number("at_ms").value_or(0);
  return out;
}

json incident_json(const Incident& incident) {
  return {{"client", incident.client},
          {"kind", incident_name(incident.kind)},
          {"message", incident.message},
          {"at_ms", incident.at_ms}};
}

json stats_json(const RunStats& s) {
  return {{"acquires_ok", s.acquires_ok},
          {"acquires_failed", s.acquires_failed},
          {"acquires_unknown", s.acquires_unknown},
          {"writes_accepted", s.writes_accepted},
          {"writes_rejected", s.writes_rejected},
          {"lost", s.lost},
          {"counters", s.counters},
          {"events", s.events}};
}

json check_json(const Check& c) {
  json violations = json::array(), unavailable = json::array();
  for (const auto& v : c.violations) violations.push_back(checkers::violation_json(v));
  for (const auto& u : c.unavailable) unavailable.push_back(checkers::unavailability_json(u));
  json out = {{"verdict", c.verdict},
              {"counts", c.counts},
              {"per_lock", c.per_lock},
              {"violations", violations},
              {"unavailable", unavailable}};
  // Both came with the classes: a check from before them stays as it was.
  if (c.harm) {
    out["harm"] = checkers::harm_json(*c.harm);
    out["closest_call"] = checkers::closest_call_json(c.closest_call);
  }
  return out;
}

json fault_json(const FaultFiring& f) {
  json out{{"index", f.index}, {"kind", f.kind}, {"trigger", f.trigger}, {"fired", f.fired}};
  if (f.fired_at_ms) out["fired_at_ms"] = *f.fired_at_ms;
  if (f.ended_at_ms) out["ended_at_ms"] = *f.ended_at_ms;
  if (!f.one_of.empty()) out["one_of"] = f.one_of;
  return out;
}

}  // namespace

void RunTiming::add(const RunTiming& other) {
  servers += other.servers, clients += other.clients, story += other.story;
  check += other.check, teardown += other.teardown;
}

json timing_json(const RunTiming& timing) {
  return {{"servers", timing.servers},
          {"clients", timing.clients},
          {"story", timing.story},
          {"check", timing.check},
          {"teardown", timing.teardown}};
}

bool passes(RunOutcome outcome) {
  return outcome == RunOutcome::kMet || outcome == RunOutcome::kSaferThan ||
         outcome == RunOutcome::kNotApplicable;
}

std::optional<RunOutcome> cell_outcome(const std::vector<RunOutcome>& runs) {
  if (runs.empty()) return std::nullopt;
  auto some = [&](RunOutcome o) { return std::find(runs.begin(), runs.end(), o) != runs.end(); };
  for (RunOutcome failing : {RunOutcome::kError, RunOutcome::kUnmet, RunOutcome::kNotExercised})
    if (some(failing)) return failing;
  if (!some(RunOutcome::kMet) && !some(RunOutcome::kSaferThan)) return RunOutcome::kNotApplicable;
  return some(RunOutcome::kMet) ? RunOutcome::kMet : RunOutcome::kSaferThan;
}

Check Check::of(const checkers::Results& results) {
  Check out;
  out.verdict = results.violated() ? Verdict::Violated : Verdict::Safe;
  out.counts = results.counts;
  out.per_lock = results.per_lock;
  out.violations = results.violations;
  out.unavailable = results.unavailable;
  out.harm = results.harm;
  out.closest_call = results.closest_call;
  return out;
}

int64_t Check::found(const std::string& kind) const {
  if (auto it = counts.find(kind); it != counts.end()) return it->second;
  return std::count_if(violations.begin(), violations.end(),
                       [&](const checkers::Violation& v) { return v.kind == kind; });
}

std::vector<std::string> Check::found_kinds() const {
  std::set<std::string> kinds;
  for (const auto& v : violations) kinds.insert(v.kind);
  for (const auto& kind : violation_kind_names())
    if (found(kind) > 0) kinds.insert(kind);
  return {kinds.begin(), kinds.end()};
}

int64_t Check::found_class(const std::string& overlap_class) const {
  if (harm) {
    auto it = harm->overlaps.find(overlap_class);
    return it == harm->overlaps.end() ? 0 : it->second;
  }
  return std::count_if(violations.begin(), violations.end(), [&](const checkers::Violation& v) {
    return v.overlap && v.overlap->overlap_class == overlap_class;
  });
}

std::vector<OverlapClass> Check::found_classes() const {
  std::vector<OverlapClass> out;
  for (const auto& row : overlap_classes())
    if (found_class(std::string(row.name)) > 0) out.push_back(row.overlap_class);
  return out;
}

bool Check::harmful() const {
  if (harm) return harm->harmful();
  return std::any_of(std::begin(checkers::kHarmKinds), std::end(checkers::kHarmKinds),
                     [&](ViolationKind kind) { return found(std::string(name(kind))) > 0; });
}

json RunResult::to_json() const {
  json out{{"algorithm", algorithm},
           {"error", error ? json(*error) : json()},
           {"verdict", verdict},
           {"exercised", exercised},
           {"faults", json::array()}};
  for (const auto& fault : faults) out["faults"].push_back(fault_json(fault));
  if (adapter) out["adapter"] = *adapter;
  if (like) out["like"] = *like;
  if (target) out["target"] = *target;
  if (expected) out["expected"] = expectation_json(*expected);
  if (!history.empty()) out["history"] = history;
  if (seed) out["seed"] = *seed;
  if (run) out["run"] = *run;
  if (seconds) out["seconds"] = *seconds;
  if (timing) out["timing"] = timing_json(*timing);
  if (time) out["time"] = *time;
  if (stats) out["stats"] = stats_json(*stats);
  if (check) out["check"] = check_json(*check);
  if (outcome) {
    out["outcome"] = outcome_name(*outcome);
    out["expectation_met"] = *outcome == RunOutcome::kMet;
  }
  if (not_applicable) out["not_applicable"] = *not_applicable;
  if (carried_from) out["carried_from"] = *carried_from;
  if (!incidents.empty()) {
    out["incidents"] = json::array();
    for (const auto& incident : incidents) out["incidents"].push_back(incident_json(incident));
  }
  return out;
}

RunResult RunResult::from_json(const json& document, const std::filesystem::path& file,
                               const std::string& field) {
  Fields r(document, file, field);
  RunResult out;
  out.algorithm = r.text("algorithm").value_or("");
  if (out.algorithm.empty()) r.fail(r.path("algorithm"), "is missing or empty");
  out.adapter = r.text("adapter");
  out.like = r.text("like");
  out.target = r.text("target");
  if (r.find("expected")) out.expected = read_expectation(r.child("expected"));
  out.history = r.text("history").value_or("");
  out.seed = r.unsigned_integer("seed");
  out.run = r.integer("run");
  out.seconds = r.number("seconds");
  out.time = r.text("time");
  if (r.find("timing")) {
    Fields t = r.child("timing");
    out.timing = RunTiming{t.number("servers").value_or(0), t.number("clients").value_or(0),
                           t.number("story").value_or(0), t.number("check").value_or(0),
                           t.number("teardown").value_or(0)};
  }
  // An error may be text, or a structured object from a newer runner.
  if (const json* error = r.find("error"))
    out.error = error->is_string() ? error->get<std::string>() : error->dump();
  if (r.find("stats")) out.stats = read_stats(r.child("stats"));
  if (r.find("check")) out.check = read_check(r.child("check"));
  out.verdict = verdict_at(r, "verdict")
                    .value_or(out.check   ? out.check->verdict
                              : out.error ? Verdict::Error
                                          : Verdict::Unknown);
  out.faults = r.list("faults", read_fault);
  out.exercised = r.boolean("exercised").value_or(true);
  out.not_applicable = r.text("not_applicable");
  if (r.find("incidents")) out.incidents = r.list("incidents", read_incident);
  out.carried_from = r.text("carried_from");

  // An outcome this reader does not know (a newer file) is derived as for an older file.
  if (auto name = r.text("outcome")) out.outcome = outcome_named(*name);
  if (!out.outcome) {
    std::optional<bool> met = r.boolean("expectation_met");
    if (out.error)
      out.outcome = RunOutcome::kError;
    else if (met)
      out.outcome = *met ? RunOutcome::kMet : RunOutcome::kUnmet;
    else if (out.expected)
      out.outcome = decide_outcome(out);
  }
  return out;
}

json ScenarioResults::to_json() const {
  json out{{"scenario", scenario},
           {"description", description},
           {"scenario_file", scenario_file},
           {"locklab_version", locklab_version},
           {"runs", json::array()}};
  if (seed) out["seed"] = *seed;
  if (runs_per_algorithm) out["runs_per_algorithm"] = *runs_per_algorithm;
  for (const auto& run : runs) out["runs"].push_back(run.to_json());
  return out;
}

ScenarioResults ScenarioResults::from_json(const json& document,
                                           const std::filesystem::path& file) {
  Fields top(document, file, "");
  ScenarioResults out;
  out.scenario = top.text("scenario").value_or("");
  out.description = top.text("description").value_or("");
  out.scenario_file = top.text("scenario_file").value_or("");
  out.seed = top.unsigned_integer("seed");
  out.runs_per_algorithm = top.integer("runs_per_algorithm");
  out.locklab_version = top.text("locklab_version").value_or("");
  if (!top.find("runs")) top.fail("runs", "is missing: not the results.json of a run");
  if (!top.find("runs")->is_array()) top.fail("runs", "must be an array");
  const json& runs = *top.find("runs");
  for (size_t i = 0; i < runs.size(); ++i)
    out.runs.push_back(RunResult::from_json(runs[i], file, "runs[" + std::to_string(i) + "]"));
  return out;
}

ScenarioResults read_results_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ResultsError("cannot read " + file.string());
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ResultsError("cannot read " + file.string());
  json document;
  try {
    document = json::parse(text.str());
  } catch (const json::parse_error& e) {
    throw ResultsError(file.string() + ": not valid JSON (" + e.what() + ")");
  }
  return ScenarioResults::from_json(document, file);
}

bool expectation_met(const Expectation& expected, const Check& measured) {
  if (measured.verdict != expected.verdict) return false;
  for (const auto& kind : expected.kinds)
    if (measured.found(kind) == 0) return false;
  for (const auto& kind : expected.absent)
    if (measured.found(kind) != 0) return false;
  for (const auto& overlap_class : expected.classes)
    if (measured.found_class(overlap_class) == 0) return false;
  return true;
}

namespace {

// Whether the holds overlapped for another reason than the one expected: an
// overlap of a known class the expectation does not name, and none it does.
// An adapter whose overlaps have that other cause is not safer than its
// built-in; one whose history cannot tell the cause (unclassified) is not
// held against it.
bool overlapped_otherwise(const Expectation& expected, const Check& measured) {
  if (expected.classes.empty()) return false;
  auto named = [&](std::string_view c) {
    return std::find(expected.classes.begin(), expected.classes.end(), c) != expected.classes.end();
  };
  bool other = false;
  for (OverlapClass c : measured.found_classes()) {
    if (named(name(c))) return false;
    other = other || c != OverlapClass::Unclassified;
  }
  return other;
}

}  // namespace

std::string missing_incident(const Expectation& expected, const RunResult& run) {
  for (const auto& kind : expected.incidents)
    if (std::none_of(run.incidents.begin(), run.incidents.end(), [&](const Incident& incident) {
          return incident_name(incident.kind) == kind;
        }))
      return kind;
  return "";
}

RunOutcome decide_outcome(const RunResult& run) {
  if (run.error) return RunOutcome::kError;
  if (run.not_applicable) return RunOutcome::kNotApplicable;
  if (!run.exercised) return RunOutcome::kNotExercised;
  const Expectation expected = run.expected.value_or(Expectation{});
  if (!missing_incident(expected, run).empty()) return RunOutcome::kUnmet;
  Check verdict_only;
  verdict_only.verdict = run.verdict;
  const Check& measured = run.check ? *run.check : verdict_only;
  if (!run.like) return expectation_met(expected, measured) ? RunOutcome::kMet : RunOutcome::kUnmet;

  // An adapter held to a built-in's expectation: a violation the built-in's
  // expectation does not predict fails; surviving what breaks the built-in does not.
  for (const auto& kind : expected.absent)
    if (measured.found(kind) > 0) return RunOutcome::kUnmet;
  if (expected.verdict != Verdict::Violated)
    return expectation_met(expected, measured) ? RunOutcome::kMet : RunOutcome::kUnmet;
  if (measured.verdict != Verdict::Violated && measured.verdict != Verdict::Safe)
    return RunOutcome::kUnmet;
  if (overlapped_otherwise(expected, measured)) return RunOutcome::kUnmet;
  // Beyond that, an adapter's history may not tell the class (no lease it records).
  Expectation held = expected;
  held.classes.clear();
  return expectation_met(held, measured) ? RunOutcome::kMet : RunOutcome::kSaferThan;
}

std::vector<std::string> found_kinds(const RunResult& run) {
  return run.check ? run.check->found_kinds() : std::vector<std::string>{};
}

std::string expected_text(const Expectation& expected) {
  std::string text(verdict_name(expected.verdict));
  if (!expected.kinds.empty()) text += " (" + joined(expected.kinds) + ")";
  if (!expected.classes.empty()) text += " as " + joined(expected.classes);
  return text;
}

std::string fault_label(const FaultFiring& fault) {
  return "fault " + std::to_string(fault.index) + " (" + fault.kind +
         (fault.trigger.empty() ? "" : ", " + fault.trigger) + ")";
}

bool stood_in_for(const FaultFiring& fault, const std::vector<FaultFiring>& faults) {
  if (fault.fired || fault.one_of.empty()) return false;
  return std::any_of(faults.begin(), faults.end(), [&fault](const FaultFiring& other) {
    return other.fired && other.one_of == fault.one_of;
  });
}

bool story_played(const std::vector<FaultFiring>& faults) {
  return std::all_of(faults.begin(), faults.end(), [&faults](const FaultFiring& fault) {
    return fault.fired || stood_in_for(fault, faults);
  });
}

std::string never_fired(const RunResult& run) {
  std::vector<std::string> labels;
  for (const auto& fault : run.faults)
    if (!fault.fired && !stood_in_for(fault, run.faults)) labels.push_back(fault_label(fault));
  if (labels.empty()) return "a fault never fired";
  return joined(labels) + " never fired";
}

std::string summary_line(const RunResult& run) {
  std::string line = run.algorithm + ": ";
  const RunOutcome outcome = run.outcome.value_or(decide_outcome(run));
  if (outcome == RunOutcome::kError)
    return line + std::string(verdict_name(run.verdict)) +
           " (error: " + run.error.value_or("unknown") + ")";
  if (outcome == RunOutcome::kNotApplicable)
    return line + "not applicable — " + run.not_applicable.value_or("not run");
  if (outcome == RunOutcome::kNotExercised) return line + "NOT EXERCISED — " + never_fired(run);
  line += std::string(verdict_name(run.verdict)) + " — expected " +
          std::string(verdict_name(run.expected.value_or(Expectation{}).verdict));
  if (outcome == RunOutcome::kMet) line += ", met";
  if (outcome == RunOutcome::kUnmet) line += ", NOT met";
  if (outcome == RunOutcome::kSaferThan)
    line += ", safer than " + run.like.value_or("the built-in");
  if (run.check) {
    for (const auto& kind : violation_kind_names())
      if (int64_t n = run.check->found(kind); n > 0)
        line += " [" + kind + " " + std::to_string(n) + "]";
    if (int64_t saved = run.check->found("fencing-saved"); saved > 0)
      line += " [fencing-saved " + std::to_string(saved) + "]";
    for (const auto& stretch : run.check->unavailable) {
      std::string faults;
      for (const auto& f : stretch.faults) faults += (faults.empty() ? "" : ", ") + f;
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%.1f s",
                    double(stretch.to_ns - stretch.from_ns) / 1e9);
      line += " [refused " + stretch.lock + " for " + seconds + " under " + faults + "]";
    }
  }
  for (const auto& incident : run.incidents) line += " [" + incident_text(incident) + "]";
  return line;
}

std::string incident_text(const Incident& incident) {
  char when[32];
  std::snprintf(when, sizeof when, "%.2f s", incident.at_ms / 1000.0);
  return incident.client + ": " + std::string(incident_name(incident.kind)) + " at " + when +
         (incident.message.empty() ? "" : " (" + incident.message + ")") + "; " +
         std::string(kIncidentKinds[incident.kind].consequence);
}

int exit_status(const ScenarioResults& results) {
  int status = 0;
  for (const auto& run : results.runs) {
    if (run.outcome == RunOutcome::kError || run.error) return 2;
    if (!run.outcome || !passes(*run.outcome)) status = 1;
  }
  return status;
}

bool envelope_harm_is_overlap(const nlohmann::json& cell) {
  const nlohmann::json harm = cell.value("harm", nlohmann::json());
  if (!harm.is_object()) return true;
  for (const char* key : {"outcome", "median", "min", "max"})
    if (harm.value(key, nlohmann::json()) != cell.value(key, nlohmann::json())) return false;
  return true;
}

}  // namespace locklab
