// run_suite() with a fake cell runner: the output layout, the documents,
// parallel runs, shards, progress and exit statuses, without servers.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "comparison.h"
#include "envelope.h"
#include "fake_envelope.h"
#include "report.h"
#include "reports/headless_browser.h"
#include "suite.h"
#include "suite_test_support.h"
#include "temp_dir.h"
#include "violation_kind.h"

namespace locklab::suite {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using suite_test::read_json;

Scenario scenario(const std::string& name, std::vector<std::string> algorithms, uint64_t seed,
                  const std::string& expected = "safe") {
  Scenario s;
  s.name = name;
  s.file = name + ".json";
  s.algorithms = std::move(algorithms);
  s.seed = seed;
  s.default_expectation.verdict = *verdict_named(expected);
  return s;
}

// Measures "violated" for scenarios named "pause*", "safe" otherwise; writes
// a history where run_algorithm would; remembers each call. `adjust`, when
// set, changes each run before its outcome is decided.
struct FakeRunner {
  struct Call {
    std::string scenario, algorithm;
    uint64_t seed;
    fs::path dir;
  };
  std::mutex mu;
  std::vector<Call> calls;
  std::atomic<int> running{0}, most_running{0};
  std::chrono::milliseconds work{0};
  std::function<void(const Scenario&, RunResult&)> adjust;

  RunResult operator()(const Scenario& s, const std::string& algorithm, uint64_t seed,
                       const fs::path& dir) {
    const int now = ++running;
    for (int seen = most_running; now > seen && !most_running.compare_exchange_weak(seen, now);) {
    }
    std::this_thread::sleep_for(work);
    {
      std::lock_guard lock(mu);
      calls.push_back({s.name, algorithm, seed, dir});
    }
    fs::create_directories(dir / algorithm);
    std::ofstream(dir / algorithm / "history.jsonl") << "";
    const std::string verdict = s.name.rfind("pause", 0) == 0 ? "violated" : "safe";
    const std::string expected(verdict_name(s.expectation_for(algorithm).verdict));
    json violations =
        verdict == "violated"
            ? json::array({{{"kind", "mutual-exclusion"}, {"explanation", "c2 overlapped c1"}}})
            : json::array();
    --running;
    RunResult run = RunResult::from_json(
        {{"algorithm", algorithm},
         {"expected", {{"verdict", expected}}},
         {"history", algorithm + "/history.jsonl"},
         {"seed", seed},
         {"error", nullptr},
         {"verdict", verdict},
         {"check", {{"verdict", verdict}, {"counts", json::object()}, {"violations", violations}}}},
        "fake");
    if (adjust) adjust(s, run);
    run.outcome = decide_outcome(run);
    return run;
  }
};

struct Fixture : ::testing::Test {
  TempDir out{"run-suite-test"};
  std::ostringstream progress;
  FakeRunner fake;
  CellRunner runner = [this](const Scenario& s, const std::string& a, uint64_t seed,
                             const fs::path& d) { return fake(s, a, seed, d); };

  SuiteOptions options() {
    SuiteOptions o;
    o.name = "unit";
    o.out_dir = out.path() / "out";
    o.junit_file = out.path() / "junit.xml";
    o.html_report = false;
    o.progress = &progress;
    o.invocation = {{"command_line", {"locklab", "suite", "x"}}};
    return o;
  }

