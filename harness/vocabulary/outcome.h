// How a run, a cell and an envelope search stand: the outcome words that
// results.json, suite.json, envelope.json, sweep.json, JUnit, progress lines
// and the reports spell, one table each. Nothing else spells them.
#pragma once

#include <optional>
#include <string_view>

#include "word_table.h"

namespace locklab {

// How a run stands against what its scenario expects of it. A cell (the runs
// of one scenario × algorithm) stands the same ways (cell_outcome, results.h).
enum class RunOutcome {
  kMet,            // it measured what the expectation predicts
  kUnmet,          // it measured something the expectation rules out
  kNotExercised,   // some fault never fired: the story was not played, whatever was measured
  kNotApplicable,  // the cell was not run; RunResult::not_applicable says why
  kSaferThan,      // a lock standing in for a built-in survived a story that breaks the built-in
  kError,          // the run could not be completed
};

struct RunOutcomeInfo {
  RunOutcome outcome;
  std::string_view name;     // as results.json and suite.json spell it
  std::string_view meaning;  // one line for people
  std::string_view style;    // the reports' CSS class for it
  std::string_view badge;    // the reports' badge (safer-than: followed by the built-in's name)
  std::string_view tip;      // the badge's tooltip
  // The progress line's word for a finished run (safer-than: followed by the
  // built-in's name), and the running tally's label.
  std::string_view progress;
  std::string_view tally;
};

inline constexpr WordTable<RunOutcomeInfo, &RunOutcomeInfo::outcome, 6> kRunOutcomes({
    {RunOutcome::kMet, "met", "it measured what the expectation predicts", "met", "✓ met",
     "measured what the scenario expects", "ok", "ok"},
    {RunOutcome::kUnmet, "unmet", "it measured something the expectation rules out", "not-met",
     "✗ UNMET", "the expectation was NOT met", "NOT MET", "not met"},
    {RunOutcome::kNotExercised, "not-exercised",
     "some fault never fired: the story was not played, whatever was measured", "not-exercised",
     "⚠ NOT EXERCISED", "a fault never fired: the run did not play the scenario's story",
     "NOT EXERCISED", "not exercised"},
    {RunOutcome::kNotApplicable, "not-applicable", "the cell was not run", "not-applicable",
     "not applicable", "not run: the scenario does not apply to this lock", "not applicable",
     "n/a"},
    {RunOutcome::kSaferThan, "safer-than",
     "a lock standing in for a built-in survived a story that breaks the built-in", "safer",
     "✓ safer than", "survived a story that breaks the built-in it stands in for", "safer than",
     "safer"},
    {RunOutcome::kError, "error", "the run could not be completed", "failed", "✗ run failed",
     "the run could not be completed", "error ERROR", "errors"},
});

// Every outcome, in the order displays list them.
inline constexpr RunOutcome kOutcomes[] = {RunOutcome::kMet,           RunOutcome::kSaferThan,
                                           RunOutcome::kNotApplicable, RunOutcome::kNotExercised,
                                           RunOutcome::kUnmet,         RunOutcome::kError};

// The outcome's name in results.json: "met", "unmet", "not-exercised",
// "not-applicable", "safer-than" or "error".
inline std::string_view outcome_name(RunOutcome outcome) {
  return kRunOutcomes.name(outcome);
}

// The outcome named `name` (as outcome_name() spells it); nullopt for any other text.
inline std::optional<RunOutcome> outcome_named(std::string_view name) {
  return kRunOutcomes.named(name);
}

// The answer of a search for a breaking point: the boundary search's own
// (breaks, never-breaks, breaks-without-fault, or error when it stopped), an
// envelope's (one repeat, or all repeats together, which also says why a
// search stopped), and a sweep's (breaks, never-breaks or error).
enum class SearchOutcome {
  kBreaks,              // broken at `breaking`, safe at `last_safe`
  kNeverBreaks,         // safe at the harsh end of the axis
  kBreaksWithoutFault,  // broken at the gentle end: the story breaks it with no fault
  kNotApplicable,       // the lock cannot be told the story
  kNotExercised,        // a run did not play the story: one of its faults never fired
  kError,               // the search could not be completed
};

inline constexpr auto kSearchOutcomes = word_table<SearchOutcome>({
    {SearchOutcome::kBreaks, "breaks", "broken at the breaking size, safe at the last safe one"},
    {SearchOutcome::kNeverBreaks, "never-breaks", "safe at the harsh end of the axis"},
    {SearchOutcome::kBreaksWithoutFault, "breaks-without-fault",
     "broken at the gentle end: the story breaks it with no fault"},
    {SearchOutcome::kNotApplicable, "not-applicable", "the lock cannot be told the story"},
    {SearchOutcome::kNotExercised, "not-exercised",
     "a run did not play the story: one of its faults never fired"},
    {SearchOutcome::kError, "error", "the search could not be completed"},
});

// "breaks", "never-breaks", "breaks-without-fault", "not-applicable",
// "not-exercised", "error".
inline std::string_view search_outcome_name(SearchOutcome outcome) {
  return kSearchOutcomes.name(outcome);
}

}  // namespace locklab
