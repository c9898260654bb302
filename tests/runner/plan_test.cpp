// The run's plan, without a server: every rule that makes a cell not
// applicable, and what the plan decides for the runner (shape, keys,
// ownership of a target, what an adapter is given).
#include "plan.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace locklab {
namespace {

using nlohmann::json;

Scenario scenario(const std::string& text) {
  return parse_scenario(json::parse(text), "plan-test.json");
}

// A pause of c1 at a step, for `algorithms`.
Scenario pause_at(const std::string& step, const std::string& algorithms,
                  const std::string& extra = "") {
  return scenario(R"({"name": "p", "algorithms": [)" + algorithms +
                  R"(], "duration_ms": 1000, "workload": {"reentry": 2)" + extra +
                  R"(}, "faults": [{"kind": "pause", "duration_ms": 100,
                       "when": {"client": "c1", "step": ")" +
                  step + R"("}}]})");
}

// An adapter that was never started: the plan needs only what its hello said.
LockUnderTest adapter(std::optional<std::string> like, std::vector<std::string> steps = {},
                      bool reentrant = false) {
  LockUnderTest lock;
  lock.name = "my-lock";
  lock.adapter = AdapterConfig{.command = "my-adapter"};
  lock.like = std::move(like);
  lock.steps = std::move(steps);
  lock.reentrant = reentrant;
  if (lock.like) {
    const AlgorithmInfo& a = algorithm_info(*lock.like);
    lock.multi_node = a.multi_node;
    lock.needs_replica = a.needs_replica;
  }
  return lock;
}

Servers target(std::function<void(Target&)> change = {}) {
  auto t = std::make_shared<Target>();
  t->file = "staging.json";
  t->name = "staging";
  t->masters = {Endpoint{"127.0.0.1", 7000}};
  t->key_prefix = "lab:";
  if (change) change(*t);
  return Servers{t};
}

Scenario with_fault(const std::string& fault, const std::string& topology = "{}",
                    const std::string& algorithms = R"("set-nx-px")") {
  return scenario(R"({"name": "f", "algorithms": [)" + algorithms + R"(], "topology": )" +
                  topology + R"(, "duration_ms": 2000, "faults": [)" + fault + "]}");
}

TEST(Plan, ABuiltInOnItsOwnServersIsPlannedWithItsExpectation) {
  Scenario s = scenario(R"({"name": "n", "algorithms": ["set-nx-px", "redlock"],
      "expect": {"default": {"verdict": "safe"}, "redlock": {"verdict": "violated"}}})");
  const PlannedRun redlock = plan_run(s, LockUnderTest::built_in("redlock"), Servers{}, 1);
  ASSERT_TRUE(redlock.plan) << redlock.not_applicable;
  EXPECT_EQ(redlock.expected.verdict, Verdict::Violated);
  EXPECT_EQ(redlock.plan->shape.masters, 5) << "Redlock gets 5 masters when the topology names 1";
  EXPECT_FALSE(redlock.plan->shape.client_links) << "no link fault: clients connect directly";
  EXPECT_EQ(redlock.plan->key_prefix, "");
  EXPECT_EQ(redlock.plan->scenario.workload.locks, s.workload.locks);
  const PlannedRun single = plan_run(s, LockUnderTest::built_in("set-nx-px"), Servers{}, 1);
  ASSERT_TRUE(single.plan);
  EXPECT_EQ(single.expected.verdict, Verdict::Safe);
  EXPECT_EQ(single.plan->shape.masters, 1);
  const PlannedRun synced = plan_run(scenario(R"({"name": "w", "algorithms": ["wait-synced"]})"),
                                     LockUnderTest::built_in("wait-synced"), Servers{}, 1);
  ASSERT_TRUE(synced.plan);
  EXPECT_EQ(synced.plan->shape.replicas, 1) << "WAIT needs a replica";
}

