// Faults inside real runs: each test runs a small scenario against real
// servers and reads the effect off the history the run wrote.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "child_processes.h"
#include "runner.h"
#include "scenario.h"
#include "temp_dir.h"

namespace locklab {
namespace {

using nlohmann::json;

struct RunRecord {
  json result;
  std::vector<json> history;

  std::vector<json> events(const std::string& process, const std::string& f,
                           const std::string& type) const {
    std::vector<json> out;
    for (const auto& e : history)
      if (e["process"] == process && e["f"] == f && e["type"] == type) out.push_back(e);
    return out;
  }
  int64_t count(const std::string& kind) const {
    return result["check"]["counts"].value(kind, int64_t(0));
  }
};

RunRecord run(const std::string& scenario_json, const std::string& algorithm) {
  Scenario scenario = parse_scenario(json::parse(scenario_json), "inline.json");
  TempDir out("locklab-nemesis-test");
  RunRecord r;
  r.result =
      run_cell(scenario, LockUnderTest::built_in(algorithm), Servers{}, scenario.seed, out.path())
          .to_json();
  EXPECT_TRUE(r.result["error"].is_null()) << r.result["error"];
  std::ifstream in(out.path() / algorithm / "history.jsonl");
  std::string line;
  while (std::getline(in, line)) r.history.push_back(json::parse(line));
  return r;
}

TEST(Nemesis, APausedRedissonClientLosesTheLockAndResumesBelievingItHoldsIt) {
  RunRecord r = run(R"({"clients": 2, "algorithms": ["redisson-hash"], "duration_ms": 3000,
                 "workload": {"locks": ["L"], "ttl_ms": 600, "wait_ms": 2000, "work_ms": 5},
                 "faults": [{"kind": "pause", "when": {"client": "c1", "step": "acquired"}, "duration_ms": 2000}]})",
                    "redisson-hash");
  auto pause = r.events("nemesis", "pause", "info");
  ASSERT_EQ(pause.size(), 2u);
  int64_t start = pause[0]["time_ns"], end = pause[1]["time_ns"];
  EXPECT_EQ(pause[0]["value"]["targets"], json::array({"c1"}));
  EXPECT_NEAR(double(end - start) / 1e6, 2000, 300);
  bool c2_acquired_during_pause = false;
  for (const auto& e : r.events("c2", "acquire", "ok"))
    c2_acquired_during_pause |= e["time_ns"] > start && e["time_ns"] < end;
  EXPECT_TRUE(c2_acquired_during_pause) << "the watchdog kept renewing through the pause";
  bool c1_wrote_after = false;
  for (const auto& e : r.events("c1", "write", "ok")) c1_wrote_after |= e["time_ns"] > end;
  EXPECT_TRUE(c1_wrote_after) << "c1 did not resume believing it held the lock";
  EXPECT_GT(r.count("mutual-exclusion"), 0);
  EXPECT_TRUE(test::live_children().empty());
}

// A client paused past its lease's validity stops before writing (it
// records `lost`) unless the story's workload trusts whatever lease it holds.
TEST(Nemesis, AClientWritesPastItsValidityOnlyWhenTheStoryTrustsTheLease) {
  for (bool checks : {true, false}) {
    SCOPED_TRACE(checks ? "checks validity" : "trusts the lease");
    RunRecord r = run(R"({"clients": 1, "algorithms": ["set-nx-px"], "duration_ms": 1500,
                 "workload": {"ttl_ms": 300, "ops_per_client": 1, "checks_validity": )" +
                          std::string(checks ? "true" : "false") + R"(},
                 "faults": [{"kind": "pause", "when": {"client": "c1", "step": "acquired"},
                             "duration_ms": 500}]})",
                      "set-nx-px");
    EXPECT_EQ(r.events("c1", "lost", "info").size(), checks ? 1u : 0u);
    EXPECT_EQ(r.events("c1", "write", "ok").size(), checks ? 0u : 1u);
  }
}

TEST(Nemesis, ClientCrashBetweenSetnxAndExpireBlocksTheLockForever) {
  RunRecord r = run(R"({"clients": 2, "algorithms": ["setnx-expire"], "duration_ms": 2500,
                 "workload": {"locks": ["L"], "ttl_ms": 500, "wait_ms": 300, "work_ms": 5},
                 "faults": [{"kind": "crash-client", "when": {"client": "c1", "step": "after-setnx"}}]})",
                    "setnx-expire");
  auto crash = r.events("nemesis", "crash-client", "info");
  ASSERT_EQ(crash.size(), 1u);
  EXPECT_TRUE(r.events("c1", "acquire", "ok").empty()) << "c1 died inside its acquire";
  for (const auto& e : r.events("c2", "acquire", "ok"))
    EXPECT_LT(e["time_ns"].get<int64_t>(), crash[0]["time_ns"].get<int64_t>())
        << "the key expired after all";
  EXPECT_GE(r.events("c2", "acquire", "fail").size(), 3u);
  EXPECT_GT(r.count("liveness"), 0);
}

