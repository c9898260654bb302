// Adapters inside real runs: steps an adapter announces are steps a
// scenario's fault can fire at; a story told at a step only the built-in
// algorithm has does not apply to an adapter.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "adapter_pool.h"
#include "adapter_process.h"
#include "faults/leak_check.h"
#include "locks_under_test.h"
#include "runner.h"
#include "scenario.h"
#include "temp_dir.h"

namespace locklab {
namespace {

using nlohmann::json;

// c1 is paused for 400 ms at "after-send" the first time it reaches it.
Scenario pause_after_send() {
  return parse_scenario(json::parse(R"({"algorithms": ["redlock"], "clients": 2,
      "duration_ms": 900, "workload": {"ttl_ms": 2000, "ops_per_client": 2},
      "faults": [{"kind": "pause", "duration_ms": 400,
                  "when": {"client": "c1", "step": "after-send"}}],
      "expect": {"default": {"verdict": "safe"}}})"),
                        "pause-after-send.json");
}

LockUnderTest adapter(const std::string& command) {
  return LockUnderTest::from_adapter({.command = command}, "redlock");
}

std::vector<json> history(const std::filesystem::path& file) {
  std::vector<json> events;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) events.push_back(json::parse(line));
  return events;
}

TEST(AdapterSteps, AnAnnouncedStepFiresTheFaultThereAndHoldsTheAdapter) {
  TempDir out;
  const LockUnderTest lock = adapter("/usr/bin/python3 " ADAPTER_TEST_DIR "/announces_steps.py");
  json run = run_cell(pause_after_send(), lock, Servers{}, 1, out.path()).to_json();
  ASSERT_TRUE(run["error"].is_null()) << run["error"];
  EXPECT_FALSE(run.contains("not_applicable")) << run.dump(2);
  ASSERT_EQ(run["faults"].size(), 1u);
  EXPECT_TRUE(run["faults"][0]["fired"].get<bool>());
  EXPECT_TRUE(run["exercised"].get<bool>());
  // c1's first acquire completed only after the pause at its step ended.
  int64_t invoked = -1, completed = -1;
  for (const auto& e : history(out.path() / "announces-steps" / "history.jsonl")) {
    if (e["process"] != "c1" || e["f"] != "acquire") continue;
    if (e["type"] == "invoke" && invoked < 0) invoked = e["time_ns"];
    if (e["type"] != "invoke" && completed < 0) completed = e["time_ns"];
  }
  ASSERT_GE(invoked, 0);
  ASSERT_GE(completed, 0);
  EXPECT_GE(completed - invoked, 400'000'000);
}

// `story` told to redis-py-lock, which announces no step: the run's
// not-applicable reason ("" after a failure when there is none). Nothing
// may have run: no history is written.
std::string not_applicable_to_redis_py(const Scenario& story) {
  TempDir out;
  const LockUnderTest lock = adapter("/usr/bin/python3 " EXAMPLE_ADAPTERS_DIR "/redis_py_lock.py");
  json run = run_cell(story, lock, Servers{}, 1, out.path()).to_json();
  EXPECT_FALSE(run.value("expectation_met", true));
  EXPECT_FALSE(std::filesystem::exists(out.path() / "redis-py-lock" / "history.jsonl"));
  if (!run["not_applicable"].is_string()) {
    ADD_FAILURE() << run.dump(2);
    return "";
  }
  return run["not_applicable"];
}

TEST(AdapterSteps, AStepOnlyTheBuiltInHasMakesTheCellNotApplicable) {
  const std::string reason = not_applicable_to_redis_py(pause_after_send());
  EXPECT_NE(reason.find("after-send"), std::string::npos) << reason;
  EXPECT_NE(reason.find("redlock"), std::string::npos) << reason;
}

// c2 paused until c1's after-send: a pause waiting for a step the adapter
// does not announce would never end before the run does.
Scenario c2_waits_for_after_send() {
  return parse_scenario(json::parse(R"({"algorithms": ["redlock"], "clients": 2,
      "duration_ms": 900, "workload": {"ttl_ms": 2000, "ops_per_client": 2},
      "faults": [{"kind": "pause", "at_ms": 0, "clients": ["c2"],
                  "until": {"client": "c1", "step": "after-send"}}],
      "expect": {"default": {"verdict": "safe"}}})"),
                        "c2-waits-for-after-send.json");
}

