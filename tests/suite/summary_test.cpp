// Reading runs: why one does not pass, detection rates, outcomes per cell, totals.
#include "summary.h"

#include <gtest/gtest.h>

#include "progress.h"

namespace locklab::suite {
namespace {

using nlohmann::json;

checkers::Violation violation(const std::string& kind, const std::string& explanation) {
  return {kind, "L", {"c1", "c2"}, {3, 7}, {30, 70}, explanation};
}

// A completed run as run_algorithm() returns it: the expectation, what the
// checkers found, and the outcome decided from them.
RunResult run(const std::string& expected, const std::string& verdict,
              std::vector<checkers::Violation> violations, uint64_t seed = 1) {
  RunResult r;
  r.algorithm = "set-nx-px";
  r.expected = Expectation{*verdict_named(expected), {}, {}};
  r.verdict = *verdict_named(verdict);
  r.seed = seed;
  Check check;
  check.verdict = *verdict_named(verdict);
  for (const auto& kind : violation_kind_names()) check.counts[kind] = 0;
  for (const auto& v : violations) ++check.counts[v.kind];
  check.violations = std::move(violations);
  r.check = check;
  r.outcome = decide_outcome(r);
  return r;
}

// `r` with its outcome decided again after a change.
RunResult decided(RunResult r) {
  r.outcome = decide_outcome(r);
  return r;
}

RunResult failed_run(const std::string& error, uint64_t seed = 1) {
  RunResult r;
  r.algorithm = "set-nx-px";
  r.expected = Expectation{};
  r.seed = seed;
  r.error = error;
  return decided(r);
}

RunResult not_exercised(RunResult r) {
  r.faults = {{0, "pause", "c1 at step acquired (1st time)", false, std::nullopt, std::nullopt}};
  r.exercised = false;
  return decided(r);
}

RunResult not_applicable(RunResult r) {
  r.check.reset();
  r.verdict = Verdict::Unknown;
  r.not_applicable = "the adapter does not reach step after-validity-check";
  return decided(r);
}

// A run of an adapter standing in for set-nx-px that survived what breaks set-nx-px.
RunResult safer(uint64_t seed = 1) {
  RunResult r = run("violated", "safe", {}, seed);
  r.expected->kinds = {"mutual-exclusion"};
  r.like = "set-nx-px";
  return decided(r);
}

TEST(Summary, UnmetReasonSaysWhatWasMissed) {
  EXPECT_EQ(unmet_reason(run("safe", "safe", {})), "");

  std::string reason = unmet_reason(
      run("safe", "violated",
          {violation("mutual-exclusion", "c2 acquired L at event 7 while c1 held it")}));
  EXPECT_NE(reason.find("expected safe"), std::string::npos) << reason;
  EXPECT_NE(reason.find("c2 acquired L at event 7 while c1 held it"), std::string::npos) << reason;

  RunResult missed = run("violated", "safe", {});
  missed.expected->kinds = {"mutual-exclusion"};
  EXPECT_EQ(unmet_reason(decided(missed)),
            "expected violated (mutual-exclusion), measured safe: no violation found");

  RunResult wrong_kind = run("violated", "violated", {violation("mutual-exclusion", "m")});
  wrong_kind.expected->kinds = {"mutual-exclusion", "stale-write"};
  reason = unmet_reason(decided(wrong_kind));
  EXPECT_NE(reason.find("no stale-write was found"), std::string::npos) << reason;

  RunResult ruled_out =
      run("violated", "violated",
          {violation("mutual-exclusion", "m"), violation("stale-write", "c1 wrote after c2")});
  ruled_out.expected->absent = {"stale-write"};
  reason = unmet_reason(decided(ruled_out));
  EXPECT_NE(reason.find("found stale-write, which the scenario rules out: c1 wrote after c2"),
            std::string::npos)
      << reason;

  RunResult other_class = run("violated", "violated", {violation("mutual-exclusion", "m")});
  other_class.expected->classes = {"overrun"};
  other_class.check->violations[0].overlap = checkers::Overlap{};
  other_class.check->violations[0].overlap->overlap_class = "broken-lease";
  other_class.check->violations[0].overlap->explanation = "granted 300 ms inside c1's lease";
  other_class.check->harm = checkers::Harm{0, 0, 0, {{"broken-lease", 1}, {"overrun", 0}}};
  EXPECT_EQ(unmet_reason(decided(other_class)),
            "expected violated as overrun, but no overrun overlap was found (measured: "
            "broken-lease 1 (granted 300 ms inside c1's lease))");

  EXPECT_EQ(unmet_reason(failed_run("redis-server did not start")),
            "the run failed: redis-server did not start");
}

TEST(Summary, NotExercisedNamesTheFaultWhateverWasMeasured) {
  RunResult met_but_idle = not_exercised(run("safe", "safe", {}));
  EXPECT_EQ(met_but_idle.outcome, RunOutcome::kNotExercised);
  EXPECT_EQ(unmet_reason(met_but_idle),
            "fault 0 (pause, c1 at step acquired (1st time)) never fired");
  EXPECT_EQ(passing_note(met_but_idle), "");
}

TEST(Summary, PassingNotesForSaferThanAndNotApplicable) {
  EXPECT_EQ(unmet_reason(safer()), "") << "safer than the built-in passes";
  EXPECT_EQ(passing_note(safer()),
            "safer than set-nx-px: expected violated (mutual-exclusion), measured safe");
  RunResult skipped = not_applicable(run("safe", "safe", {}));
  EXPECT_EQ(unmet_reason(skipped), "");
  EXPECT_EQ(passing_note(skipped),
            "not applicable: the adapter does not reach step after-validity-check");
  EXPECT_EQ(passing_note(run("safe", "safe", {})), "");
}

TEST(Summary, CellCountsDetectionsOverCompletedRuns) {
  std::vector<RunResult> runs = {
      run("violated", "violated", {violation("mutual-exclusion", "m")}, 5),
      run("violated", "safe", {}, 6),
      run("violated", "violated", {violation("mutual-exclusion", "m")}, 7),
      failed_run("port in use", 8)};
  runs[0].seconds = 1.5;
  runs[1].seconds = 2.0;
  CellSummary cell = summarize_cell("pause", runs);
  EXPECT_EQ(cell.scenario, "pause");
  EXPECT_EQ(cell.algorithm, "set-nx-px");
  EXPECT_EQ(cell.runs, 4);
  EXPECT_EQ(cell.detections, 2);
  EXPECT_DOUBLE_EQ(cell.detection_rate, 2.0 / 3.0) << "a failed run measured nothing";
  EXPECT_EQ(cell.runs_met, 2);
  EXPECT_EQ(cell.met, false);
  EXPECT_EQ(cell.outcome, RunOutcome::kError);
  EXPECT_EQ(cell.errors, 1);
  EXPECT_EQ(cell.kinds["mutual-exclusion"], 2);
  EXPECT_EQ(cell.verdicts, (std::vector<std::string>{"violated", "safe", "violated", "error"}));
  EXPECT_EQ(cell.seeds, (std::vector<std::optional<uint64_t>>{5, 6, 7, 8}));
  EXPECT_DOUBLE_EQ(cell.seconds, 3.5);

  json document = cell.to_json();
  EXPECT_EQ(document["outcome"], "error");
  EXPECT_EQ(document["outcomes"], json({{"met", 2},
                                        {"unmet", 1},
                                        {"not-exercised", 0},
                                        {"not-applicable", 0},
                                        {"safer-than", 0},
                                        {"error", 1}}));
  EXPECT_EQ(document["seeds"], json({5, 6, 7, 8}));
  EXPECT_EQ(document["verdicts"], json({"violated", "safe", "violated", "error"}));

  CellSummary all_met = summarize_cell("calm", {run("safe", "safe", {})});
  EXPECT_EQ(all_met.met, true);
  EXPECT_EQ(all_met.outcome, RunOutcome::kMet);
  EXPECT_EQ(all_met.detection_rate, 0.0);
}

// Refusing while a fault was in force is counted apart from violations.
TEST(Summary, TheCellCountsHarmfulRunsAndTheRunsWithEachOverlapClass) {
  RunResult harmful = run("violated", "violated", {}, 1);
  harmful.check->harm = checkers::Harm{1, 0, 0, {{"broken-lease", 3}, {"overrun", 0}}};
  RunResult stopped = run("violated", "violated", {}, 2);
  stopped.check->harm = checkers::Harm{0, 0, 2, {{"overrun", 2}, {"stopped-by-fencing", 2}}};
  RunResult older = run("violated", "violated", {}, 3);  // no harm: before it
  CellSummary cell = summarize_cell("s", {decided(harmful), decided(stopped), decided(older)});
  EXPECT_EQ(cell.runs_with_harm, 2);
  EXPECT_EQ(cell.runs_harmful, 1);
  EXPECT_EQ(cell.overlap_runs["broken-lease"], 1);
  EXPECT_EQ(cell.overlap_runs["overrun"], 1);
  EXPECT_EQ(cell.overlap_runs["stopped-by-fencing"], 1);
  EXPECT_EQ(cell.to_json()["harm"]["runs_harmful"], 1);
  EXPECT_FALSE(summarize_cell("s", {decided(older)}).to_json().contains("harm"));
}

TEST(Summary, TheCellSaysWhatTheLibraryLeftBehindWithoutChangingItsOutcome) {
  RunResult quiet = run("safe", "safe", {}, 1);
  RunResult left = run("safe", "safe", {}, 2);
  left.run = 2;
  left.incidents = {{"c2", IncidentKind::kUnhandledRejection, "Command timed out", 2412.5},
                    {"c1", IncidentKind::kUncaughtException, "Thread died", 3000},
                    {"c1", IncidentKind::kUnhandledRejection, "again", 3100}};
  CellSummary cell = summarize_cell("s", {decided(quiet), decided(left)});
  EXPECT_EQ(cell.outcome, RunOutcome::kMet);
  EXPECT_EQ(cell.runs_with_incidents, 1);
  EXPECT_EQ(cell.incident_runs["unhandled-rejection"], 1) << "runs, not incidents";
  EXPECT_EQ(cell.incident_runs["uncaught-exception"], 1);
  const json out = cell.to_json();
  EXPECT_EQ(out["incidents"]["first"]["client"], "c2");
  EXPECT_EQ(out["incidents"]["first"]["run"], 2);
  EXPECT_DOUBLE_EQ(out["incidents"]["first"]["at_ms"].get<double>(), 2412.5);
  EXPECT_EQ(incident_text(left.incidents[0]),
            "c2: unhandled-rejection at 2.41 s (Command timed out); an application on Node's "
            "defaults (--unhandled-rejections=throw) would have crashed here");
  EXPECT_FALSE(summarize_cell("s", {decided(quiet)}).to_json().contains("incidents"));
}

TEST(Progress, AFinishedRunsLineSaysWhatItsLibraryLeftBehind) {
  RunResult left = decided(run("safe", "safe", {}, 2));
  EXPECT_EQ(progress_line(3, 9, "stalled-server × node-redisson", left, 4.9),
            "[3/9] stalled-server × node-redisson: safe (expected safe) ok 4.9s");
  left.incidents = {{"c1", IncidentKind::kUnhandledRejection, "Command timed out", 2412.5}};
  EXPECT_EQ(progress_line(3, 9, "stalled-server × node-redisson", left, 4.9),
            "[3/9] stalled-server × node-redisson: safe (expected safe) ok 4.9s ⚑ c1: "
            "unhandled-rejection at 2.41 s (Command timed out); an application on Node's defaults "
            "(--unhandled-rejections=throw) would have crashed here");
}

TEST(Summary, AvailabilityLostUnderAFaultIsCountedApart) {
  std::vector<RunResult> runs = {run("safe", "safe", {}, 5), run("safe", "safe", {}, 6)};
  runs[0].check->unavailable = {
      {"L", {"crash-node"}, 0, 4'000'000'000, {}, {}, ""},
      {"L", {"partition", "crash-node"}, 5'000'000'000, 5'500'000'000, {}, {}, ""}};
  CellSummary cell = summarize_cell("majority-down", runs);
  EXPECT_EQ(cell.runs_unavailable, 1);
  EXPECT_EQ(cell.unavailable_under, (std::vector<std::string>{"crash-node", "partition"}));
  EXPECT_DOUBLE_EQ(cell.longest_unavailable_seconds, 4.0);
  EXPECT_EQ(cell.detections, 0) << "not a violation";
  EXPECT_EQ(cell.outcome, RunOutcome::kMet);
  EXPECT_EQ(cell.to_json()["availability_lost"],
            json({{"runs", 1}, {"faults", {"crash-node", "partition"}}, {"longest_seconds", 4.0}}));
  const SuiteTotals totals = suite_totals({cell});
  EXPECT_EQ(totals.runs_unavailable, 1);
  EXPECT_EQ(SuiteTotals::from_json(totals.to_json()).runs_unavailable, 1);
  EXPECT_EQ(suite_exit_status(totals), 0);
  EXPECT_NE(totals_line(totals).find("1 runs refused the lock while a fault was in force"),
            std::string::npos);
}

TEST(Summary, CellOutcomeCountsEachOutcomeApart) {
  struct Case {
    const char* name;
    std::vector<RunResult> runs;
    RunOutcome outcome;
    bool met;
  } cases[] = {
      {"not exercised beats met",
       {run("safe", "safe", {}), not_exercised(run("safe", "safe", {}))},
       RunOutcome::kNotExercised,
       false},
      {"unmet beats not exercised",
       {run("safe", "violated", {violation("ownership", "o")}),
        not_exercised(run("safe", "safe", {}))},
       RunOutcome::kUnmet,
       false},
      {"every run not applicable",
       {not_applicable(run("safe", "safe", {}))},
       RunOutcome::kNotApplicable,
       true},
      {"every run safer", {safer(1), safer(2)}, RunOutcome::kSaferThan, true},
      {"met and safer",
       {run("violated", "violated", {violation("mutual-exclusion", "m")}), safer()},
       RunOutcome::kMet,
       true},
      {"safer and not applicable",
       {safer(), not_applicable(safer())},
       RunOutcome::kSaferThan,
       true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    CellSummary cell = summarize_cell("s", c.runs);
    EXPECT_EQ(cell.outcome, c.outcome);
    EXPECT_EQ(cell.met, c.met);
    EXPECT_EQ(cell.to_json()["outcome"], std::string(outcome_name(c.outcome)));
  }

  CellSummary skipped = summarize_cell("s", {not_applicable(run("safe", "safe", {}))});
  EXPECT_EQ(skipped.verdicts, std::vector<std::string>{"not-applicable"});
  EXPECT_EQ(skipped.detection_rate, 0.0) << "a run not run measured nothing";
  CellSummary idle = summarize_cell("s", {not_exercised(run("safe", "safe", {}))});
  EXPECT_EQ(idle.runs_met, 0) << "a run not exercised is never met";
}

TEST(Summary, TotalsAndExitStatus) {
  CellSummary met = summarize_cell("a", {run("safe", "safe", {})});
  CellSummary unmet = summarize_cell("b", {run("safe", "violated", {violation("ownership", "o")})});
  CellSummary failed = summarize_cell("c", {failed_run("boom")});

  SuiteTotals totals = suite_totals({met});
  EXPECT_EQ(totals.cells, 1);
  EXPECT_EQ(suite_exit_status(totals), 0);

  totals = suite_totals({met, unmet});
  EXPECT_EQ(totals.cells_unmet, 1);
  EXPECT_EQ(totals.detections, 1);
  EXPECT_EQ(suite_exit_status(totals), 1);

  totals = suite_totals({met, unmet, failed});
  EXPECT_EQ(totals.errors, 1);
  EXPECT_EQ(totals.cells_with_errors, 1);
  EXPECT_EQ(totals.cells_unmet, 1) << "a cell with an error is counted once, with the errors";
  EXPECT_EQ(totals.runs, 3);
  EXPECT_EQ(suite_exit_status(totals), 2) << "an error outranks an unmet expectation";

  EXPECT_EQ(suite_exit_status(suite_totals({})), 0) << "an empty shard has nothing unmet";
}

TEST(Summary, NotExercisedFailsWhileSaferThanAndNotApplicablePass) {
  CellSummary met = summarize_cell("a", {run("safe", "safe", {})});
  CellSummary idle = summarize_cell("b", {not_exercised(run("safe", "safe", {}))});
  CellSummary better = summarize_cell("c", {safer()});
  CellSummary skipped = summarize_cell("d", {not_applicable(run("safe", "safe", {}))});

  SuiteTotals totals = suite_totals({met, better, skipped});
  EXPECT_EQ(totals.cells, 3);
  EXPECT_EQ(totals.cells_met, 1);
  EXPECT_EQ(totals.cells_safer, 1);
  EXPECT_EQ(totals.cells_not_applicable, 1);
  EXPECT_EQ(totals.cells_unmet, 0);
  EXPECT_EQ(totals.cells_not_exercised, 0);
  EXPECT_EQ(suite_exit_status(totals), 0) << "safer-than and not-applicable do not fail";

  totals = suite_totals({met, idle, better, skipped});
  EXPECT_EQ(totals.cells_not_exercised, 1);
  EXPECT_EQ(totals.cells_met, 1) << "a cell not exercised is not met";
  EXPECT_EQ(totals.run_outcomes[RunOutcome::kNotExercised], 1);
  EXPECT_EQ(suite_exit_status(totals), 1) << "a fault that never fired fails the suite";

  json document = totals.to_json();
  EXPECT_EQ(document["cells_not_exercised"], 1);
  EXPECT_EQ(document["cells_safer"], 1);
  EXPECT_EQ(document["cells_not_applicable"], 1);
  EXPECT_EQ(document["run_outcomes"]["safer-than"], 1);
  EXPECT_EQ(SuiteTotals::from_json(document).to_json(), document);
  EXPECT_EQ(totals_line(totals),
            "4 cells (4 runs): 1 met, 0 NOT met, 0 with errors, 1 NOT EXERCISED, 1 safer than "
            "the built-in, 1 not applicable");
  EXPECT_EQ(totals_line(suite_totals({met})), "1 cells (1 runs): 1 met, 0 NOT met, 0 with errors");
}

}  // namespace
}  // namespace locklab::suite