TEST(Nemesis, ServerClockJumpExpiresTheKeyUnderItsHolder) {
  RunRecord r = run(R"({"clients": 2, "algorithms": ["set-nx-px"], "duration_ms": 2500,
                 "workload": {"locks": ["L"], "ttl_ms": 5000, "wait_ms": 2000, "work_ms": 1000},
                 "faults": [{"kind": "pause", "at_ms": 0, "clients": ["c2"], "duration_ms": 200},
                            {"kind": "server-clock-jump", "when": {"client": "c1", "step": "acquired"},
                             "nodes": [0], "delta_ms": 60000}]})",
                    "set-nx-px");
  ASSERT_EQ(r.events("nemesis", "server-clock-jump", "info").size(), 1u);
  EXPECT_GT(r.count("mutual-exclusion"), 0) << "a 60 s jump did not expire a 5 s key";
}

TEST(Nemesis, BlackholedLinkTimesOutAndHeals) {
  RunRecord r = run(R"({"clients": 1, "algorithms": ["set-nx-px"], "duration_ms": 3500,
                 "workload": {"locks": ["L"], "ttl_ms": 2000, "wait_ms": 200, "work_ms": 5, "think_ms": 5},
                 "faults": [{"kind": "partition", "at_ms": 500, "duration_ms": 1500}]})",
                    "set-nx-px");
  auto partition = r.events("nemesis", "partition", "info");
  ASSERT_EQ(partition.size(), 2u);
  int64_t start = partition[0]["time_ns"], end = partition[1]["time_ns"];
  int unknown_during = 0, ok_after = 0, ok_during = 0;
  for (const auto& e : r.events("c1", "acquire", "info")) unknown_during += e["time_ns"] > start;
  for (const auto& e : r.events("c1", "acquire", "ok")) {
    ok_after += e["time_ns"] > end;
    ok_during += e["time_ns"] > start + 50'000'000 && e["time_ns"] < end;
  }
  EXPECT_GT(unknown_during, 0) << "commands into a black hole must time out";
  EXPECT_EQ(ok_during, 0);
  EXPECT_GT(ok_after, 0) << "the link did not heal";
}

TEST(Nemesis, ManualFailoverAfterACutReplicationLinkGrantsTheLockTwice) {
  RunRecord r = run(R"({"clients": 2, "algorithms": ["set-nx-px"], "duration_ms": 2500,
                 "topology": {"replicas": 1},
                 "workload": {"locks": ["L"], "ttl_ms": 10000, "wait_ms": 500, "work_ms": 1500},
                 "faults": [{"kind": "cut-replication", "at_ms": 0},
                            {"kind": "pause", "at_ms": 0, "clients": ["c2"], "duration_ms": 200},
                            {"kind": "failover", "mode": "manual", "when": {"client": "c1", "step": "acquired"}}]})",
                    "set-nx-px");
  // Recorded when it starts and once the replica answers as master.
  const auto failover = r.events("nemesis", "failover", "info");
  ASSERT_EQ(failover.size(), 2u);
  EXPECT_EQ(failover[0]["value"]["phase"], "start");
  EXPECT_EQ(failover[1]["value"]["phase"], "end");
  EXPECT_EQ(failover[1]["value"]["fault"], 2);
  EXPECT_TRUE(failover[1]["value"]["new_master"].is_string());
  EXPECT_GT(r.count("mutual-exclusion"), 0) << "the promoted replica knew the key";
}

