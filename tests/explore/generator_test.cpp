// Generated scenarios: valid, reproducible from their seed, and inside the
// ranges the fault vocabulary declares and the generator promises.
#include "generator.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "explore.h"
#include "lock.h"

namespace locklab::explore {
namespace {

using nlohmann::json;

std::vector<std::string> algorithm_ids() {
  std::vector<std::string> ids;
  for (const auto& a : algorithms()) ids.push_back(a.id);
  return ids;
}

TEST(ScenarioFile, EveryCanonicalScenarioSurvivesTheRoundTrip) {
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(SCENARIOS_DIR)) {
    if (entry.path().extension() != ".json" || entry.path().filename() == "schema.json") continue;
    const Scenario loaded = load_scenario(entry.path());
    const json written = scenario_to_json(loaded);
    const Scenario again = parse_scenario(written, entry.path());
    EXPECT_EQ(scenario_to_json(again), written) << entry.path();
    EXPECT_EQ(again.faults.size(), loaded.faults.size()) << entry.path();
    EXPECT_EQ(again.expectations.size(), loaded.expectations.size()) << entry.path();
    ++seen;
  }
  EXPECT_GT(seen, 20);
}

TEST(ScenarioFile, KeepsEveryFieldItWasGiven) {
  const Scenario s = parse_scenario(json::parse(R"({"name": "x", "clients": 3,
      "topology": {"replicas": 1, "sentinels": 3, "persistence": true},
      "workload": {"locks": ["A", "B"], "ttl_ms": 700, "wait_ms": 10, "work_ms": 3, "think_ms": 0,
                   "ops_per_client": 9, "fencing": true, "reentry": 2, "params": {"replicas": 1},
                   "lock_per_client": true},
      "duration_ms": 900, "seed": 77, "algorithms": ["redisson-hash", "set-nx-px"],
      "faults": [{"kind": "clock-rate", "at_ms": 5, "clients": ["c2"], "duration_ms": 50, "rate": 2.5},
                 {"kind": "partition", "when": {"client": "c3", "step": "acquired", "nth": 2},
                  "nodes": [0], "how": "reject", "algorithms": ["set-nx-px"]},
                 {"kind": "failover", "at_ms": 100, "mode": "manual"}],
      "expect": {"default": {"verdict": "violated", "kinds": ["mutual-exclusion"]},
                 "set-nx-px": {"verdict": "safe", "absent": ["stale-write"]}}})"),
                                    "x.json");
  const json j = scenario_to_json(s);
  EXPECT_EQ(j["workload"]["params"]["replicas"], 1);
  EXPECT_EQ(j["workload"]["lock_per_client"], true);
  EXPECT_EQ(j["faults"][0]["rate"], 2.5);
  EXPECT_EQ(j["faults"][0]["clients"], json({"c2"}));
  EXPECT_EQ(j["faults"][1]["when"]["nth"], 2);
  EXPECT_EQ(j["faults"][1]["how"], "reject");
  EXPECT_EQ(j["faults"][1]["algorithms"], json({"set-nx-px"}));
  EXPECT_EQ(j["faults"][2]["mode"], "manual");
  EXPECT_EQ(j["expect"]["set-nx-px"]["absent"], json({"stale-write"}));
  EXPECT_EQ(j["expect"]["default"]["kinds"], json({"mutual-exclusion"}));
  EXPECT_EQ(j["topology"]["sentinels"], 3);
  EXPECT_EQ(j["seed"], 77);
}