TEST(Plan, TheFaultsDecideTheShapeOfTheCluster) {
  auto shape = [](const std::string& fault, const std::string& topology = "{}") {
    return plan_run(with_fault(fault, topology), LockUnderTest::built_in("set-nx-px"), Servers{}, 1)
        .plan->shape;
  };
  EXPECT_TRUE(shape(R"({"kind": "server-clock-jump", "at_ms": 1, "delta_ms": 10})").server_clocks);
  EXPECT_FALSE(shape(R"({"kind": "clock-jump", "at_ms": 1, "delta_ms": 10})").server_clocks);
  EXPECT_TRUE(shape(R"({"kind": "partition", "at_ms": 1})").client_links);
  EXPECT_TRUE(shape(R"({"kind": "delay", "at_ms": 1, "delay_ms": 5})").delay_faults);
  EXPECT_FALSE(shape(R"({"kind": "partition", "at_ms": 1})").delay_faults);
  EXPECT_TRUE(shape(R"({"kind": "failover", "at_ms": 1, "mode": "manual"})", R"({"replicas": 1})")
                  .client_links)
      << "clients follow a failover through their links";
  EXPECT_TRUE(
      shape(R"({"kind": "pause", "at_ms": 1, "duration_ms": 5})", R"({"network": "netns"})").netns);
}

TEST(Plan, AnAdapterIsHandedStableAddressesAndItsOwnClocks) {
  const Scenario s = with_fault(R"({"kind": "clock-rate", "at_ms": 1, "duration_ms": 5,
                                     "rate": 2})");
  const PlannedRun planned = plan_run(s, adapter("set-nx-px"), Servers{}, 1);
  ASSERT_TRUE(planned.plan) << planned.not_applicable;
  EXPECT_TRUE(planned.plan->shape.client_links);
  EXPECT_TRUE(planned.plan->adapter_clocks) << "a client clock fault reaches the adapter's clock";
  EXPECT_FALSE(
      plan_run(s, LockUnderTest::built_in("set-nx-px"), Servers{}, 1).plan->adapter_clocks);
  // Standing in for Redlock, it gets Redlock's masters.
  const PlannedRun redlock = plan_run(scenario(R"({"name": "r", "algorithms": ["redlock"]})"),
                                      adapter("redlock"), Servers{}, 1);
  ASSERT_TRUE(redlock.plan);
  EXPECT_EQ(redlock.plan->shape.masters, 5);
}

TEST(Plan, AnAdapterIsHeldToTheExpectationOfWhatItStandsInFor) {
  Scenario s = scenario(R"({"name": "e", "algorithms": ["set-nx-px", "fenced"],
      "expect": {"default": {"verdict": "violated"}, "fenced": {"verdict": "safe"}}})");
  EXPECT_EQ(plan_run(s, adapter("fenced"), Servers{}, 1).expected.verdict, Verdict::Safe);
  EXPECT_EQ(plan_run(s, adapter(std::nullopt), Servers{}, 1).expected.verdict, Verdict::Violated);
  EXPECT_EQ(expectation_for(s, LockUnderTest::built_in("fenced")).verdict, Verdict::Safe);
}

// A library named in the story's "libraries" is held to its own expectation
// (or not told the story), whatever the built-in it stands in for expects.
TEST(Plan, ALibraryTheStoryNamesIsHeldToItsOwnExpectation) {
  const Scenario s = scenario(R"({"name": "e", "algorithms": ["redlock"],
      "expect": {"default": {"verdict": "safe"}},
      "libraries": {"my-lock": {"verdict": "violated", "kinds": ["mutual-exclusion"]},
                    "other-lock": {"not_applicable": "it has no such option"}}})");
  const PlannedRun own = plan_run(s, adapter("redlock"), Servers{}, 1);
  EXPECT_EQ(own.expected.verdict, Verdict::Violated);
  EXPECT_TRUE(own.plan);
  LockUnderTest other = adapter("redlock");
  other.name = "other-lock";
  EXPECT_EQ(plan_run(s, other, Servers{}, 1).not_applicable, "it has no such option");
  other.name = "third-lock";
  EXPECT_EQ(plan_run(s, other, Servers{}, 1).expected.verdict, Verdict::Safe)
      << "a library the story does not name is held to its built-in's expectation";
  EXPECT_EQ(expectation_for(s, LockUnderTest::built_in("redlock")).verdict, Verdict::Safe);

  const Scenario told = scenario(R"({"name": "e", "algorithms": ["redlock"],
      "expect": {"redlock": {"not_applicable": "the built-in has no such option"}},
      "libraries": {"my-lock": {"verdict": "safe"}}})");
  EXPECT_TRUE(plan_run(told, adapter("redlock"), Servers{}, 1).plan)
      << "a story told to a library is run even where its built-in cannot be told it";
}

