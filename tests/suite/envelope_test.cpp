// The safety envelope's logic without servers: the axes and predictions are
// complete, the story is a valid scenario at every size, the search finds a
// threshold where fake runs put it (spending repeats only near it), and the
// document, table and charts say what was measured.
#include "envelope.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "comparison.h"
#include "fake_envelope.h"
#include "lock.h"
#include "plots.h"
#include "suite_test_support.h"
#include "temp_dir.h"

namespace locklab::suite {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TEST(EnvelopeAxes, EveryAxisHasOneRowAndANameThatRoundTrips) {
  std::set<std::string> names;
  for (const auto& row : envelope_axes()) {
    EXPECT_TRUE(names.insert(std::string(row.name)).second) << row.name;
    EXPECT_EQ(envelope_axis_named(row.name), row.axis);
    EXPECT_EQ(info(row.axis).name, row.name);
    EXPECT_GT(row.precision, 0);
    EXPECT_NE(row.gentle, row.harsh);
  }
  EXPECT_EQ(names.size(), 6u);
  EXPECT_FALSE(envelope_axis_named("nope"));
}

// A built-in without a prediction on some axis would be measured against
// nothing: every design states its bound on every axis, inside the axis.
TEST(EnvelopePredictions, EveryBuiltInPredictsEveryAxisWithAReason) {
  for (const auto& algorithm : algorithms()) {
    for (const auto& axis : envelope_axes()) {
      const EnvelopePrediction* p = find_prediction(algorithm.envelope, axis.axis);
      ASSERT_NE(p, nullptr) << algorithm.id << " says nothing about " << axis.name;
      EXPECT_FALSE(p->why.empty()) << algorithm.id << " " << axis.name;
      if (p->bound) {
        EXPECT_GE(*p->bound, std::min(axis.gentle, axis.harsh)) << algorithm.id << axis.name;
        EXPECT_LE(*p->bound, std::max(axis.gentle, axis.harsh)) << algorithm.id << axis.name;
      }
    }
    EXPECT_EQ(algorithm.envelope.size(), envelope_axes().size()) << algorithm.id;
  }
}

TEST(EnvelopeScenario, ValidAtEverySizeWithTheFaultOnlyAwayFromTheGentleEnd) {
  for (const auto& axis : envelope_axes()) {
    for (double size : {axis.gentle, (axis.gentle + axis.harsh) / 2, axis.harsh}) {
      Scenario s = envelope_scenario(axis.axis, size);
      EXPECT_EQ(s.clients, 2);
      EXPECT_EQ(s.workload.ttl_ms, kEnvelopeLeaseMs);
      EXPECT_EQ(s.workload.ops_per_client, 1);
      ASSERT_FALSE(s.faults.empty());
      EXPECT_EQ(s.faults[0].name(), std::string("pause")) << "c2's late start";
      EXPECT_EQ(s.faults.size(), size == axis.gentle ? 1u : 2u) << axis.name << " " << size;
      EXPECT_GT(s.workload.wait_ms, s.workload.work_ms);
      EXPECT_GT(s.duration_ms, s.workload.wait_ms);
    }
  }
  // The size reaches the fault field it is about.
  EXPECT_EQ(*envelope_scenario(EnvelopeAxis::Pause, 0.6).faults[1].duration_ms, 300);
  EXPECT_EQ(envelope_scenario(EnvelopeAxis::ClientClockSlow, 0.4).faults[1].number("rate"), 0.4);
  EXPECT_EQ(envelope_scenario(EnvelopeAxis::ServerClockJump, 1).faults[1].number("delta_ms"),
            kEnvelopeLeaseMs);
  EXPECT_EQ(envelope_scenario(EnvelopeAxis::Partition, 0).workload.work_ms,
            std::llround(kEnvelopePartitionWork * kEnvelopeLeaseMs));
}

// A fake lock whose holds overlap from `threshold` on (toward the harsh
// end), and whose store is harmed from `harm_threshold` on (by default where
// they overlap: nothing stops the late write).
PlayEnvelope threshold_play(const EnvelopeAxisInfo& axis, double threshold, int* runs = nullptr,
                            std::optional<double> harm_threshold = std::nullopt) {
  const double harm = harm_threshold.value_or(threshold);
  return [=](double size, int) {
    if (runs) ++*runs;
    auto from = [&](double t) { return axis.harsh > axis.gentle ? size >= t : size <= t; };
    EnvelopeRun run;
    run.broken = from(threshold);
    run.harmed = run.broken && from(harm);
    if (run.broken) run.kinds = {"mutual-exclusion"};
    if (run.harmed) run.kinds.push_back("stale-write");
    return run;
  };
}

RC_GTEST_PROP(EnvelopeSearch, FindsAThresholdWithinThePrecisionFromAnyStart, ()) {
  const auto& axes = envelope_axes();
  const EnvelopeAxisInfo& axis = axes[*rc::gen::inRange<size_t>(0, axes.size())];
  const double low = std::min(axis.gentle, axis.harsh), high = std::max(axis.gentle, axis.harsh);
  const double span = high - low;
  const double threshold = low + span * (0.05 + 0.9 * *rc::gen::inRange(0, 1000) / 1000.0);
  std::optional<double> start;
  if (*rc::gen::arbitrary<bool>()) start = low + span * *rc::gen::inRange(0, 1000) / 1000.0;
  EnvelopeSearch s = search_envelope({.axis = axis, .start = start, .repeats = 2},
                                     threshold_play(axis, threshold));
  RC_ASSERT(s.outcome == SearchOutcome::kBreaks);
  RC_ASSERT(s.median.has_value());
  RC_ASSERT(std::abs(*s.median - threshold) <= axis.precision + 0.003);
  RC_ASSERT(s.kinds_at_break == (std::vector<std::string>{"mutual-exclusion", "stale-write"}));
  RC_ASSERT(s.harm_outcome == SearchOutcome::kBreaks);
  RC_ASSERT(s.harm_median == s.median);
}

// Where the store is harmed later than the holds overlap (fencing, a
// client's own check), both bounds are found, each within the precision.
RC_GTEST_PROP(EnvelopeSearch, FindsTheHarmBoundBeyondTheOverlap, ()) {
  const auto& axes = envelope_axes();
  const EnvelopeAxisInfo& axis = axes[*rc::gen::inRange<size_t>(0, axes.size())];
  const double span = axis.harsh - axis.gentle;  // negative on the slow-clock axis
  const double threshold = axis.gentle + span * (0.05 + 0.4 * *rc::gen::inRange(0, 1000) / 1000.0);
  const double harm = threshold + span * (0.1 + 0.4 * *rc::gen::inRange(0, 1000) / 1000.0);
  EnvelopeSearch s =
      search_envelope({.axis = axis, .repeats = 2}, threshold_play(axis, threshold, nullptr, harm));
  RC_ASSERT(s.outcome == SearchOutcome::kBreaks);
  RC_ASSERT(std::abs(*s.median - threshold) <= axis.precision + 0.003);
  RC_ASSERT(s.harm_outcome == SearchOutcome::kBreaks);
  RC_ASSERT(s.harm_median.has_value());
  RC_ASSERT(std::abs(*s.harm_median - harm) <= axis.precision + 0.003);
}

// Harm needs an overlap: where the runs that decided the overlap bound
// harmed the store, no run is spent on a search for harm.
TEST(EnvelopeSearch, HarmWhereTheHoldsOverlapCostsNoRuns) {
  const EnvelopeAxisInfo& pause = info(EnvelopeAxis::Pause);
  EnvelopeSearch s =
      search_envelope({.axis = pause, .start = 0.5, .repeats = 3}, threshold_play(pause, 0.5));
  ASSERT_EQ(s.outcome, SearchOutcome::kBreaks);
  EXPECT_EQ(s.harm_outcome, SearchOutcome::kBreaks);
  EXPECT_EQ(s.harm_median, s.median);
  EXPECT_EQ(s.harm_min, s.min);
  EXPECT_EQ(s.harm_max, s.max);
  EXPECT_TRUE(std::none_of(s.probes.begin(), s.probes.end(),
                           [](const EnvelopeProbe& p) { return p.harm; }));
}

// A store whose fencing rejects every late write is never harmed, though
// the holds overlap; a lock that never overlaps is never searched for harm.
TEST(EnvelopeSearch, FencingThatRejectsEveryLateWriteIsNeverHarmed) {
  const EnvelopeAxisInfo& pause = info(EnvelopeAxis::Pause);
  EnvelopeSearch fenced = search_envelope({.axis = pause, .start = 0.5, .repeats = 3},
                                          threshold_play(pause, 0.5, nullptr, 99));
  EXPECT_EQ(fenced.outcome, SearchOutcome::kBreaks);
  EXPECT_NEAR(*fenced.median, 0.5, pause.precision + 1e-9);
  EXPECT_EQ(fenced.harm_outcome, SearchOutcome::kNeverBreaks);
  EXPECT_FALSE(fenced.harm_median.has_value());
  EXPECT_TRUE(std::any_of(fenced.probes.begin(), fenced.probes.end(), [&](const EnvelopeProbe& p) {
    return p.harm && p.size == pause.harsh && p.broken == p.runs && p.harmed == 0;
  })) << "the search for harm went to the harsh end, where the holds overlapped";
  for (int r = 2; r <= 3; ++r)
    EXPECT_EQ(std::count_if(fenced.probes.begin(), fenced.probes.end(),
                            [&](const EnvelopeProbe& p) { return p.harm && p.repeat == r; }),
              1)
        << "repeat " << r << " starts where the first found no harm: the harsh end, one probe";
  int runs = 0;
  EnvelopeSearch never =
      search_envelope({.axis = pause, .repeats = 3}, threshold_play(pause, 99, &runs, 99));
  EXPECT_EQ(never.harm_outcome, SearchOutcome::kNeverBreaks);
  EXPECT_EQ(runs, 4);
}

TEST(EnvelopeSearch, NeverBreaksAndBreaksWithoutTheFault) {
  const EnvelopeAxisInfo& pause = info(EnvelopeAxis::Pause);
  int runs = 0;
  EnvelopeSearch never =
      search_envelope({.axis = pause, .repeats = 3}, threshold_play(pause, 99, &runs));
  EXPECT_EQ(never.outcome, SearchOutcome::kNeverBreaks);
  EXPECT_EQ(runs, 4) << "the baseline, then one run at the harsh end per repeat";
  runs = 0;
  EnvelopeSearch without =
      search_envelope({.axis = pause, .start = 0, .repeats = 3}, threshold_play(pause, -1, &runs));
  EXPECT_EQ(without.outcome, SearchOutcome::kBreaksWithoutFault);
  EXPECT_EQ(runs, 4);
}

// Runs are spent at the boundary: a size more than four precisions from
// every probe of the other verdict is played once.
TEST(EnvelopeSearch, RepeatsRunsOnlyNearTheBoundary) {
  const EnvelopeAxisInfo& pause = info(EnvelopeAxis::Pause);
  EnvelopeSearch s =
      search_envelope({.axis = pause, .start = 2.5, .repeats = 3}, threshold_play(pause, 0.5));
  ASSERT_EQ(s.outcome, SearchOutcome::kBreaks);
  for (const auto& probe : s.probes) {
    if (std::abs(probe.size - 0.5) > 8 * pause.precision) {
      EXPECT_EQ(probe.runs, 1) << "size " << probe.size;
    }
  }
  EXPECT_TRUE(std::any_of(s.probes.begin(), s.probes.end(), [](const EnvelopeProbe& p) {
    return p.runs >= 2;
  })) << "the k-of-n rule is used at the boundary";
}

// A size that breaks in one run of three is not a breaking size by the
// k-of-n rule near the boundary.
TEST(EnvelopeSearch, KOfNDecidesNearTheBoundary) {
  const EnvelopeAxisInfo& pause = info(EnvelopeAxis::Pause);
  std::map<double, int> seen;
  PlayEnvelope flaky = [&](double size, int) {
    EnvelopeRun run;
    // Sure from 0.6; from 0.5 to 0.6 only the first run at each size breaks.
    run.broken = size >= 0.6 || (size >= 0.5 && seen[size]++ == 0);
    return run;
  };
  EnvelopeSearch s = search_envelope({.axis = pause, .start = 0.6, .repeats = 1}, flaky);
  ASSERT_EQ(s.outcome, SearchOutcome::kBreaks);
  EXPECT_GE(*s.median, 0.6 - pause.precision - 1e-9);
}

TEST(EnvelopeSearch, ErrorAndNotApplicableStopTheSearch) {
  const EnvelopeAxisInfo& delay = info(EnvelopeAxis::Delay);
  EnvelopeSearch failed = search_envelope({.axis = delay}, [](double, int) {
    EnvelopeRun run;
    run.error = "redis-server died";
    return run;
  });
  EXPECT_EQ(failed.outcome, SearchOutcome::kError);
  EXPECT_EQ(failed.error, "redis-server died");
  EXPECT_EQ(failed.runs, 1);
  EnvelopeSearch na = search_envelope({.axis = delay}, [](double, int) {
    EnvelopeRun run;
    run.not_applicable = "no links to delay";
    return run;
  });
  EXPECT_EQ(na.outcome, SearchOutcome::kNotApplicable);
  EXPECT_EQ(na.error, "no links to delay");
}

// A story whose baseline did not have both clients hold the lock was not
// told: no size is searched, and nothing is claimed about the lock.
TEST(EnvelopeSearch, ABaselineWithoutBothHoldsIsNotExercised) {
  const EnvelopeAxisInfo& slow = info(EnvelopeAxis::ClientClockSlow);
  int runs = 0;
  EnvelopeSearch s = search_envelope({.axis = slow, .start = 0.5}, [&](double, int) {
    ++runs;
    EnvelopeRun run;
    run.holds = 1;  // c1 was refused: only c2 held it
    return run;
  });
  EXPECT_EQ(s.outcome, SearchOutcome::kNotExercised);
  EXPECT_NE(s.error.find("held 1 time(s)"), std::string::npos) << s.error;
  EXPECT_EQ(runs, 1);
}

// A search that came out `outcome`, its repeats' bounds from `min` to `max`.
EnvelopeSearch searched(SearchOutcome outcome, std::optional<double> min = std::nullopt,
                        std::optional<double> median = std::nullopt,
                        std::optional<double> max = std::nullopt) {
  EnvelopeSearch search;
  search.outcome = outcome;
  search.min = min, search.median = median, search.max = max;
  return search;
}

TEST(EnvelopeAgreement, WithinTheSpreadAndTheTolerance) {
  const EnvelopeAxisInfo& pause = info(EnvelopeAxis::Pause);
  const double tolerance = envelope_tolerance(pause, 0.5);
  EXPECT_DOUBLE_EQ(tolerance, 0.06);
  EXPECT_DOUBLE_EQ(envelope_tolerance(pause, 0.5, 300), 0.61) << "a library retrying every 300 ms";
  // A slow clock: c1's half lease of work at rate 0.5 lasts a lease; c2
  // 305 ms late needs it to last 805 ms: rate 250/805.
  EXPECT_NEAR(envelope_tolerance(info(EnvelopeAxis::ClientClockSlow), 0.5, 300), 0.5 - 250.0 / 805,
              1e-9);
  // A fast clock: c2 30 ms late must come before c1's 250 ms of work end.
  EXPECT_NEAR(envelope_tolerance(info(EnvelopeAxis::ClientClockFast), 2.0), 2.0 * 250 / 220 - 2,
              1e-9);
  const EnvelopeSearch breaks = searched(SearchOutcome::kBreaks, 0.5, 0.52, 0.54);
  EXPECT_TRUE(agrees(pause, {EnvelopeAxis::Pause, 0.5, ""}, breaks, tolerance));
  EXPECT_TRUE(agrees(pause, {EnvelopeAxis::Pause, 0.6, ""}, breaks, tolerance))
      << "within 30 ms and the precision";
  EXPECT_FALSE(agrees(pause, {EnvelopeAxis::Pause, 0.64, ""}, breaks, tolerance));
  EXPECT_FALSE(agrees(pause, {EnvelopeAxis::Pause, std::nullopt, ""}, breaks, tolerance));
  const EnvelopeSearch never = searched(SearchOutcome::kNeverBreaks);
  EXPECT_TRUE(agrees(pause, {EnvelopeAxis::Pause, std::nullopt, ""}, never, tolerance));
  EXPECT_FALSE(agrees(pause, {EnvelopeAxis::Pause, 2.5, ""}, never, tolerance));
  const EnvelopeSearch without = searched(SearchOutcome::kBreaksWithoutFault);
  EXPECT_TRUE(agrees(pause, {EnvelopeAxis::Pause, 0, ""}, without, tolerance));
  EXPECT_FALSE(agrees(pause, {EnvelopeAxis::Pause, 0.5, ""}, without, tolerance));
  // Two repeats broke without the fault, one only at 0.02 lease.
  const EnvelopeSearch mostly_without = searched(SearchOutcome::kBreaks, 0.0, 0.0, 0.02);
  EXPECT_TRUE(agrees(pause, {EnvelopeAxis::Pause, 0, ""}, mostly_without, tolerance));
  EXPECT_FALSE(agrees(pause, {EnvelopeAxis::Pause, 0, ""}, breaks, tolerance))
      << "broke only from half a lease on";
}

// set-nx-px breaks at pauses of 0.52 leases and more, redlock from 0.8 (its
// design says 0.5: a disagreement).
json fake_envelope(const fs::path& out) {
  CellRunner fake = suite_test::fake_envelope_runner(
      [](const std::string& lock) { return lock == "redlock" ? 0.8 : 0.52; });
  EnvelopeOptions options;
  options.locks = {LockUnderTest::built_in("set-nx-px"), LockUnderTest::built_in("redlock")};
  options.axes = {EnvelopeAxis::Pause};
  options.jobs = 2;
  options.out_dir = out;
  std::ostringstream progress;
  options.progress = &progress;
  return run_envelope(options, fake);
}

TEST(RunEnvelope, WritesTheDocumentWithPredictionsAndDisagreements) {
  TempDir out("envelope-test");
  const json envelope = fake_envelope(out.path());
  EXPECT_EQ(suite_test::read_json(out.path() / "envelope.json"), envelope);
  ASSERT_EQ(envelope["cells"].size(), 2u);
  const json& set_nx_px = envelope["cells"][0];
  EXPECT_EQ(set_nx_px["lock"], "set-nx-px");
  EXPECT_EQ(set_nx_px["outcome"], "breaks");
  EXPECT_NEAR(set_nx_px["median"].get<double>(), 0.52, 0.021);
  EXPECT_EQ(set_nx_px["prediction"]["bound"], 0.5);
  EXPECT_EQ(set_nx_px["agrees"], true);
  EXPECT_EQ(set_nx_px["kinds_at_break"], json({"mutual-exclusion", "stale-write"}));
  EXPECT_EQ(set_nx_px["harm"]["median"], set_nx_px["median"]) << "harmed where they overlapped";
  const int runs = set_nx_px["runs"].get<int>();
  EXPECT_EQ(set_nx_px["timing"]["story"], double(runs)) << "each run's timing, summed";
  EXPECT_EQ(set_nx_px["timing"]["servers"], 0.5 * runs);
  const json& redlock = envelope["cells"][1];
  EXPECT_NEAR(redlock["median"].get<double>(), 0.8, 0.021);
  EXPECT_EQ(redlock["agrees"], false);
  EXPECT_EQ(envelope["totals"]["disagree"], 1);
  EXPECT_EQ(envelope["exit_status"], 1) << "a disagreement is a finding to explain";
  const std::string table = envelope_table(envelope);
  EXPECT_NE(table.find("redlock pause: breaks at 0.800 leases"), std::string::npos) << table;
  EXPECT_NE(table.find("DISAGREES"), std::string::npos) << table;
}

// --jobs-per-runtime: no more searches at once of libraries whose adapters
// start the same program than it says, and the other searches fill the
// free places meanwhile instead of queueing behind them.
TEST(RunEnvelope, SearchesOfOneRuntimeStayWithinTheirLimitWhileOthersFillIn) {
  TempDir out("envelope-runtimes");
  EnvelopeOptions options;
  for (const char* name : {"java-a", "java-b", "java-c"}) {
    LockUnderTest library = suite_test::fake_library(name);
    library.adapter->command = std::string("java/run ") + name;
    options.locks.push_back(library);
  }
  options.locks.push_back(suite_test::fake_library("node-d"));
  options.locks.push_back(LockUnderTest::built_in("fenced"));
  options.axes = {EnvelopeAxis::Pause};
  options.jobs = 5;
  options.jobs_per_runtime = 2;
  options.out_dir = out.path();
  std::ostringstream progress;
  options.progress = &progress;

  std::mutex mu;
  std::condition_variable changed;
  int java_now = 0, java_most = 0, others_started = 0, java_left_waiting = 0;
  CellRunner fake = suite_test::fake_envelope_runner([](const std::string&) { return 0.52; });
  CellRunner counting = [&](const Scenario& s, const std::string& lock, uint64_t seed,
                            const fs::path& dir) {
    const bool java = lock.starts_with("java-");
    std::unique_lock l(mu);
    if (!java) {
      ++others_started;
      changed.notify_all();
    } else {
      java_most = std::max(java_most, ++java_now);
      // A search of another runtime starts while these run: it does not
      // wait behind the third java search.
      if (!changed.wait_for(l, std::chrono::seconds(10), [&] { return others_started > 0; }))
        ++java_left_waiting;
      // Held a while, so that searches let run together would overlap.
      l.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      l.lock();
      --java_now;
    }
    l.unlock();
    return fake(s, lock, seed, dir);
  };
  const json envelope = run_envelope(options, counting);
  EXPECT_LE(java_most, 2) << "three java searches, at most two at a time";
  EXPECT_EQ(java_left_waiting, 0) << "the node and built-in searches ran beside them";
  EXPECT_EQ(envelope["cells"].size(), 5u);
  for (const json& cell : envelope["cells"]) EXPECT_EQ(cell["outcome"], "breaks") << cell.dump();
}

// Once a lock's last search is done, its idle adapters are stopped: the
// next lock's searches find none of them kept (a comparison's idle JVMs
// held gigabytes to its end), and the searches of a lock still being
// searched keep theirs.
TEST(RunEnvelope, ALocksIdleAdaptersGoOnceItsLastSearchIsDone) {
  TempDir out("envelope-forget");
  auto pool = std::make_shared<AdapterPool>();
  EnvelopeOptions options;
  for (const char* name : {"lib-a", "lib-b"}) {
    LockUnderTest library = suite_test::fake_library(name);
    // A process that only waits for its stdin to close.
    library.adapter->command = std::string("/bin/sh -c 'exec cat' ") + name;
    options.locks.push_back(library);
  }
  options.adapters = pool;  // as locklab envelope passes it
  options.axes = {EnvelopeAxis::Pause, EnvelopeAxis::Delay};
  options.jobs = 1;
  options.out_dir = out.path();
  std::ostringstream progress;
  options.progress = &progress;

  std::map<std::string, int> runs, found_own_kept;
  int b_found_a_kept = 0;
  CellRunner fake = suite_test::fake_envelope_runner([](const std::string&) { return 0.52; });
  CellRunner keeping = [&](const Scenario& s, const std::string& lock, uint64_t seed,
                           const fs::path& dir) {
    const AdapterConfig& mine = *options.locks[lock == "lib-a" ? 0 : 1].adapter;
    const AdapterConfig& a = *options.locks[0].adapter;
    if (lock == "lib-b") {
      if (auto kept = pool->take(a)) {
        ++b_found_a_kept;
        pool->keep(a, std::move(kept));
      }
    }
    std::unique_ptr<AdapterProcess> adapter = pool->take(mine);
    if (adapter) ++found_own_kept[lock];
    if (!adapter) adapter = pool->start(mine, {{"127.0.0.1", 1}});
    pool->keep(mine, std::move(adapter));
    ++runs[lock];
    return fake(s, lock, seed, dir);
  };
  run_envelope(options, keeping);
  EXPECT_EQ(b_found_a_kept, 0) << "lib-a's searches were done before lib-b's began";
  EXPECT_EQ(found_own_kept["lib-a"], runs["lib-a"] - 1) << "kept between its own searches";
  EXPECT_EQ(found_own_kept["lib-b"], runs["lib-b"] - 1);
  EXPECT_EQ(pool->take(*options.locks[1].adapter), nullptr) << "lib-b's go at its end too";
}

// --reuse carries the searches an earlier envelope made under the same
// conditions and makes only the others: a lock added since, a search that
// failed, or every search once the story or the lab build differs.
TEST(RunEnvelope, ReuseCarriesOnlyTheSearchesMadeUnderTheSameConditions) {
  TempDir first("envelope-first"), second("envelope-second");
  const json earlier = fake_envelope(first.path());
  EXPECT_TRUE(earlier.value("lab_build", "").size() == 16) << earlier.value("lab_build", "");
  std::set<std::string> searched;
  std::mutex searched_mutex;  // the envelope runs two searches at once (jobs = 2)
  auto counting = [&](double threshold) {
    CellRunner fake =
        suite_test::fake_envelope_runner([=](const std::string&) { return threshold; });
    return [fake, &searched, &searched_mutex](const Scenario& s, const std::string& lock,
                                              uint64_t seed, const fs::path& dir) {
      {
        std::lock_guard guard(searched_mutex);
        searched.insert(lock);
      }
      return fake(s, lock, seed, dir);
    };
  };
  EnvelopeOptions options;
  options.locks = {LockUnderTest::built_in("set-nx-px"), LockUnderTest::built_in("redlock"),
                   LockUnderTest::built_in("fenced")};
  options.axes = {EnvelopeAxis::Pause};
  options.jobs = 2;
  options.out_dir = second.path();
  options.reuse = first.path();
  std::ostringstream progress;
  options.progress = &progress;
  const json again = run_envelope(options, counting(0.7));
  EXPECT_EQ(searched, std::set<std::string>{"fenced"}) << "only the lock added since is searched";
  EXPECT_EQ(again["reuse"]["searches_carried"], 2);
  ASSERT_EQ(again["cells"].size(), 3u);
  for (int i : {0, 1}) {
    json carried = again["cells"][i];
    EXPECT_EQ(carried["carried_from"], first.path().string());
    carried.erase("carried_from");
    EXPECT_EQ(carried, earlier["cells"][i]) << "carried as measured";
  }
  EXPECT_FALSE(again["cells"][2].contains("carried_from"));
  EXPECT_NEAR(again["cells"][2]["median"].get<double>(), 0.7, 0.021);
  EXPECT_NE(progress.str().find("set-nx-px pause: breaks at"), std::string::npos);
  EXPECT_NE(progress.str().find("carried from"), std::string::npos) << progress.str();
  EXPECT_NE(envelope_table(again).find("(↻ carried)"), std::string::npos);
  const std::string markdown = reports::envelope_markdown(again);
  EXPECT_NE(markdown.find("carried over (↻): 2 searches"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find(" ↻ |"), std::string::npos) << markdown;

  // A library whose retry interval changed (the prediction's tolerance) is searched again.
  searched.clear();
  {
    EnvelopeOptions with_library = options;
    with_library.out_dir = second.path();
    LockUnderTest library = suite_test::fake_library();
    with_library.locks.push_back(library);
    with_library.reuse = second.path();
    run_envelope(with_library, counting(0.7));
    EXPECT_EQ(searched.count(library.name), 1u);
    searched.clear();
    run_envelope(with_library, counting(0.7));
    EXPECT_TRUE(searched.empty()) << "everything was searched under the same conditions";
    with_library.locks.back().retry_ms = library.retry_ms.value_or(0) + 300;
    run_envelope(with_library, counting(0.7));
    EXPECT_EQ(searched, std::set<std::string>{library.name});
  }

  // A search that failed is made again.
  json edited = suite_test::read_json(first.path() / "envelope.json");
  edited["cells"][0]["outcome"] = "error";
  std::ofstream(first.path() / "envelope.json") << edited.dump();
  searched.clear();
  run_envelope(options, counting(0.7));
  EXPECT_EQ(searched, (std::set<std::string>{"set-nx-px", "fenced"}));

  // Another story (more repeats), or another lab build: nothing is carried.
  searched.clear();
  options.repeats = 4;
  EXPECT_EQ(run_envelope(options, counting(0.7))["reuse"]["searches_carried"], 0);
  EXPECT_EQ(searched.size(), 3u);
  options.repeats = 3;
  edited = suite_test::read_json(first.path() / "envelope.json");
  edited["cells"][0]["outcome"] = "breaks";
  edited["lab_build"] = "0000000000000000";
  std::ofstream(first.path() / "envelope.json") << edited.dump();
  searched.clear();
  EXPECT_EQ(run_envelope(options, counting(0.7))["reuse"]["searches_carried"], 0);
  EXPECT_EQ(searched.size(), 3u);

  // An earlier directory that is not JSON is an error naming the file.
  std::ofstream(first.path() / "envelope.json") << "{not json";
  try {
    run_envelope(options, counting(0.7));
    FAIL() << "a broken envelope.json must not be taken for a first run";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("envelope.json: not JSON (--reuse)"), std::string::npos)
        << e.what();
  }
}

// A library's disagreement that libraries.json explains is a finding told,
// not a failure: it is counted as explained and the exit status is 0.
TEST(RunEnvelope, AnExplainedGapIsNoFailure) {
  TempDir out("envelope-gap");
  LockUnderTest library = suite_test::fake_library();
  library.envelope_gaps["pause"] = "it refreshes its lease";
  EnvelopeOptions options;
  options.locks = {library};
  options.axes = {EnvelopeAxis::Pause};
  options.out_dir = out.path();
  std::ostringstream progress;
  options.progress = &progress;
  const json envelope = run_envelope(
      options, suite_test::fake_envelope_runner([](const std::string&) { return 0.9; }));
  ASSERT_EQ(envelope["cells"].size(), 1u);
  EXPECT_EQ(envelope["cells"][0]["agrees"], false);
  EXPECT_EQ(envelope["cells"][0]["gap"], "it refreshes its lease");
  EXPECT_EQ(envelope["totals"]["explained"], 1);
  EXPECT_EQ(envelope["exit_status"], 0);

  // A story the library's waiter cannot be told (only one client ever held
  // the lock), explained: not-exercised, counted as explained, exit 0.
  CellRunner one_hold = [](const Scenario&, const std::string& lock, uint64_t seed,
                           const fs::path&) {
    return RunResult::from_json({{"algorithm", lock},
                                 {"verdict", "safe"},
                                 {"error", nullptr},
                                 {"seed", seed},
                                 {"stats", {{"acquires_ok", 1}}},
                                 {"check", {{"verdict", "safe"}, {"violations", json::array()}}}},
                                "fake");
  };
  const json not_told = run_envelope(options, one_hold);
  EXPECT_EQ(not_told["cells"][0]["outcome"], "not-exercised");
  EXPECT_EQ(not_told["cells"][0]["gap"], "it refreshes its lease");
  EXPECT_EQ(not_told["exit_status"], 0);
  library.envelope_gaps.clear();
  options.locks = {library};
  EXPECT_EQ(run_envelope(options, one_hold)["exit_status"], 1) << "not told, unexplained";
  options.locks = {library};
  EXPECT_EQ(run_envelope(options, suite_test::fake_envelope_runner(
                                      [](const std::string&) { return 0.9; }))["exit_status"],
            1)
      << "the same gap unexplained";
}

// A lock whose store fencing keeps whole: the envelope says it is never
// harmed and where its holds overlapped, in the document, the terminal's
// lines and the Markdown table; its agreement is the overlap's.
TEST(RunEnvelope, AFencedStoreIsNeverHarmedAndTheOverlapIsStillReported) {
  TempDir out("envelope-fenced");
  EnvelopeOptions options;
  options.locks = {LockUnderTest::built_in("fenced")};
  options.axes = {EnvelopeAxis::Pause};
  options.repeats = 1;
  options.out_dir = out.path();
  std::ostringstream progress;
  options.progress = &progress;
  const json envelope = run_envelope(
      options, suite_test::fake_envelope_runner([](const std::string&) { return 0.52; },
                                                [](const std::string&) { return 99.0; }));
  const json& cell = envelope["cells"][0];
  EXPECT_EQ(cell["outcome"], "breaks");
  EXPECT_NEAR(cell["median"].get<double>(), 0.52, 0.021);
  EXPECT_EQ(cell["harm"]["outcome"], "never-breaks");
  EXPECT_EQ(cell["harm"]["median"], json());
  EXPECT_EQ(cell["agrees"], true) << "the prediction is of the overlap";
  EXPECT_NE(envelope_table(envelope).find("fenced pause: harms never up to 3.000 leases; overlaps "
                                          "at 0.5"),
            std::string::npos)
      << envelope_table(envelope);
  const std::string md = reports::envelope_markdown(nlohmann::ordered_json(envelope));
  EXPECT_NE(md.find("| `fenced` | harm **never**, overlap 0.52 (0.52–0.52); predicted 0.50 |"),
            std::string::npos)
      << md;
}

TEST(RunEnvelope, TheMarkdownTableSaysBoundSpreadPredictionAndWhy) {
  TempDir out("envelope-md");
  const std::string md =
      reports::envelope_markdown(nlohmann::ordered_json(fake_envelope(out.path())));
  EXPECT_NE(md.find("## Safety envelopes"), std::string::npos) << md;
  EXPECT_NE(md.find("| lock | pause |"), std::string::npos) << md;
  EXPECT_NE(md.find("| `set-nx-px` | **0.52** (0.52–0.52); predicted 0.50 |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("predicted 0.50 ⚠"), std::string::npos) << "redlock disagrees: " << md;
  EXPECT_NE(
      md.find(find_prediction(algorithm_info("set-nx-px").envelope, EnvelopeAxis::Pause)->why),
      std::string::npos)
      << md;
}

}  // namespace
}  // namespace locklab::suite