// With two replicas, only replica 1's link is cut: promoting replica 1
// loses the key (the lock is granted twice), promoting replica 0 keeps it.
// c1 takes the lock at once and holds it 1.5 s; the failover comes at 300 ms.
TEST(Nemesis, AFailoverPromotesTheReplicaItNamesAndACutSparesTheOthers) {
  for (int promoted : {1, 0}) {
    RunRecord r = run(R"({"clients": 2, "algorithms": ["set-nx-px"], "duration_ms": 2500,
                 "topology": {"replicas": 2},
                 "workload": {"locks": ["L"], "ttl_ms": 10000, "wait_ms": 500, "work_ms": 1500},
                 "faults": [{"kind": "cut-replication", "at_ms": 0, "nodes": [1]},
                            {"kind": "pause", "at_ms": 0, "clients": ["c2"], "duration_ms": 200},
                            {"kind": "failover", "mode": "manual", "nodes": [)" +
                          std::to_string(promoted) + R"(], "at_ms": 300}]})",
                      "set-nx-px");
    SCOPED_TRACE("promoted replica " + std::to_string(promoted));
    EXPECT_EQ(r.events("nemesis", "cut-replication", "info")[0]["value"]["replicas"], json({1}));
    const auto failover = r.events("nemesis", "failover", "info");
    ASSERT_EQ(failover.size(), 2u);
    EXPECT_EQ(failover[0]["value"]["replicas"], json({promoted}));
    if (promoted == 1)
      EXPECT_GT(r.count("mutual-exclusion"), 0) << "replica 1 never got the key";
    else
      EXPECT_EQ(r.count("mutual-exclusion"), 0) << "replica 0 had the key";
  }
}

// Redlock after 4 of its 5 masters crashed for good refuses every acquire,
// as it must without a majority: availability lost under the crash, never
// a liveness violation; with a client's clock jumped on top, the same.
TEST(Nemesis, RedlockRefusingWithoutItsMajorityLosesAvailabilityNotLiveness) {
  for (const char* jump : {"", R"(, {"kind": "clock-jump", "at_ms": 600, "delta_ms": 700})"}) {
    RunRecord r = run(std::string(R"({"clients": 3, "algorithms": ["redlock"], "duration_ms": 2500,
                 "topology": {"nodes": 5},
                 "workload": {"locks": ["L"], "ttl_ms": 300, "wait_ms": 300, "work_ms": 5},
                 "faults": [{"kind": "crash-node", "nodes": [0, 1, 2, 3],
                             "when": {"client": "c3", "step": "before-release", "nth": 2}})") +
                          jump + "]}",
                      "redlock");
    SCOPED_TRACE(std::string("clock jump: ") + (*jump ? "yes" : "no"));
    EXPECT_EQ(r.count("liveness"), 0) << r.result["check"].dump(2);
    EXPECT_EQ(r.result["verdict"], "safe");
    EXPECT_GE(r.count("availability-lost"), 1);
    ASSERT_FALSE(r.result["check"]["unavailable"].empty());
    const auto& faults = r.result["check"]["unavailable"][0]["faults"];
    EXPECT_NE(std::find(faults.begin(), faults.end(), "crash-node"), faults.end()) << faults;
  }
}

TEST(Nemesis, ReentrantClientsNestAndReportTheDepthLeft) {
  const char* scenario =
      R"({"clients": 2, "duration_ms": 400, "algorithms": ["redisson-hash", "set-nx-px"],
                 "workload": {"locks": ["L"], "ttl_ms": 2000, "work_ms": 2, "reentry": 3}})";
  RunRecord nested = run(scenario, "redisson-hash");
  std::vector<int64_t> depths, left;
  for (const auto& e : nested.events("c1", "acquire", "ok"))
    depths.push_back(e["value"]["reentry"]);
  for (const auto& e : nested.events("c1", "release", "ok"))
    left.push_back(e["value"]["remaining"]);
  ASSERT_GE(depths.size(), 6u);
  EXPECT_EQ(std::vector<int64_t>(depths.begin(), depths.begin() + 6),
            std::vector<int64_t>({1, 2, 3, 1, 2, 3}));
  ASSERT_GE(left.size(), 6u);
  EXPECT_EQ(std::vector<int64_t>(left.begin(), left.begin() + 6),
            std::vector<int64_t>({2, 1, 0, 2, 1, 0}))
      << "inner levels first, the outer one last";
  EXPECT_EQ(nested.count("reentrancy"), 0);
  EXPECT_EQ(nested.result["verdict"], "safe");

  RunRecord flat = run(scenario, "set-nx-px");
  for (const auto& e : flat.events("c1", "acquire", "ok"))
    EXPECT_EQ(e["value"]["reentry"], 1) << "a lock that does not nest is taken once";
  EXPECT_EQ(flat.events("c1", "acquire", "ok").size(), flat.events("c1", "release", "ok").size());
}

TEST(Nemesis, ReentryCountLostInAFailoverReleasesTheLockTooEarly) {
  // The canonical scenario in small: level 1 replicated (c1 stalls after taking
  // it, so the write is not still in flight when replication is cut), level 2
  // not, then a failover.
  RunRecord r = run(R"({"clients": 2, "algorithms": ["redisson-hash"], "duration_ms": 2000,
                 "topology": {"replicas": 1},
                 "workload": {"locks": ["L"], "ttl_ms": 10000, "wait_ms": 500, "work_ms": 1000, "reentry": 2},
                 "faults": [{"kind": "pause", "at_ms": 0, "clients": ["c2"], "duration_ms": 300},
                            {"kind": "pause", "when": {"client": "c1", "step": "acquired"}, "duration_ms": 100},
                            {"kind": "cut-replication", "when": {"client": "c1", "step": "before-reacquire"}},
                            {"kind": "failover", "mode": "manual", "when": {"client": "c1", "step": "reacquired"}}]})",
                    "redisson-hash");
  auto released = r.events("c1", "release", "ok");
  ASSERT_FALSE(released.empty());
  EXPECT_EQ(released[0]["value"]["remaining"], 0) << "the promoted replica knew only level 1";
  EXPECT_EQ(r.count("reentrancy"), 1);
  EXPECT_GT(r.count("mutual-exclusion"), 0);
}