TEST(Plan, AStoryThatCannotBeToldToALockIsNotApplicableWithItsReason) {
  const Scenario s = scenario(R"({"name": "w", "algorithms": ["set-nx-px", "redlock"],
      "expect": {"redlock": {"not_applicable": "Redlock's masters have no replica to promote"}}})");
  const PlannedRun built_in = plan_run(s, LockUnderTest::built_in("redlock"), Servers{}, 1);
  EXPECT_FALSE(built_in.plan);
  EXPECT_EQ(built_in.not_applicable, "Redlock's masters have no replica to promote");
  EXPECT_EQ(plan_run(s, adapter("redlock"), Servers{}, 1).not_applicable,
            "Redlock's masters have no replica to promote")
      << "a library standing in for it is not applicable either";
  EXPECT_TRUE(plan_run(s, LockUnderTest::built_in("set-nx-px"), Servers{}, 1).plan);
}

TEST(Plan, AStepTheAdapterDoesNotAnnounceIsNotApplicable) {
  const Scenario s = pause_at("after-send", R"("redlock")");
  const PlannedRun silent = plan_run(s, adapter("redlock"), Servers{}, 1);
  EXPECT_FALSE(silent.plan);
  EXPECT_NE(silent.not_applicable.find("after-send"), std::string::npos) << silent.not_applicable;
  EXPECT_NE(silent.not_applicable.find("redlock"), std::string::npos) << silent.not_applicable;
  EXPECT_TRUE(plan_run(s, adapter("redlock", {"after-send"}), Servers{}, 1).plan);
  EXPECT_TRUE(plan_run(s, LockUnderTest::built_in("redlock"), Servers{}, 1).plan);
}

TEST(Plan, ANestingStepOfALockThatDoesNotNestIsNotApplicable) {
  const Scenario s = pause_at("reacquired", R"("redisson-hash")");
  const PlannedRun flat = plan_run(s, adapter("redisson-hash"), Servers{}, 1);
  EXPECT_FALSE(flat.plan);
  EXPECT_NE(flat.not_applicable.find("reentrant false"), std::string::npos) << flat.not_applicable;
  EXPECT_TRUE(plan_run(s, adapter("redisson-hash", {}, true), Servers{}, 1).plan);
}

TEST(Plan, AnAdapterNoFaultIsMeantForIsNotApplicable) {
  const Scenario s = scenario(R"({"name": "m", "algorithms": ["set-nx-px", "redlock"],
      "duration_ms": 1000,
      "faults": [{"kind": "pause", "at_ms": 10, "duration_ms": 5, "algorithms": ["redlock"]}]})");
  const PlannedRun none = plan_run(s, adapter(std::nullopt), Servers{}, 1);
  EXPECT_FALSE(none.plan);
  EXPECT_NE(none.not_applicable.find("--like"), std::string::npos) << none.not_applicable;
  const PlannedRun other = plan_run(s, adapter("set-nx-px"), Servers{}, 1);
  EXPECT_FALSE(other.plan);
  EXPECT_EQ(other.not_applicable.find("--like"), std::string::npos) << other.not_applicable;
  const PlannedRun meant = plan_run(s, adapter("redlock"), Servers{}, 1);
  ASSERT_TRUE(meant.plan);
  EXPECT_TRUE(meant.plan->schedule.applies(0));
}

