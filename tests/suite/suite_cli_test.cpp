// End to end: `locklab suite`, `locklab sweep` and `locklab envelope` as CI
// and users run them,
// over tiny scenarios against real redis-server processes.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "suite_test_support.h"
#include "temp_dir.h"

namespace locklab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using suite_test::Outcome;
using suite_test::parse_junit;
using suite_test::read_json;
using suite_test::slurp;

Outcome locklab(const std::string& args) {
  return suite_test::run_command(std::string(LOCKLAB_PATH) + " " + args);
}

// No faults, about a second: set-nx-px stays safe.
json calm_scenario(const std::string& expected = "safe") {
  return {{"name", "calm"},
          {"clients", 3},
          {"workload",
           {{"locks", {"L"}}, {"ttl_ms", 2000}, {"wait_ms", 500}, {"work_ms", 2}, {"think_ms", 2}}},
          {"duration_ms", 1000},
          {"seed", 5},
          {"algorithms", {"set-nx-px"}},
          {"expect", {{"default", {{"verdict", expected}}}}}};
}

// Story 5 in small: c1 is paused right before writing for longer than the
// lease, so another client takes the lock while c1 still believes it holds it.
json pause_scenario(int64_t ttl_ms = 500, int64_t pause_ms = 1000, int64_t duration_ms = 2500) {
  return {
      {"name", "pause"},
      {"clients", 2},
      {"workload",
       {{"locks", {"L"}}, {"ttl_ms", ttl_ms}, {"wait_ms", 3000}, {"work_ms", 5}, {"think_ms", 5}}},
      {"duration_ms", duration_ms},
      {"seed", 8},
      {"algorithms", {"set-nx-px"}},
      {"faults",
       {{{"kind", "pause"},
         {"when", {{"client", "c1"}, {"step", "before-write"}}},
         {"duration_ms", pause_ms}}}},
      {"expect", {{"default", {{"verdict", "violated"}, {"kinds", {"mutual-exclusion"}}}}}}};
}

void write_json(const fs::path& path, const json& document) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << document.dump(2);
}

struct SuiteCli : ::testing::Test {
  TempDir dir{"suite-cli"};
  fs::path suite = dir.path() / "scenarios";
  fs::path out = dir.path() / "out";
  fs::path junit = dir.path() / "junit.xml";
  std::string paths() {
    return suite.string() + " --out " + out.string() + " --junit " + junit.string();
  }
};

TEST_F(SuiteCli, MetExpectationsExitZeroWithResultsJunitAndReport) {
  write_json(suite / "calm.json", calm_scenario());
  write_json(suite / "pause.json", pause_scenario());
  write_json(suite / "schema.json", {{"not", "a scenario"}});
  // On real time, so that a cell takes its story's duration (the JUnit time below).
  Outcome o = locklab("suite " + paths() + " --jobs 2 --time real");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("] pause × set-nx-px: violated (expected violated) ok "), std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("] calm × set-nx-px: safe (expected safe) ok "), std::string::npos) << o.err;

  json results = read_json(out / "results.json");
  EXPECT_EQ(results["suite"], "scenarios");
  EXPECT_EQ(results["exit_status"], 0);
  EXPECT_EQ(results["invocation"]["command_line"][1], "suite");
  EXPECT_FALSE(results["locklab_version"].get<std::string>().empty());
  ASSERT_EQ(results["cells"].size(), 2u);
  const json& calm = results["cells"][0];
  EXPECT_EQ(calm["scenario"], "calm") << "directory order is by file name";
  EXPECT_EQ(calm["met"], true);
  EXPECT_EQ(calm["detections"], 0);
  EXPECT_EQ(calm["seeds"], json({5}));
  const json& pause = results["cells"][1];
  EXPECT_EQ(pause["met"], true);
  EXPECT_EQ(pause["detections"], 1);
  EXPECT_EQ(pause["detection_rate"], 1.0);
  EXPECT_GE(pause["kinds"].value("mutual-exclusion", 0), 1);
  EXPECT_EQ(results["totals"]["cells_met"], 2);
  EXPECT_EQ(results["options"]["time"], "real");

  json pause_run = read_json(out / "pause" / "results.json");
  ASSERT_EQ(pause_run["runs"].size(), 1u);
  EXPECT_EQ(pause_run["runs"][0]["verdict"], "violated");
  EXPECT_TRUE(fs::exists(out / "pause" / "set-nx-px" / "history.jsonl"));
  EXPECT_TRUE(fs::exists(out / "calm" / "set-nx-px" / "history.jsonl"));
  EXPECT_TRUE(fs::exists(out / "index.html"));
  EXPECT_TRUE(fs::exists(out / "pause" / "report.html"));

  json xml = parse_junit(junit);
  ASSERT_FALSE(xml.is_null());
  EXPECT_EQ(xml["tests"], "2");
  EXPECT_EQ(xml["failures"], "0");
  EXPECT_EQ(xml["errors"], "0");
  ASSERT_EQ(xml["suites"].size(), 2u);
  EXPECT_EQ(xml["suites"][0]["name"], "calm");
  const json& test = xml["suites"][1]["cases"][0];
  EXPECT_EQ(test["classname"], "pause");
  EXPECT_EQ(test["name"], "set-nx-px");
  EXPECT_GT(std::stod(test["time"].get<std::string>()), 0.5) << "the run's own duration";
  EXPECT_TRUE(test["failure"].is_null());
}