  // Every file under the output, relative to it.
  std::set<std::string> files() {
    std::set<std::string> found;
    for (const auto& entry : fs::recursive_directory_iterator(out.path()))
      if (entry.is_regular_file()) found.insert(fs::relative(entry.path(), out.path()).string());
    return found;
  }
};

using RunSuite = Fixture;

TEST_F(RunSuite, OneRunPerCellWritesTheRunLayout) {
  std::vector<Scenario> scenarios = {scenario("calm", {"set-nx-px", "fenced"}, 3),
                                     scenario("pause", {"set-nx-px"}, 8, "violated")};
  json suite = run_suite(scenarios, options(), runner);

  EXPECT_EQ(files(), (std::set<std::string>{
                         "junit.xml", "out/results.json", "out/calm/results.json",
                         "out/calm/set-nx-px/history.jsonl", "out/calm/fenced/history.jsonl",
                         "out/pause/results.json", "out/pause/set-nx-px/history.jsonl"}))
      << "no temporary file is left behind";
  EXPECT_EQ(read_json(out.path() / "out" / "results.json"), suite);
  EXPECT_EQ(suite["exit_status"], 0);
  EXPECT_EQ(suite["suite"], "unit");
  EXPECT_EQ(suite["invocation"]["command_line"][1], "suite");
  EXPECT_EQ(suite["options"]["shard"], "1/1");
  EXPECT_EQ(suite["totals"]["cells"], 3);
  EXPECT_EQ(suite["totals"]["cells_met"], 3);
  ASSERT_EQ(suite["scenarios"].size(), 2u);
  EXPECT_EQ(suite["scenarios"][0]["dir"], "calm");
  EXPECT_EQ(suite["scenarios"][0]["algorithms"], json({"set-nx-px", "fenced"}));
  EXPECT_EQ(suite["scenarios"][1]["seed"], 8);
  const json& pause = suite["cells"][2];
  EXPECT_EQ(pause["scenario"], "pause");
  EXPECT_EQ(pause["detection_rate"], 1.0);
  EXPECT_EQ(pause["met"], true);
  EXPECT_EQ(pause["seeds"], json({8}));
  EXPECT_EQ(pause["results"], "pause/results.json");

  json calm = read_json(out.path() / "out" / "calm" / "results.json");
  EXPECT_EQ(calm["scenario"], "calm");
  EXPECT_EQ(calm["seed"], 3);
  ASSERT_EQ(calm["runs"].size(), 2u);
  EXPECT_EQ(calm["runs"][0]["algorithm"], "set-nx-px");
  EXPECT_EQ(calm["runs"][0]["history"], "set-nx-px/history.jsonl");
  EXPECT_TRUE(calm["runs"][0]["seconds"].is_number());
  EXPECT_EQ(calm["runs"][1]["algorithm"], "fenced");

  const std::string lines = progress.str();
  EXPECT_NE(lines.find("[1/3] calm × set-nx-px: safe (expected safe) ok "), std::string::npos)
      << lines;
  EXPECT_NE(lines.find("[3/3] pause × set-nx-px: violated (expected violated) ok "),
            std::string::npos)
      << lines;
}

TEST_F(RunSuite, SeveralRunsGoToRunDirectoriesWithTheirSeeds) {
  SuiteOptions o = options();
  o.matrix.runs = 3;
  o.matrix.seed = 100;
  json suite = run_suite({scenario("pause", {"set-nx-px"}, 8, "violated")}, o, runner);
  ASSERT_EQ(fake.calls.size(), 3u);
  std::set<std::pair<uint64_t, fs::path>> dirs;
  for (const auto& call : fake.calls) dirs.insert({call.seed, call.dir});
  const fs::path base = o.out_dir / "pause";
  EXPECT_EQ(dirs, (std::set<std::pair<uint64_t, fs::path>>{
                      {100, base / "run-1"}, {101, base / "run-2"}, {102, base / "run-3"}}));
  json results = read_json(base / "results.json");
  ASSERT_EQ(results["runs"].size(), 3u);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(results["runs"][k]["run"], k + 1);
    EXPECT_EQ(results["runs"][k]["seed"], 100 + k);
    EXPECT_EQ(results["runs"][k]["history"],
              "run-" + std::to_string(k + 1) + "/set-nx-px/history.jsonl");
    EXPECT_TRUE(fs::exists(base / results["runs"][k]["history"].get<std::string>()));
  }
  EXPECT_EQ(results["runs_per_algorithm"], 3);
  EXPECT_EQ(suite["cells"][0]["runs"], 3);
  EXPECT_EQ(suite["cells"][0]["runs_met"], 3);
  EXPECT_EQ(suite["cells"][0]["seeds"], json({100, 101, 102}));
  EXPECT_EQ(suite["options"]["seed"], 100);
  EXPECT_NE(progress.str().find("pause × set-nx-px run 2/3"), std::string::npos) << progress.str();
}

TEST_F(RunSuite, JobsRunCellsAtOnceAndKeepTheOrder) {
  fake.work = std::chrono::milliseconds(150);
  SuiteOptions o = options();
  o.jobs = 3;
  std::vector<Scenario> scenarios = {scenario("a", {"set-nx-px", "fenced", "redlock"}, 1),
                                     scenario("b", {"set-nx-px", "fenced", "redlock"}, 2)};
  json parallel = run_suite(scenarios, o, runner);
  EXPECT_GE(fake.most_running.load(), 2) << "cells overlapped in time";
  EXPECT_LE(fake.most_running.load(), 3) << "never more than --jobs at once";

  std::vector<std::string> order;
  for (const auto& cell : parallel["cells"])
    order.push_back(cell["scenario"].get<std::string>() + "/" +
                    cell["algorithm"].get<std::string>());
  EXPECT_EQ(order, (std::vector<std::string>{"a/set-nx-px", "a/fenced", "a/redlock", "b/set-nx-px",
                                             "b/fenced", "b/redlock"}));
  json b = read_json(o.out_dir / "b" / "results.json");
  EXPECT_EQ(b["runs"][2]["algorithm"], "redlock")
      << "a scenario's runs are in cell order, not finish order";
}

// Cells on virtual time take a core each while they run: they go first, no
// more at once than there are cores, and the cells on real time after them,
// --jobs at once; the documents keep cell order.
TEST_F(RunSuite, CellsOnVirtualTimeRunFirstAtMostOnePerCore) {
  fake.work = std::chrono::milliseconds(60);
  SuiteOptions o = options();
  o.jobs = 8;
  o.on_virtual_time = [](const Scenario&, const std::string& lock) { return lock != "redlock"; };
  std::vector<Scenario> scenarios;
  for (const char* name : {"a", "b", "c", "d", "e"})
    scenarios.push_back(scenario(name, {"redlock", "set-nx-px", "fenced"}, 1));
  json suite = run_suite(scenarios, o, runner);

  ASSERT_EQ(fake.calls.size(), 15u);
  for (size_t i = 0; i < fake.calls.size(); ++i)
    EXPECT_EQ(fake.calls[i].algorithm == "redlock", i >= 10)
        << "call " << i << ": " << fake.calls[i].scenario << " × " << fake.calls[i].algorithm;
  EXPECT_EQ(suite["cells"][0]["scenario"], "a");
  EXPECT_EQ(suite["cells"][0]["algorithm"], "redlock") << "cells stay in cell order";

  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  fake.most_running = 0;
  o.on_virtual_time = [](const Scenario&, const std::string&) { return true; };
  o.out_dir = out.path() / "all-virtual";
  run_suite(scenarios, o, runner);
  EXPECT_LE(fake.most_running.load(), std::min(cores, 8)) << "one cell on virtual time per core";
  fake.most_running = 0;
  o.on_virtual_time = nullptr;
  o.out_dir = out.path() / "all-real";
  run_suite(scenarios, o, runner);
  if (cores < 8) {
    EXPECT_GT(fake.most_running.load(), cores) << "cells on real time: --jobs at once";
  }
}