TEST(AdapterSteps, AWaitForAStepOnlyTheBuiltInHasMakesTheCellNotApplicable) {
  const std::string reason = not_applicable_to_redis_py(c2_waits_for_after_send());
  EXPECT_NE(reason.find("waits at step \"after-send\""), std::string::npos) << reason;
}

TEST(AdapterSteps, APauseEndsAtAStepTheAdapterAnnounces) {
  TempDir out;
  const LockUnderTest lock = adapter("/usr/bin/python3 " ADAPTER_TEST_DIR "/announces_steps.py");
  json run = run_cell(c2_waits_for_after_send(), lock, Servers{}, 1, out.path()).to_json();
  ASSERT_TRUE(run["error"].is_null()) << run["error"];
  // The step comes between c1's first acquire and its answer, and so does
  // the pause's end; without the step it would end with the run.
  int invoked = -1, pause_end = -1, completed = -1;
  for (const auto& e : history(out.path() / "announces-steps" / "history.jsonl")) {
    const int index = e["index"];
    if (e["f"] == "pause" && e["value"]["phase"] == "end") pause_end = index;
    if (e["process"] != "c1" || e["f"] != "acquire") continue;
    if (e["type"] == "invoke" && invoked < 0) invoked = index;
    if (e["type"] != "invoke" && completed < 0) completed = index;
  }
  EXPECT_LT(invoked, pause_end);
  EXPECT_LT(pause_end, completed);
}

TEST(AdapterSteps, AnUndeclaredStepIsAProtocolErrorNamingIt) {
  TempDir out;
  const LockUnderTest lock =
      adapter("/usr/bin/python3 " ADAPTER_TEST_DIR "/announces_steps.py --undeclared");
  json run = run_cell(pause_after_send(), lock, Servers{}, 1, out.path()).to_json();
  ASSERT_TRUE(run["error"].is_string()) << run.dump(2);
  EXPECT_NE(run["error"].get<std::string>().find("after-sned"), std::string::npos) << run["error"];
}

// A library that renews in the background is asked before each write
// whether it still holds the lease (op "held"), when the story stops work on
// a failed renewal; a release the caller gives up on carries its deadline,
// and a careful caller tries once more after an unknown outcome.
Scenario renewing_story(bool stop_on_renewal_failure) {
  return parse_scenario(
      json::parse(std::string(R"({"algorithms": ["set-nx-px"], "clients": 1, "duration_ms": 600,
      "workload": {"ttl_ms": 2000, "work_ms": 100, "ops_per_client": 2,
                   "retry_unknown_release": true, "stop_on_renewal_failure": )") +
                  (stop_on_renewal_failure ? "true" : "false") +
                  R"(, "params": {"release_cancel_after_ms": 25}},
      "expect": {"default": {"verdict": "safe"}}})"),
      "renewing.json");
}

TEST(AdapterRenewal, AHeldAnswerOfFalseStopsTheWriteAndReleasesAreRetried) {
  for (bool stop : {true, false}) {
    SCOPED_TRACE(stop ? "stop on renewal failure" : "keep working");
    TempDir out;
    const LockUnderTest lock = LockUnderTest::from_adapter(
        {.command = "/usr/bin/python3 " ADAPTER_TEST_DIR "/renewing_lock.py --lost"}, "set-nx-px");
    EXPECT_EQ(lock.version, "renewing-lock 1.0");
    json run = run_cell(renewing_story(stop), lock, Servers{}, 1, out.path()).to_json();
    ASSERT_TRUE(run["error"].is_null()) << run["error"];
    int lost = 0, writes = 0, release_invokes = 0, release_unknown = 0;
    for (const auto& e : history(out.path() / "renewing-lock" / "history.jsonl")) {
      if (e["process"] != "c1") continue;
      lost += e["f"] == "lost";
      writes += e["f"] == "write" && e["type"] == "ok";
      release_invokes += e["f"] == "release" && e["type"] == "invoke";
      release_unknown += e["f"] == "release" && e["type"] == "info";
    }
    if (stop) {
      EXPECT_EQ(lost, 2) << "the library said each lease was gone: no write";
      EXPECT_EQ(writes, 0);
    } else {
      EXPECT_EQ(lost, 0) << "nobody asked";
      EXPECT_EQ(writes, 2);
    }
    EXPECT_EQ(release_unknown, 2);
    EXPECT_EQ(release_invokes, 4) << "each unknown release was tried once more";
    std::ifstream log(out.path() / "renewing-lock" / "adapter-c1.stderr");
    std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("release cancel_after_ms=25"), std::string::npos) << text;
  }
}

