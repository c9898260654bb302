// `locklab explore` against real redis-server processes: a short exploration
// end to end, a shrink of a real failure, bad input, and Ctrl-C.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "child_processes.h"
#include "explore.h"
#include "process.h"
#include "shrink.h"
#include "temp_dir.h"

namespace locklab::explore {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Outcome {
  int status = -1;
  std::string err;
};

Outcome locklab(const std::string& args) {
  TempDir dir("explore-test-cmd");
  const std::string command = std::string(LOCKLAB_PATH) + " " + args + " >/dev/null 2>" +
                              (dir.path() / "err").string() + " </dev/null";
  const int raw = std::system(command.c_str());
  std::ifstream in(dir.path() / "err");
  std::stringstream err;
  err << in.rdbuf();
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, err.str()};
}

json read_json(const fs::path& file) {
  std::ifstream in(file);
  EXPECT_TRUE(in) << file;
  return json::parse(in);
}

TEST(ExploreRun, AShortExplorationWritesEveryRunCoverageAndValidFindings) {
  TempDir out("explore-run");
  const Outcome o = locklab("explore set-nx-px --faults pause --runs 4 --jobs 2 --seed 5 --out " +
                            out.path().string() + " --confirm-runs 2 --shrink-candidates 4");
  ASSERT_TRUE(o.status == 0 || o.status == 1) << o.err;
  const json doc = read_json(out.path() / "explore.json");
  ASSERT_EQ(doc["runs_total"], 4) << o.err;
  EXPECT_EQ(doc["runs_failed"], 0) << o.err;
  // Each run is the generated scenario of its index: seeds reproduce them.
  Space space = space_for("set-nx-px");
  space.fault_kinds = {FaultKind::Pause};
  std::set<uint64_t> indices;
  for (const auto& run : doc["runs"]) {
    const uint64_t index = run["index"];
    indices.insert(index);
    EXPECT_EQ(run["seed"], generate(space, 5, index).seed);
    EXPECT_TRUE(run["verdict"] == "safe" || run["verdict"] == "violated") << run.dump();
    for (const auto& f : run["faults"]) EXPECT_EQ(f["kind"], "pause");
  }
  EXPECT_EQ(indices, std::set<uint64_t>({0, 1, 2, 3}));
  // Coverage: only pauses were tried, and what fired is counted.
  ASSERT_EQ(doc["coverage"]["fault_kinds"].size(), 1u);
  const json& pause = doc["coverage"]["fault_kinds"][0];
  EXPECT_EQ(pause["kind"], "pause");
  EXPECT_EQ(pause["runs"], 4);
  EXPECT_GE(pause["generated"].get<int>(), 4);
  EXPECT_GE(pause["fired"].get<int>(), 1);
  // What was found is a valid scenario that expects what it measured.
  EXPECT_EQ(o.status, doc["found"].empty() && doc["not_shrunk"].empty() ? 0 : 1);
  for (const auto& f : doc["found"]) {
    const Scenario minimal = load_scenario(out.path() / f["file"].get<std::string>());
    EXPECT_EQ(minimal.expectation_for("set-nx-px").verdict, Verdict::Violated);
    EXPECT_LE(minimal.faults.size(), f["original_faults"].get<size_t>());
    EXPECT_EQ(f["reproduced"]["runs"], 2);
    if (f["report"].is_string()) {
      EXPECT_TRUE(fs::exists(out.path() / f["report"].get<std::string>()));
    }
  }
  std::ifstream index(out.path() / "index.html");
  std::stringstream html;
  html << index.rdbuf();
  EXPECT_NE(html.str().find("What was explored"), std::string::npos);
  EXPECT_NE(html.str().find("explore.json"), std::string::npos);
}