// --reuse: cells an earlier suite measured under the same conditions are
// carried over with their files; a changed story or lock version is run again.
TEST_F(RunSuite, ReuseCarriesOnlyTheCellsMeasuredUnderTheSameConditions) {
  std::vector<Scenario> scenarios = {scenario("calm", {"set-nx-px", "fenced"}, 3),
                                     scenario("pause", {"set-nx-px"}, 8, "violated")};
  SuiteOptions first = options();
  first.matrix.runs = 2;
  first.locks = {LockUnderTest::built_in("set-nx-px"), LockUnderTest::built_in("fenced")};
  run_suite(scenarios, first, runner);
  ASSERT_EQ(fake.calls.size(), 6u);

  // The pause story changed, fenced announced another version.
  scenarios[1].duration_ms += 1;
  SuiteOptions second = first;
  second.reuse = first.out_dir;
  second.out_dir = out.path() / "second";
  second.locks[1].version = "fenced 2";
  json suite = run_suite(scenarios, second, runner);
  std::set<std::pair<std::string, std::string>> rerun;
  for (size_t i = 6; i < fake.calls.size(); ++i)
    rerun.insert({fake.calls[i].scenario, fake.calls[i].algorithm});
  EXPECT_EQ(fake.calls.size(), 6u + 4u);
  EXPECT_EQ(rerun, (std::set<std::pair<std::string, std::string>>{{"calm", "fenced"},
                                                                  {"pause", "set-nx-px"}}));
  EXPECT_EQ(suite["reuse"]["cells_carried"], 1);
  EXPECT_EQ(suite["cells"][0]["algorithm"], "set-nx-px");
  EXPECT_EQ(suite["cells"][0]["carried_from"], first.out_dir.string());
  EXPECT_FALSE(suite["cells"][1].contains("carried_from"));
  EXPECT_EQ(suite["cells"][0]["runs"], 2);
  EXPECT_TRUE(fs::exists(second.out_dir / "calm" / "run-2" / "set-nx-px" / "history.jsonl"))
      << "a carried run's files come with it";
  const json calm = read_json(second.out_dir / "calm" / "results.json");
  EXPECT_EQ(calm["runs"][0]["carried_from"], first.out_dir.string());
  EXPECT_EQ(calm["runs"][0]["history"], "run-1/set-nx-px/history.jsonl");
  EXPECT_NE(reports::comparison_markdown(second.out_dir).find("carried over: 1 cells"),
            std::string::npos);

  // Onto itself: nothing runs, nothing is lost.
  SuiteOptions again = second;
  again.reuse = second.out_dir;
  json same = run_suite(scenarios, again, runner);
  EXPECT_EQ(fake.calls.size(), 10u);
  EXPECT_EQ(same["reuse"]["cells_carried"], 3);
  EXPECT_TRUE(fs::exists(second.out_dir / "calm" / "run-2" / "set-nx-px" / "history.jsonl"));

  // Other runs per cell: nothing is carried.
  SuiteOptions more = again;
  more.matrix.runs = 3;
  more.out_dir = out.path() / "third";
  EXPECT_EQ(run_suite(scenarios, more, runner)["reuse"]["cells_carried"], 0);
  EXPECT_EQ(fake.calls.size(), 19u);
}

TEST_F(RunSuite, ShardRunsOnlyItsCells) {
  SuiteOptions o = options();
  o.shard = {2, 2};
  std::vector<Scenario> scenarios = {scenario("a", {"set-nx-px", "fenced"}, 1),
                                     scenario("b", {"set-nx-px"}, 2), scenario("c", {"fenced"}, 3)};
  json suite =
      run_suite(scenarios, o, runner);  // cells 0..3: a/set-nx-px a/fenced b/set-nx-px c/fenced
  ASSERT_EQ(fake.calls.size(), 2u);
  ASSERT_EQ(suite["cells"].size(), 2u);
  EXPECT_EQ(suite["cells"][0]["scenario"], "a");
  EXPECT_EQ(suite["cells"][0]["algorithm"], "fenced");
  EXPECT_EQ(suite["cells"][1]["scenario"], "c");
  EXPECT_EQ(suite["options"]["shard"], "2/2");
  ASSERT_EQ(suite["scenarios"].size(), 2u) << "only scenarios with a cell in the shard";
  EXPECT_FALSE(fs::exists(o.out_dir / "b"));
}