TEST_F(SuiteCli, WrongExpectationExitsOneWithAJunitFailure) {
  write_json(suite / "calm.json", calm_scenario("violated"));
  Outcome o = locklab("suite " + paths());
  EXPECT_EQ(o.status, 1) << o.err;
  EXPECT_NE(o.err.find("calm × set-nx-px: safe (expected violated) NOT MET"), std::string::npos)
      << o.err;
  json results = read_json(out / "results.json");
  EXPECT_EQ(results["totals"]["cells_unmet"], 1);
  EXPECT_EQ(results["cells"][0]["met"], false);
  json xml = parse_junit(junit);
  ASSERT_FALSE(xml.is_null());
  EXPECT_EQ(xml["failures"], "1");
  const json& failure = xml["suites"][0]["cases"][0]["failure"];
  ASSERT_TRUE(failure.is_object());
  EXPECT_EQ(failure["message"], "expected violated, measured safe: no violation found");
  EXPECT_EQ(failure["type"], "unmet-expectation");
}

TEST_F(SuiteCli, ShardTwoOfTwoRunsOnlyItsHalf) {
  write_json(suite / "calm.json", calm_scenario());
  write_json(suite / "pause.json", pause_scenario());
  // Cells: calm run 1, calm run 2, pause run 1, pause run 2; shard 2/2 keeps the odd indices.
  Outcome o = locklab("suite " + paths() + " --runs 2 --shard 2/2 --jobs 2");
  ASSERT_EQ(o.status, 0) << o.err;
  json results = read_json(out / "results.json");
  EXPECT_EQ(results["options"]["shard"], "2/2");
  ASSERT_EQ(results["cells"].size(), 2u);
  for (const auto& cell : results["cells"]) {
    EXPECT_EQ(cell["runs"], 1) << cell;
    const uint64_t base = cell["scenario"] == "calm" ? 5 : 8;
    EXPECT_EQ(cell["seeds"], json({base + 1})) << "run 2 of each scenario";
  }
  EXPECT_TRUE(fs::exists(out / "calm" / "run-2" / "set-nx-px" / "history.jsonl"));
  EXPECT_FALSE(fs::exists(out / "calm" / "run-1"));
  EXPECT_FALSE(fs::exists(out / "pause" / "run-1"));
  json calm = read_json(out / "calm" / "results.json");
  ASSERT_EQ(calm["runs"].size(), 1u);
  EXPECT_EQ(calm["runs"][0]["run"], 2);
  EXPECT_EQ(calm["runs"][0]["history"], "run-2/set-nx-px/history.jsonl");
  json xml = parse_junit(junit);
  ASSERT_FALSE(xml.is_null());
  EXPECT_EQ(xml["tests"], "2");
}

