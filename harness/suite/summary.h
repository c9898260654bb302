// What a suite makes of its runs: each run is the document run_algorithm()
// returns (algorithm, verdict, expected, expectation_met, error, stats,
// check{verdict, counts, violations}); these functions read it, never run.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace locklab::suite {

// The violation kinds the checkers found in `run`, sorted, each once.
std::vector<std::string> found_kinds(const nlohmann::json& run);

// Why `run` did not meet its expectation, in one line for people: the error,
// the expected verdict or kind that was not measured, or the explanation of
// the violation that was not expected. Empty when the run met it.
std::string unmet_reason(const nlohmann::json& run);

// The suite's entry for one scenario × algorithm from its runs (in run
// order, all of that algorithm):
//   {scenario, algorithm, expected, runs, runs_met, met, detections,
//    detection_rate, errors, kinds{kind: runs that found it}, verdicts[],
//    seeds[], seconds}
// `met` is true when every run met its expectation; a detection is a run
// whose verdict is "violated"; detection_rate = detections / runs that
// completed (0 when none did). `seconds` sums each run's "seconds" field.
nlohmann::json summarize_cell(const std::string& scenario, const std::vector<nlohmann::json>& runs);

// Totals over summarize_cell() entries: {cells, cells_met, cells_unmet,
// cells_with_errors, runs, runs_met, detections, errors}.
nlohmann::json suite_totals(const nlohmann::json& cells);

// 2 when some run could not be completed, else 1 when some cell did not
// meet its expectation, else 0.
int suite_exit_status(const nlohmann::json& totals);

}  // namespace locklab::suite