TEST_F(RunSuite, UnmetExpectationIsStatusOneAndAJunitFailure) {
  json suite =
      run_suite({scenario("calm", {"set-nx-px"}, 1), scenario("pause-wrong", {"set-nx-px"}, 2)},
                options(), runner);  // pause-wrong expects safe but is violated
  EXPECT_EQ(suite["exit_status"], 1);
  EXPECT_EQ(suite["totals"]["cells_unmet"], 1);
  json junit = suite_test::parse_junit(out.path() / "junit.xml");
  ASSERT_FALSE(junit.is_null());
  EXPECT_EQ(junit["tests"], "2");
  EXPECT_EQ(junit["failures"], "1");
  EXPECT_EQ(junit["errors"], "0");
  const json& failing = junit["suites"][1]["cases"][0];
  EXPECT_EQ(failing["classname"], "pause-wrong");
  EXPECT_EQ(failing["name"], "set-nx-px");
  EXPECT_EQ(failing["failure"]["message"],
            "expected safe, found mutual-exclusion: c2 overlapped c1");
  EXPECT_TRUE(junit["suites"][0]["cases"][0]["failure"].is_null());
  EXPECT_EQ(junit["suites"][1]["properties"]["seed"], "2");
  EXPECT_NE(progress.str().find("pause-wrong × set-nx-px: violated (expected safe) NOT MET"),
            std::string::npos)
      << progress.str();
}

TEST_F(RunSuite, RunnerExceptionIsAnErrorRunAndStatusTwo) {
  CellRunner throwing = [this](const Scenario& s, const std::string& a, uint64_t seed,
                               const fs::path& d) -> RunResult {
    if (a == "fenced") throw std::runtime_error("cannot start redis-server: no free port");
    return fake(s, a, seed, d);
  };
  json suite = run_suite({scenario("calm", {"set-nx-px", "fenced"}, 1)}, options(), throwing);
  EXPECT_EQ(suite["exit_status"], 2);
  EXPECT_EQ(suite["cells"][1]["errors"], 1);
  json calm = read_json(options().out_dir / "calm" / "results.json");
  EXPECT_EQ(calm["runs"][1]["error"], "cannot start redis-server: no free port");
  EXPECT_EQ(calm["runs"][1]["verdict"], "unknown");
  json junit = suite_test::parse_junit(out.path() / "junit.xml");
  ASSERT_FALSE(junit.is_null());
  EXPECT_EQ(junit["errors"], "1");
  EXPECT_EQ(junit["suites"][0]["cases"][1]["error"]["message"],
            "the run failed: cannot start redis-server: no free port");
}

TEST_F(RunSuite, AFaultThatNeverFiredFailsTheSuiteAndSaysWhich) {
  fake.adjust = [](const Scenario& s, RunResult& run) {
    if (s.name != "idle") return;
    run.faults = {
        {0, "pause", "c1 at step acquired (1st time)", false, std::nullopt, std::nullopt}};
    run.exercised = false;
  };
  json suite = run_suite({scenario("calm", {"set-nx-px"}, 1), scenario("idle", {"set-nx-px"}, 2)},
                         options(), runner);
  EXPECT_EQ(suite["exit_status"], 1);
  EXPECT_EQ(suite["totals"]["cells_not_exercised"], 1);
  EXPECT_EQ(suite["totals"]["cells_met"], 1);
  EXPECT_EQ(suite["totals"]["cells_unmet"], 0);
  const json& idle = suite["cells"][1];
  EXPECT_EQ(idle["outcome"], "not-exercised");
  EXPECT_EQ(idle["met"], false);
  EXPECT_EQ(idle["outcomes"]["not-exercised"], 1);

  json results = read_json(options().out_dir / "idle" / "results.json");
  EXPECT_EQ(results["runs"][0]["outcome"], "not-exercised");
  EXPECT_EQ(results["runs"][0]["expectation_met"], false);
  EXPECT_EQ(results["runs"][0]["exercised"], false);
  EXPECT_EQ(results["runs"][0]["faults"][0]["fired"], false);

  json junit = suite_test::parse_junit(out.path() / "junit.xml");
  ASSERT_FALSE(junit.is_null());
  EXPECT_EQ(junit["failures"], "1");
  const json& failure = junit["suites"][1]["cases"][0]["failure"];
  ASSERT_TRUE(failure.is_object());
  EXPECT_EQ(failure["type"], "not-exercised");
  EXPECT_EQ(failure["message"], "fault 0 (pause, c1 at step acquired (1st time)) never fired");
  EXPECT_NE(progress.str().find("idle × set-nx-px: safe (expected safe) NOT EXERCISED "),
            std::string::npos)
      << progress.str();
}

