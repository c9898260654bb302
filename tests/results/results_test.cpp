// results.json as one type: the round trip, tolerant reading, the outcome
// decision, and the words and exit status `locklab run` derives from it.
#include "results.h"

#include <gtest/gtest.h>

#include <fstream>

#include "temp_dir.h"

namespace locklab {
namespace {

using nlohmann::json;

Check check_of(const std::string& verdict, std::map<std::string, int64_t> found) {
  Check check;
  check.verdict = *verdict_named(verdict);
  for (const auto& kind : violation_kind_names()) check.counts[kind] = 0;
  for (const auto& [kind, n] : found) check.counts[kind] = n;
  return check;
}

// A run with every field set.
RunResult full_run() {
  RunResult run;
  run.algorithm = "redis-py-lock";
  run.adapter = "/usr/bin/python3 examples/adapters/redis_py_lock.py";
  run.like = "set-nx-px";
  run.expected = Expectation{Verdict::Violated, {"mutual-exclusion"}, {"stale-write"}, {"overrun"}};
  run.history = "run-2/redis-py-lock/history.jsonl";
  run.seed = 18446744073709551615ull;  // the largest seed survives
  run.run = 2;
  run.seconds = 2.5;
  run.stats = RunStats{120, 7, 1, 118, 2, 1, {{"L", 118}}, 512};
  run.check = check_of("violated", {{"mutual-exclusion", 2}, {"fencing-saved", 1}});
  run.check->per_lock = {{"L", {{"mutual-exclusion", 2}}}};
  run.check->violations = {{"mutual-exclusion",
                            "L",
                            {"c1", "c2"},
                            {3, 9, 12},
                            {30, 90, 120},
                            "c2 acquired L at event 9"}};
  run.check->violations[0].overlap = checkers::Overlap{
      "overrun", "validity", 1000, std::nullopt, 1500.5, true, 0, 1, "overrun: …"};
  checkers::Violation unclassified = run.check->violations[0];
  unclassified.overlap =
      checkers::Overlap{"unclassified", "ttl", 1000, std::nullopt,      std::nullopt,
                        false,          0,     0,    "unclassified: …", "grant-window"};
  run.check->violations.push_back(unclassified);
  run.check->harm = checkers::Harm{
      0,
      0,
      1,
      {{"broken-lease", 0}, {"overrun", 2}, {"unclassified", 0}, {"stopped-by-fencing", 1}}};
  run.check->closest_call.write_before_lease_end =
      checkers::Margin{12.25, 0.012, "L", {"c1"}, {3, 5, 6}, {30, 50, 60}, "c1's write …"};
  run.check->unavailable = {
      {"L", {"crash-node"}, 4000, 9000, {14, 15, 30}, {4000, 4100, 9000}, "L could not be taken"}};
  run.verdict = Verdict::Violated;
  run.faults = {{0, "pause", "c1 at step acquired (1st time)", true, 12.5, 1012.5},
                {1, "crash-client", "at 1200 ms", true, 1200.0, std::nullopt},
                {2, "partition", "at 9000 ms", false, std::nullopt, std::nullopt}};
  run.exercised = false;
  run.outcome = decide_outcome(run);
  return run;
}

TEST(Results, EveryFieldSurvivesTheRoundTrip) {
  ScenarioResults results;
  results.scenario = "pause-longer-than-lease";
  results.description = "A stop-the-world pause outlasts the lease.";
  results.scenario_file = "scenarios/pause-longer-than-lease.json";
  results.seed = 7;
  results.runs_per_algorithm = 3;
  results.locklab_version = "0.1.0";
  results.runs.push_back(full_run());
  RunResult skipped;
  skipped.algorithm = "mine";
  skipped.not_applicable = "the adapter does not reach step after-validity-check";
  skipped.outcome = decide_outcome(skipped);
  results.runs.push_back(skipped);
  RunResult failed;
  failed.algorithm = "redlock";
  failed.error = "redis-server did not start";
  failed.outcome = decide_outcome(failed);
  results.runs.push_back(failed);

  // Through text, as a file is read back.
  json text = json::parse(results.to_json().dump(2));
  ScenarioResults read = ScenarioResults::from_json(text, "results.json");
  EXPECT_EQ(read, results);
  EXPECT_EQ(read.to_json(), results.to_json());

  RunResult bare;
  bare.algorithm = "set-nx-px";
  EXPECT_EQ(RunResult::from_json(bare.to_json(), "r.json"), bare) << "nothing is invented";
}

TEST(Results, FieldsKeepTheirNamesInTheDocument) {
  json run = full_run().to_json();
  for (const char* field :
       {"algorithm", "adapter", "like", "expected", "history", "seed", "run", "seconds", "error",
        "stats", "check", "verdict", "outcome", "expectation_met", "faults", "exercised"})
    EXPECT_TRUE(run.contains(field)) << field;
  EXPECT_FALSE(run.contains("not_applicable")) << "present only when the cell was not run";
  EXPECT_TRUE(run["error"].is_null()) << "error is null when the run completed";
  EXPECT_EQ(run["outcome"], "not-exercised");
  EXPECT_EQ(run["expectation_met"], false) << "true only for met";
  EXPECT_EQ(run["exercised"], false);
  EXPECT_EQ(run["expected"], json({{"verdict", "violated"},
                                   {"kinds", {"mutual-exclusion"}},
                                   {"absent", {"stale-write"}},
                                   {"classes", {"overrun"}}}));
  EXPECT_EQ(run["faults"][0], json({{"index", 0},
                                    {"kind", "pause"},
                                    {"trigger", "c1 at step acquired (1st time)"},
                                    {"fired", true},
                                    {"fired_at_ms", 12.5},
                                    {"ended_at_ms", 1012.5}}));
  EXPECT_FALSE(run["faults"][1].contains("ended_at_ms")) << "an instant fault never ends";
  EXPECT_FALSE(run["faults"][2].contains("fired_at_ms"));
  EXPECT_EQ(run["stats"]["counters"], json({{"L", 118}}));
  EXPECT_EQ(run["check"]["violations"][0]["times_ns"], json({30, 90, 120}));
  EXPECT_EQ(run["check"]["per_lock"]["L"]["mutual-exclusion"], 2);
  const json& overlap = run["check"]["violations"][0];
  EXPECT_EQ(overlap["class"], "overrun");
  EXPECT_EQ(overlap["overlap"]["past_lease_ms"], 1500.5);
  EXPECT_EQ(overlap["overlap"]["past_leases"], 1.501);
  EXPECT_EQ(overlap["overlap"]["clock_misjudged"], true);
  EXPECT_EQ(overlap["overlap"]["late_writes"], json({{"accepted", 0}, {"rejected", 1}}));
  EXPECT_EQ(overlap["overlap"]["stopped_by_fencing"], true);
  EXPECT_EQ(run["check"]["harm"]["harmful"], false);
  EXPECT_EQ(run["check"]["harm"]["rejected_by_fencing"], 1);
  EXPECT_EQ(run["check"]["harm"]["overlaps"]["overrun"], 2);
  EXPECT_EQ(run["check"]["closest_call"]["write_before_lease_end"]["ms"], 12.25);
  EXPECT_TRUE(run["check"]["closest_call"]["grant_after_lease"].is_null());

  RunResult met;
  met.algorithm = "set-nx-px";
  met.expected = Expectation{};
  met.check = check_of("safe", {});
  met.verdict = Verdict::Safe;
  met.outcome = decide_outcome(met);
  EXPECT_EQ(met.to_json()["expectation_met"], true);
  EXPECT_EQ(met.to_json()["outcome"], "met");
  EXPECT_EQ(met.to_json()["faults"], json::array());
  EXPECT_EQ(met.to_json()["exercised"], true);
}

TEST(Results, ReadingIsTolerantOfOlderAndNewerFiles) {
  json document = {{"runs", {{{"algorithm", "set-nx-px"}, {"from-the-future", {1, 2}}}}},
                   {"also-new", true}};
  ScenarioResults read = ScenarioResults::from_json(document, "r.json");
  ASSERT_EQ(read.runs.size(), 1u);
  const RunResult& run = read.runs[0];
  EXPECT_EQ(run.algorithm, "set-nx-px");
  EXPECT_EQ(run.verdict, Verdict::Unknown);
  EXPECT_FALSE(run.outcome) << "nothing expected, nothing decided";
  EXPECT_TRUE(run.exercised);
  EXPECT_TRUE(run.faults.empty());

  // Files from before "outcome": it comes from error and expectation_met.
  auto outcome_of = [](json run) {
    run["algorithm"] = "a";
    return RunResult::from_json(run, "old.json").outcome;
  };
  EXPECT_EQ(outcome_of({{"expectation_met", true}}), RunOutcome::kMet);
  EXPECT_EQ(outcome_of({{"expectation_met", false}}), RunOutcome::kUnmet);
  EXPECT_EQ(outcome_of({{"expectation_met", false}, {"error", "boom"}}), RunOutcome::kError);
  EXPECT_EQ(outcome_of({{"expected", {{"verdict", "safe"}}}, {"verdict", "safe"}}),
            RunOutcome::kMet);
  EXPECT_EQ(outcome_of({{"expected", {{"verdict", "safe"}}}, {"verdict", "violated"}}),
            RunOutcome::kUnmet);
  EXPECT_EQ(outcome_of({{"outcome", "safer-than"}, {"expectation_met", false}}),
            RunOutcome::kSaferThan);
  EXPECT_EQ(outcome_of({{"outcome", "some-newer-outcome"}, {"expectation_met", true}}),
            RunOutcome::kMet);
  // A structured error from a newer runner is kept as its JSON text.
  json structured = {{"algorithm", "a"}, {"error", {{"code", 7}}}};
  EXPECT_EQ(RunResult::from_json(structured, "r.json").error, "{\"code\":7}");
  // A check without counts or verdict counts its listed violations.
  json listed = {{"algorithm", "a"},
                 {"check", {{"violations", {{{"kind", "ownership"}}, {{"kind", "ownership"}}}}}}};
  RunResult hand_written = RunResult::from_json(listed, "r.json");
  EXPECT_EQ(hand_written.verdict, Verdict::Violated);
  EXPECT_EQ(hand_written.check->found("ownership"), 2);
  EXPECT_EQ(found_kinds(hand_written), std::vector<std::string>{"ownership"});
}

void expect_error(const json& document, const std::string& field) {
  try {
    ScenarioResults::from_json(document, "dir/results.json");
    ADD_FAILURE() << "no error for " << field;
  } catch (const ResultsError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("dir/results.json: ", 0), 0u) << what;
    EXPECT_NE(what.find(field), std::string::npos) << what;
  }
}

TEST(Results, AWrongTypeIsAnErrorNamingTheFileAndTheField) {
  auto with_run = [](json run) { return json{{"runs", {run}}}; };
  expect_error(json::array(), "not a JSON object");
  expect_error(json::object(), "field 'runs' is missing");
  expect_error({{"runs", 3}}, "field 'runs' must be an array");
  expect_error({{"runs", {7}}}, "field 'runs[0]' must be an object");
  expect_error(with_run({{"verdict", "safe"}}), "field 'runs[0].algorithm' is missing");
  expect_error({{"seed", "seven"}, {"runs", json::array()}}, "field 'seed' must be a non-negative");
  expect_error(with_run({{"algorithm", "a"}, {"seed", -1}}), "field 'runs[0].seed'");
  expect_error(with_run({{"algorithm", "a"}, {"outcome", 3}}), "field 'runs[0].outcome'");
  expect_error(with_run({{"algorithm", "a"}, {"exercised", "yes"}}),
               "field 'runs[0].exercised' must be true or false");
  expect_error(with_run({{"algorithm", "a"}, {"faults", {{{"fired", 1}}}}}),
               "field 'runs[0].faults[0].fired' must be true or false");
  expect_error(with_run({{"algorithm", "a"}, {"faults", {{{"fired_at_ms", "soon"}}}}}),
               "field 'runs[0].faults[0].fired_at_ms' must be a number");
  expect_error(with_run({{"algorithm", "a"}, {"check", {{"counts", {{"ownership", "1"}}}}}}),
               "field 'runs[0].check.counts.ownership' must be an integer");
  expect_error(with_run({{"algorithm", "a"}, {"check", {{"violations", {{{"events", {"7"}}}}}}}}),
               "field 'runs[0].check.violations[0].events' must be an array of integers");
  expect_error(with_run({{"algorithm", "a"}, {"expected", {{"kinds", "mutual-exclusion"}}}}),
               "field 'runs[0].expected.kinds' must be an array of strings");
  expect_error(with_run({{"algorithm", "a"}, {"not_applicable", true}}),
               "field 'runs[0].not_applicable' must be a string");
}

TEST(Results, ReadResultsFileNamesTheFile) {
  TempDir dir("results-test");
  const auto file = dir.path() / "results.json";
  EXPECT_THROW(read_results_file(file), ResultsError);
  std::ofstream(file) << "{\"runs\": [";
  try {
    read_results_file(file);
    ADD_FAILURE() << "no error";
  } catch (const ResultsError& e) {
    EXPECT_NE(std::string(e.what()).find(file.string() + ": not valid JSON"), std::string::npos)
        << e.what();
  }
  std::ofstream(file, std::ios::trunc) << full_run().to_json().dump();
  EXPECT_THROW(read_results_file(file), ResultsError) << "a run is not a results document";
  ScenarioResults results;
  results.runs.push_back(full_run());
  std::ofstream(file, std::ios::trunc) << results.to_json().dump();
  EXPECT_EQ(read_results_file(file), results);
}

TEST(Results, OutcomeNamesRoundTrip) {
  const std::vector<std::string> names = {"met",           "safer-than", "not-applicable",
                                          "not-exercised", "unmet",      "error"};
  size_t i = 0;
  for (RunOutcome outcome : kOutcomes) {
    EXPECT_EQ(outcome_name(outcome), names[i++]);
    EXPECT_EQ(outcome_named(outcome_name(outcome)), outcome);
  }
  EXPECT_FALSE(outcome_named("Met"));
  EXPECT_TRUE(passes(RunOutcome::kMet));
  EXPECT_TRUE(passes(RunOutcome::kSaferThan));
  EXPECT_TRUE(passes(RunOutcome::kNotApplicable));
  EXPECT_FALSE(passes(RunOutcome::kUnmet));
  EXPECT_FALSE(passes(RunOutcome::kNotExercised));
  EXPECT_FALSE(passes(RunOutcome::kError));
}

TEST(ExpectationMet, VerdictKindsAndAbsentKinds) {
  const Expectation safe{Verdict::Safe, {}, {}};
  const Expectation broken{Verdict::Violated, {"mutual-exclusion", "stale-write"}, {}};
  const Expectation fenced{Verdict::Violated, {"mutual-exclusion"}, {"stale-write"}};
  EXPECT_TRUE(expectation_met(safe, check_of("safe", {})));
  EXPECT_FALSE(expectation_met(safe, check_of("violated", {{"ownership", 1}})));
  EXPECT_TRUE(
      expectation_met(broken, check_of("violated", {{"mutual-exclusion", 1}, {"stale-write", 3}})));
  EXPECT_FALSE(expectation_met(broken, check_of("violated", {{"mutual-exclusion", 1}})));
  EXPECT_FALSE(expectation_met(broken, check_of("safe", {})));
  EXPECT_TRUE(expectation_met(fenced, check_of("violated", {{"mutual-exclusion", 2}})));
  EXPECT_FALSE(
      expectation_met(fenced, check_of("violated", {{"mutual-exclusion", 2}, {"stale-write", 1}})));
}

// A check whose overlaps are counted by class, as the checkers' harm counts them.
Check overlaps_of(std::map<std::string, int64_t> by_class) {
  Check check = check_of("violated", {{"mutual-exclusion", 1}});
  check.harm = checkers::Harm{};
  check.harm->overlaps = std::move(by_class);
  return check;
}

// An expected class must be found among the run's overlaps; any other class
// does not stand in for it.
TEST(ExpectationMet, AnExpectedClassMustBeAmongTheOverlaps) {
  const Expectation overrun{Verdict::Violated, {"mutual-exclusion"}, {}, {"overrun"}};
  EXPECT_TRUE(expectation_met(overrun, overlaps_of({{"overrun", 1}, {"broken-lease", 0}})));
  EXPECT_TRUE(expectation_met(overrun, overlaps_of({{"overrun", 1}, {"broken-lease", 2}})));
  EXPECT_FALSE(expectation_met(overrun, overlaps_of({{"overrun", 0}, {"broken-lease", 1}})));
  EXPECT_FALSE(expectation_met(overrun, overlaps_of({{"unclassified", 1}})));
  EXPECT_FALSE(expectation_met(overrun, check_of("violated", {{"mutual-exclusion", 1}})))
      << "no harm and no listed overlap: nothing of the class was found";

  // A file from before harm: the listed violations' classes.
  Check listed = check_of("violated", {{"mutual-exclusion", 1}});
  listed.violations = {{"mutual-exclusion", "L", {"c1", "c2"}, {3, 9}, {30, 90}, "c2 acquired"}};
  listed.violations[0].overlap = checkers::Overlap{};
  listed.violations[0].overlap->overlap_class = "broken-lease";
  EXPECT_EQ(listed.found_class("broken-lease"), 1);
  EXPECT_EQ(listed.found_classes(), std::vector<OverlapClass>{OverlapClass::BrokenLease});
  EXPECT_FALSE(expectation_met(overrun, listed));
  EXPECT_EQ(expected_text(overrun), "violated (mutual-exclusion) as overrun");
}

// An adapter held to its built-in's class: another class is a difference,
// not a safer lock; an unclassified overlap (its history may lack the lease) is not held against
// it.
TEST(DecideOutcome, AnAdapterWhoseOverlapHasAnotherCauseIsNotSafer) {
  const Expectation overrun{Verdict::Violated, {"mutual-exclusion"}, {}, {"overrun"}};
  auto decide = [&](const Check& measured, std::optional<std::string> like) {
    RunResult run;
    run.algorithm = like ? "adapter" : "set-nx-px";
    run.expected = overrun;
    run.check = measured;
    run.verdict = measured.verdict;
    run.like = like;
    return decide_outcome(run);
  };
  EXPECT_EQ(decide(overlaps_of({{"overrun", 1}}), std::nullopt), RunOutcome::kMet);
  EXPECT_EQ(decide(overlaps_of({{"broken-lease", 1}}), std::nullopt), RunOutcome::kUnmet);
  EXPECT_EQ(decide(overlaps_of({{"unclassified", 1}}), std::nullopt), RunOutcome::kUnmet);
  EXPECT_EQ(decide(overlaps_of({{"overrun", 1}}), "set-nx-px"), RunOutcome::kMet);
  EXPECT_EQ(decide(overlaps_of({{"broken-lease", 1}}), "set-nx-px"), RunOutcome::kUnmet);
  EXPECT_EQ(decide(overlaps_of({{"unclassified", 1}}), "set-nx-px"), RunOutcome::kMet);
  EXPECT_EQ(decide(check_of("safe", {}), "set-nx-px"), RunOutcome::kSaferThan);
}

// An expectation that a library leaves an incident behind is unmet by a run
// that left none, whatever its verdict, for a built-in and an adapter alike.
TEST(DecideOutcome, AnExpectedIncidentMustHaveBeenLeft) {
  Expectation expected{Verdict::Safe, {}, {}};
  expected.incidents = {"unhandled-rejection"};
  for (std::optional<std::string> like :
       {std::optional<std::string>(), std::optional<std::string>("set-nx-px")}) {
    RunResult run;
    run.algorithm = "adapter";
    run.like = like;
    run.expected = expected;
    run.verdict = Verdict::Safe;
    run.check = check_of("safe", {});
    EXPECT_EQ(decide_outcome(run), RunOutcome::kUnmet);
    EXPECT_EQ(missing_incident(expected, run), "unhandled-rejection");
    run.incidents = {{"c1", IncidentKind::kUncaughtException, "other", 1}};
    EXPECT_EQ(decide_outcome(run), RunOutcome::kUnmet) << "another kind is not the one expected";
    run.incidents.push_back({"c1", IncidentKind::kUnhandledRejection, "Command timed out", 2});
    EXPECT_EQ(decide_outcome(run), RunOutcome::kMet);
  }
  EXPECT_EQ(expectation_json(expected)["incidents"], nlohmann::json({"unhandled-rejection"}));
}

// The outcome decision, rule by rule.
TEST(DecideOutcome, EveryRule) {
  const Expectation safe{Verdict::Safe, {}, {}};
  const Expectation breaks{Verdict::Violated, {"mutual-exclusion", "stale-write"}, {}};
  const Expectation fenced{Verdict::Violated, {"mutual-exclusion"}, {"stale-write"}};
  const Expectation safe_no_stale{Verdict::Safe, {}, {"stale-write"}};
  const Check none = check_of("safe", {});
  const Check mutex = check_of("violated", {{"mutual-exclusion", 1}});
  const Check both = check_of("violated", {{"mutual-exclusion", 1}, {"stale-write", 2}});
  const Check stale = check_of("violated", {{"stale-write", 1}});
  const Check other = check_of("violated", {{"liveness", 1}});
  struct Case {
    const char* name;
    Expectation expected;
    Check measured;
    std::optional<std::string> like;
    RunOutcome outcome;
    bool exercised = true;
    std::optional<std::string> error = std::nullopt;
    std::optional<std::string> not_applicable = std::nullopt;
  } cases[] = {
      // What comes before any measurement.
      {"error", safe, none, std::nullopt, RunOutcome::kError, true, "no free port"},
      {"error outranks not applicable", safe, none, "set-nx-px", RunOutcome::kError, false,
       "no free port", "not reached"},
      {"not applicable", safe, none, "set-nx-px", RunOutcome::kNotApplicable, false, std::nullopt,
       "not reached"},
      {"not exercised though measured as expected", safe, none, std::nullopt,
       RunOutcome::kNotExercised, false},
      {"not exercised though it broke as expected", breaks, both, std::nullopt,
       RunOutcome::kNotExercised, false},
      {"not exercised for an adapter too", breaks, none, "set-nx-px", RunOutcome::kNotExercised,
       false},
      // Built-in algorithms (and adapters without --like): met or unmet, nothing else.
      {"built-in safe as expected", safe, none, std::nullopt, RunOutcome::kMet},
      {"built-in broke where it should not", safe, mutex, std::nullopt, RunOutcome::kUnmet},
      {"built-in broke as expected", breaks, both, std::nullopt, RunOutcome::kMet},
      {"built-in safe where it should break", breaks, none, std::nullopt, RunOutcome::kUnmet},
      {"built-in missing an expected kind", breaks, mutex, std::nullopt, RunOutcome::kUnmet},
      {"built-in found a ruled-out kind", fenced, both, std::nullopt, RunOutcome::kUnmet},
      {"built-in with the kinds and none ruled out", fenced, mutex, std::nullopt, RunOutcome::kMet},
      // Adapters standing in for a built-in (--like).
      {"like: safe as expected", safe, none, "set-nx-px", RunOutcome::kMet},
      {"like: broke where the built-in holds", safe, other, "set-nx-px", RunOutcome::kUnmet},
      {"like: a ruled-out kind in a safe expectation", safe_no_stale, stale, "fenced",
       RunOutcome::kUnmet},
      {"like: broke as the built-in does", breaks, both, "set-nx-px", RunOutcome::kMet},
      {"like: survived what breaks the built-in", breaks, none, "set-nx-px",
       RunOutcome::kSaferThan},
      {"like: only some expected kinds", breaks, mutex, "set-nx-px", RunOutcome::kSaferThan},
      {"like: a ruled-out kind found", fenced, both, "fenced", RunOutcome::kUnmet},
      {"like: the ruled-out kind alone", fenced, stale, "fenced", RunOutcome::kUnmet},
      {"like: every kind, none ruled out", fenced, mutex, "fenced", RunOutcome::kMet},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    RunResult run;
    run.algorithm = c.like ? "adapter" : "set-nx-px";
    run.expected = c.expected;
    run.check = c.measured;
    run.verdict = c.measured.verdict;
    run.like = c.like;
    run.exercised = c.exercised;
    run.error = c.error;
    run.not_applicable = c.not_applicable;
    EXPECT_EQ(decide_outcome(run), c.outcome) << "decided " << outcome_name(decide_outcome(run))
                                              << ", expected " << outcome_name(c.outcome);
    run.outcome = decide_outcome(run);
    EXPECT_EQ(run.to_json()["expectation_met"], c.outcome == RunOutcome::kMet)
        << "expectation_met stays true only for met";
  }
}

TEST(DecideOutcome, WithoutACheckTheVerdictAloneDecides) {
  RunResult run;
  run.algorithm = "a";
  run.verdict = Verdict::Safe;
  EXPECT_EQ(decide_outcome(run), RunOutcome::kMet) << "the default expectation is safe";
  run.verdict = Verdict::Violated;
  EXPECT_EQ(decide_outcome(run), RunOutcome::kUnmet);
}

TEST(CellOutcome, FailuresFirstThenWhatPassed) {
  using O = RunOutcome;
  struct Case {
    std::vector<O> runs;
    std::optional<O> cell;
  } cases[] = {
      {{}, std::nullopt},
      {{O::kMet, O::kMet}, O::kMet},
      {{O::kMet, O::kError, O::kUnmet}, O::kError},
      {{O::kNotExercised, O::kUnmet}, O::kUnmet},
      {{O::kMet, O::kNotExercised}, O::kNotExercised},
      {{O::kNotApplicable}, O::kNotApplicable},
      {{O::kSaferThan, O::kNotApplicable}, O::kSaferThan},
      {{O::kSaferThan, O::kMet}, O::kMet},
      {{O::kSaferThan, O::kSaferThan}, O::kSaferThan},
  };
  for (const auto& c : cases) EXPECT_EQ(cell_outcome(c.runs), c.cell) << c.runs.size();
}

// "whoever takes over": of the faults sharing a one_of name, one firing is
// enough; every other fault must fire.
TEST(Words, OfTheAlternativesOneMustFire) {
  std::vector<FaultFiring> faults = {
      {0, "pause", "c1 at step before-release (1st time)", true, 5.0, 2505.0, ""},
      {1, "pause", "c2 at step acquired (1st time)", false, std::nullopt, std::nullopt, "takeover"},
      {2, "pause", "c3 at step acquired (1st time)", true, 2810.0, 4810.0, "takeover"}};
  EXPECT_TRUE(story_played(faults));
  faults[2].fired = false;
  EXPECT_FALSE(story_played(faults)) << "neither alternative fired";
  RunResult run = full_run();
  run.faults = faults;
  EXPECT_EQ(never_fired(run),
            "fault 1 (pause, c2 at step acquired (1st time)), fault 2 (pause, c3 at step acquired "
            "(1st time)) never fired");
  faults[2].fired = true;
  faults[0].fired = false;
  EXPECT_FALSE(story_played(faults)) << "a fault without alternatives must fire";
  run.faults = faults;
  EXPECT_EQ(never_fired(run), "fault 0 (pause, c1 at step before-release (1st time)) never fired");
  // And results.json keeps the name, so a report reads the run as the runner did.
  const json document = run.to_json();
  EXPECT_EQ(RunResult::from_json(document, "r.json").faults.at(1).one_of, "takeover");
  EXPECT_FALSE(document["faults"][0].contains("one_of"));
}

TEST(Words, FaultsThatNeverFiredAreNamed) {
  RunResult run = full_run();
  EXPECT_EQ(fault_label(run.faults[0]), "fault 0 (pause, c1 at step acquired (1st time))");
  EXPECT_EQ(never_fired(run), "fault 2 (partition, at 9000 ms) never fired");
  run.faults[0].fired = false;
  EXPECT_EQ(never_fired(run),
            "fault 0 (pause, c1 at step acquired (1st time)), fault 2 (partition, at 9000 ms) "
            "never fired");
  run.faults.clear();
  EXPECT_EQ(never_fired(run), "a fault never fired");
  EXPECT_EQ(expected_text(Expectation{Verdict::Violated, {"mutual-exclusion", "stale-write"}, {}}),
            "violated (mutual-exclusion, stale-write)");
}

RunResult decided_run(const std::string& expected, const Check& measured,
                      std::optional<std::string> like = std::nullopt) {
  RunResult run;
  run.algorithm = like ? "redis-py-lock" : "set-nx-px";
  run.expected = Expectation{*verdict_named(expected), {}, {}};
  run.check = measured;
  run.verdict = measured.verdict;
  run.like = like;
  run.outcome = decide_outcome(run);
  return run;
}

RunResult decided(RunResult run) {
  run.outcome = decide_outcome(run);
  return run;
}

TEST(SummaryLine, OneLinePerOutcome) {
  const Check none = check_of("safe", {});
  const Check broke = check_of("violated", {{"mutual-exclusion", 2}, {"fencing-saved", 3}});
  EXPECT_EQ(summary_line(decided_run("safe", none)), "set-nx-px: safe — expected safe, met");
  EXPECT_EQ(summary_line(decided_run("safe", broke)),
            "set-nx-px: violated — expected safe, NOT met [mutual-exclusion 2] [fencing-saved 3]");
  EXPECT_EQ(summary_line(decided_run("violated", none, "set-nx-px")),
            "redis-py-lock: safe — expected violated, safer than set-nx-px");

  RunResult idle = decided_run("safe", none);
  idle.faults = {{0, "pause", "c1 at step acquird (1st time)", false, std::nullopt, std::nullopt}};
  idle.exercised = false;
  EXPECT_EQ(
      summary_line(decided(idle)),
      "set-nx-px: NOT EXERCISED — fault 0 (pause, c1 at step acquird (1st time)) never fired");

  RunResult skipped;
  skipped.algorithm = "redis-py-lock";
  skipped.not_applicable = "step after-validity-check exists only in the built-in redlock";
  EXPECT_EQ(summary_line(decided(skipped)),
            "redis-py-lock: not applicable — step after-validity-check exists only in the "
            "built-in redlock");

  RunResult failed;
  failed.algorithm = "redlock";
  failed.error = "no free port";
  EXPECT_EQ(summary_line(decided(failed)), "redlock: unknown (error: no free port)");
}

TEST(ExitStatus, RunExitsAsDocumented) {
  const Check none = check_of("safe", {});
  const Check broke = check_of("violated", {{"mutual-exclusion", 1}});
  RunResult idle = decided_run("safe", none);
  idle.exercised = false;
  idle = decided(idle);
  RunResult skipped;
  skipped.algorithm = "mine";
  skipped.not_applicable = "not reached";
  skipped = decided(skipped);
  RunResult failed;
  failed.algorithm = "redlock";
  failed.error = "no free port";
  failed = decided(failed);
  RunResult undecided = decided_run("safe", none);
  undecided.outcome.reset();

  auto status = [](std::vector<RunResult> runs) {
    ScenarioResults results;
    results.runs = std::move(runs);
    return exit_status(results);
  };
  EXPECT_EQ(status({}), 0);
  EXPECT_EQ(status({decided_run("safe", none)}), 0);
  EXPECT_EQ(status({decided_run("violated", none, "set-nx-px")}), 0) << "safer than passes";
  EXPECT_EQ(status({skipped}), 0) << "not applicable passes";
  EXPECT_EQ(status({decided_run("safe", broke)}), 1);
  EXPECT_EQ(status({decided_run("safe", none), idle}), 1) << "a fault that never fired fails";
  EXPECT_EQ(status({undecided}), 1) << "a run nobody decided does not pass";
  EXPECT_EQ(status({idle, failed, decided_run("safe", broke)}), 2) << "an error outranks all";
}

}  // namespace
}  // namespace locklab