TEST(ExploreRun, ShardsTogetherRunWhatOneExplorationRuns) {
  TempDir out("explore-shards");
  std::set<uint64_t> indices;
  for (const char* shard : {"1/2", "2/2"}) {
    const fs::path dir = out.path() / shard;
    const Outcome o = locklab(std::string("explore set-nx-px --faults delay --runs 3 --seed 6 ") +
                              "--shrink-candidates 0 --confirm-runs 1 --shard " + shard +
                              " --out " + dir.string());
    ASSERT_TRUE(o.status == 0 || o.status == 1) << o.err;
    const json doc = read_json(dir / "explore.json");
    EXPECT_EQ(doc["options"]["shard"], shard);
    for (const auto& run : doc["runs"])
      EXPECT_TRUE(indices.insert(run["index"].get<uint64_t>()).second);
  }
  EXPECT_EQ(indices, std::set<uint64_t>({0, 1, 2}));

  // Merged, they are one exploration of runs 0, 1, 2: coverage counted over all.
  const Outcome merged =
      locklab("merge " + (out.path() / "1/2").string() + " " + (out.path() / "2/2").string() +
              " --out " + (out.path() / "merged").string());
  ASSERT_TRUE(merged.status == 0 || merged.status == 1) << merged.err;
  const json doc = read_json(out.path() / "merged" / "explore.json");
  EXPECT_EQ(doc["options"]["shard"], "1/1");
  ASSERT_EQ(doc["runs_total"], 3);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(doc["runs"][i]["index"], i);
  Space space = space_for("set-nx-px");
  space.fault_kinds = {FaultKind::Delay};
  size_t faults = 0;
  for (uint64_t i = 0; i < 3; ++i) faults += generate(space, 6, i).faults.size();
  ASSERT_EQ(doc["coverage"]["fault_kinds"].size(), 1u);
  EXPECT_EQ(doc["coverage"]["fault_kinds"][0]["runs"], 3);
  EXPECT_EQ(doc["coverage"]["fault_kinds"][0]["generated"], faults);
  EXPECT_TRUE(fs::exists(out.path() / "merged" / "index.html"));
  const Outcome missing =
      locklab("merge " + (out.path() / "2/2").string() + " --out " + (out.path() / "bad").string());
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("1/2 is missing"), std::string::npos) << missing.err;
}

TEST(ExploreRun, ExploresAnAdapterThroughTheSameSearch) {
  TempDir out("explore-adapter");
  const Outcome o =
      locklab("explore --adapter '/usr/bin/python3 " + std::string(EXAMPLE_ADAPTERS_DIR) +
              "/redis_py_lock.py' --like set-nx-px --faults pause,delay --runs 2 "
              "--kinds stale-write "
              "--seed 4 --confirm-runs 1 --shrink-candidates 2 --out " +
              out.path().string());
  ASSERT_TRUE(o.status == 0 || o.status == 1) << o.err;
  const json doc = read_json(out.path() / "explore.json");
  EXPECT_EQ(doc["explore"], "redis-py-lock");
  EXPECT_EQ(doc["algorithm"], "set-nx-px");
  EXPECT_TRUE(doc["adapter"].get<std::string>().find("redis_py_lock.py") != std::string::npos);
  ASSERT_EQ(doc["runs_total"], 2);
  EXPECT_EQ(doc["runs_failed"], 0) << doc["runs"].dump(2);
  // Only the kinds sought count; the others are still seen and said.
  EXPECT_EQ(doc["options"]["kinds"], json({"stale-write"}));
  for (auto it = doc["violations_by_kind"].begin(); it != doc["violations_by_kind"].end(); ++it)
    EXPECT_EQ(it.key(), "stale-write");
  for (const auto& run : doc["runs"])
    for (const auto& kind : run["kinds"]) EXPECT_TRUE(doc["kinds_seen"].contains(kind));
  for (const auto& f : doc["found"]) {
    EXPECT_EQ(f["sought"], json({"stale-write"}));
    const Scenario minimal = load_scenario(out.path() / f["file"].get<std::string>());
    EXPECT_EQ(minimal.default_expectation.verdict, Verdict::Violated)
        << "held to it without --like";
  }
}