// The property every explore run rests on: whatever the seed, the scenario is
// valid, the same seed gives the same scenario, and every drawn value is
// inside both the vocabulary's declared range and the generator's own.
RC_GTEST_PROP(Generator, ScenariosAreValidReproducibleAndInRange, ()) {
  const auto algorithm = *rc::gen::elementOf(algorithm_ids());
  Space space = space_for(algorithm);
  const auto subset =
      *rc::gen::container<std::vector<size_t>>(rc::gen::inRange<size_t>(0, kFaultKindCount));
  for (size_t k : subset) space.fault_kinds.push_back(fault_kinds()[k].kind);
  const auto seed = *rc::gen::inRange<uint64_t>(0, 1'000'000);
  const auto index = *rc::gen::inRange<uint64_t>(0, 10'000);

  const Scenario s = generate(space, seed, index);
  const json written = scenario_to_json(s);
  RC_ASSERT(scenario_to_json(parse_scenario(written, "g.json")) == written);
  RC_ASSERT(scenario_to_json(generate(space, seed, index)) == written);
  RC_ASSERT(s.seed == scenario_seed(seed, index));
  RC_ASSERT(s.algorithms == std::vector<std::string>{algorithm});
  RC_ASSERT(!s.faults.empty());
  RC_ASSERT(int(s.faults.size()) <= space.max_faults);

  const bool nesting = s.workload.reentry > 1;
  const std::vector<std::string> steps = trigger_steps(space, nesting);
  for (const Fault& f : s.faults) {
    if (!space.fault_kinds.empty())
      RC_ASSERT(std::count(space.fault_kinds.begin(), space.fault_kinds.end(), f.kind) > 0);
    if (f.when) {
      RC_ASSERT(std::count(steps.begin(), steps.end(), f.when->step) > 0);
      RC_ASSERT(f.when->nth >= 1);
    } else {
      RC_ASSERT(f.at_ms.has_value());
      RC_ASSERT(*f.at_ms < s.duration_ms);
    }
    for (const FaultParam& p : info(f.kind).params) {
      if (p.type == ParamType::Choice) continue;
      auto value = f.number(p.name);
      if (!value) continue;
      RC_ASSERT(*value >= p.min);
      RC_ASSERT(*value <= p.max);
    }
    for (const DrawnRange& range : drawn_ranges(f.kind)) {
      auto value = f.number(range.param);
      if (!value) {
        RC_ASSERT(range.optional || range.param == "duration_ms");
        continue;
      }
      const double scale = range.per_ttl ? double(s.workload.ttl_ms) : 1.0;
      const double drawn = std::abs(*value) / scale;
      // Rounded to whole milliseconds, and never under 1 ms.
      RC_ASSERT(drawn >= range.low - 1.0 / scale);
      RC_ASSERT(drawn <= range.high + 1.0 / scale);
    }
  }
}

TEST(Generator, OnlyTheKindsAskedForAndTheirTopology) {
  Space space = space_for("set-nx-px");
  space.fault_kinds = {FaultKind::Failover};
  for (uint64_t i = 0; i < 50; ++i) {
    const Scenario s = generate(space, 4, i);
    for (const Fault& f : s.faults) EXPECT_EQ(f.kind, FaultKind::Failover);
    EXPECT_GE(s.topology.replicas, 1) << "a failover needs a replica";
  }
}

TEST(Generator, FailoversStayManualWhereSentinelCannotBeAsked) {
  Space space = space_for("set-nx-px");
  space.fault_kinds = {FaultKind::Failover};
  std::set<std::string> modes;
  for (uint64_t i = 0; i < 40; ++i)
    for (const Fault& f : generate(space, 4, i).faults) modes.insert(f.choice("mode"));
  EXPECT_EQ(modes, (std::set<std::string>{"manual", "sentinel"}));
  space.sentinel_failovers = false;
  for (uint64_t i = 0; i < 40; ++i) {
    const Scenario s = generate(space, 4, i);
    for (const Fault& f : s.faults) EXPECT_EQ(f.mode, FailoverMode::Manual);
    EXPECT_EQ(s.topology.sentinels, 0);
  }
}

TEST(Generator, EveryScenarioTakesTheSpacesNetwork) {
  Space space = space_for("set-nx-px");
  const std::string by_default = generate(space, 4, 0).topology.network;
  EXPECT_EQ(by_default, Topology{}.network);
  space.network = "netns";
  for (uint64_t i = 0; i < 20; ++i) EXPECT_EQ(generate(space, 4, i).topology.network, "netns");
}

TEST(Generator, SequencesDifferBySeedAndIndex) {
  const Space space = space_for("redlock");
  EXPECT_NE(scenario_to_json(generate(space, 1, 0)), scenario_to_json(generate(space, 2, 0)));
  EXPECT_NE(scenario_to_json(generate(space, 1, 0)), scenario_to_json(generate(space, 1, 1)));
}

TEST(Generator, ReachesTheLocksOwnSteps) {
  // Redlock's steps exist only inside it: the generator must use them, or
  // its races are never explored.
  const Space space = space_for("redlock");
  std::set<std::string> seen;
  for (uint64_t i = 0; i < 300; ++i)
    for (const Fault& f : generate(space, 9, i).faults)
      if (f.when) seen.insert(f.when->step);
  for (const auto& step : space.lock_steps) EXPECT_TRUE(seen.count(step)) << step;
}

TEST(Shard, ShardsSplitTheSequenceWithoutOverlap) {
  std::vector<int> seen(30, 0);
  for (int i = 1; i <= 3; ++i)
    for (uint64_t k = 0; k < 10; ++k) ++seen.at(run_index({i, 3}, k));
  EXPECT_EQ(seen, std::vector<int>(30, 1));
  EXPECT_EQ(run_index({1, 1}, 7), 7u);
}

}  // namespace
}  // namespace locklab::explore