TEST(Nemesis, ABadFaultTargetIsAClearError) {
  // The loader names it before any server starts ...
  EXPECT_THROW(parse_scenario(json::parse(R"({"algorithms": ["set-nx-px"], "duration_ms": 100,
      "faults": [{"kind": "sigstop-node", "at_ms": 0, "nodes": [3], "duration_ms": 10}]})"),
                              "bad.json"),
               ScenarioError);
  // ... and a scenario built by other means still gets a clear error, not a crash.
  Scenario scenario = parse_scenario(json::parse(R"({"algorithms": ["set-nx-px"],
      "duration_ms": 100})"),
                                     "bad.json");
  Fault stop;
  stop.kind = FaultKind::SigstopNode;
  stop.at_ms = 0;
  stop.duration_ms = 10;
  stop.nodes = {3};
  scenario.faults.push_back(stop);
  TempDir out;
  json result =
      run_cell(scenario, LockUnderTest::built_in("set-nx-px"), Servers{}, 1, out.path()).to_json();
  ASSERT_TRUE(result["error"].is_string());
  EXPECT_NE(result["error"].get<std::string>().find("server 3 does not exist"), std::string::npos);
  EXPECT_EQ(result["verdict"], "unknown");
}

// A run records, for each of its faults, whether and when it fired; one
// whose fault never fired did not tell its story and never counts as met.
TEST(Nemesis, AFaultThatNeverFiresLeavesTheRunNotExercised) {
  RunRecord r = run(R"({"algorithms": ["set-nx-px"], "clients": 2, "duration_ms": 600,
      "workload": {"ttl_ms": 1000, "ops_per_client": 3},
      "faults": [
        {"kind": "pause", "duration_ms": 50, "when": {"client": "c1", "step": "acquired"}},
        {"kind": "pause", "duration_ms": 50, "when": {"client": "c2", "step": "acquired", "nth": 50}},
        {"kind": "delay", "at_ms": 400, "delay_ms": 1}
      ],
      "expect": {"default": {"verdict": "safe"}}})",
                    "set-nx-px");
  ASSERT_EQ(r.result["faults"].size(), 3u) << r.result.dump(2);
  const json& first = r.result["faults"][0];
  EXPECT_EQ(first["index"], 0);
  EXPECT_EQ(first["kind"], "pause");
  EXPECT_EQ(first["trigger"], "c1 at step acquired (1st time)");
  EXPECT_TRUE(first["fired"].get<bool>());
  EXPECT_GT(first["fired_at_ms"].get<double>(), 0);
  EXPECT_GE(first["ended_at_ms"].get<double>(), first["fired_at_ms"].get<double>() + 49);
  // c2 takes the lock 3 times at most, never 50; the clients are done long before 400 ms.
  EXPECT_FALSE(r.result["faults"][1]["fired"].get<bool>());
  EXPECT_TRUE(r.result["faults"][1]["fired_at_ms"].is_null());
  EXPECT_FALSE(r.result["faults"][2]["fired"].get<bool>());
  EXPECT_FALSE(r.result["exercised"].get<bool>());
  EXPECT_FALSE(r.result["expectation_met"].get<bool>());
  EXPECT_EQ(r.result["verdict"], "safe");  // what was measured is still reported
  EXPECT_EQ(r.events("nemesis", "pause", "info").size(), 2u);  // one start, one end
}

TEST(Nemesis, ARunWhoseFaultsAllFiredIsExercised) {
  RunRecord r = run(R"({"algorithms": ["set-nx-px"], "clients": 2, "duration_ms": 400,
      "faults": [{"kind": "partition", "at_ms": 100, "duration_ms": 50, "how": "reject"}],
      "expect": {"default": {"verdict": "safe"}}})",
                    "set-nx-px");
  ASSERT_EQ(r.result["faults"].size(), 1u);
  EXPECT_TRUE(r.result["faults"][0]["fired"].get<bool>());
  EXPECT_NEAR(r.result["faults"][0]["fired_at_ms"].get<double>(), 100, 50);
  EXPECT_NEAR(r.result["faults"][0]["ended_at_ms"].get<double>(), 150, 50);
  EXPECT_TRUE(r.result["exercised"].get<bool>());
  EXPECT_TRUE(r.result["expectation_met"].get<bool>());
}

