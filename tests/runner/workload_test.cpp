// What a client's loop does against a real server: when it stops.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "runner.h"
#include "scenario.h"
#include "temp_dir.h"

namespace locklab {
namespace {

using nlohmann::json;

// The history of one run of `scenario_json` against set-nx-px.
std::vector<json> history_of(const std::string& scenario_json) {
  Scenario scenario = parse_scenario(json::parse(scenario_json), "inline.json");
  TempDir out("locklab-workload-test");
  json result =
      run_cell(scenario, LockUnderTest::built_in("set-nx-px"), Servers{}, scenario.seed, out.path())
          .to_json();
  EXPECT_TRUE(result["error"].is_null()) << result["error"];
  std::vector<json> history;
  std::ifstream in(out.path() / "set-nx-px" / "history.jsonl");
  std::string line;
  while (std::getline(in, line)) history.push_back(json::parse(line));
  return history;
}

// Each client holds the lock once and stops, long before `duration_ms`; the
// one that loses the first race fails (its wait is shorter than the other's
// work) and tries again until it holds. Without the bound each client would
// hold the lock about ten times in the story's 20 s.
TEST(Workload, AClientStopsAfterItsHoldsAndRetriesTheAttemptsThatFail) {
  std::vector<json> history = history_of(R"({"algorithms": ["set-nx-px"], "clients": 2,
      "duration_ms": 20000,
      "workload": {"ttl_ms": 2000, "wait_ms": 20, "work_ms": 1000, "think_ms": 0,
                   "holds_per_client": 1}})");
  std::map<std::string, int> holds, failed, releases;
  for (const json& e : history) {
    if (e["f"] == "acquire" && e["type"] == "ok") ++holds[e["process"]];
    if (e["f"] == "acquire" && e["type"] == "fail") ++failed[e["process"]];
    if (e["f"] == "release" && e["type"] == "ok") ++releases[e["process"]];
  }
  EXPECT_EQ(holds, (std::map<std::string, int>{{"c1", 1}, {"c2", 1}}));
  EXPECT_EQ(releases, holds);
  EXPECT_GE(failed["c1"] + failed["c2"], 1) << "the loser of the race stopped at its first failure";
}

TEST(Workload, HoldsPerClientIsKeptInTheScenarioJsonOnlyWhenSet) {
  Scenario bounded = parse_scenario(
      json::parse(R"({"algorithms": ["set-nx-px"], "workload": {"holds_per_client": 2}})"),
      "s.json");
  EXPECT_EQ(bounded.workload.holds_per_client, 2);
  EXPECT_EQ(scenario_to_json(bounded)["workload"]["holds_per_client"], 2);
  EXPECT_EQ(parse_scenario(scenario_to_json(bounded), "s.json").workload.holds_per_client, 2);
  Scenario plain = parse_scenario(json::parse(R"({"algorithms": ["set-nx-px"]})"), "s.json");
  EXPECT_EQ(plain.workload.holds_per_client, 0);
  EXPECT_FALSE(scenario_to_json(plain)["workload"].contains("holds_per_client"));
  try {
    parse_scenario(
        json::parse(R"({"algorithms": ["set-nx-px"], "workload": {"holds_per_client": 0}})"),
        "s.json");
    ADD_FAILURE() << "a bound of 0 holds was accepted";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("'workload.holds_per_client'"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace locklab