// A library that renews in the background and reports its renewals: they
// take their place in the history by their own times, so an overlap with a
// holder paused past its renewed lease is an overrun. Without the reports
// the same overlap cannot be told (its lease's end is unknown).
// Two clients on a 300 ms lease: c2 paused from 0 for `c2_pause_ms`, c1
// paused `c1_pause_ms` right before its write, after `work_ms` of work.
// `work_ms` falls between two renewals (every 100 ms), so that no renewal is
// in flight when the pause begins: one answered only after the pause would
// place the lease's end a pause later, and the story would be decided by
// whether the pause or the renewal came first.
Scenario renewer_story(const std::string& name, int work_ms, int c2_pause_ms, int c1_pause_ms,
                       int wait_ms) {
  json story = json::parse(R"({"algorithms": ["set-nx-px"], "clients": 2, "duration_ms": 3000,
      "workload": {"ttl_ms": 300, "ops_per_client": 1},
      "expect": {"default": {"verdict": "violated", "kinds": ["mutual-exclusion"]}}})");
  story["workload"]["work_ms"] = work_ms;
  story["workload"]["wait_ms"] = wait_ms;
  story["faults"] = json::array(
      {{{"kind", "pause"}, {"at_ms", 0}, {"duration_ms", c2_pause_ms}, {"clients", {"c2"}}},
       {{"kind", "pause"},
        {"duration_ms", c1_pause_ms},
        {"when", {{"client", "c1"}, {"step", "before-write"}}}}});
  return parse_scenario(story, name + ".json");
}

Scenario paused_renewer() {
  return renewer_story("paused-renewer", 450, 1000, 1200, 2000);
}

LockUnderTest reporting_renewals(const std::string& flags = "") {
  return LockUnderTest::from_adapter(
      {.command = "/usr/bin/python3 " ADAPTER_TEST_DIR "/reporting_renewals.py" + flags},
      "set-nx-px");
}

// The classes of a run's mutual-exclusion violations.
std::vector<std::string> overlap_classes_of(const RunResult& run) {
  std::vector<std::string> out;
  if (!run.check) return out;
  for (const auto& v : run.check->violations)
    if (v.overlap) out.push_back(v.overlap->overlap_class);
  return out;
}

TEST(AdapterRenewals, ReportedRenewalsPlaceTheLeasesEndAndTellTheOverlap) {
  TempDir out;
  RunResult run = run_cell(paused_renewer(), reporting_renewals(), Servers{}, 1, out.path());
  ASSERT_FALSE(run.error) << *run.error;
  ASSERT_EQ(run.verdict, Verdict::Violated) << run.to_json().dump(2);

  std::vector<json> renewed, refused;
  json c1_acquired, c1_write;
  int64_t previous_ns = -1;
  for (const auto& e : history(out.path() / "reporting-renewals" / "history.jsonl")) {
    EXPECT_GE(e["time_ns"].get<int64_t>(), previous_ns) << "the history stays in time order";
    previous_ns = e["time_ns"];
    if (e["process"] != "c1") continue;
    if (e["f"] == "renewed") (e["type"] == "ok" ? renewed : refused).push_back(e);
    if (e["f"] == "acquire" && e["type"] == "ok") c1_acquired = e;
    if (e["f"] == "write" && e["type"] == "invoke" && c1_write.is_null()) c1_write = e;
  }
  ASSERT_FALSE(c1_acquired.is_null());
  ASSERT_FALSE(c1_write.is_null());
  EXPECT_EQ(c1_acquired["value"]["renewals_recorded"], true);
  // Renewed every 100 ms from the acquire until the pause at 450 ms, each
  // placed inside the hold and before the pause, though the lab learnt of
  // them only after it (with the release).
  ASSERT_GE(renewed.size(), 3u);
  for (const auto& r : renewed) {
    EXPECT_EQ(r["value"]["ttl_ms"], 300);
    EXPECT_FALSE(r.contains("client_time_ns"));
    EXPECT_GT(r["time_ns"].get<int64_t>(), c1_acquired["time_ns"].get<int64_t>());
    EXPECT_LE(r["value"]["sent_ns"].get<int64_t>(), r["time_ns"].get<int64_t>());
    EXPECT_LT(r["time_ns"].get<int64_t>(), c1_write["time_ns"].get<int64_t>() - 1'000'000'000)
        << "placed at its own time, before the 1.2 s pause, not when reported";
  }
  // The overdue renewal after the pause finds c2's key: refused, once.
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0]["type"], "fail");
  EXPECT_GT(refused[0]["time_ns"].get<int64_t>(),
            renewed.back()["time_ns"].get<int64_t>() + 1'000'000'000);

  const auto classes = overlap_classes_of(run);
  ASSERT_FALSE(classes.empty()) << run.to_json().dump(2);
  for (const auto& c : classes) EXPECT_EQ(c, "overrun");

  TempDir silent_out;
  RunResult silent =
      run_cell(paused_renewer(), reporting_renewals(" --silent"), Servers{}, 1, silent_out.path());
  ASSERT_FALSE(silent.error) << *silent.error;
  const auto silent_classes = overlap_classes_of(silent);
  ASSERT_FALSE(silent_classes.empty()) << silent.to_json().dump(2);
  for (const auto& c : silent_classes) EXPECT_EQ(c, "unclassified");
}

