// End to end: the locklab executable as a user runs it.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "temp_dir.h"

namespace locklab {
namespace {

using nlohmann::json;

struct Outcome {
  int status = -1;
  std::string out, err;
};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Outcome locklab(const std::string& args) {
  TempDir dir("locklab-cli");
  std::string command = std::string(LOCKLAB_PATH) + " " + args + " >" +
                        (dir.path() / "out").string() + " 2>" + (dir.path() / "err").string() +
                        " </dev/null";
  int raw = std::system(command.c_str());
  Outcome o;
  o.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  o.out = slurp(dir.path() / "out");
  o.err = slurp(dir.path() / "err");
  return o;
}

std::string scenario_path(const std::string& name) {
  return std::string(SOURCE_DIR) + "/scenarios/" + name;
}

// Every line of a history follows harness/history/FORMAT.md.
void expect_valid_history(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  int64_t expected_index = 0, last_time = 0;
  std::map<std::string, std::string> in_flight;  // process → f of its open invoke
  const std::set<std::string> types = {"invoke", "ok", "fail", "info"};
  while (std::getline(in, line)) {
    SCOPED_TRACE(line);
    json e = json::parse(line);
    ASSERT_EQ(e["index"].get<int64_t>(), expected_index++);
    ASSERT_GE(e["time_ns"].get<int64_t>(), last_time);
    last_time = e["time_ns"].get<int64_t>();
    ASSERT_TRUE(e["process"].is_string());
    ASSERT_TRUE(types.count(e["type"].get<std::string>()));
    ASSERT_TRUE(e["f"].is_string());
    std::string process = e["process"], type = e["type"], f = e["f"];
    if (process == "nemesis") continue;
    ASSERT_TRUE(e["client_time_ns"].is_number_integer());
    ASSERT_TRUE(e["lock"].is_string());
    if (type == "invoke") {
      ASSERT_FALSE(in_flight.count(process)) << "two operations in flight";
      in_flight[process] = f;
    } else if (f != "lost" && f != "renewed") {
      ASSERT_EQ(in_flight[process], f) << "completion without its invoke";
      in_flight.erase(process);
      if (f == "acquire" && type == "ok") {
        ASSERT_TRUE(e["owner"].is_string());
      }
    }
  }
  EXPECT_GT(expected_index, 10) << "a history with almost nothing in it";
}

TEST(Cli, SmokeScenarioRunsSafeAndWritesValidHistory) {
  TempDir out("locklab-smoke");
  Outcome o =
      locklab("run " + scenario_path("smoke.json") + " -a set-nx-px --out " + out.path().string());
  ASSERT_EQ(o.status, 0) << o.err;
  json results = json::parse(slurp(out.path() / "results.json"));
  ASSERT_EQ(results["runs"].size(), 1u);
  const json& run = results["runs"][0];
  EXPECT_EQ(run["algorithm"], "set-nx-px");
  EXPECT_EQ(run["verdict"], "safe");
  EXPECT_EQ(run["expectation_met"], true);
  EXPECT_EQ(run["outcome"], "met");
  EXPECT_EQ(run["exercised"], true) << "a scenario without faults has nothing left unfired";
  EXPECT_NE(o.err.find("set-nx-px: safe — expected safe, met\n"), std::string::npos) << o.err;
  EXPECT_GT(run["stats"]["acquires_ok"].get<int64_t>(), 20);
  EXPECT_GT(run["stats"]["acquires_failed"].get<int64_t>() + 0, -1);
  EXPECT_EQ(run["stats"]["counters"]["smoke-lock"], run["stats"]["writes_accepted"])
      << "every completed critical section incremented the counter exactly once";
  expect_valid_history(out.path() / "set-nx-px" / "history.jsonl");

  Outcome check = locklab("check " + (out.path() / "set-nx-px" / "history.jsonl").string());
  EXPECT_EQ(check.status, 0) << check.err;
  EXPECT_EQ(json::parse(check.out)["verdict"], "safe");
}

// The classes of the mutual-exclusion violations `locklab check` finds in
// `history`, each once, and its whole output.
std::pair<std::set<std::string>, json> overlap_classes_of(const std::filesystem::path& history) {
  Outcome check = locklab("check " + history.string());
  EXPECT_EQ(check.status, 1) << check.err;
  json results = json::parse(check.out);
  std::set<std::string> classes;
  for (const auto& v : results["violations"])
    if (v["kind"] == "mutual-exclusion") classes.insert(v["class"].get<std::string>());
  return {classes, results};
}

TEST(Cli, APauseLongerThanTheLeaseIsAnOverrunThatFencingStops) {
  TempDir out("locklab-overrun");
  Outcome o = locklab("run " + scenario_path("pause-longer-than-lease.json") +
                      " -a set-nx-px -a fenced --out " + out.path().string());
  ASSERT_EQ(o.status, 0) << o.err;
  // Each of c2's holds during c1's pause overlaps c1's one long hold: c1
  // works past a lease that was kept, an overrun, never a broken lease. A
  // grant whose try straddled the end of c1's lease (a slow reply on a busy
  // machine) cannot be told either way and stays unclassified.
  auto [lease_lock, plain] = overlap_classes_of(out.path() / "set-nx-px" / "history.jsonl");
  EXPECT_EQ(lease_lock.count("overrun"), 1u);
  EXPECT_EQ(lease_lock.count("broken-lease"), 0u);
  EXPECT_EQ(plain["harm"]["harmful"], true) << "the store accepted c1's stale write";
  EXPECT_EQ(plain["harm"]["overlaps"]["stopped-by-fencing"], 0);

  auto [fenced_classes, fenced] = overlap_classes_of(out.path() / "fenced" / "history.jsonl");
  EXPECT_EQ(fenced_classes.count("overrun"), 1u);
  EXPECT_EQ(fenced_classes.count("broken-lease"), 0u);
  EXPECT_EQ(fenced["harm"]["harmful"], false) << "fencing rejected c1's late write";
  EXPECT_GE(fenced["harm"]["rejected_by_fencing"].get<int64_t>(), 1);
  const json& overlaps = fenced["harm"]["overlaps"];
  EXPECT_EQ(overlaps["stopped-by-fencing"].get<int64_t>(),
            overlaps["overrun"].get<int64_t>() + overlaps["unclassified"].get<int64_t>())
      << "fencing stopped every overlap";
  const json& first = fenced["violations"][0];
  EXPECT_EQ(first["overlap"]["stopped_by_fencing"], true);
  // c1 was paused for 2.5 s under a 1 s lease: it wrote about 1.5 leases past it.
  EXPECT_GT(first["overlap"]["past_leases"].get<double>(), 1.2);
  EXPECT_LT(first["overlap"]["past_leases"].get<double>(), 2.0);

  // The run's results.json carries the same.
  json results = json::parse(slurp(out.path() / "results.json"));
  EXPECT_EQ(results["runs"][1]["check"]["harm"], fenced["harm"]);
}

TEST(Cli, AServerClockJumpBreaksTheLease) {
  TempDir out("locklab-broken-lease");
  Outcome o = locklab("run " + scenario_path("server-clock-jump.json") + " -a set-nx-px --out " +
                      out.path().string());
  ASSERT_EQ(o.status, 0) << o.err;
  auto [classes, results] = overlap_classes_of(out.path() / "set-nx-px" / "history.jsonl");
  EXPECT_EQ(classes, std::set<std::string>{"broken-lease"});
  // The key expired at once: c2 was granted with most of c1's 1.5 s lease left.
  EXPECT_GT(results["violations"][0]["overlap"]["inside_lease_ms"].get<double>(), 500);
  EXPECT_EQ(results["harm"]["harmful"], true);
}

TEST(Cli, BadInputIsOneLineAndExitTwo) {
  TempDir dir("locklab-bad");
  std::ofstream(dir.path() / "malformed.json") << "{\"name\": \"x\",\n  \"clients\": 4,,\n}";
  std::ofstream(dir.path() / "history.jsonl") << "{\"index\": 0}\nnot json\n";
  struct Case {
    std::string args, must_contain;
  } cases[] = {
      {"run " + (dir.path() / "missing.json").string(), "missing.json"},
      {"run " + (dir.path() / "malformed.json").string(), "line 2"},
      {"run " + scenario_path("smoke.json") + " --algorithm no-such-lock", "no-such-lock"},
      {"check " + (dir.path() / "nothing.jsonl").string(), "nothing.jsonl"},
      {"check " + (dir.path() / "history.jsonl").string(), "history.jsonl:1"},
      {"frobnicate", ""},
      {"", ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args);
    Outcome o = locklab(c.args);
    EXPECT_EQ(o.status, 2) << o.err;
    EXPECT_NE(o.err.find(c.must_contain), std::string::npos) << o.err;
    if (c.args.rfind("run", 0) == 0 || c.args.rfind("check", 0) == 0) {
      EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
    }
  }
}

TEST(Cli, EveryCommandHasHelp) {
  for (std::string command : {"", "run ", "check ", "list ", "report ", "explore ", "merge "}) {
    Outcome o = locklab(command + "--help");
    EXPECT_EQ(o.status, 0) << command;
    EXPECT_NE(o.out.find("Usage"), std::string::npos) << command << o.out;
  }
}

// `locklab report DIR` writes a run's or a suite's report from the files alone.
TEST(Cli, ReportRegeneratesARunOrASuiteReportFromItsFiles) {
  TempDir suite("locklab-report");
  const auto run = suite.path() / "pause";
  std::filesystem::create_directories(run / "set-nx-px");
  std::ofstream(run / "set-nx-px" / "history.jsonl")
      << R"({"index":0,"time_ns":0,"process":"c1","type":"invoke","f":"acquire","lock":"L"})"
      << "\n"
      << R"({"index":1,"time_ns":5,"process":"c1","type":"ok","f":"acquire","lock":"L"})"
      << "\n";
  std::ofstream(run / "results.json")
      << R"({"scenario":"pause","runs":[{"algorithm":"set-nx-px","history":"set-nx-px/history.jsonl"}]})";

  Outcome o = locklab("report " + run.string());
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.err, "report: " + (run / "report.html").string() + "\n");
  EXPECT_NE(slurp(run / "report.html").find("<h1>pause</h1>"), std::string::npos);