TEST(Plan, AFaultATargetCannotTakeIsNotApplicableNamingBoth) {
  const LockUnderTest lock = LockUnderTest::built_in("set-nx-px");
  auto why = [&](const std::string& fault, const Servers& servers,
                 const std::string& topology = R"({"replicas": 1, "sentinels": 3})") {
    const PlannedRun planned = plan_run(with_fault(fault, topology), lock, servers, 1);
    EXPECT_FALSE(planned.plan) << fault;
    return planned.not_applicable;
  };
  for (const char* server_fault : {R"({"kind": "server-clock-jump", "at_ms": 1, "delta_ms": 10})",
                                   R"({"kind": "sigstop-node", "at_ms": 1, "duration_ms": 10})",
                                   R"({"kind": "crash-node", "at_ms": 1})"}) {
    const std::string reason = why(server_fault, target());
    EXPECT_NE(reason.find("control of the server processes"), std::string::npos) << reason;
    EXPECT_NE(reason.find("target 'staging'"), std::string::npos) << reason;
    EXPECT_EQ(reason.rfind("fault 0: ", 0), 0u) << reason;
  }
  EXPECT_NE(why(R"({"kind": "debug-sleep", "at_ms": 1, "duration_ms": 10})", target())
                .find("allow_debug_sleep"),
            std::string::npos);
  EXPECT_NE(why(R"({"kind": "cut-replication", "at_ms": 1})", target()).find("replication links"),
            std::string::npos);
  EXPECT_NE(
      why(R"({"kind": "failover", "at_ms": 1, "mode": "manual"})", target()).find("allow_failover"),
      std::string::npos);
  const Servers failover_allowed = target([](Target& t) { t.allow_failover = true; });
  EXPECT_NE(why(R"({"kind": "failover", "at_ms": 1, "mode": "manual"})", failover_allowed)
                .find("no replica"),
            std::string::npos);
  const Servers with_replica = target([](Target& t) {
    t.allow_failover = true;
    t.replicas = {Endpoint{"127.0.0.1", 7001}};
  });
  EXPECT_NE(why(R"({"kind": "failover", "at_ms": 1, "mode": "sentinel"})", with_replica)
                .find("Sentinels"),
            std::string::npos);
  // What the lab does on its own side applies to a target as to its own servers.
  for (const char* own_side : {R"({"kind": "partition", "at_ms": 1})",
                               R"({"kind": "clock-jump", "at_ms": 1, "delta_ms": 10})",
                               R"({"kind": "pause", "at_ms": 1, "duration_ms": 10})"})
    EXPECT_TRUE(plan_run(with_fault(own_side), lock, target(), 1).plan) << own_side;
  EXPECT_TRUE(plan_run(with_fault(R"({"kind": "debug-sleep", "at_ms": 1, "duration_ms": 10})"),
                       lock, target([](Target& t) { t.allow_debug_sleep = true; }), 1)
                  .plan);
}

TEST(Plan, ATopologyTheTargetLacksIsNotApplicable) {
  const Scenario s = scenario(R"({"name": "t", "algorithms": ["redlock", "wait-synced"]})");
  const PlannedRun redlock = plan_run(s, LockUnderTest::built_in("redlock"), target(), 1);
  EXPECT_FALSE(redlock.plan);
  EXPECT_NE(redlock.not_applicable.find("3 independent masters"), std::string::npos);
  EXPECT_FALSE(plan_run(s, adapter("redlock"), target(), 1).plan) << "so does a Redlock library";
  const PlannedRun synced = plan_run(s, LockUnderTest::built_in("wait-synced"), target(), 1);
  EXPECT_FALSE(synced.plan);
  EXPECT_NE(synced.not_applicable.find("replica"), std::string::npos);
  const Servers five = target([](Target& t) {
    for (int port = 7001; port <= 7004; ++port) t.masters.push_back({"127.0.0.1", port});
  });
  const PlannedRun on_five = plan_run(s, LockUnderTest::built_in("redlock"), five, 1);
  ASSERT_TRUE(on_five.plan);
  EXPECT_EQ(on_five.plan->shape.masters, 5);
}