// A run's clients are fibers of one thread (fibers.h): a pause must still
// stop its client alone and completely, the others going on meanwhile.
TEST(Nemesis, APausedClientStopsAloneWhileTheClientsBesideItGoOn) {
  RunRecord r = run(R"({"algorithms": ["set-nx-px"], "clients": 4, "duration_ms": 1500,
      "workload": {"locks": ["L1", "L2", "L3", "L4"], "lock_per_client": true, "ttl_ms": 5000,
                   "work_ms": 2, "think_ms": 2},
      "faults": [{"kind": "pause", "when": {"client": "c1", "step": "acquired"},
                  "duration_ms": 600}]})",
                    "set-nx-px");
  auto pause = r.events("nemesis", "pause", "info");
  ASSERT_EQ(pause.size(), 2u);
  const int64_t start = pause[0]["time_ns"], end = pause[1]["time_ns"];
  for (const auto& e : r.history) {
    const bool during = e["time_ns"] > start && e["time_ns"] < end;
    if (e["process"] == "c1") {
      EXPECT_FALSE(during) << "c1 recorded something while paused: " << e.dump();
    }
  }
  for (const std::string other : {"c2", "c3", "c4"}) {
    int acquired_during = 0;
    for (const auto& e : r.events(other, "acquire", "ok"))
      acquired_during += e["time_ns"] > start && e["time_ns"] < end;
    EXPECT_GT(acquired_during, 10) << other << " stood still while c1 was paused";
  }
  EXPECT_FALSE(r.events("c1", "write", "ok").empty()) << "c1 went on after its pause";
}

// "after_ms" fires a fault a time after the step, not at it: here a pause of
// c1 300 ms into its 800 ms of work, which stops c1 at its next step
// (before-write) until the pause's 900 ms are over.
TEST(Nemesis, AFaultAfterAStepFiresThatLongAfterIt) {
  RunRecord r = run(R"({"algorithms": ["set-nx-px"], "clients": 1, "duration_ms": 2500,
      "workload": {"locks": ["L"], "ttl_ms": 5000, "work_ms": 800, "think_ms": 5},
      "faults": [{"kind": "pause", "when": {"client": "c1", "step": "acquired", "after_ms": 300},
                  "duration_ms": 900}]})",
                    "set-nx-px");
  auto pause = r.events("nemesis", "pause", "info");
  ASSERT_EQ(pause.size(), 2u);
  auto acquired = r.events("c1", "acquire", "ok");
  ASSERT_FALSE(acquired.empty());
  const int64_t acquired_at = acquired[0]["time_ns"], start = pause[0]["time_ns"];
  EXPECT_GE(start - acquired_at, 300'000'000) << "fired before its time";
  EXPECT_LT(start - acquired_at, 700'000'000) << "fired long after its time";
  EXPECT_EQ(pause[0]["value"]["when"]["after_ms"], 300);
  auto wrote = r.events("c1", "write", "invoke");
  ASSERT_FALSE(wrote.empty());
  // Stopped at before-write (800 ms in) until the pause ended (1200 ms in).
  EXPECT_GT(wrote[0]["time_ns"].get<int64_t>(), pause[1]["time_ns"].get<int64_t>());
  EXPECT_TRUE(r.result["faults"][0]["fired"].get<bool>());
}

// A pause with `until` ends at the later of its duration and the step: here
// the step, c1's release after 300 ms of work, comes long after the 50 ms.
TEST(Nemesis, APauseUntilAnotherClientsStepLastsUntilThatStep) {
  RunRecord r = run(R"({"algorithms": ["set-nx-px"], "clients": 2, "duration_ms": 1200,
      "workload": {"locks": ["L"], "ttl_ms": 5000, "work_ms": 300, "think_ms": 5},
      "faults": [{"kind": "pause", "at_ms": 0, "clients": ["c2"], "duration_ms": 50,
                  "until": {"client": "c1", "step": "released"}}]})",
                    "set-nx-px");
  auto pause = r.events("nemesis", "pause", "info");
  ASSERT_EQ(pause.size(), 2u);
  EXPECT_EQ(pause[0]["value"]["until"], json({{"client", "c1"}, {"step", "released"}, {"nth", 1}}));
  auto released = r.events("c1", "release", "ok");
  ASSERT_FALSE(released.empty());
  // The end is recorded once the gate is open: c2's first event may come
  // just before it, never before the step that ended the pause.
  const int64_t released_at = released[0]["time_ns"];
  EXPECT_GT(pause[1]["time_ns"].get<int64_t>(), released_at)
      << "the pause ended before c1 released";
  for (const auto& e : r.history)
    if (e["process"] == "c2") {
      EXPECT_GT(e["time_ns"].get<int64_t>(), released_at) << e.dump();
    }
  EXPECT_FALSE(r.events("c2", "acquire", "ok").empty()) << "c2 went on after the step";
  EXPECT_TRUE(r.result["faults"][0]["ended_at_ms"].is_number());
}