TEST_F(RunSuite, SaferThanAndNotApplicablePassAndAreCountedApart) {
  // "better" expects the built-in to break; the adapter measures safe. "skip" is not applicable.
  fake.adjust = [](const Scenario& s, RunResult& run) {
    run.like = "set-nx-px";
    if (s.name == "skip") run.not_applicable = "the adapter does not reach step after-setnx";
  };
  SuiteOptions o = options();
  json suite = run_suite(
      {scenario("calm", {"set-nx-px"}, 1), scenario("better", {"set-nx-px"}, 2, "violated"),
       scenario("skip", {"set-nx-px"}, 3)},
      o, runner);
  EXPECT_EQ(suite["exit_status"], 0);
  EXPECT_EQ(suite["totals"]["cells"], 3);
  EXPECT_EQ(suite["totals"]["cells_met"], 1);
  EXPECT_EQ(suite["totals"]["cells_safer"], 1);
  EXPECT_EQ(suite["totals"]["cells_not_applicable"], 1);
  EXPECT_EQ(suite["cells"][1]["outcome"], "safer-than");
  EXPECT_EQ(suite["cells"][1]["met"], true) << "safer than the built-in passes";
  EXPECT_EQ(suite["cells"][2]["outcome"], "not-applicable");

  json junit = suite_test::parse_junit(out.path() / "junit.xml");
  ASSERT_FALSE(junit.is_null());
  EXPECT_EQ(junit["tests"], "3");
  EXPECT_EQ(junit["failures"], "0");
  EXPECT_EQ(junit["skipped"], "1");
  const json& better = junit["suites"][1]["cases"][0];
  EXPECT_TRUE(better["failure"].is_null());
  EXPECT_NE(better["system_out"].get<std::string>().find(
                "safer than set-nx-px: expected violated, measured safe"),
            std::string::npos)
      << better;
  EXPECT_EQ(junit["suites"][2]["cases"][0]["skipped"],
            "the adapter does not reach step after-setnx");
  const std::string lines = progress.str();
  EXPECT_NE(lines.find("better × set-nx-px: safe (expected violated) safer than set-nx-px "),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find("skip × set-nx-px: not applicable "), std::string::npos) << lines;
}

// The suite records what was compared (the locks, in column order, and the
// Redis version), and the comparison written from it says, per lock, what it
// survives, and per cell what was measured, expected and why.
// A suite comparing set-nx-px with a library standing in for it, over three
// stories: one both survive, one that breaks both, one the library cannot
// be told (not applicable, with its reason). Every expectation has a why.
json compare_with_a_library(Fixture& f, SuiteOptions o) {
  const LockUnderTest library = suite_test::fake_library();
  f.fake.adjust = [](const Scenario& s, RunResult& run) {
    run.expected->why = "because " + s.name;
    if (s.name == "pause-long") {
      // set-nx-px's holder overran its lease and lost an update; lib-x's
      // overran too, but fencing rejected its late write: no harm.
      const bool fenced = run.algorithm == "lib-x";
      run.check->harm = checkers::Harm{fenced ? 0 : 1,
                                       0,
                                       fenced ? 1 : 0,
                                       {{"broken-lease", 0},
                                        {"overrun", 1},
                                        {"unclassified", 0},
                                        {"stopped-by-fencing", fenced ? 1 : 0}}};
      if (!fenced) run.check->counts["lost-update"] = 1;
    }
    if (s.name == "skip" && run.algorithm == "lib-x") {
      run.not_applicable = "lib-x has no after-setnx step";
      run.verdict = Verdict::Unknown;
    }
  };
  o.locks = {LockUnderTest::built_in("set-nx-px"), LockUnderTest::built_in("redlock"), library};
  o.matrix.extra.push_back({"lib-x", "set-nx-px"});
  o.redis_version = "7.0.15";
  return run_suite(
      {scenario("calm", {"set-nx-px"}, 1), scenario("pause-long", {"set-nx-px"}, 2, "violated"),
       scenario("skip", {"set-nx-px"}, 3)},
      o, f.runner);
}

// A run of "L" that overlapped by `overlap_class` (none when empty) and, when
// `harmful`, lost an update; whatever it measured was what its story expected.
RunResult measured_run(const std::string& overlap_class, bool harmful) {
  RunResult run;
  run.algorithm = "L";
  run.expected = Expectation{overlap_class.empty() ? Verdict::Safe : Verdict::Violated, {}, {}};
  run.verdict = overlap_class.empty() ? Verdict::Safe : Verdict::Violated;
  Check check;
  check.verdict = run.verdict;
  check.harm = checkers::Harm{harmful ? 1 : 0, 0, harmful ? 0 : 1, {}};
  if (!overlap_class.empty()) {
    check.counts["mutual-exclusion"] = 1;
    check.harm->overlaps[overlap_class] = 1;
    if (!harmful) check.harm->overlaps["stopped-by-fencing"] = 1;
  }
  if (harmful) check.counts["lost-update"] = 1;
  run.check = check;
  run.outcome = decide_outcome(run);
  return run;
}

ScenarioResults story_of(const std::string& name, std::vector<RunResult> runs) {
  ScenarioResults story;
  story.scenario = name;
  story.runs = std::move(runs);
  return story;
}

