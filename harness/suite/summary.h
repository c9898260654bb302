// What a suite makes of its runs: each run is a RunResult (harness/results,
// FORMAT.md there) with its outcome decided; these functions read runs,
// never run anything. A run passes when its outcome is met, safer-than or
// not-applicable; it fails when unmet, not-exercised or error.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "results.h"

namespace locklab::suite {

// Why `run` does not pass, in one line for people: the error; the faults
// that never fired (not-exercised); the expected verdict or kind that was
// not measured, or the explanation of the violation that was not expected
// (unmet). Empty when the run passes.
std::string unmet_reason(const RunResult& run);

// What a run that passes without simply meeting its expectation says, in
// one line: "safer than set-nx-px: expected violated (mutual-exclusion),
// measured safe", or "not applicable: <why>". Empty for any other run.
std::string passing_note(const RunResult& run);

// The suite's entry for one scenario × algorithm. In results.json:
//   {scenario, algorithm, expected, like (when set), runs, runs_met, met,
//    outcome, outcomes{<outcome>: runs}, detections, detection_rate, errors,
//    kinds{kind: runs that found it}, availability_lost{runs, faults,
//    longest_seconds}, verdicts[], seeds[], seconds, scenario_file, results}
struct CellSummary {
  std::string scenario;
  std::string algorithm;
  std::optional<Expectation> expected;  // of the first run
  std::optional<std::string> like;      // the built-in an adapter stands in for
  int64_t runs = 0;
  int64_t runs_met = 0;                    // runs whose outcome is met
  std::map<RunOutcome, int64_t> outcomes;  // runs per outcome (every outcome, 0 when none)
  std::optional<RunOutcome> outcome;       // cell_outcome() of the runs; absent for no runs
  bool met = false;                        // there are runs and every one passes
  int64_t detections = 0;                  // runs whose verdict is "violated"
  double detection_rate = 0;               // detections / runs completed (0 when none)
  int64_t errors = 0;                      // runs that could not be completed
  std::map<std::string, int64_t> kinds;    // violation kind -> runs that found it
  // Runs in which nobody could take the lock under a fault for longer than
  // the liveness limit (availability lost, not a violation: checkers.h), the
  // kinds of the faults in force then, and the longest such stretch.
  int64_t runs_unavailable = 0;
  std::vector<std::string> unavailable_under;
  double longest_unavailable_seconds = 0;
  // What the runs' stores suffered (checkers.h, "harm"), over the runs whose
  // check says: those runs, the harmful ones, and per overlap class (and
  // "stopped-by-fencing") the runs that had one. In results.json as
  // harm{runs, runs_harmful, overlaps{class: runs}}, when some run says.
  int64_t runs_with_harm = 0;
  int64_t runs_harmful = 0;
  std::map<std::string, int64_t> overlap_runs;
  // What the library left behind (RunResult::incidents): the runs with an
  // incident, per kind the runs with one, and the earliest incident of the
  // first such run (its run number beside it). In results.json as
  // incidents{runs, kinds{kind: runs}, first{client, kind, message, at_ms, run}}.
  int64_t runs_with_incidents = 0;
  std::map<std::string, int64_t> incident_runs;
  std::optional<Incident> first_incident;
  std::optional<int64_t> first_incident_run;
  // Per run: its verdict, "error" for a failed run, "not-applicable" for one not run.
  std::vector<std::string> verdicts;
  std::vector<std::optional<uint64_t>> seeds;  // per run
  double seconds = 0;                          // the runs' seconds, summed
  RunTiming timing;  // the runs' timing, summed (timing{…} in results.json)
  // Every run was carried over from this earlier suite (--reuse), not run again.
  std::optional<std::string> carried_from;
  std::string scenario_file;  // set by run_suite: the scenario file as given
  std::string results;        // set by run_suite: the scenario's results.json, relative to OUT

  // The entry as the suite's results.json holds it.
  nlohmann::json to_json() const;
};

// The entry for one scenario × algorithm from its runs (in run order, all of
// that algorithm). A run that was completed is one neither an error nor
// not applicable.
CellSummary summarize_cell(const std::string& scenario, const std::vector<RunResult>& runs);

// Totals over the cells. Cells are counted by their outcome, each in one
// field: cells = cells_met + cells_safer + cells_not_applicable +
// cells_not_exercised + cells_unmet + cells_with_errors.
struct SuiteTotals {
  int64_t cells = 0;
  int64_t cells_met = 0;
  int64_t cells_safer = 0;           // an adapter survived what breaks the built-in
  int64_t cells_not_applicable = 0;  // not run
  int64_t cells_not_exercised = 0;   // some fault never fired
  int64_t cells_unmet = 0;
  int64_t cells_with_errors = 0;  // some run could not be completed
  int64_t runs = 0, runs_met = 0, detections = 0, errors = 0;
  int64_t runs_unavailable = 0;                // runs that lost availability under a fault
  std::map<RunOutcome, int64_t> run_outcomes;  // runs per outcome (every outcome, 0 when none)

  // {cells, cells_met, cells_safer, cells_not_applicable, cells_not_exercised,
  //  cells_unmet, cells_with_errors, runs, runs_met, detections, errors,
  //  runs_unavailable, run_outcomes{<outcome>: runs}}
  nlohmann::json to_json() const;
  // Reads to_json()'s document; a missing field is 0.
  static SuiteTotals from_json(const nlohmann::json& totals);
};

// Totals over summarize_cell() entries.
SuiteTotals suite_totals(const std::vector<CellSummary>& cells);

// 2 when some run could not be completed, else 1 when some cell is unmet or
// not exercised, else 0 (met, safer-than and not-applicable cells pass).
int suite_exit_status(const SuiteTotals& totals);

// The totals for people, one line, e.g. "12 cells (12 runs): 9 met, 1 NOT met,
// 0 with errors, 1 NOT EXERCISED, 1 safer than the built-in"; the rarer
// outcomes only when some cell has them.
std::string totals_line(const SuiteTotals& totals);

}  // namespace locklab::suite