// …and at its duration when the step came first, or before the fault fired.
TEST(Nemesis, APauseUntilAStepAlreadyReachedLastsItsDurationOrEndsAtOnce) {
  RunRecord r = run(R"({"algorithms": ["set-nx-px"], "clients": 3, "duration_ms": 1500,
      "workload": {"locks": ["L1", "L2", "L3"], "lock_per_client": true, "ttl_ms": 5000,
                   "work_ms": 20, "think_ms": 5},
      "faults": [{"kind": "pause", "at_ms": 0, "clients": ["c2"], "duration_ms": 400,
                  "until": {"client": "c1", "step": "acquired"}},
                 {"kind": "pause", "when": {"client": "c1", "step": "released"},
                  "clients": ["c3"], "until": {"client": "c1", "step": "acquired"}}]})",
                    "set-nx-px");
  std::vector<json> c2_pause, c3_pause;
  for (const auto& e : r.events("nemesis", "pause", "info"))
    (e["value"]["fault"] == 0 ? c2_pause : c3_pause).push_back(e);
  ASSERT_EQ(c2_pause.size(), 2u);
  ASSERT_EQ(c3_pause.size(), 2u);
  const int64_t c2_paused_for =
      c2_pause[1]["time_ns"].get<int64_t>() - c2_pause[0]["time_ns"].get<int64_t>();
  EXPECT_GE(c2_paused_for, 400'000'000) << "c2's pause ended at c1's acquire, before its 400 ms";
  EXPECT_LT(c2_paused_for, 1'000'000'000);
  // c3's pause fired after c1 had acquired: it is over as soon as it starts.
  const int64_t c3_paused_for =
      c3_pause[1]["time_ns"].get<int64_t>() - c3_pause[0]["time_ns"].get<int64_t>();
  EXPECT_LT(c3_paused_for, 100'000'000);
  EXPECT_GT(r.events("c3", "acquire", "ok").size(), 2u) << "c3 stayed paused";
}

// A pause that ends at a step hands its client to a pause that step fires,
// with no gap between them. The gate nests, so the first pause's end does
// not open it under the second.
TEST(Nemesis, APauseEndingAtAStepHandsItsClientToAPauseThatStepFires) {
  RunRecord r = run(R"({"algorithms": ["set-nx-px"], "clients": 2, "duration_ms": 1500,
      "workload": {"locks": ["L"], "ttl_ms": 5000, "work_ms": 100, "think_ms": 5},
      "faults": [{"kind": "pause", "at_ms": 0, "clients": ["c2"],
                  "until": {"client": "c1", "step": "acquired"}},
                 {"kind": "pause", "when": {"client": "c1", "step": "acquired"},
                  "clients": ["c2"], "duration_ms": 300}]})",
                    "set-nx-px");
  auto acquired = r.events("c1", "acquire", "ok");
  ASSERT_FALSE(acquired.empty());
  const int64_t held_until = acquired[0]["time_ns"].get<int64_t>() + 300'000'000;
  int64_t c2_events = 0;
  for (const auto& e : r.history)
    if (e["process"] == "c2") {
      ++c2_events;
      EXPECT_GE(e["time_ns"].get<int64_t>(), held_until)
          << "c2 ran between the pauses: " << e.dump();
    }
  EXPECT_GT(c2_events, 0) << "c2 went on after the second pause";
  EXPECT_TRUE(r.result["faults"][0]["fired"].get<bool>());
  EXPECT_TRUE(r.result["faults"][1]["fired"].get<bool>());
}

