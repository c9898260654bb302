// Adapters inside real runs: steps an adapter announces are steps a
// scenario's fault can fire at; a story told at a step only the built-in
// algorithm has does not apply to an adapter.
#include <gtest/gtest.h>

#include <fstream>

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

TEST(AdapterSteps, AStepOnlyTheBuiltInHasMakesTheCellNotApplicable) {
  TempDir out;
  const LockUnderTest lock = adapter("/usr/bin/python3 " EXAMPLE_ADAPTERS_DIR "/redis_py_lock.py");
  json run = run_cell(pause_after_send(), lock, Servers{}, 1, out.path()).to_json();
  ASSERT_TRUE(run["not_applicable"].is_string()) << run.dump(2);
  const std::string reason = run["not_applicable"];
  EXPECT_NE(reason.find("after-send"), std::string::npos) << reason;
  EXPECT_NE(reason.find("redlock"), std::string::npos) << reason;
  EXPECT_FALSE(run.value("expectation_met", true));
  EXPECT_FALSE(std::filesystem::exists(out.path() / "redis-py-lock" / "history.jsonl"));
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

}  // namespace
}  // namespace locklab