  o = locklab("report " + suite.path().string());  // no results.json: a suite of its subdirectories
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.err, "report: " + (suite.path() / "index.html").string() + "\n");
  EXPECT_NE(slurp(suite.path() / "index.html").find("href=\"pause/report.html\""),
            std::string::npos);
}

TEST(Cli, ReportOfABadDirectoryIsOneLineAndExitTwo) {
  TempDir dir("locklab-report-bad");
  std::filesystem::create_directories(dir.path() / "garbled");
  std::ofstream(dir.path() / "garbled" / "results.json") << "{\"runs\": [";
  std::filesystem::create_directories(dir.path() / "other");
  std::ofstream(dir.path() / "other" / "results.json") << "{\"what\": 1}";
  std::filesystem::create_directories(dir.path() / "empty");
  struct Case {
    std::string dir, must_contain;
  } cases[] = {
      {(dir.path() / "missing").string(), "missing: no such directory"},
      {(dir.path() / "garbled").string(), "garbled/results.json: not valid JSON"},
      {(dir.path() / "other").string(), "neither a run's results"},
      {(dir.path() / "empty").string(), "empty: no results.json here or in a subdirectory"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.dir);
    Outcome o = locklab("report " + c.dir);
    EXPECT_EQ(o.status, 2) << o.err;
    EXPECT_NE(o.err.find(c.must_contain), std::string::npos) << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  }
  Outcome o = locklab("report");
  EXPECT_EQ(o.status, 2);
}