// What a suite's results.json says about its cells, without what differs
// between any two runs (times, the command line, shard and jobs options,
// and how each overlap was told: whether a waiting client's grant window
// straddled the end of a lease is a matter of milliseconds).
json comparable(json results) {
  for (const char* field : {"started_at", "seconds", "invocation"}) results.erase(field);
  results["options"].erase("shard");
  results["options"].erase("jobs");
  for (auto& cell : results["cells"]) {
    for (const char* field : {"seconds", "timing"}) cell.erase(field);
    if (cell.contains("harm")) cell["harm"].erase("overlaps");
  }
  return results;
}

TEST_F(SuiteCli, MergedShardsAreWhatOneUnshardedRunWrites) {
  write_json(suite / "calm.json", calm_scenario());
  write_json(suite / "pause.json", pause_scenario());
  json third = calm_scenario();
  third["name"] = "also-calm";
  third["algorithms"] = {"set-nx-px", "fenced"};
  write_json(suite / "also-calm.json", third);
  // 3 scenarios × their algorithms × 2 runs = 8 cells over 3 shards.
  const std::string common = suite.string() + " --runs 2 --jobs 2";
  Outcome whole = locklab("suite " + common + " --out " + (dir.path() / "whole").string() +
                          " --junit " + (dir.path() / "whole.xml").string());
  ASSERT_EQ(whole.status, 0) << whole.err;
  std::string shards;
  for (int i = 1; i <= 3; ++i) {
    const std::string shard_dir = (dir.path() / ("shard-" + std::to_string(i))).string();
    Outcome o =
        locklab("suite " + common + " --shard " + std::to_string(i) + "/3 --out " + shard_dir);
    ASSERT_EQ(o.status, 0) << o.err;
    shards += " " + shard_dir;
  }
  Outcome merged = locklab("merge" + shards + " --out " + (dir.path() / "merged").string() +
                           " --junit " + (dir.path() / "merged.xml").string());
  ASSERT_EQ(merged.status, 0) << merged.err;

  const json a = read_json(dir.path() / "whole" / "results.json");
  const json b = read_json(dir.path() / "merged" / "results.json");
  EXPECT_EQ(b["options"]["shard"], "1/1");
  EXPECT_EQ(b["options"]["time"], "auto") << "the suite's default clock, as the shards kept it";
  EXPECT_EQ(comparable(a), comparable(b));
  EXPECT_EQ(b["locks"].size(), 2u) << "set-nx-px and fenced, as the whole run compared them";
  EXPECT_NE(b["redis_version"], "") << "the Redis version the shards ran";
  // Every scenario directory: the same runs, histories where they say.
  for (const char* scenario : {"calm", "pause", "also-calm"}) {
    json runs_a = read_json(dir.path() / "whole" / scenario / "results.json")["runs"];
    json runs_b = read_json(dir.path() / "merged" / scenario / "results.json")["runs"];
    ASSERT_EQ(runs_a.size(), runs_b.size()) << scenario;
    for (size_t i = 0; i < runs_a.size(); ++i) {
      for (const char* field : {"algorithm", "seed", "run", "verdict", "outcome", "history"})
        EXPECT_EQ(runs_a[i][field], runs_b[i][field]) << scenario << " run " << i << " " << field;
      EXPECT_TRUE(
          fs::exists(dir.path() / "merged" / scenario / runs_b[i]["history"].get<std::string>()))
          << runs_b[i]["history"];
    }
  }
  EXPECT_TRUE(fs::exists(dir.path() / "merged" / "index.html"));
  EXPECT_TRUE(fs::exists(dir.path() / "merged" / "pause" / "report.html"));
  json xml_a = parse_junit(dir.path() / "whole.xml"),
       xml_b = parse_junit(dir.path() / "merged.xml");
  ASSERT_FALSE(xml_b.is_null());
  EXPECT_EQ(xml_a["tests"], xml_b["tests"]);
  EXPECT_EQ(xml_a["suites"].size(), xml_b["suites"].size());

  // Shards that are not the whole of one run are refused, in one line.
  Outcome missing =
      locklab("merge " + (dir.path() / "shard-1").string() + " " +
              (dir.path() / "shard-3").string() + " --out " + (dir.path() / "bad").string());
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("shard 2/3 is missing"), std::string::npos) << missing.err;
  Outcome twice =
      locklab("merge " + (dir.path() / "shard-1").string() + " " +
              (dir.path() / "shard-1").string() + " --out " + (dir.path() / "bad").string());
  EXPECT_NE(twice.err.find("given twice"), std::string::npos) << twice.err;
  Outcome not_suite =
      locklab("merge " + suite.string() + " --out " + (dir.path() / "bad").string());
  EXPECT_EQ(not_suite.status, 2);
  EXPECT_NE(not_suite.err.find("results.json"), std::string::npos) << not_suite.err;
}