// A lock survives a story when no run harmed the resource, however its holds
// overlapped; the stories whose lease broke and those that only overran are
// counted beside it, and each cell names the class and the harm.
TEST(Comparison, SurvivalCountsHarmNotOverlaps) {
  const std::vector<ScenarioResults> stories = {
      story_of("calm", {measured_run("", false)}),
      story_of("failover", {measured_run("broken-lease", true)}),
      story_of("pause", {measured_run("overrun", false), measured_run("overrun", true)}),
      story_of("fenced-pause", {measured_run("overrun", false)}),
      story_of("fenced-failover", {measured_run("broken-lease", false)}),
      story_of("mixed", {measured_run("broken-lease", false), measured_run("overrun", false)}),
  };
  std::vector<const ScenarioResults*> all;
  for (const auto& story : stories) all.push_back(&story);
  const reports::Survival tally = reports::survival(all, "L");
  EXPECT_EQ(tally.measured, 6u);
  EXPECT_EQ(tally.survived, 4u) << "calm and the three stories whose overlaps harmed nothing";
  EXPECT_EQ(tally.harmed_by, (std::vector<std::string>{"failover", "pause"}));
  EXPECT_EQ(tally.lease_broken, 3u) << "failover, fenced-failover, mixed";
  EXPECT_EQ(tally.only_overran, 2u) << "pause and fenced-pause; mixed broke the lease too";

  using reports::CellState;
  auto state = [&](size_t i) { return reports::cell_state(reports::runs_of(stories[i], "L")); };
  auto words = [&](size_t i) { return reports::measured_words(reports::runs_of(stories[i], "L")); };
  EXPECT_EQ(state(0), CellState::Safe);
  EXPECT_EQ(state(1), CellState::Harmed);
  EXPECT_EQ(state(2), CellState::Harmed);
  EXPECT_EQ(state(3), CellState::Overran);
  EXPECT_EQ(state(4), CellState::LeaseBroken);
  EXPECT_EQ(state(5), CellState::LeaseBroken);
  EXPECT_EQ(words(0), "✓ safe");
  EXPECT_EQ(words(1), "✗ broken lease: lost update");
  EXPECT_EQ(words(2), "✗ overrun: lost update (1 of 2 runs)");
  EXPECT_EQ(words(3), "overrun, stopped by fencing");
  EXPECT_EQ(words(4), "broken lease, stopped by fencing");
  EXPECT_EQ(words(5), "broken lease and overrun, stopped by fencing");
  // A cell whose every run kept virtual time says so.
  ScenarioResults on_virtual_time = stories[0];
  for (RunResult& run : on_virtual_time.runs) run.time = "virtual";
  EXPECT_EQ(reports::measured_words(reports::runs_of(on_virtual_time, "L")), "✓ safe ◷");
}

TEST_F(RunSuite, TheComparisonSaysWhatEachLockSurvivesAndWhy) {
  SuiteOptions o = options();
  json suite = compare_with_a_library(*this, o);
  EXPECT_EQ(suite["redis_version"], "7.0.15");
  ASSERT_EQ(suite["locks"].size(), 2u) << "redlock has no cell: no column";
  EXPECT_EQ(suite["locks"][0], json({{"name", "set-nx-px"}, {"family", "single instance"}}));
  EXPECT_EQ(suite["locks"][1], json({{"name", "lib-x"},
                                     {"family", "library"},
                                     {"like", "set-nx-px"},
                                     {"adapter", "node lib-x/adapter.js"},
                                     {"version", "lib-x 1.2.3"}}));

  const std::string md = reports::comparison_markdown(o.out_dir);
  EXPECT_NE(md.find("- Redis: 7.0.15\n"), std::string::npos) << md;
  EXPECT_NE(md.find("- command: `locklab suite x`"), std::string::npos) << md;
  EXPECT_NE(md.find("| `set-nx-px` | single instance | 2 of 3 stories | — | 1 story | "
                    "pause-long |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| `lib-x` lib-x 1.2.3 | library, like set-nx-px | 2 of 2 stories | — | 1 "
                    "story | — |"),
            std::string::npos)
      << "survival counts harm, not overlaps; a story it could not be told is not counted: " << md;
  EXPECT_NE(md.find("| [pause-long](#pause-long) | ✗ overrun: lost update | overrun, stopped by "
                    "fencing |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| [skip](#skip) | ✓ safe | n/a |"), std::string::npos) << md;
  const size_t matrix = md.find("## The matrix");
  ASSERT_NE(matrix, std::string::npos) << md;
  const std::string legend = md.substr(matrix, md.find("| story |", matrix) - matrix);
  for (const auto& overlap_class : overlap_classes())
    EXPECT_NE(legend.find(std::string(overlap_class.label) + ":"), std::string::npos)
        << "the legend says what every class a cell can show means: " << legend;
  EXPECT_NE(legend.find("another run of the cell may name the class"), std::string::npos)
      << "a class left unclassified by timing alone may differ between runs: " << legend;
  EXPECT_NE(md.find("| `set-nx-px` | ✗ overrun: lost update | violated | because pause-long |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| `lib-x` lib-x 1.2.3 | n/a | — | lib-x has no after-setnx step |"),
            std::string::npos)
      << md;
}

// `page` as headless Chromium leaves it (its DOM), every console line a failure.
std::string page_dom(const std::string& chromium, const fs::path& page, const fs::path& png) {
  const auto load = reports::fixtures::load_page(chromium, page, "", png);
  for (const auto& line : load.console_lines) ADD_FAILURE() << "console: " << line;
  return load.dom;
}