// c2 waits from 100 ms on while c1 holds, renews and then stops in a pause;
// the library tries again only once the key's TTL has run out (+ 50 ms).
// The attempt that won, which the adapter dates, came after c1's lease
// ended: an overrun. Without it, c2's grant may have come any time since it
// began to wait, c1's lease ended in between, and the overlap is not told.
Scenario waiting_past_a_renewed_lease() {
  return renewer_story("waiting-past-a-renewed-lease", 250, 100, 1000, 2500);
}

TEST(AdapterRenewals, AnAdapterDatingTheWinningAttemptTellsAnOverrun) {
  TempDir out;
  RunResult run =
      run_cell(waiting_past_a_renewed_lease(), reporting_renewals(), Servers{}, 1, out.path());
  ASSERT_FALSE(run.error) << *run.error;
  json c2_invoke, c2_acquired;
  for (const auto& e : history(out.path() / "reporting-renewals" / "history.jsonl")) {
    if (e["process"] != "c2" || e["f"] != "acquire") continue;
    (e["type"] == "invoke" ? c2_invoke : c2_acquired) = e;
  }
  ASSERT_FALSE(c2_acquired.is_null());
  ASSERT_TRUE(c2_acquired["value"].contains("attempt_ns")) << c2_acquired.dump();
  const int64_t attempt = c2_acquired["value"]["attempt_ns"];
  EXPECT_GT(attempt, c2_invoke["time_ns"].get<int64_t>() + 200'000'000) << "it waited first";
  EXPECT_LE(attempt, c2_acquired["time_ns"].get<int64_t>());
  const auto classes = overlap_classes_of(run);
  ASSERT_FALSE(classes.empty()) << run.to_json().dump(2);
  for (const auto& c : classes) EXPECT_EQ(c, "overrun");

  TempDir silent_out;
  RunResult silent = run_cell(waiting_past_a_renewed_lease(), reporting_renewals(" --no-attempt"),
                              Servers{}, 1, silent_out.path());
  ASSERT_FALSE(silent.error) << *silent.error;
  const auto silent_classes = overlap_classes_of(silent);
  ASSERT_FALSE(silent_classes.empty()) << silent.to_json().dump(2);
  for (const auto& c : silent_classes) EXPECT_EQ(c, "unclassified");
}

TEST(AdapterRenewals, AForeignClockOrATimeOutsideWhatItDatesIsAnError) {
  try {
    reporting_renewals(" --wrong-clock");  // its hello, when the lock is resolved
    ADD_FAILURE() << "a clock that is not CLOCK_MONOTONIC was taken";
  } catch (const AdapterError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("monotonic_ns"), std::string::npos) << message;
    EXPECT_NE(message.find("reporting_renewals.py --wrong-clock"), std::string::npos) << message;
  }
  {
    TempDir out;
    RunResult run =
        run_cell(paused_renewer(), reporting_renewals(" --backwards"), Servers{}, 1, out.path());
    ASSERT_TRUE(run.error);
    EXPECT_NE(run.error->find("answered_ns"), std::string::npos) << *run.error;
  }
  {
    TempDir out;
    RunResult run = run_cell(paused_renewer(), reporting_renewals(" --stale-attempt"), Servers{}, 1,
                             out.path());
    ASSERT_TRUE(run.error);
    EXPECT_NE(run.error->find("attempt_ns"), std::string::npos) << *run.error;
  }
}