TEST(ExploreRun, ShrinksARealFailureToItsCause) {
  // Story 5 in small (c1 paused before writing for twice the lease) with a
  // bystander client and a fault that plays no part: the shrink drops both.
  const Scenario story = parse_scenario(json::parse(R"({"name": "story", "clients": 3, "seed": 8,
      "workload": {"locks": ["L"], "ttl_ms": 400, "wait_ms": 3000, "work_ms": 5, "think_ms": 5},
      "duration_ms": 2000, "algorithms": ["set-nx-px"],
      "faults": [{"kind": "delay", "at_ms": 1500, "delay_ms": 1, "duration_ms": 100},
                 {"kind": "pause", "when": {"client": "c1", "step": "before-write"}, "duration_ms": 800}]})"),
                                        "story.json");
  ShrinkOptions options;
  options.parallel = 2;
  options.max_candidates = 4;
  std::atomic<int> runs{0};
  const ShrinkResult r = shrink(
      story,
      [&](const Scenario& s, int) {
        ++runs;
        TempDir dir("explore-shrink");
        RunResult run =
            run_cell(s, LockUnderTest::built_in("set-nx-px"), Servers{}, s.seed, dir.path());
        EXPECT_FALSE(run.error) << *run.error;
        return run.check && run.check->found("mutual-exclusion") > 0;
      },
      options);
  ASSERT_EQ(r.minimal.faults.size(), 1u) << scenario_to_json(r.minimal).dump(2);
  EXPECT_EQ(r.minimal.faults[0].kind, FaultKind::Pause);
  EXPECT_GE(r.steps_taken, 1);
  EXPECT_EQ(r.runs, runs.load());
}

TEST(ExploreRun, BadInputIsOneLineAndStatus2) {
  TempDir out("explore-bad");
  const std::string dir = " --out " + out.path().string();
  struct Case {
    std::string args, names;
  } cases[] = {{"explore nosuch --runs 1" + dir, "nosuch"},
               {"explore set-nx-px --faults pauze --runs 1" + dir, "pauze"},
               {"explore set-nx-px --kinds mutual-exclusio --runs 1" + dir, "mutual-exclusio"},
               {"explore set-nx-px --reproduce 3/2 --runs 1" + dir, "--reproduce"},
               {"explore --runs 1" + dir, "ALGORITHM"}};
  for (const auto& c : cases) {
    const Outcome o = locklab(c.args);
    EXPECT_EQ(o.status, 2) << c.args;
    EXPECT_NE(o.err.find(c.names), std::string::npos) << c.args << ": " << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  }
  EXPECT_FALSE(fs::exists(out.path() / "explore.json"));
}

TEST(ExploreRun, CtrlCWritesWhatItHasAndStopsEveryServer) {
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  TempDir out("explore-interrupt");
  const fs::path log = out.path() / "log";
  ChildProcess lab({.argv = {LOCKLAB_PATH, "explore", "set-nx-px", "--faults", "pause", "--minutes",
                             "5", "--seed", "2", "--out", (out.path() / "x").string()},
                    .output = log});
  // Until the first run has ended (its progress line), at most 60 s.
  for (int i = 0; i < 600; ++i) {
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().find(" runs") != std::string::npos &&
        text.str().find(": 0 runs") == std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  lab.signal(SIGINT);
  std::optional<int> status;
  for (int i = 0; i < 600 && !(status = lab.poll()); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(status.has_value()) << "explore did not stop within 60 s of Ctrl-C";
  ASSERT_TRUE(WIFEXITED(*status));
  const json doc = read_json(out.path() / "x" / "explore.json");
  EXPECT_TRUE(doc["interrupted"].get<bool>());
  EXPECT_GE(doc["runs_total"].get<int>(), 1);
  EXPECT_EQ(WEXITSTATUS(*status), doc["found"].empty() && doc["not_shrunk"].empty() ? 130 : 1);
  EXPECT_TRUE(fs::exists(out.path() / "x" / "index.html"));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // The test is the subreaper: a server the lab left behind would be its child now.
  for (const auto& name : test::live_children())
    EXPECT_EQ(name.find("redis"), std::string::npos) << name << " outlived the interrupted explore";
}

}  // namespace
}  // namespace locklab::explore