TEST_F(SuiteCli, BadScenarioFileExitsTwoNamingItBeforeAnythingRuns) {
  write_json(suite / "calm.json", calm_scenario());
  std::ofstream(suite / "broken.json") << "{\"name\": \"broken\",\n  \"clients\": 3,,\n}";
  Outcome o = locklab("suite " + paths());
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_NE(o.err.find("broken.json"), std::string::npos) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  EXPECT_FALSE(fs::exists(out)) << "nothing ran";
  EXPECT_FALSE(fs::exists(junit));
}

TEST_F(SuiteCli, UsageErrorsExitTwoWithOneClearLine) {
  write_json(suite / "calm.json", calm_scenario());
  write_json(suite / "pause.json", pause_scenario());
  const std::string pause = (suite / "pause.json").string();
  const std::string sweep = "sweep " + pause + " --out " + out.string();
  struct Case {
    std::string args, must_say;
  } cases[] = {
      {"suite " + paths() + " --shard 3/2", "--shard"},
      {"suite " + paths() + " --shard 0/2", "--shard"},
      {"suite " + paths() + " --shard half", "--shard"},
      {"suite " + paths() + " --algorithm no-such-lock", "no-such-lock"},
      {"suite " + paths() + " --algorithm redlock", "--algorithm"},
      {"suite " + (dir.path() / "missing").string(), "missing"},
      {sweep + " --fault 1 --param duration_ms --from 0 --to 100", "--fault: 1 is out of range"},
      {sweep + " --fault 0 --param delta_ms --from 0 --to 100", "no delta_ms"},
      {sweep + " --fault 0 --param duration_ms --from 100 --to 100", "--from must be below --to"},
      {sweep + " --fault 0 --param duration_ms --from 0 --to 100 --kind nonsense", "nonsense"},
      {"sweep " + (suite / "calm.json").string() + " --fault 0 --param duration_ms --from 0 --to 9",
       "no faults"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args);
    Outcome o = locklab(c.args);
    EXPECT_EQ(o.status, 2) << o.err;
    EXPECT_NE(o.err.find(c.must_say), std::string::npos) << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  }
  EXPECT_FALSE(fs::exists(out)) << "nothing ran";
}