// An `until` with after_ms holds its fault that long past the step: c2 from
// the start until 400 ms after c1's grant, whatever the grant cost (as
// server-clock-drift holds it), and c3, paused once c1 already holds the
// lock, until 600 ms after that grant rather than at once.
TEST(Nemesis, APauseUntilATimeAfterAStepEndsThatLongAfterIt) {
  RunRecord r = run(R"({"algorithms": ["set-nx-px"], "clients": 3, "duration_ms": 1500,
      "workload": {"locks": ["L1", "L2", "L3"], "lock_per_client": true, "ttl_ms": 5000,
                   "work_ms": 20, "think_ms": 5},
      "faults": [{"kind": "pause", "at_ms": 0, "clients": ["c2"],
                  "until": {"client": "c1", "step": "acquired", "after_ms": 400}},
                 {"kind": "pause", "at_ms": 200, "clients": ["c3"],
                  "until": {"client": "c1", "step": "acquired", "after_ms": 600}}]})",
                    "set-nx-px");
  auto acquired = r.events("c1", "acquire", "ok");
  ASSERT_FALSE(acquired.empty());
  const int64_t granted = acquired[0]["time_ns"];
  std::vector<json> c2_pause, c3_pause;
  for (const auto& e : r.events("nemesis", "pause", "info"))
    (e["value"]["fault"] == 0 ? c2_pause : c3_pause).push_back(e);
  ASSERT_EQ(c2_pause.size(), 2u);
  ASSERT_EQ(c3_pause.size(), 2u);
  EXPECT_EQ(c2_pause[0]["value"]["until"]["after_ms"], 400);
  const int64_t c2_end = c2_pause[1]["time_ns"], c3_end = c3_pause[1]["time_ns"];
  EXPECT_GE(c2_end - granted, 400'000'000) << "c2's pause ended before its 400 ms";
  EXPECT_LT(c2_end - granted, 1'000'000'000);
  ASSERT_GT(c3_pause[0]["time_ns"].get<int64_t>(), granted) << "c3's pause fired before the step";
  EXPECT_GE(c3_end - granted, 600'000'000) << "c3's pause ended before its 600 ms";
  EXPECT_LT(c3_end - granted, 1'200'000'000);
  EXPECT_GE(c3_end - c3_pause[0]["time_ns"].get<int64_t>(), 300'000'000)
      << "c3's pause ended at once, as if the step alone were its end";
  for (const auto& e : r.history)
    if (e["process"] == "c2") {
      EXPECT_GT(e["time_ns"].get<int64_t>(), granted + 400'000'000) << e.dump();
    }
  EXPECT_FALSE(r.events("c2", "acquire", "ok").empty()) << "c2 went on after its pause";
  EXPECT_FALSE(r.events("c3", "acquire", "ok").empty()) << "c3 went on after its pause";
}

// A step that never comes (here: c1's thousandth release) must not keep its
// pause past the run: the client would wait at its gate for ever and the
// run would never end.
TEST(Nemesis, APauseWhoseStepNeverComesEndsWithTheRun) {
  RunRecord r = run(R"({"algorithms": ["set-nx-px"], "clients": 2, "duration_ms": 600,
      "workload": {"locks": ["L"], "ttl_ms": 5000, "work_ms": 20, "think_ms": 5},
      "faults": [{"kind": "pause", "at_ms": 0, "clients": ["c2"],
                  "until": {"client": "c1", "step": "released", "nth": 1000}}]})",
                    "set-nx-px");
  auto pause = r.events("nemesis", "pause", "info");
  ASSERT_EQ(pause.size(), 2u);
  const int64_t paused_for =
      pause[1]["time_ns"].get<int64_t>() - pause[0]["time_ns"].get<int64_t>();
  EXPECT_GE(paused_for, 600'000'000) << "the pause ended before the run did";
  for (const auto& e : r.events("c2", "acquire", "ok"))  // its first acquire, at most, after it
    EXPECT_GT(e["time_ns"].get<int64_t>(), pause[1]["time_ns"].get<int64_t>()) << e.dump();
  EXPECT_FALSE(r.events("c1", "release", "ok").empty());
}

// A pause until another fault's end (`"until": {"fault": 1}`) lasts until
// that fault records its end, whenever its own trigger fires it: here c1's
// clock jump from its acquire, undone 400 ms later.
TEST(Nemesis, APauseUntilAnotherFaultsEndLastsUntilThatEnd) {
  RunRecord r = run(R"({"algorithms": ["set-nx-px"], "clients": 2, "duration_ms": 1500,
      "workload": {"locks": ["L"], "ttl_ms": 5000, "work_ms": 100, "think_ms": 5},
      "faults": [{"kind": "pause", "at_ms": 0, "clients": ["c2"], "duration_ms": 50,
                  "until": {"fault": 1}},
                 {"kind": "clock-jump", "when": {"client": "c1", "step": "acquired"},
                  "clients": ["c1"], "delta_ms": 10, "duration_ms": 400}]})",
                    "set-nx-px");
  auto pause = r.events("nemesis", "pause", "info");
  auto jump = r.events("nemesis", "clock-jump", "info");
  ASSERT_EQ(pause.size(), 2u);
  ASSERT_EQ(jump.size(), 2u);
  EXPECT_EQ(pause[0]["value"]["until"], json({{"fault", 1}}));
  const int64_t jump_ended_at = jump[1]["time_ns"];
  EXPECT_GE(jump_ended_at - jump[0]["time_ns"].get<int64_t>(), 400'000'000);
  EXPECT_GE(pause[1]["time_ns"].get<int64_t>(), jump_ended_at)
      << "the pause ended before the fault it waits for";
  for (const auto& e : r.history)
    if (e["process"] == "c2") {
      EXPECT_GE(e["time_ns"].get<int64_t>(), jump_ended_at) << e.dump();
    }
  EXPECT_FALSE(r.events("c2", "acquire", "ok").empty()) << "c2 went on after the fault's end";
}

