// The sweep's pure parts: which fault fields it may vary, the binary search
// (against fake measurements), and sweep.json from a fake runner.
#include "sweep.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <mutex>

#include "suite_test_support.h"
#include "temp_dir.h"

namespace locklab::suite {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

Fault fault(const std::string& kind) {
  Fault f;
  f.kind = fault_kind_named(kind).value();
  f.when = StepTrigger{"c1", "before-write", 1};
  f.duration_ms = 1000;
  return f;
}

Scenario pause_scenario() {
  Scenario s;
  s.name = "pause";
  s.file = "pause.json";
  s.seed = 40;
  s.algorithms = {"set-nx-px", "fenced"};
  s.workload.ttl_ms = 1000;
  s.faults = {fault("pause")};
  return s;
}

// Breaks exactly when value >= threshold, like a perfectly monotonic lock.
Evaluate threshold_at(double threshold, std::vector<double>* probed = nullptr) {
  return [threshold, probed](double value) {
    if (probed) probed->push_back(value);
    Probe p;
    p.value = value;
    p.runs = 1;
    p.broken = value >= threshold;
    if (p.broken) p.kinds = {"mutual-exclusion"};
    return p;
  };
}

SweepSpec spec(double from, double to, double precision, std::string param = "duration_ms") {
  SweepSpec s;
  s.param = std::move(param);
  s.from = from;
  s.to = to;
  s.precision = precision;
  return s;
}

TEST(SweepParams, EachFieldOnlyWhereItMeansSomething) {
  EXPECT_NO_THROW(check_sweep_param(fault("pause"), "duration_ms"));
  EXPECT_NO_THROW(check_sweep_param(fault("clock-jump"), "delta_ms"));
  EXPECT_NO_THROW(check_sweep_param(fault("server-clock-rate"), "rate"));
  EXPECT_NO_THROW(check_sweep_param(fault("delay"), "delay_ms"));
  EXPECT_NO_THROW(check_sweep_param(fault("crash-node"), "restart_after_ms"));
  Fault timed = fault("partition");
  timed.when.reset();
  timed.at_ms = 500;
  EXPECT_NO_THROW(check_sweep_param(timed, "at_ms"));

  struct Bad {
    std::string kind, param, must_say;
  } bad[] = {{"pause", "delta_ms", "clock-jump"},
             {"pause", "rate", "clock-rate"},
             {"crash-client", "duration_ms", "pause"},
             {"pause", "at_ms", "at_ms"},
             {"pause", "ttl_ms", "not a numeric fault field"}};
  for (const auto& b : bad) {
    SCOPED_TRACE(b.kind + " " + b.param);
    try {
      check_sweep_param(fault(b.kind), b.param);
      ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("--param"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(b.must_say), std::string::npos) << e.what();
    }
  }
}

TEST(SweepParams, SetRoundsIntegerFields) {
  Fault f = fault("clock-rate");
  set_fault_param(f, "duration_ms", 979.6);
  EXPECT_EQ(f.duration_ms, 980);
  set_fault_param(f, "rate", 1.25);
  EXPECT_DOUBLE_EQ(f.rate, 1.25);
  EXPECT_EQ(param_text("duration_ms", 979.6), "980");
  EXPECT_EQ(param_text("rate", 1.25), "1.25");
}

TEST(SweepValidation, ClearErrorsNamingTheOption) {
  Scenario s = pause_scenario();
  struct Case {
    SweepSpec spec;
    std::string must_say;
  } cases[] = {{spec(0, 3000, 50), ""},
               {spec(3000, 0, 50), "--from must be below --to"},
               {spec(100, 100, 50), "--from must be below --to"},
               {spec(-5, 100, 5), "--from"},
               {spec(0, 3000, -1), "--precision"},
               {spec(0, 3000, 50, "delta_ms"), "--param"}};
  cases[0].spec.fault = 0;
  for (auto& c : cases) {
    SCOPED_TRACE(c.must_say);
    if (c.must_say.empty()) {
      EXPECT_NO_THROW(validate_sweep(s, c.spec));
      continue;
    }
    try {
      validate_sweep(s, c.spec);
      ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.must_say), std::string::npos) << e.what();
    }
  }
  SweepSpec out_of_range = spec(0, 3000, 50);
  out_of_range.fault = 1;
  try {
    validate_sweep(s, out_of_range);
    ADD_FAILURE() << "fault 1 of 1 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--fault: 1 is out of range"), std::string::npos)
        << e.what();
  }
  SweepSpec kind = spec(0, 3000, 50);
  kind.kind = "stale-writes";
  EXPECT_THROW(validate_sweep(s, kind), std::invalid_argument);
  SweepSpec runs = spec(0, 3000, 50);
  runs.runs = 0;
  EXPECT_THROW(validate_sweep(s, runs), std::invalid_argument);
}