// The comparison page as a person reads it, in headless Chromium: per lock
// "survives N of M" with its version, and in each cell what was measured,
// what was expected and why, or why the story could not be told.
TEST_F(RunSuite, TheComparisonPageReadsRightInABrowser) {
  const auto chromium = reports::fixtures::find_chromium();
  if (!chromium)
    GTEST_SKIP() << "no headless browser: chromium is not installed (Debian: apt-get install "
                    "chromium; harness/scripts/lab.sh setup installs it)";
  SuiteOptions o = options();
  o.html_report = true;
  compare_with_a_library(*this, o);
  const fs::path index = o.out_dir / "index.html";
  const std::string dom = page_dom(*chromium, index, out.path() / "index.png");
  auto has = [&dom](const std::string& text) { return dom.find(text) != std::string::npos; };
  EXPECT_TRUE(has("<h2>Which lock survives what</h2>")) << dom;
  EXPECT_TRUE(
      has("<td>set-nx-px</td><td>2 of 3 stories</td><td>—</td><td>1 story</td>"
          "<td>pause-long</td>"))
      << dom;
  EXPECT_TRUE(has("<td>lib-x</td><td>2 of 2 stories</td><td>—</td><td>1 story</td><td>—</td>"))
      << "fencing stopped lib-x's overrun: no harm, it survives: " << dom;
  EXPECT_TRUE(
      has("lib-x (lib-x 1.2.3), like set-nx-px<span class=\"survives\">survives 2 of "
          "2</span>"))
      << "the library's column names its version: " << dom;
  EXPECT_TRUE(has("<span class=\"cell-harm harmed\">✗ overrun: lost update</span>")) << dom;
  EXPECT_TRUE(has("<span class=\"cell-harm overran\">overrun, stopped by fencing</span>")) << dom;
  EXPECT_TRUE(has("<span class=\"na-reason\">lib-x has no after-setnx step</span>")) << dom;
  EXPECT_TRUE(has("<summary>why</summary>because pause-long")) << dom;
  EXPECT_TRUE(has("<span class=\"cell-expected\">expected violated")) << dom;
}

// The comparison opens with a grid a person takes in at a glance: a square
// per story × lock coloured by what the resource came to, the locks under
// their families, and a square's details on click (here: named by the
// address's fragment, as a click leaves it).
TEST_F(RunSuite, TheComparisonPageOpensWithAGridOfSquares) {
  const auto chromium = reports::fixtures::find_chromium();
  if (!chromium)
    GTEST_SKIP() << "no headless browser: chromium is not installed (Debian: apt-get install "
                    "chromium; harness/scripts/lab.sh setup installs it)";
  SuiteOptions o = options();
  o.html_report = true;
  compare_with_a_library(*this, o);
  const fs::path index = o.out_dir / "index.html";
  const auto load = reports::fixtures::load_page(
      *chromium, index, reports::grid_square_id("pause-long", "lib-x"), out.path() / "grid.png");
  for (const auto& line : load.console_lines) ADD_FAILURE() << "console: " << line;
  const std::string& dom = load.dom;
  auto has = [&dom](const std::string& text) { return dom.find(text) != std::string::npos; };
  ASSERT_TRUE(has("<h2 id=\"at-a-glance\">At a glance</h2>")) << dom;
  EXPECT_LT(dom.find("At a glance"), dom.find("Which lock survives what"))
      << "the grid first, the lists of stories below it";
  EXPECT_TRUE(has("title=\"single instance\"><div class=\"grid-family\"")) << dom;
  EXPECT_TRUE(has("title=\"library\"><div class=\"grid-family\"")) << dom;
  auto state_of = [&](const std::string& story, const std::string& lock) {
    const std::string id = "id=\"" + reports::grid_square_id(story, lock) + "\" data-state=\"";
    const size_t at = dom.find(id);
    if (at == std::string::npos) return std::string("missing");
    const size_t from = at + id.size();
    return dom.substr(from, dom.find('"', from) - from);
  };
  EXPECT_EQ(state_of("pause-long", "set-nx-px"), "harmed");
  EXPECT_EQ(state_of("pause-long", "lib-x"), "overran");
  EXPECT_EQ(state_of("calm", "set-nx-px"), "safe");
  EXPECT_EQ(state_of("skip", "lib-x"), "not-applicable");
  EXPECT_TRUE(has("class=\"grid-sq overran selected\"")) << "the named square is chosen: " << dom;
  EXPECT_TRUE(
      has("id=\"grid-detail\" aria-live=\"polite\">lib-x (lib-x 1.2.3), like set-nx-px "
          "in pause-long: overrun, stopped by fencing. Expected violated: because "
          "pause-long</p>"))
      << dom;
  for (const auto& state : reports::kCellStates)
    EXPECT_TRUE(has(std::string(state.meaning))) << "the legend names " << state.name;
}