TEST_F(SuiteCli, TheExampleAdapterRunsTheSuiteInPlaceOfTheBuiltInLocks) {
  write_json(suite / "calm.json", calm_scenario());
  json pause = pause_scenario();
  // Held to set-nx-px's expectation, not to the default one.
  pause["expect"] = {{"default", {{"verdict", "safe"}}},
                     {"set-nx-px", {{"verdict", "violated"}, {"kinds", {"mutual-exclusion"}}}}};
  write_json(suite / "pause.json", pause);
  json fenced_only = calm_scenario();
  fenced_only["name"] = "fenced-only";
  fenced_only["algorithms"] = {"fenced"};
  write_json(suite / "fenced-only.json", fenced_only);
  const std::string adapter =
      std::string(" --adapter '/usr/bin/python3 ") + EXAMPLE_ADAPTERS_DIR "/redis_py_lock.py'";
  Outcome o = locklab("suite " + paths() + adapter + " --like set-nx-px");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.err.find("fenced-only"), std::string::npos) << "it does not run fenced: " << o.err;
  EXPECT_NE(o.err.find("] pause × redis-py-lock: violated (expected violated) ok "),
            std::string::npos)
      << o.err;
  json results = read_json(out / "results.json");
  ASSERT_EQ(results["cells"].size(), 2u);
  for (const auto& cell : results["cells"]) {
    EXPECT_EQ(cell["algorithm"], "redis-py-lock") << "named by the adapter's hello";
    EXPECT_EQ(cell["met"], true) << cell;
  }
  json pause_run = read_json(out / "pause" / "results.json");
  ASSERT_EQ(pause_run["runs"].size(), 1u);
  EXPECT_NE(pause_run["runs"][0]["adapter"].get<std::string>().find("redis_py_lock.py"),
            std::string::npos);
  EXPECT_GE(pause_run["runs"][0]["check"]["counts"].value("mutual-exclusion", 0), 1)
      << "redis-py's lock breaks under a pause longer than its lease, measured";
  EXPECT_EQ(pause_run["runs"][0]["like"], "set-nx-px");
  EXPECT_TRUE(fs::exists(out / "calm" / "redis-py-lock" / "history.jsonl"));
  json xml = parse_junit(junit);
  ASSERT_FALSE(xml.is_null());
  EXPECT_EQ(xml["tests"], "2");
  EXPECT_EQ(xml["suites"][0]["cases"][0]["name"], "redis-py-lock");

  // A broken adapter is one line before anything runs, and --algorithm does not mix with it.
  fs::remove_all(out);
  Outcome broken = locklab("suite " + paths() + " --adapter /nonexistent/adapter");
  EXPECT_EQ(broken.status, 2) << broken.err;
  EXPECT_NE(broken.err.find("/nonexistent/adapter"), std::string::npos) << broken.err;
  EXPECT_EQ(std::count(broken.err.begin(), broken.err.end(), '\n'), 1) << broken.err;
  EXPECT_FALSE(fs::exists(out / "results.json"));
  Outcome mixed = locklab("suite " + paths() + adapter + " --algorithm set-nx-px");
  EXPECT_EQ(mixed.status, 2) << mixed.err;
  EXPECT_NE(mixed.err.find("--algorithm"), std::string::npos) << mixed.err;
  Outcome unknown = locklab("suite " + paths() + adapter + " --like no-such-lock");
  EXPECT_EQ(unknown.status, 2) << unknown.err;
  EXPECT_NE(unknown.err.find("--like: unknown algorithm 'no-such-lock'"), std::string::npos)
      << unknown.err;
  Outcome alone = locklab("suite " + paths() + " --like set-nx-px");
  EXPECT_EQ(alone.status, 2) << alone.err;
  EXPECT_NE(alone.err.find("--adapter"), std::string::npos) << alone.err;
}