// An adapter that asks for "connect" gets it before the story starts, and
// what its library left behind reaches the history and the run's result,
// dated by the adapter, without changing the verdict.
Scenario two_holds() {
  return parse_scenario(json::parse(R"({"algorithms": ["set-nx-px"], "clients": 1,
      "duration_ms": 600, "workload": {"ttl_ms": 2000, "work_ms": 20, "ops_per_client": 2},
      "expect": {"default": {"verdict": "safe"}}})"),
                        "two-holds.json");
}

LockUnderTest incident_lock(const std::string& flags = "") {
  return LockUnderTest::from_adapter(
      {.command = "/usr/bin/python3 " ADAPTER_TEST_DIR "/incident_lock.py" + flags}, "set-nx-px");
}

TEST(AdapterIncidents, ConnectComesFirstAndIncidentsAreRecordedWhereTheyHappened) {
  TempDir out;
  RunResult run = run_cell(two_holds(), incident_lock(), Servers{}, 1, out.path());
  ASSERT_FALSE(run.error) << *run.error;
  EXPECT_EQ(run.verdict, Verdict::Safe);
  EXPECT_EQ(run.outcome, RunOutcome::kMet);
  std::ifstream log(out.path() / "incident-lock" / "adapter-c1.stderr");
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("connected for a lease of 2000 ms"), std::string::npos)
      << "connect tells the story's lease\n"
      << text;
  EXPECT_EQ(text.find("acquire before connect"), std::string::npos) << text;

  ASSERT_EQ(run.incidents.size(), 2u);
  EXPECT_EQ(run.incidents[0].kind, IncidentKind::kUnhandledRejection);
  EXPECT_EQ(run.incidents[0].client, "c1");
  EXPECT_EQ(run.incidents[0].message, "refresh failed: Connection is closed.");
  EXPECT_EQ(run.incidents[1].kind, IncidentKind::kUncaughtException);
  // Dated at hello: after the run began (the adapter started then), before
  // the story's first acquire; the other at the end, after the last release.
  EXPECT_GT(run.incidents[0].at_ms, 0.0);
  EXPECT_NE(incident_text(run.incidents[0]).find("Node's defaults"), std::string::npos);

  std::vector<json> incidents;
  int64_t first_acquire_ok = -1, first_invoke_ns = -1, last_release_ns = -1;
  for (const auto& e : history(out.path() / "incident-lock" / "history.jsonl")) {
    if (e["f"] == "incident") incidents.push_back(e);
    if (e["f"] == "release" && e["type"] == "ok") last_release_ns = e["time_ns"];
    if (e["f"] != "acquire") continue;
    if (e["type"] == "invoke" && first_invoke_ns < 0) first_invoke_ns = e["time_ns"];
    if (e["type"] == "ok" && first_acquire_ok < 0) first_acquire_ok = e["index"];
  }
  EXPECT_LE(run.incidents[0].at_ms * 1e6, double(first_invoke_ns));
  EXPECT_GE(run.incidents[1].at_ms * 1e6, double(last_release_ns));
  ASSERT_EQ(incidents.size(), 2u);
  EXPECT_EQ(incidents[0]["type"], "info");
  EXPECT_EQ(incidents[0]["process"], "c1");
  EXPECT_EQ(incidents[0]["value"]["kind"], "unhandled-rejection");
  EXPECT_EQ(incidents[0]["error"], "refresh failed: Connection is closed.");
  EXPECT_LT(incidents[0]["index"].get<int64_t>(), first_acquire_ok)
      << "recorded while the acquire that carried it was in flight";
  EXPECT_LE(incidents[0]["value"]["at_ns"].get<int64_t>(), incidents[0]["time_ns"].get<int64_t>());

  const json document = run.to_json();
  ASSERT_EQ(document["incidents"].size(), 2u);
  EXPECT_EQ(RunResult::from_json(document, "results.json").incidents, run.incidents);
}