// The safety envelopes on the comparison page, as a person reads them in
// headless Chromium: one chart per axis, the locks side by side, each bound
// with its prediction, a disagreement called out; and the same in the
// Markdown table. The envelope's runs are fake (set-nx-px breaks from a
// pause of 0.52 leases, lib-x from 0.9, which its like does not predict).
TEST_F(RunSuite, TheEnvelopeChartsAreOnTheComparisonPage) {
  const auto chromium = reports::fixtures::find_chromium();
  if (!chromium)
    GTEST_SKIP() << "no headless browser: chromium is not installed (Debian: apt-get install "
                    "chromium; harness/scripts/lab.sh setup installs it)";
  SuiteOptions o = options();
  o.html_report = true;
  compare_with_a_library(*this, o);
  EnvelopeOptions e;
  e.locks = {LockUnderTest::built_in("set-nx-px"), suite_test::fake_library()};
  e.axes = {EnvelopeAxis::Pause, EnvelopeAxis::ServerClockJump};
  e.repeats = 2;
  e.out_dir = o.out_dir / "envelope";
  std::ostringstream progress;
  e.progress = &progress;
  CellRunner fake = suite_test::fake_envelope_runner(
      [](const std::string& lock) { return lock == "lib-x" ? 0.9 : 0.52; });
  const json envelope = run_envelope(e, fake);
  EXPECT_EQ(envelope["totals"]["disagree"], 2) << "lib-x on both axes";
  const fs::path index = reports::write_suite_report(o.out_dir);
  const std::string dom = page_dom(*chromium, index, out.path() / "index.png");
  auto has = [&dom](const std::string& text) { return dom.find(text) != std::string::npos; };
  EXPECT_TRUE(has("<h2>Which lock survives what</h2>")) << "still the comparison page: " << dom;
  EXPECT_TRUE(has("id=\"envelopes\">Safety envelopes</h2>")) << dom;
  EXPECT_TRUE(has("data-axis=\"pause\"")) << dom;
  EXPECT_TRUE(has("data-axis=\"server-clock-jump\"")) << dom;
  EXPECT_TRUE(has("data-lock=\"set-nx-px\"")) << dom;
  EXPECT_TRUE(has("data-lock=\"lib-x\"")) << dom;
  EXPECT_TRUE(has("breaks at 0.52, as predicted")) << dom;
  EXPECT_TRUE(has("breaks at 0.90, NOT as predicted")) << dom;
  EXPECT_TRUE(
      has("2 of 4 bounds as their design predicts; 2 differ and 0 could not be told, 0 of "
          "these explained; 0 not applicable"))
      << dom;
  EXPECT_TRUE(has("<div class=\"banner bad\">2 of 4 bounds")) << "unexplained: " << dom;
  const std::string md = reports::comparison_markdown(o.out_dir);
  EXPECT_NE(md.find("## Safety envelopes"), std::string::npos) << md;
  EXPECT_NE(md.find("| `lib-x` | **0.90** (0.90–0.90); predicted 0.50 ⚠ |"), std::string::npos)
      << md;
}

// Whether the envelope's runs kept their adapters between runs is said
// beside its command, with how many processes they started.
TEST_F(RunSuite, TheComparisonSaysWhenTheEnvelopesKeptTheirAdapters) {
  SuiteOptions o = options();
  compare_with_a_library(*this, o);
  CellRunner fake = suite_test::fake_envelope_runner([](const std::string&) { return 0.52; });
  for (const bool kept : {false, true}) {
    EnvelopeOptions e;
    e.locks = {LockUnderTest::built_in("set-nx-px")};
    e.axes = {EnvelopeAxis::Pause};
    e.repeats = 1;
    e.out_dir = o.out_dir / "envelope";
    std::ostringstream progress;
    e.progress = &progress;
    if (kept) e.adapters = std::make_shared<AdapterPool>();
    const json envelope = run_envelope(e, fake);
    EXPECT_EQ(envelope["adapters"]["kept"], kept);
    EXPECT_EQ(envelope["envelope"]["adapters_kept"], kept);
    const std::string md = reports::comparison_markdown(o.out_dir);
    EXPECT_EQ(md.find("- adapters kept between runs") != std::string::npos, kept) << md;
  }
}

// A suite whose cells kept their adapters says so in results.json and in
// COMPARISON.md, and --reuse carries nothing between a suite that kept them
// and one that started them anew: a warm runtime's first call is not a
// cold one's.
TEST_F(RunSuite, KeptAdaptersAreSaidAndNeverCarriedIntoAFreshSuiteOrBack) {
  const std::vector<Scenario> scenarios = {scenario("calm", {"set-nx-px"}, 1)};
  SuiteOptions fresh = options();
  fresh.locks = {LockUnderTest::built_in("set-nx-px")};
  json suite = run_suite(scenarios, fresh, runner);
  EXPECT_EQ(suite["options"]["adapters_kept"], false);
  EXPECT_EQ(suite["adapters"]["kept"], false);
  EXPECT_EQ(reports::comparison_markdown(fresh.out_dir).find("- adapters kept between runs"),
            std::string::npos);

  SuiteOptions kept = fresh;
  kept.out_dir = out.path() / "kept";
  kept.reuse = fresh.out_dir;
  kept.adapters_kept = true;
  kept.adapter_counts = [] { return AdapterPool::Counts{.started = 3, .reused = 5}; };
  suite = run_suite(scenarios, kept, runner);
  EXPECT_EQ(suite["options"]["adapters_kept"], true);
  EXPECT_EQ(suite["adapters"]["kept"], true);
  EXPECT_EQ(suite["adapters"]["reused"], 5);
  EXPECT_EQ(suite["reuse"]["cells_carried"], 0);
  EXPECT_NE(reports::comparison_markdown(kept.out_dir).find("- adapters kept between runs"),
            std::string::npos);

  SuiteOptions kept_again = kept;
  kept_again.reuse = kept.out_dir;
  kept_again.out_dir = out.path() / "kept-again";
  EXPECT_EQ(run_suite(scenarios, kept_again, runner)["reuse"]["cells_carried"], 1);

  SuiteOptions fresh_again = fresh;
  fresh_again.reuse = kept.out_dir;
  fresh_again.out_dir = out.path() / "fresh-again";
  EXPECT_EQ(run_suite(scenarios, fresh_again, runner)["reuse"]["cells_carried"], 0);
}

TEST_F(RunSuite, UnwritableOutputThrowsNamingTheFile) {
  SuiteOptions o = options();
  std::ofstream(out.path() / "file") << "x";
  o.out_dir = out.path() / "file" / "out";
  try {
    run_suite({scenario("calm", {"set-nx-px"}, 1)}, o, runner);
    FAIL() << "wrote under a regular file";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find((out.path() / "file").string()), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace locklab::suite