TEST(SweepSearch, NeverBreaksNeedsOneProbe) {
  std::vector<double> probed;
  auto result = search_breaking_point(spec(0, 3000, 50), threshold_at(5000, &probed));
  EXPECT_EQ(result.outcome, SearchOutcome::kNeverBreaks);
  EXPECT_EQ(probed, std::vector<double>{3000});
  EXPECT_FALSE(result.breaking);
}

TEST(SweepSearch, BreakingAtTheLowerEnd) {
  auto result = search_breaking_point(spec(100, 3000, 50), threshold_at(0));
  EXPECT_EQ(result.outcome, SearchOutcome::kBreaks);
  EXPECT_EQ(result.breaking, 100);
  EXPECT_FALSE(result.last_safe);
  EXPECT_EQ(result.probes.size(), 2u);
}

TEST(SweepSearch, StopsAtTheFirstError) {
  int calls = 0;
  auto result = search_breaking_point(spec(0, 3000, 50), [&](double value) {
    Probe p = threshold_at(980)(value);
    if (++calls == 3) p.error = "redis-server did not start";
    return p;
  });
  EXPECT_EQ(result.outcome, SearchOutcome::kError);
  EXPECT_EQ(result.error, "redis-server did not start");
  EXPECT_EQ(calls, 3);
}

TEST(SweepSearch, DefaultPrecisionIsATwentiethAtLeastOneForIntegers) {
  EXPECT_DOUBLE_EQ(effective_precision(spec(0, 3000, 0)), 150);
  EXPECT_DOUBLE_EQ(effective_precision(spec(0, 10, 0)), 1);
  EXPECT_DOUBLE_EQ(effective_precision(spec(1, 2, 0, "rate")), 0.05);
}

RC_GTEST_PROP(SweepSearch, FindsAMonotonicThresholdWithinThePrecision, ()) {
  const bool integer = *rc::gen::arbitrary<bool>();
  const int from = *rc::gen::inRange(0, 1000);
  const int to = from + *rc::gen::inRange(2, 5000);
  const int precision = *rc::gen::inRange(1, (to - from) / 2 + 2);
  const double threshold = from + 1 + *rc::gen::inRange(0, to - from);  // in (from, to]
  SweepSpec s = spec(from, to, precision, integer ? "duration_ms" : "rate");
  if (!integer)
    s.from = from / 100.0 + 0.01, s.to = to / 100.0 + 0.01, s.precision = precision / 100.0;
  const double t = integer ? threshold : threshold / 100.0 + 0.01;
  auto result = search_breaking_point(s, threshold_at(t));
  RC_ASSERT(result.outcome == SearchOutcome::kBreaks);
  RC_ASSERT(result.breaking.has_value());
  RC_ASSERT(result.last_safe.has_value());
  RC_ASSERT(*result.breaking >= t);
  RC_ASSERT(*result.last_safe < t);
  RC_ASSERT(*result.breaking - *result.last_safe <= effective_precision(s) + 1e-9);
  // Binary: about log2(range / precision) probes after the two ends.
  const double halvings = std::ceil(std::log2((s.to - s.from) / effective_precision(s)));
  RC_ASSERT(double(result.probes.size()) <= halvings + 3);
}

