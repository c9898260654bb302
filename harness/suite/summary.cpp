#include "summary.h"

#include <algorithm>
#include <set>

#include "joined.h"

namespace locklab::suite {

using nlohmann::json;

namespace {

// The first listed violation of `kind` (any kind when empty), explained.
std::string explanation_of(const RunResult& run, const std::string& kind) {
  if (!run.check) return "";
  for (const auto& v : run.check->violations)
    if (kind.empty() || v.kind == kind) return v.explanation.empty() ? v.kind : v.explanation;
  return "";
}

// "broken-lease 2 (c2 was granted …)": every overlap class the run found,
// with how many, and the first overlap's explanation; "no overlap" when none.
std::string classes_measured(const RunResult& run) {
  if (!run.check) return "no overlap";
  std::vector<std::string> counts;
  for (OverlapClass c : run.check->found_classes()) {
    const std::string named(name(c));
    counts.push_back(named + " " + std::to_string(run.check->found_class(named)));
  }
  if (counts.empty()) return "no overlap";
  for (const auto& v : run.check->violations)
    if (v.overlap && !v.overlap->explanation.empty())
      return joined(counts) + " (" + v.overlap->explanation + ")";
  return joined(counts);
}

bool contains(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

json outcome_counts(const std::map<RunOutcome, int64_t>& counts) {
  json out = json::object();
  for (RunOutcome outcome : kOutcomes) {
    auto it = counts.find(outcome);
    out[std::string(outcome_name(outcome))] = it == counts.end() ? 0 : it->second;
  }
  return out;
}

}  // namespace

std::string unmet_reason(const RunResult& run) {
  const RunOutcome outcome = run.outcome.value_or(decide_outcome(run));
  if (outcome == RunOutcome::kError)
    return "the run failed: " + run.error.value_or("unknown error");
  if (outcome == RunOutcome::kNotExercised) return never_fired(run);
  if (outcome != RunOutcome::kUnmet) return "";
  const Expectation expected = run.expected.value_or(Expectation{});
  if (const std::string kind = missing_incident(expected, run); !kind.empty())
    return "expected the library to leave an " + kind + " behind, and it left " +
           (run.incidents.empty() ? std::string("nothing")
                                  : std::string(incident_name(run.incidents.front().kind)));
  const std::string got(verdict_name(run.verdict));
  const auto found = found_kinds(run);
  if (expected.verdict == Verdict::Safe && run.verdict == Verdict::Violated)
    return "expected safe, found " + joined(found) + ": " + explanation_of(run, "");
  if (expected.verdict != run.verdict) {
    return "expected " + expected_text(expected) + ", measured " + got +
           (run.verdict == Verdict::Safe ? ": no violation found" : "");
  }
  for (const auto& kind : expected.kinds)
    if (!contains(found, kind))
      return "expected " + expected_text(expected) + ", but no " + kind +
             " was found (found: " + (found.empty() ? "nothing" : joined(found)) + ")";
  for (const auto& kind : expected.absent)
    if (contains(found, kind))
      return "found " + kind + ", which the scenario rules out: " + explanation_of(run, kind);
  for (const auto& overlap_class : expected.classes)
    if (!run.check || run.check->found_class(overlap_class) == 0)
      return "expected " + expected_text(expected) + ", but no " + overlap_class +
             " overlap was found (measured: " + classes_measured(run) + ")";
  return "expected " + expected_text(expected) + ", measured " + got + " (expectation not met)";
}

std::string passing_note(const RunResult& run) {
  const RunOutcome outcome = run.outcome.value_or(decide_outcome(run));
  if (outcome == RunOutcome::kNotApplicable)
    return "not applicable: " + run.not_applicable.value_or("not run");
  if (outcome != RunOutcome::kSaferThan) return "";
  const auto found = found_kinds(run);
  return "safer than " + run.like.value_or("the built-in") + ": expected " +
         expected_text(run.expected.value_or(Expectation{})) + ", measured " +
         std::string(verdict_name(run.verdict)) + (found.empty() ? "" : " (" + joined(found) + ")");
}

json CellSummary::to_json() const {
  json kinds_json = json::object();
  for (const auto& [kind, n] : kinds) kinds_json[kind] = n;
  json seeds_json = json::array();
  for (const auto& seed : seeds) seeds_json.push_back(seed ? json(*seed) : json());
  json out{{"scenario", scenario},
           {"algorithm", algorithm},
           {"expected", expected ? expectation_json(*expected) : json::object()},
           {"runs", runs},
           {"runs_met", runs_met},
           {"met", met},
           {"outcome", outcome ? json(outcome_name(*outcome)) : json()},
           {"outcomes", outcome_counts(outcomes)},
           {"detections", detections},
           {"detection_rate", detection_rate},
           {"errors", errors},
           {"kinds", kinds_json},
           {"availability_lost",
            {{"runs", runs_unavailable},
             {"faults", unavailable_under},
             {"longest_seconds", longest_unavailable_seconds}}},
           {"verdicts", verdicts},
           {"seeds", seeds_json},
           {"seconds", seconds},
           {"timing", timing_json(timing)}};
  if (like) out["like"] = *like;
  if (runs_with_harm > 0)
    out["harm"] = {
        {"runs", runs_with_harm}, {"runs_harmful", runs_harmful}, {"overlaps", overlap_runs}};
  if (runs_with_incidents > 0) {
    out["incidents"] = {{"runs", runs_with_incidents}, {"kinds", incident_runs}};
    if (first_incident) {
      json first = {{"client", first_incident->client},
                    {"kind", incident_name(first_incident->kind)},
                    {"message", first_incident->message},
                    {"at_ms", first_incident->at_ms}};
      if (first_incident_run) first["run"] = *first_incident_run;
      out["incidents"]["first"] = std::move(first);
    }
  }
  if (carried_from) out["carried_from"] = *carried_from;
  if (!scenario_file.empty()) out["scenario_file"] = scenario_file;
  if (!results.empty()) out["results"] = results;
  return out;
}

CellSummary summarize_cell(const std::string& scenario, const std::vector<RunResult>& runs) {
  CellSummary cell;
  cell.scenario = scenario;
  if (!runs.empty()) {
    cell.algorithm = runs.front().algorithm;
    cell.expected = runs.front().expected;
    cell.like = runs.front().like;
  }
  std::vector<RunOutcome> outcomes;
  for (const auto& run : runs) {
    const RunOutcome outcome = run.outcome.value_or(decide_outcome(run));
    outcomes.push_back(outcome);
    ++cell.outcomes[outcome];
    const bool failed = outcome == RunOutcome::kError;
    const bool not_run = outcome == RunOutcome::kNotApplicable;
    cell.errors += failed;
    cell.detections += !failed && !not_run && run.verdict == Verdict::Violated;
    for (const auto& kind : found_kinds(run)) ++cell.kinds[kind];
    if (run.check && !run.check->unavailable.empty()) {
      ++cell.runs_unavailable;
      for (const auto& stretch : run.check->unavailable) {
        for (const auto& fault : stretch.faults)
          if (std::find(cell.unavailable_under.begin(), cell.unavailable_under.end(), fault) ==
              cell.unavailable_under.end())
            cell.unavailable_under.push_back(fault);
        cell.longest_unavailable_seconds = std::max(cell.longest_unavailable_seconds,
                                                    double(stretch.to_ns - stretch.from_ns) / 1e9);
      }
    }
    if (run.check && run.check->harm) {
      const checkers::Harm& harm = *run.check->harm;
      ++cell.runs_with_harm;
      cell.runs_harmful += harm.harmful();
      for (const auto& [name, n] : harm.overlaps) cell.overlap_runs[name] += n > 0;
    }
    if (!run.incidents.empty()) {
      ++cell.runs_with_incidents;
      std::set<IncidentKind> kinds;
      for (const auto& incident : run.incidents) kinds.insert(incident.kind);
      for (IncidentKind kind : kinds) ++cell.incident_runs[std::string(incident_name(kind))];
      if (!cell.first_incident) {
        cell.first_incident = run.incidents.front();
        cell.first_incident_run = run.run;
      }
    }
    cell.verdicts.push_back(failed    ? std::string(outcome_name(RunOutcome::kError))
                            : not_run ? std::string(outcome_name(RunOutcome::kNotApplicable))
                                      : std::string(verdict_name(run.verdict)));
    cell.seeds.push_back(run.seed);
    cell.seconds += run.seconds.value_or(0.0);
    if (run.timing) cell.timing.add(*run.timing);
  }
  if (!runs.empty() && std::all_of(runs.begin(), runs.end(), [](const RunResult& run) {
        return run.carried_from.has_value();
      }))
    cell.carried_from = runs.front().carried_from;
  cell.runs = int64_t(runs.size());
  cell.runs_met = cell.outcomes[RunOutcome::kMet];
  cell.outcome = cell_outcome(outcomes);
  cell.met = !runs.empty() && std::all_of(outcomes.begin(), outcomes.end(), passes);
  const int64_t completed = cell.runs - cell.errors - cell.outcomes[RunOutcome::kNotApplicable];
  cell.detection_rate = completed > 0 ? double(cell.detections) / double(completed) : 0.0;
  return cell;
}

json SuiteTotals::to_json() const {
  return {{"cells", cells},
          {"cells_met", cells_met},
          {"cells_safer", cells_safer},
          {"cells_not_applicable", cells_not_applicable},
          {"cells_not_exercised", cells_not_exercised},
          {"cells_unmet", cells_unmet},
          {"cells_with_errors", cells_with_errors},
          {"runs", runs},
          {"runs_met", runs_met},
          {"detections", detections},
          {"errors", errors},
          {"runs_unavailable", runs_unavailable},
          {"run_outcomes", outcome_counts(run_outcomes)}};
}

SuiteTotals SuiteTotals::from_json(const json& totals) {
  SuiteTotals out;
  auto read = [&](const char* key) { return totals.value(key, int64_t(0)); };
  out.cells = read("cells");
  out.cells_met = read("cells_met");
  out.cells_safer = read("cells_safer");
  out.cells_not_applicable = read("cells_not_applicable");
  out.cells_not_exercised = read("cells_not_exercised");
  out.cells_unmet = read("cells_unmet");
  out.cells_with_errors = read("cells_with_errors");
  out.runs = read("runs");
  out.runs_met = read("runs_met");
  out.detections = read("detections");
  out.errors = read("errors");
  out.runs_unavailable = read("runs_unavailable");
  const json outcomes = totals.value("run_outcomes", json::object());
  for (RunOutcome outcome : kOutcomes)
    out.run_outcomes[outcome] = outcomes.value(std::string(outcome_name(outcome)), int64_t(0));
  return out;
}

SuiteTotals suite_totals(const std::vector<CellSummary>& cells) {
  SuiteTotals totals;
  for (const auto& cell : cells) {
    ++totals.cells;
    switch (cell.outcome.value_or(RunOutcome::kNotApplicable)) {
      case RunOutcome::kMet:
        ++totals.cells_met;
        break;
      case RunOutcome::kSaferThan:
        ++totals.cells_safer;
        break;
      case RunOutcome::kNotApplicable:
        ++totals.cells_not_applicable;
        break;
      case RunOutcome::kNotExercised:
        ++totals.cells_not_exercised;
        break;
      case RunOutcome::kUnmet:
        ++totals.cells_unmet;
        break;
      case RunOutcome::kError:
        ++totals.cells_with_errors;
        break;
    }
    totals.runs += cell.runs;
    totals.runs_met += cell.runs_met;
    totals.detections += cell.detections;
    totals.errors += cell.errors;
    totals.runs_unavailable += cell.runs_unavailable;
    for (const auto& [outcome, n] : cell.outcomes) totals.run_outcomes[outcome] += n;
  }
  return totals;
}

int suite_exit_status(const SuiteTotals& totals) {
  if (totals.errors > 0 || totals.cells_with_errors > 0) return 2;
  return totals.cells_unmet > 0 || totals.cells_not_exercised > 0 ? 1 : 0;
}

std::string totals_line(const SuiteTotals& t) {
  std::string line = std::to_string(t.cells) + " cells (" + std::to_string(t.runs) +
                     " runs): " + std::to_string(t.cells_met) + " met, " +
                     std::to_string(t.cells_unmet) + " NOT met, " +
                     std::to_string(t.cells_with_errors) + " with errors";
  if (t.cells_not_exercised > 0)
    line += ", " + std::to_string(t.cells_not_exercised) + " NOT EXERCISED";
  if (t.cells_safer > 0) line += ", " + std::to_string(t.cells_safer) + " safer than the built-in";
  if (t.cells_not_applicable > 0)
    line += ", " + std::to_string(t.cells_not_applicable) + " not applicable";
  if (t.runs_unavailable > 0)
    line += "; " + std::to_string(t.runs_unavailable) +
            " runs refused the lock while a fault was in force (availability, not a violation)";
  return line;
}

}  // namespace locklab::suite