// A libraries file adds columns beside the built-in locks; a story may hold
// a library to an expectation of its own, by the name its adapter answers.
TEST_F(SuiteCli, LibrariesAreColumnsBesideTheBuiltInsWithTheirOwnExpectations) {
  json pause = pause_scenario();
  pause["libraries"] = {
      {"redis-py-lock", {{"verdict", "safe"}, {"why", "wrong on purpose: the lease still ends"}}}};
  write_json(suite / "pause.json", pause);
  const fs::path libraries = dir.path() / "libraries.json";
  write_json(libraries, {{"libraries",
                          {{{"adapter", std::string("/usr/bin/python3 ") + EXAMPLE_ADAPTERS_DIR +
                                            "/redis_py_lock.py"},
                            {"like", "set-nx-px"}}}}});
  Outcome o = locklab("suite " + paths() + " --libraries " + libraries.string());
  EXPECT_EQ(o.status, 1) << "the library is held to its own (wrong) expectation: " << o.err;
  EXPECT_NE(o.err.find("] pause × set-nx-px: violated (expected violated) ok "), std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("] pause × redis-py-lock: violated (expected safe)"), std::string::npos)
      << o.err;
  json results = read_json(out / "results.json");
  ASSERT_EQ(results["locks"].size(), 2u);
  EXPECT_EQ(results["locks"][1]["name"], "redis-py-lock");
  EXPECT_EQ(results["locks"][1]["family"], "library");
  EXPECT_EQ(results["locks"][1]["like"], "set-nx-px");
  EXPECT_NE(results["locks"][1]["version"].get<std::string>().find("redis-py "), std::string::npos)
      << results["locks"][1];

  // A story naming a library the file does not list is one line, before anything runs.
  pause["libraries"] = {{"redis-py-lok", {{"verdict", "safe"}}}};
  write_json(suite / "pause.json", pause);
  fs::remove_all(out);
  Outcome misspelt = locklab("suite " + paths() + " --libraries " + libraries.string());
  EXPECT_EQ(misspelt.status, 2) << misspelt.err;
  EXPECT_NE(misspelt.err.find("field 'libraries.redis-py-lok' names no library of"),
            std::string::npos)
      << misspelt.err;
  EXPECT_EQ(std::count(misspelt.err.begin(), misspelt.err.end(), '\n'), 1) << misspelt.err;
  EXPECT_FALSE(fs::exists(out / "results.json"));
}

// A library whose adapter says hello and then answers garbage is one cell
// error with one line naming the library; the other locks' cells are still
// measured and written, and the comparison does not stall.
TEST_F(SuiteCli, ALibraryThatAnswersGarbageIsOneCellErrorNotAStalledComparison) {
  write_json(suite / "pause.json", pause_scenario());
  const fs::path broken = dir.path() / "broken.py";
  std::ofstream(broken) << "import json, sys\n"
                           "for line in sys.stdin:\n"
                           "    request = json.loads(line)\n"
                           "    if request['op'] == 'hello':\n"
                           "        print(json.dumps({'id': request['id'], 'ok': True,\n"
                           "                          'name': 'garbage-lock'}), flush=True)\n"
                           "    else:\n"
                           "        print('this is not JSON', flush=True)\n";
  const fs::path libraries = dir.path() / "libraries.json";
  write_json(libraries,
             {{"libraries",
               {{{"adapter", "/usr/bin/python3 " + broken.string()}, {"like", "set-nx-px"}}}}});
  Outcome o = locklab("suite " + paths() + " --libraries " + libraries.string());
  EXPECT_EQ(o.status, 2) << "a run failed: " << o.err;
  EXPECT_NE(o.err.find("] pause × set-nx-px: violated (expected violated) ok "), std::string::npos)
      << "the built-in's cell is still measured: " << o.err;
  const size_t line = o.err.find("] pause × garbage-lock: ");
  ASSERT_NE(line, std::string::npos) << o.err;
  const std::string cell = o.err.substr(line, o.err.find('\n', line) - line);
  EXPECT_NE(cell.find("this is not JSON"), std::string::npos) << "the garbage is quoted: " << cell;
  json results = read_json(out / "results.json");
  bool errored = false;
  for (const auto& c : results["cells"])
    if (c["algorithm"] == "garbage-lock") errored = c["outcome"] == "error";
  EXPECT_TRUE(errored) << results["cells"];
}

TEST_F(SuiteCli, SuiteAndSweepHaveHelp) {
  for (const char* command : {"suite --help", "sweep --help", "envelope --help"}) {
    Outcome o = locklab(command);
    EXPECT_EQ(o.status, 0) << command;
    EXPECT_NE(o.out.find("Usage"), std::string::npos) << o.out;
  }
}