TEST(RunSweep, ChangesOnlyTheSweptFieldAndWritesSweepJson) {
  TempDir out("sweep-test");
  std::mutex mu;
  std::vector<std::tuple<std::string, int64_t, uint64_t, fs::path>> calls;
  // set-nx-px breaks from 600 ms on; fenced never does.
  CellRunner fake = [&](const Scenario& s, const std::string& algorithm, uint64_t seed,
                        const fs::path& dir) {
    std::lock_guard lock(mu);
    const int64_t pause = *s.faults[0].duration_ms;
    calls.emplace_back(algorithm, pause, seed, dir);
    const bool broken = algorithm == "set-nx-px" && pause >= 600;
    json violations =
        broken ? json::array({{{"kind", "mutual-exclusion"}, {"explanation", "overlap"}}})
               : json::array();
    return RunResult::from_json(
        {{"algorithm", algorithm},
         {"verdict", broken ? "violated" : "safe"},
         {"error", nullptr},
         {"history", algorithm + "/history.jsonl"},
         {"seed", seed},
         {"check", {{"verdict", broken ? "violated" : "safe"}, {"violations", violations}}}},
        "fake");
  };
  SweepOptions options;
  options.spec = spec(0, 3000, 50);
  options.spec.runs = 2;
  options.out_dir = out.path();
  std::ostringstream progress;
  options.progress = &progress;
  json sweep = run_sweep(pause_scenario(), options, fake);

  EXPECT_EQ(suite_test::read_json(out.path() / "sweep.json"), sweep)
      << "sweep.json is the returned document";
  EXPECT_EQ(sweep["exit_status"], 0);
  EXPECT_EQ(sweep["seeds"], json({40, 41}));
  ASSERT_EQ(sweep["algorithms"].size(), 2u);
  const json& set_nx_px = sweep["algorithms"][0];
  EXPECT_EQ(set_nx_px["outcome"], "breaks");
  EXPECT_GE(set_nx_px["breaking_value"].get<double>(), 600);
  EXPECT_LT(set_nx_px["last_safe_value"].get<double>(), 600);
  EXPECT_LE(set_nx_px["breaking_value"].get<double>() - set_nx_px["last_safe_value"].get<double>(),
            50);
  EXPECT_EQ(set_nx_px["kinds_at_break"], json({"mutual-exclusion"}));
  const json& fenced = sweep["algorithms"][1];
  EXPECT_EQ(fenced["outcome"], "never-breaks");
  EXPECT_EQ(fenced["probes"].size(), 1u);

  for (const auto& [algorithm, pause, seed, dir] : calls) {
    EXPECT_TRUE(seed == 40 || seed == 41);
    const std::string run = seed == 40 ? "run-1" : "run-2";
    EXPECT_EQ(dir, out.path() / algorithm / ("duration_ms-" + std::to_string(pause)) / run);
  }
  const json& first_run = set_nx_px["probes"][0]["details"][0];
  EXPECT_EQ(first_run["history"], "set-nx-px/duration_ms-3000/run-1/set-nx-px/history.jsonl");

  std::string table = sweep_table(sweep);
  EXPECT_NE(table.find("set-nx-px (ttl 1000 ms): breaks at duration_ms ≥ " +
                       param_text("duration_ms", set_nx_px["breaking_value"].get<double>())),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("with mutual-exclusion"), std::string::npos) << table;
  EXPECT_NE(table.find("fenced (ttl 1000 ms): never breaks in range"), std::string::npos) << table;
  EXPECT_NE(
      progress.str().find("set-nx-px duration_ms=3000: broken in 2/2 runs [mutual-exclusion]"),
      std::string::npos)
      << progress.str();
}