// A pause that fires in the run's overtime (here at c1's release, which
// comes after 800 ms of work in a 300 ms run) ends at once: the run is over,
// and its 3 s would only keep the run from ending.
TEST(Nemesis, APauseThatFiresAfterTheRunsEndEndsAtOnce) {
  RunRecord r = run(R"({"algorithms": ["set-nx-px"], "clients": 1, "duration_ms": 300,
      "workload": {"locks": ["L"], "ttl_ms": 5000, "work_ms": 800, "think_ms": 5},
      "faults": [{"kind": "pause", "when": {"client": "c1", "step": "released"},
                  "duration_ms": 3000}]})",
                    "set-nx-px");
  auto pause = r.events("nemesis", "pause", "info");
  ASSERT_EQ(pause.size(), 2u);
  EXPECT_EQ(pause[1]["value"]["healed"], "end of run");
  EXPECT_LT(pause[1]["time_ns"].get<int64_t>() - pause[0]["time_ns"].get<int64_t>(), 1'000'000'000)
      << "the pause held the run past its end";
  EXPECT_TRUE(r.result["exercised"].get<bool>()) << "it fired";
}

// A clock jump stays without a duration, but one with `until` is taken back
// at its step, and records that end like any fault undone.
TEST(Nemesis, AClockJumpUntilAStepIsTakenBackThere) {
  RunRecord r = run(R"({"algorithms": ["set-nx-px"], "clients": 1, "duration_ms": 600,
      "workload": {"locks": ["L"], "ttl_ms": 5000, "work_ms": 50, "think_ms": 5},
      "faults": [{"kind": "clock-jump", "at_ms": 0, "clients": ["c1"], "delta_ms": 10,
                  "until": {"client": "c1", "step": "released"}}]})",
                    "set-nx-px");
  auto jump = r.events("nemesis", "clock-jump", "info");
  ASSERT_EQ(jump.size(), 2u);
  EXPECT_EQ(jump[1]["value"]["phase"], "end");
  EXPECT_FALSE(jump[1]["value"].contains("healed")) << "kept to the end of the run";
  auto released = r.events("c1", "release", "ok");
  ASSERT_FALSE(released.empty());
  EXPECT_GT(jump[1]["time_ns"].get<int64_t>(), released[0]["time_ns"].get<int64_t>());
}

// A fault that never fires (c1's thousandth release) never ends: the pause
// that waits for it ends with the run, as one whose step never comes.
TEST(Nemesis, APauseUntilTheEndOfAFaultThatNeverFiresEndsWithTheRun) {
  RunRecord r = run(R"({"algorithms": ["set-nx-px"], "clients": 2, "duration_ms": 600,
      "workload": {"locks": ["L"], "ttl_ms": 5000, "work_ms": 20, "think_ms": 5},
      "faults": [{"kind": "pause", "at_ms": 0, "clients": ["c2"], "until": {"fault": 1}},
                 {"kind": "clock-jump", "when": {"client": "c1", "step": "released", "nth": 1000},
                  "clients": ["c1"], "delta_ms": 10, "duration_ms": 100}]})",
                    "set-nx-px");
  auto pause = r.events("nemesis", "pause", "info");
  ASSERT_EQ(pause.size(), 2u);
  EXPECT_GE(pause[1]["time_ns"].get<int64_t>() - pause[0]["time_ns"].get<int64_t>(), 600'000'000)
      << "the pause ended before the run did";
  for (const auto& e : r.events("c2", "acquire", "ok"))  // its first acquire, at most, after it
    EXPECT_GT(e["time_ns"].get<int64_t>(), pause[1]["time_ns"].get<int64_t>()) << e.dump();
}

// The clients of a built-in lock do not take a thread each.
TEST(Nemesis, ARunsClientsShareOneThread) {
  auto threads = [] {
    return std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                         std::filesystem::directory_iterator());
  };
  const auto before = threads();
  std::atomic<bool> done{false};
  std::atomic<long> most{0};
  std::thread watcher([&] {
    while (!done) {
      most = std::max<long>(most, threads());
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  run(R"({"algorithms": ["set-nx-px"], "clients": 24, "duration_ms": 800,
      "workload": {"locks": ["L"], "ttl_ms": 2000, "work_ms": 2}})",
      "set-nx-px");
  done = true;
  watcher.join();
  EXPECT_LT(most - before, 8) << "24 clients took " << most - before << " threads";
}

}  // namespace
}  // namespace locklab