TEST_F(SuiteCli, SweepFindsTheBreakingPauseNearTheTtl) {
  const int64_t ttl = 500;
  write_json(suite / "pause.json", pause_scenario(ttl, 0, 2300));
  Outcome o = locklab("sweep " + (suite / "pause.json").string() +
                      " --fault 0 --param duration_ms --from 0 --to 1500 --precision 100 --runs 1"
                      " --algorithm set-nx-px --out " +
                      out.string());
  ASSERT_EQ(o.status, 0) << o.err;
  json sweep = read_json(out / "sweep.json");
  ASSERT_EQ(sweep["algorithms"].size(), 1u);
  const json& result = sweep["algorithms"][0];
  ASSERT_EQ(result["outcome"], "breaks") << result.dump(2);
  const double breaking = result["breaking_value"].get<double>();
  EXPECT_GE(breaking, ttl / 2.0) << result.dump(2);
  EXPECT_LE(breaking, 2.0 * ttl) << result.dump(2);
  EXPECT_LE(breaking - result["last_safe_value"].get<double>(), 100);
  EXPECT_NE(std::find(result["kinds_at_break"].begin(), result["kinds_at_break"].end(),
                      "mutual-exclusion"),
            result["kinds_at_break"].end())
      << result.dump(2);
  EXPECT_NE(o.out.find("set-nx-px (ttl 500 ms): breaks at duration_ms ≥ "), std::string::npos)
      << o.out;
  // Every probed run left its history where sweep.json says.
  for (const auto& probe : result["probes"])
    for (const auto& run : probe["details"])
      EXPECT_TRUE(fs::exists(out / run["history"].get<std::string>())) << run;
  // And the sweep charts itself.
  std::ifstream index(out / "index.html");
  std::stringstream html;
  html << index.rdbuf();
  EXPECT_NE(html.str().find("<svg class=\"plot sweep\""), std::string::npos);
  EXPECT_NE(o.err.find("report: "), std::string::npos) << o.err;
}

// The envelope of two real locks on two axes: each bound where its design
// puts it (set-nx-px: half a lease of pause; redisson-hash: a partition of a
// third of a lease, its watchdog's first renewal), every run's history kept,
// the charts written.
TEST_F(SuiteCli, EnvelopeMeasuresTheBoundsTheDesignsPredict) {
  Outcome o = locklab(
      "envelope -a set-nx-px -a redisson-hash --axis pause --axis partition --repeats 1 -j 2 "
      "--out " +
      out.string());
  ASSERT_EQ(o.status, 0) << o.out << o.err;
  const json envelope = read_json(out / "envelope.json");
  ASSERT_EQ(envelope["cells"].size(), 4u);
  std::map<std::string, json> cell;
  for (const auto& c : envelope["cells"])
    cell[c["lock"].get<std::string>() + " " + c["axis"].get<std::string>()] = c;
  const json& pause = cell["set-nx-px pause"];
  ASSERT_EQ(pause["outcome"], "breaks") << pause.dump(2);
  // The design's 0.5, plus how late c2 notices (5-25 ms retries) and how
  // late a loaded machine runs it.
  EXPECT_GE(pause["median"].get<double>(), 0.44) << pause.dump(2);
  EXPECT_LE(pause["median"].get<double>(), 0.66) << pause.dump(2);
  EXPECT_EQ(pause["prediction"]["bound"], 0.5);
  EXPECT_EQ(pause["harm"]["median"], pause["median"]) << "the late write lands: harm is overlap";
  // 1.5 leases of work outlive the lease, so the holds overlap with no
  // fault at all; c1's own check of its lease stops its late write at any
  // partition, so the store is never harmed.
  const json& partition = cell["set-nx-px partition"];
  EXPECT_EQ(partition["outcome"], "breaks-without-fault");
  EXPECT_EQ(partition["harm"]["outcome"], "never-breaks") << partition.dump(2);
  const json& renewal = cell["redisson-hash partition"];
  ASSERT_EQ(renewal["outcome"], "breaks") << renewal.dump(2);
  EXPECT_GE(renewal["median"].get<double>(), 0.28) << renewal.dump(2);
  EXPECT_LE(renewal["median"].get<double>(), 0.5) << renewal.dump(2);
  for (const auto& c : envelope["cells"])
    for (const auto& probe : c["probes"])
      for (const auto& run : probe["details"])
        EXPECT_TRUE(fs::exists(out / run["history"].get<std::string>())) << run;
  EXPECT_NE(o.out.find("set-nx-px pause: breaks at "), std::string::npos) << o.out;
  EXPECT_NE(slurp(out / "index.html").find("data-axis=\"partition\""), std::string::npos);
}