TEST(RunSweep, KindDecidesWhatBreaks) {
  TempDir out("sweep-test");
  // Every run finds mutual-exclusion; only values >= 2000 also find stale-write.
  CellRunner fake = [](const Scenario& s, const std::string& algorithm, uint64_t seed,
                       const fs::path&) {
    json violations = json::array({{{"kind", "mutual-exclusion"}}});
    if (*s.faults[0].duration_ms >= 2000) violations.push_back({{"kind", "stale-write"}});
    return RunResult::from_json({{"algorithm", algorithm},
                                 {"verdict", "violated"},
                                 {"error", nullptr},
                                 {"seed", seed},
                                 {"check", {{"violations", violations}}}},
                                "fake");
  };
  SweepOptions options;
  options.spec = spec(0, 3000, 10);
  options.spec.kind = "stale-write";
  options.algorithms = {"fenced"};
  options.out_dir = out.path();
  std::ostringstream progress;
  options.progress = &progress;
  json sweep = run_sweep(pause_scenario(), options, fake);
  ASSERT_EQ(sweep["algorithms"].size(), 1u);
  EXPECT_EQ(sweep["breaks_when"], "stale-write");
  EXPECT_GE(sweep["algorithms"][0]["breaking_value"].get<double>(), 2000);
  EXPECT_LT(sweep["algorithms"][0]["last_safe_value"].get<double>(), 2000);
}

// run_sweep of the pause scenario's duration over 0..3000 ms with `fake` cells.
json sweep_pause_from_0_to_3000(const CellRunner& fake, const TempDir& out) {
  SweepOptions options;
  options.spec = spec(0, 3000, 50);
  options.out_dir = out.path();
  std::ostringstream progress;
  options.progress = &progress;
  return run_sweep(pause_scenario(), options, fake);
}

TEST(RunSweep, RunErrorEndsThatSearchWithStatusTwo) {
  TempDir out("sweep-test");
  CellRunner fake = [](const Scenario&, const std::string& algorithm, uint64_t,
                       const fs::path&) -> RunResult {
    if (algorithm == "set-nx-px") throw std::runtime_error("no free port");
    return RunResult::from_json({{"algorithm", algorithm}, {"verdict", "safe"}, {"error", nullptr}},
                                "fake");
  };
  json sweep = sweep_pause_from_0_to_3000(fake, out);
  EXPECT_EQ(sweep["exit_status"], 2);
  EXPECT_EQ(sweep["algorithms"][0]["outcome"], "error");
  EXPECT_EQ(sweep["algorithms"][0]["error"], "no free port");
  EXPECT_EQ(sweep["algorithms"][1]["outcome"], "never-breaks")
      << "the other algorithm is still searched";
  EXPECT_NE(sweep_table(sweep).find("set-nx-px (ttl 1000 ms): error: no free port"),
            std::string::npos);
}

// A probe whose fault never fired measured nothing about the swept value.
TEST(RunSweep, AProbeWhoseFaultNeverFiredEndsTheSearchAsUnknown) {
  TempDir out("sweep-test");
  CellRunner fake = [](const Scenario&, const std::string& algorithm, uint64_t,
                       const fs::path&) -> RunResult {
    RunResult run;
    run.algorithm = algorithm;
    run.verdict = Verdict::Safe;
    run.exercised = false;
    run.faults = {FaultFiring{0, "pause", "c1 at step before-write (1st time)", false, {}, {}}};
    return run;
  };
  json sweep = sweep_pause_from_0_to_3000(fake, out);
  EXPECT_EQ(sweep["exit_status"], 2);
  EXPECT_EQ(sweep["algorithms"][0]["outcome"], "error");
  EXPECT_NE(sweep["algorithms"][0]["error"].get<std::string>().find("never fired"),
            std::string::npos)
      << sweep["algorithms"][0]["error"];
}

}  // namespace
}  // namespace locklab::suite