TEST(Cli, ListNamesEveryAlgorithm) {
  Outcome o = locklab("list");
  ASSERT_EQ(o.status, 0);
  EXPECT_NE(o.out.find("set-nx-px"), std::string::npos);
}

}  // namespace
}  // namespace locklab

namespace locklab {
namespace {

TEST(Cli, TheExampleAdapterRunsAScenarioInPlaceOfTheBuiltInLocks) {
  TempDir out("locklab-adapter");
  Outcome o = locklab("run " + scenario_path("smoke.json") + " --out " + out.path().string() +
                      " --adapter '/usr/bin/python3 " + SOURCE_DIR +
                      "/examples/adapters/redis_py_lock.py'");
  ASSERT_EQ(o.status, 0) << o.err;
  json results = json::parse(slurp(out.path() / "results.json"));
  ASSERT_EQ(results["runs"].size(), 1u);
  EXPECT_EQ(results["runs"][0]["algorithm"], "redis-py-lock");
  EXPECT_EQ(results["runs"][0]["verdict"], "safe");
  EXPECT_GT(results["runs"][0]["stats"]["acquires_ok"].get<int64_t>(), 10);
  expect_valid_history(out.path() / "redis-py-lock" / "history.jsonl");
}

TEST(Cli, AnAdapterFollowsAFailoverAndIsHeldToTheAlgorithmItIsLike) {
  // Given its address once, the adapter still reaches the promoted replica:
  // story 8 then breaks redis-py's lock as it breaks set-nx-px.
  TempDir out("locklab-adapter-failover");
  Outcome o = locklab("run " + scenario_path("failover-before-replication.json") + " --out " +
                      out.path().string() + " --like set-nx-px --adapter '/usr/bin/python3 " +
                      SOURCE_DIR + "/examples/adapters/redis_py_lock.py'");
  ASSERT_EQ(o.status, 0) << o.err;
  json results = json::parse(slurp(out.path() / "results.json"));
  const json& run = results["runs"][0];
  EXPECT_EQ(run["like"], "set-nx-px");
  EXPECT_EQ(run["expected"]["verdict"], "violated");
  EXPECT_EQ(run["outcome"], "met") << "it broke as set-nx-px does";
  EXPECT_GE(run["check"]["counts"].value("mutual-exclusion", 0), 1) << run["check"];
}

TEST(Cli, AnAdapterThatPrintsGarbageIsAClearErrorNotAHang) {
  TempDir dir("locklab-garbage");
  auto script = dir.path() / "garbage.sh";
  std::ofstream(script) << "#!/bin/sh\necho 'this is not json'\nsleep 60\n";
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  Outcome o = locklab("run " + scenario_path("smoke.json") + " --out " +
                      (dir.path() / "out").string() + " --adapter " + script.string());
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_NE(o.err.find("not json"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace locklab