TEST(Plan, OnATargetKeysAreTheRunsOwnAndAFailoverOwnsTheTarget) {
  const Servers servers = target([](Target& t) {
    t.allow_failover = true;
    t.replicas = {Endpoint{"127.0.0.1", 7001}};
    t.password = "secret";
    t.username = "lab";
  });
  const Scenario failover =
      with_fault(R"({"kind": "failover", "at_ms": 1, "mode": "manual"})", R"({"replicas": 1})");
  const PlannedRun planned = plan_run(failover, adapter("set-nx-px"), servers, 7, 0x10);
  ASSERT_TRUE(planned.plan) << planned.not_applicable;
  const RunPlan& plan = *planned.plan;
  EXPECT_EQ(plan.key_prefix, "lab:my-lock:0000000000000017:");
  EXPECT_EQ(plan.scenario.workload.locks, std::vector<std::string>{plan.key_prefix + "lock"});
  EXPECT_TRUE(plan.owns_target);
  EXPECT_FALSE(plan.flush_first);
  EXPECT_FALSE(plan.shape.server_clocks);
  EXPECT_EQ(plan.adapter_env.at("LOCKLAB_REDIS_PASSWORD"), "secret");
  EXPECT_EQ(plan.adapter_env.at("LOCKLAB_REDIS_USERNAME"), "lab");
  // Another unique number, another prefix: two labs on one target never share keys.
  EXPECT_NE(plan_run(failover, adapter("set-nx-px"), servers, 7, 0x20).plan->key_prefix,
            plan.key_prefix);

  const PlannedRun shared = plan_run(with_fault(R"({"kind": "partition", "at_ms": 1})"),
                                     adapter("set-nx-px"), servers, 7);
  ASSERT_TRUE(shared.plan);
  EXPECT_FALSE(shared.plan->owns_target) << "a run that fails nothing over shares the target";
  const PlannedRun flushed =
      plan_run(with_fault(R"({"kind": "partition", "at_ms": 1})"), adapter("set-nx-px"),
               target([](Target& t) { t.allow_flush = true; }), 7);
  ASSERT_TRUE(flushed.plan);
  EXPECT_TRUE(flushed.plan->owns_target);
  EXPECT_TRUE(flushed.plan->flush_first);
}

// A story of `kind` (at 100 ms, 100 ms long) for set-nx-px and wait-synced.
Scenario story_of(const std::string& fault) {
  return scenario(R"({"name": "t", "algorithms": ["set-nx-px", "wait-synced"],
                      "duration_ms": 1000, "faults": [)" +
                  fault + "]}");
}

TEST(Plan, OnVirtualTimeACellThatMustKeepRealTimeIsNotApplicableAndSaysWhy) {
  Servers servers;
  servers.time = TimeMode::Virtual;
  const LockUnderTest set_nx_px = LockUnderTest::built_in("set-nx-px");
  auto why = [&](const Scenario& s, const LockUnderTest& lock) {
    const PlannedRun planned = plan_run(s, lock, servers, 1);
    EXPECT_FALSE(planned.plan);
    return planned.not_applicable;
  };
  EXPECT_NE(why(with_fault(R"({"kind": "pause", "at_ms": 100, "duration_ms": 100})",
                           R"({"replicas": 1, "sentinels": 3})"),
                set_nx_px)
                .find("Sentinel keeps its own pace"),
            std::string::npos);
  EXPECT_NE(why(with_fault(R"({"kind": "cut-replication", "at_ms": 100, "duration_ms": 100})",
                           R"({"replicas": 1})"),
                set_nx_px)
                .find("replication keeps its own pace"),
            std::string::npos);
  EXPECT_NE(why(story_of(R"({"kind": "pause", "at_ms": 100, "duration_ms": 100})"),
                adapter(std::string("set-nx-px")))
                .find("an adapter's runtime keeps its own timers"),
            std::string::npos);
}