// A library's envelope through its adapter: held to the bound its `like`
// predicts, with its own retry interval allowed for; a library the story
// cannot be told to is not-applicable with its reason, and nothing runs; an
// unknown axis in envelope_gaps is one line naming the field.
TEST_F(SuiteCli, EnvelopeOfALibraryIsHeldToItsLikeWithItsRetryAllowedFor) {
  const std::string adapter =
      std::string("/usr/bin/python3 ") + EXAMPLE_ADAPTERS_DIR + "/redis_py_lock.py";
  const fs::path libraries = dir.path() / "libraries.json";
  write_json(libraries,
             {{"libraries", {{{"adapter", adapter}, {"like", "set-nx-px"}, {"retry_ms", 100}}}}});
  Outcome o = locklab("envelope --libraries " + libraries.string() +
                      " -a redis-py-lock --axis pause --repeats 1 --out " + out.string());
  ASSERT_EQ(o.status, 0) << o.out << o.err;
  json envelope = read_json(out / "envelope.json");
  ASSERT_EQ(envelope["cells"].size(), 1u);
  const json& cell = envelope["cells"][0];
  EXPECT_EQ(cell["lock"], "redis-py-lock");
  ASSERT_EQ(cell["outcome"], "breaks") << cell.dump(2);
  EXPECT_EQ(cell["prediction"]["from"], "like set-nx-px");
  EXPECT_DOUBLE_EQ(cell["tolerance"].get<double>(), 105.0 / 500) << "its 100 ms sleep, allowed for";
  EXPECT_GE(cell["median"].get<double>(), 0.44) << cell.dump(2);
  EXPECT_LE(cell["median"].get<double>(), 0.8) << cell.dump(2);
  EXPECT_NE(envelope["locks"][0]["version"].get<std::string>().find("redis-py"), std::string::npos);

  write_json(libraries, {{"libraries",
                          {{{"adapter", adapter},
                            {"like", "set-nx-px"},
                            {"envelope_not_applicable", "it cannot hold a 500 ms lease"}}}}});
  fs::remove_all(out);
  o = locklab("envelope --libraries " + libraries.string() + " -a redis-py-lock --out " +
              out.string());
  ASSERT_EQ(o.status, 0) << o.err;
  envelope = read_json(out / "envelope.json");
  ASSERT_EQ(envelope["cells"].size(), 6u);
  for (const auto& c : envelope["cells"]) {
    EXPECT_EQ(c["outcome"], "not-applicable") << c;
    EXPECT_EQ(c["error"], "it cannot hold a 500 ms lease") << c;
    EXPECT_EQ(c["runs"], 0) << c;
  }

  write_json(libraries, {{"libraries",
                          {{{"adapter", adapter},
                            {"like", "set-nx-px"},
                            {"envelope_gaps", {{"sideways", "why"}}}}}}});
  o = locklab("envelope --libraries " + libraries.string() + " --out " + out.string());
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_NE(o.err.find("envelope_gaps.sideways: unknown axis"), std::string::npos) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
}

TEST_F(SuiteCli, EnvelopeBadInputIsOneLineAndExitTwo) {
  for (const char* args : {"envelope --axis sideways", "envelope -a nope --axis pause",
                           "envelope --libraries /nonexistent/libraries.json"}) {
    Outcome o = locklab(std::string(args) + " --out " + out.string());
    EXPECT_EQ(o.status, 2) << args << ": " << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << args << ": " << o.err;
    EXPECT_FALSE(fs::exists(out / "envelope.json")) << args;
  }
  EXPECT_NE(locklab("envelope --axis sideways").err.find("--axis"), std::string::npos);
}

}  // namespace
}  // namespace locklab