TEST(AdapterIncidents, AFailedConnectOrAMalformedIncidentIsAnErrorNamingIt) {
  {
    TempDir out;
    RunResult run =
        run_cell(two_holds(), incident_lock(" --refuse-connect"), Servers{}, 1, out.path());
    ASSERT_TRUE(run.error);
    EXPECT_NE(run.error->find("could not connect to 127.0.0.1:"), std::string::npos) << *run.error;
    EXPECT_NE(run.error->find("Connection refused"), std::string::npos) << *run.error;
  }
  {
    TempDir out;
    RunResult run =
        run_cell(two_holds(), incident_lock(" --bad-incident"), Servers{}, 1, out.path());
    ASSERT_TRUE(run.error);
    EXPECT_NE(run.error->find("sent an incident that is not"), std::string::npos) << *run.error;
  }
}

// Two clients take turns at L, each acquire waiting for the other's hold;
// with `crash`, c2 waits until c1 holds L, and c1 crashes there (its lock
// dies with it).
Scenario turns(bool crash) {
  json scenario = json::parse(R"({"algorithms": ["set-nx-px"], "clients": 2,
      "duration_ms": 1500, "workload": {"ttl_ms": 300, "wait_ms": 1000, "ops_per_client": 3,
                                        "work_ms": 20},
      "expect": {"default": {"verdict": "safe"}}})");
  if (crash)
    scenario["faults"] = json::parse(R"([
        {"kind": "pause", "at_ms": 0, "clients": ["c2"], "duration_ms": 10,
         "until": {"client": "c1", "step": "acquired"}},
        {"kind": "crash-client", "when": {"client": "c1", "step": "acquired"}}])");
  return parse_scenario(scenario, crash ? "turns-with-a-crash.json" : "turns.json");
}

// turns(false) with `faults` (a JSON array of faults) instead of none.
Scenario turns_with_faults(const char* faults) {
  Scenario scenario = turns(false);
  json doc = {{"algorithms", {"set-nx-px"}},
              {"clients", 2},
              {"faults", json::parse(faults)},
              {"expect", {{"default", {{"verdict", "safe"}}}}}};
  scenario.faults = parse_scenario(doc, "faults.json").faults;
  return scenario;
}

// The reusable test adapter (reusable_lock.py) with `flags`, kept in `pool`.
LockUnderTest kept_adapter(const std::shared_ptr<AdapterPool>& pool,
                           const std::string& flags = "") {
  LockUnderTest lock = LockUnderTest::from_adapter(
      {.command = "/usr/bin/python3 " ADAPTER_TEST_DIR "/reusable_lock.py" + flags}, "set-nx-px");
  lock.adapter->pool = pool;
  return lock;
}