TEST(Plan, OnVirtualTimeTheLinksAndStoppedServersOfABuiltInAreCarriedByItsConnections) {
  Servers servers;
  servers.time = TimeMode::Auto;
  for (const char* fault :
       {R"({"kind": "partition", "at_ms": 100, "duration_ms": 100})",
        R"({"kind": "partition", "at_ms": 100, "how": "reject"})",
        R"({"kind": "cut", "at_ms": 100})",
        R"({"kind": "delay", "at_ms": 100, "duration_ms": 100, "delay_ms": 50})",
        R"({"kind": "sigstop-node", "at_ms": 100, "duration_ms": 100})",
        R"({"kind": "debug-sleep", "at_ms": 100, "duration_ms": 100})",
        R"({"kind": "pause", "at_ms": 100, "duration_ms": 100})"}) {
    const PlannedRun planned =
        plan_run(story_of(fault), LockUnderTest::built_in("set-nx-px"), servers, 1);
    ASSERT_TRUE(planned.plan) << fault << ": " << planned.not_applicable;
    EXPECT_TRUE(planned.plan->virtual_time) << fault;
    EXPECT_TRUE(planned.plan->shape.client_links) << fault;
    EXPECT_TRUE(planned.plan->shape.simulated_links) << fault;
  }
  // In real time the links are the fault proxies.
  servers.time = TimeMode::Real;
  const PlannedRun real = plan_run(story_of(R"({"kind": "partition", "at_ms": 100})"),
                                   LockUnderTest::built_in("set-nx-px"), servers, 1);
  ASSERT_TRUE(real.plan);
  EXPECT_FALSE(real.plan->shape.simulated_links);
}

TEST(Plan, OnVirtualTimeALockWithAReplicaKeepsItUnlessTheStoryBreaksReplication) {
  Servers servers;
  servers.time = TimeMode::Virtual;
  // WAIT's answer is awaited like any other, and the replica's
  // acknowledgement comes at once (the master asks it with GETACK).
  const PlannedRun paused =
      plan_run(story_of(R"({"kind": "pause", "at_ms": 100, "duration_ms": 100})"),
               LockUnderTest::built_in("wait-synced"), servers, 1);
  ASSERT_TRUE(paused.plan) << paused.not_applicable;
  EXPECT_TRUE(paused.plan->virtual_time);
  EXPECT_EQ(paused.plan->shape.replicas, 1);
}

TEST(Plan, OnVirtualTimeEveryServerReadsTheVirtualClock) {
  Servers servers;
  servers.time = TimeMode::Virtual;
  const PlannedRun planned =
      plan_run(story_of(R"({"kind": "pause", "at_ms": 100, "duration_ms": 100})"),
               LockUnderTest::built_in("set-nx-px"), servers, 1);
  ASSERT_TRUE(planned.plan) << planned.not_applicable;
  EXPECT_TRUE(planned.plan->virtual_time);
  EXPECT_TRUE(planned.plan->shape.server_clocks);
  EXPECT_TRUE(planned.plan->shape.simulated_links) << "links that cost nothing, never proxies";
}

TEST(Plan, AutoTimeIsVirtualWhereTheCellAllowsItAndRealElsewhere) {
  Servers servers;
  servers.time = TimeMode::Auto;
  const LockUnderTest set_nx_px = LockUnderTest::built_in("set-nx-px");
  const PlannedRun paused = plan_run(
      story_of(R"({"kind": "pause", "at_ms": 100, "duration_ms": 100})"), set_nx_px, servers, 1);
  const PlannedRun replicated =
      plan_run(with_fault(R"({"kind": "cut-replication", "at_ms": 100, "duration_ms": 100})",
                          R"({"replicas": 1})"),
               set_nx_px, servers, 1);
  ASSERT_TRUE(paused.plan && replicated.plan);
  EXPECT_TRUE(paused.plan->virtual_time);
  EXPECT_FALSE(replicated.plan->virtual_time);
  EXPECT_FALSE(replicated.plan->shape.simulated_links);
  servers.time = TimeMode::Real;
  EXPECT_FALSE(plan_run(story_of(R"({"kind": "pause", "at_ms": 100, "duration_ms": 100})"),
                        set_nx_px, servers, 1)
                   .plan->virtual_time);
}

}  // namespace
}  // namespace locklab