std::string text_of(const std::filesystem::path& file) {
  std::ifstream in(file);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The "pid P serves HOST:PORT" lines an adapter's log of one run holds.
std::vector<std::string> serves_lines(const std::filesystem::path& log) {
  std::vector<std::string> lines;
  std::istringstream in(text_of(log));
  for (std::string line; std::getline(in, line);)
    if (line.find(" serves ") != std::string::npos) lines.push_back(line);
  return lines;
}

TEST(AdapterPool, AKeptAdapterServesTheNextRunOnThatRunsServers) {
  TempDir out;
  auto pool = std::make_shared<AdapterPool>();
  const LockUnderTest lock = kept_adapter(pool);
  // Per run: the adapters' pids, and the endpoints they served.
  std::vector<std::set<std::string>> pids(2), endpoints(2);
  for (int run = 0; run < 2; ++run) {
    const auto dir = out.path() / ("run-" + std::to_string(run));
    json result = run_cell(turns(false), lock, Servers{}, uint64_t(run + 1), dir).to_json();
    // An adapter that kept the last run's endpoints fails its first acquire.
    ASSERT_TRUE(result["error"].is_null()) << result["error"];
    EXPECT_EQ(result["verdict"], "safe");
    EXPECT_EQ(result["stats"]["acquires_ok"].get<int>(), 6) << result.dump(2);
    // Each run's log holds what the adapter wrote during that run, and only that.
    for (const char* client : {"c1", "c2"}) {
      const auto log = dir / "reusable-lock" / ("adapter-" + std::string(client) + ".stderr");
      const auto lines = serves_lines(log);
      ASSERT_EQ(lines.size(), 1u) << text_of(log);
      const size_t serves = lines[0].find(" serves ");
      pids[run].insert(lines[0].substr(0, serves));
      endpoints[run].insert(lines[0].substr(serves));
    }
  }
  EXPECT_EQ(pool->counts().started, 2);
  EXPECT_EQ(pool->counts().reused, 2);
  // The same two processes, on the second run's servers.
  EXPECT_EQ(pids[0], pids[1]);
  EXPECT_NE(endpoints[0], endpoints[1]);
}

TEST(AdapterPool, ACrashedClientsAdapterIsStoppedNotKept) {
  TempDir out;
  auto pool = std::make_shared<AdapterPool>();
  const LockUnderTest lock = kept_adapter(pool);
  json first = run_cell(turns(true), lock, Servers{}, 1, out.path() / "1").to_json();
  ASSERT_TRUE(first["error"].is_null()) << first["error"];
  ASSERT_TRUE(first["faults"][1]["fired"].get<bool>()) << first.dump(2);
  json second = run_cell(turns(false), lock, Servers{}, 2, out.path() / "2").to_json();
  ASSERT_TRUE(second["error"].is_null()) << second["error"];
  // c2's adapter was kept; c1's died with its client, so c1 got a new one.
  EXPECT_EQ(pool->counts().started, 3);
  EXPECT_EQ(pool->counts().reused, 1);
}

TEST(AdapterPool, ARunWhoseAdaptersKeepAClockOfTheirOwnStartsAndStopsItsOwn) {
  TempDir out;
  auto pool = std::make_shared<AdapterPool>();
  const LockUnderTest lock = kept_adapter(pool);
  // A clock jump of c2's: every adapter of the run runs under a clock shim
  // whose file is the run's own.
  const Scenario jumped = turns_with_faults(
      R"([{"kind": "clock-jump", "at_ms": 0, "clients": ["c2"], "delta_ms": 1}])");
  for (int run = 1; run <= 2; ++run) {
    json result = run_cell(jumped, lock, Servers{}, uint64_t(run), out.path() / std::to_string(run))
                      .to_json();
    ASSERT_TRUE(result["error"].is_null()) << result["error"];
  }
  EXPECT_EQ(pool->counts().started, 0);
  EXPECT_EQ(pool->counts().reused, 0);
}

// With its clocks kept beside the pool (with_adapters_kept), a run whose
// adapters keep clocks of their own takes the adapters an earlier such run
// left, on the clocks they started on, back at real time.
TEST(AdapterPool, ARunOnClocksOfItsOwnTakesKeptAdaptersWithTheirClocks) {
  TempDir out;
  auto pool = std::make_shared<AdapterPool>();
  const LockUnderTest lock = with_adapters_kept({kept_adapter(pool)}, pool)[0];
  ASSERT_TRUE(lock.adapter_clocks);
  const Scenario jumped = turns_with_faults(R"([
      {"kind": "clock-jump", "at_ms": 0, "clients": ["c2"], "delta_ms": 5000},
      {"kind": "clock-rate", "at_ms": 0, "clients": ["c1"], "rate": 3, "duration_ms": 5000}])");
  for (int run = 1; run <= 3; ++run) {
    json result = run_cell(jumped, lock, Servers{}, uint64_t(run), out.path() / std::to_string(run))
                      .to_json();
    ASSERT_TRUE(result["error"].is_null()) << result["error"];
    EXPECT_EQ(result["stats"]["acquires_ok"].get<int>(), 6) << result.dump(2);
  }
  EXPECT_EQ(pool->counts().started, 2);
  EXPECT_EQ(pool->counts().reused, 4);
  // Given back at real time, their threads stopped.
  for (const char* client : {"a", "b"}) {
    std::unique_ptr<ServerClock> clock = lock.adapter_clocks->take(lock.adapter->command);
    EXPECT_NEAR(double(clock->offset().count()) / 1e9, 0.0, 0.001) << client;
  }
  EXPECT_EQ(testing::threads_named("locklab-clock"), 0);
}

TEST(AdapterPool, AnAdapterThatIsNotReusableOrRefusesTheResetIsStopped) {
  for (const std::string flags : {" --not-reusable", " --refuse-reset"}) {
    TempDir out;
    auto pool = std::make_shared<AdapterPool>();
    const LockUnderTest lock = kept_adapter(pool, flags);
    for (int run = 1; run <= 2; ++run) {
      json result =
          run_cell(turns(false), lock, Servers{}, uint64_t(run), out.path() / std::to_string(run))
              .to_json();
      ASSERT_TRUE(result["error"].is_null()) << flags << ": " << result["error"];
    }
    EXPECT_EQ(pool->counts().started, 4) << flags;
    EXPECT_EQ(pool->counts().reused, 0) << flags;
  }
}

}  // namespace
}  // namespace locklab
