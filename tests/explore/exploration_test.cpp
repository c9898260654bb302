// explore.json as one typed document (exploration.h): written and read back
// equal, byte for byte; a field of the wrong type is one line naming it; and
// run_explore / merge_explorations (with a fake cell runner, no servers)
// return what they write.
#include "exploration.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "explore.h"
#include "temp_dir.h"

namespace locklab::explore {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const fs::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
}

// A document with every field set, both ways where a field may be absent.
Exploration every_field() {
  Exploration doc;
  doc.explore = "redis-py-lock";
  doc.algorithm = "set-nx-px";
  doc.adapter = "/usr/bin/python3 redis_py_lock.py";
  doc.locklab_version = "0.9.0";
  doc.invocation = {{"argv", {"locklab", "explore"}}, {"cwd", "/tmp"}};
  doc.started_at = "2024-05-01T10:00:00Z";
  doc.seconds = 61.5;
  doc.explore_seconds = 40.0;
  doc.interrupted = true;
  doc.options = {.seed = 18446744073709551557ull,
                 .jobs = 2,
                 .shard = "2/3",
                 .max_runs = 40,
                 .max_seconds = 86400,
                 .kinds = {"mutual-exclusion"},
                 .fault_kinds = {"pause", "clock-jump"},
                 .lock_steps = {"after-send"},
                 .max_faults = 2,
                 .network = "netns",
                 .reproduce = {.needed = 3, .reruns = 5},
                 .confirm_runs = 4};
  doc.runs_total = 2;
  doc.runs_failed = 1;
  doc.runs_per_minute = 3.0;
  doc.shrink_runs = 17;
  doc.violations_by_kind = {{"mutual-exclusion", 1}};
  doc.kinds_seen = {{"mutual-exclusion", 1}, {"stale-write", 2}};
  doc.coverage.fault_kinds = {
      {.kind = "pause",
       .runs = 2,
       .generated = 3,
       .fired = 2,
       .ranges = {{.param = "duration_ms",
                   .unit = "× ttl",
                   .drawn = {0.1, 5.0},
                   .fired = std::pair(0.25, 2.0)}}},
      {.kind = "clock-jump",
       .runs = 1,
       .generated = 1,
       .fired = 0,
       .ranges = {{.param = "delta_ms", .unit = "× ttl", .drawn = {0.1, 5.0}}}}};
  doc.coverage.steps = {{.step = "acquired", .generated = 2, .fired = 1},
                        {.step = "after-send", .generated = 0, .fired = 0}};
  doc.coverage.kinds_never_fired = {"clock-jump"};
  doc.coverage.steps_never_fired = {"after-send"};

  Fault pause{.kind = FaultKind::Pause,
              .when = StepTrigger{.client = "c1", .step = "acquired", .nth = 2},
              .duration_ms = 800};
  Fault jump{.kind = FaultKind::ClockJump, .at_ms = 300, .delta_ms = -450};
  ExploredFault fired = ExploredFault::of(pause);
  fired.fired = true;
  ExploredFault unfired = ExploredFault::of(jump);
  unfired.fired = false;
  doc.found = {{.name = "redis-py-lock-mutual-exclusion-pause",
                .file = "found/redis-py-lock-mutual-exclusion-pause.json",
                .report = "found/redis-py-lock-mutual-exclusion-pause/report.html",
                .kinds = {"mutual-exclusion"},
                .sought = {"mutual-exclusion"},
                .fault_kinds = {"pause"},
                .faults = {ExploredFault::of(pause)},
                .clients = 2,
                .duration_ms = 1200,
                .ttl_ms = 300,
                .from_run = 1,
                .original_faults = 2,
                .same_cause_runs = {3, 7},
                .reproduced = {.runs = 4, .broke = 3},
                .shrink = {.candidates_tried = 9, .runs = 20, .steps_taken = 4, .complete = true}},
               {.name = "never-broke-again",
                .file = "found/never-broke-again.json",
                .reproduced = {.runs = 4, .broke = 0}}};
  doc.not_shrunk = {{.run = 5,
                     .runs = 2,
                     .kinds = {"mutual-exclusion"},
                     .fault_kinds = {"clock-jump", "pause"},
                     .why = "max_found reached"}};
  doc.runs = {{.index = 1,
               .seed = 9876543210123ull,
               .verdict = Verdict::Violated,
               .kinds = {"mutual-exclusion", "stale-write"},
               .seconds = 1.234,
               .exercised = false,
               .faults = {fired, unfired},
               .dir = "runs/run-1"},
              {.index = 4,
               .seed = 77,
               .verdict = Verdict::Unknown,
               .seconds = 0.5,
               .error = "redis-server did not start"}};
  doc.error = "no run could be made: redis-server did not start";
  doc.exit_status = 2;
  return doc;
}

TEST(ExploreJson, AWrittenDocumentReadsBackEqualAndWritesTheSameBytes) {
  TempDir dir("exploration-roundtrip");
  const fs::path file = dir.path() / "explore.json";
  const Exploration doc = every_field();
  write_exploration_file(doc, file);
  const std::string text = read_text(file);
  EXPECT_EQ(text, doc.to_json().dump(2) + "\n");
  const Exploration back = read_exploration_file(file);
  EXPECT_EQ(back, doc);
  write_exploration_file(back, file);
  EXPECT_EQ(read_text(file), text);

  // The shape explore.json has always had: a fault's parameters beside its
  // kind and trigger, absent values null where they always were null.
  const json j = json::parse(text);
  EXPECT_EQ(j["runs"][0]["faults"][0],
            json::parse(R"j({"kind": "pause", "trigger": "c1 at step acquired (2nd time)",
                            "when": {"client": "c1", "step": "acquired", "nth": 2},
                            "duration_ms": 800, "fired": true})j"));
  EXPECT_EQ(j["runs"][0]["faults"][1],
            json::parse(R"({"kind": "clock-jump", "trigger": "at 300 ms", "at_ms": 300,
                            "delta_ms": -450, "fired": false})"));
  EXPECT_FALSE(j["found"][0]["faults"][0].contains("fired"));
  EXPECT_TRUE(j["found"][1]["report"].is_null());
  EXPECT_FALSE(j["runs"][1].contains("dir"));
  EXPECT_EQ(j["runs"][0]["verdict"], "violated");
  EXPECT_EQ(j["coverage"]["fault_kinds"][0]["ranges"][0]["fired"], json({0.25, 2.0}));
  EXPECT_FALSE(j["coverage"]["fault_kinds"][1]["ranges"][0].contains("fired"));
}

TEST(ExploreJson, WritesTheBytesExploreJsonHasAlwaysHad) {
  // A small document, and the text the untyped writer gave for it: keys
  // sorted, counts as integers, times and rates as floating point, the
  // unset options null.
  Exploration doc;
  doc.explore = "set-nx-px";
  doc.algorithm = "set-nx-px";
  doc.locklab_version = "1.0";
  doc.invocation = {{"argv", {"locklab"}}};
  doc.started_at = "2024-05-01T10:00:00Z";
  doc.seconds = 12.0;
  doc.explore_seconds = 10.0;
  doc.options = {.seed = 5, .jobs = 1, .shard = "1/1", .max_seconds = 300};
  doc.options.fault_kinds = {"pause"};
  doc.runs_total = 1;
  doc.runs_per_minute = 6.0;
  doc.coverage.fault_kinds = {
      {.kind = "pause",
       .runs = 1,
       .generated = 1,
       .ranges = {{.param = "duration_ms", .unit = "× ttl", .drawn = {0.1, 5.0}}}}};
  doc.coverage.kinds_never_fired = {"pause"};
  ExploredFault pause = ExploredFault::of(Fault{.kind = FaultKind::Pause, .at_ms = 100});
  pause.fired = false;
  doc.runs = {{.index = 0,
               .seed = 42,
               .verdict = Verdict::Safe,
               .seconds = 1.5,
               .exercised = false,
               .faults = {pause}}};
  const std::string expected = R"({
  "algorithm": "set-nx-px",
  "coverage": {
    "fault_kinds": [
      {
        "fired": 0,
        "generated": 1,
        "kind": "pause",
        "ranges": [
          {
            "drawn": [
              0.1,
              5.0
            ],
            "param": "duration_ms",
            "unit": "× ttl"
          }
        ],
        "runs": 1
      }
    ],
    "kinds_never_fired": [
      "pause"
    ],
    "steps": [],
    "steps_never_fired": []
  },
  "exit_status": 0,
  "explore": "set-nx-px",
  "explore_seconds": 10.0,
  "found": [],
  "interrupted": false,
  "invocation": {
    "argv": [
      "locklab"
    ]
  },
  "kinds_seen": {},
  "locklab_version": "1.0",
  "not_shrunk": [],
  "options": {
    "confirm_runs": 10,
    "fault_kinds": [
      "pause"
    ],
    "jobs": 1,
    "kinds": [],
    "lock_steps": [],
    "max_faults": 3,
    "max_runs": null,
    "max_seconds": 300,
    "network": null,
    "reproduce": {
      "needed": 2,
      "reruns": 3
    },
    "seed": 5,
    "shard": "1/1"
  },
  "runs": [
    {
      "exercised": false,
      "faults": [
        {
          "at_ms": 100,
          "fired": false,
          "kind": "pause",
          "trigger": "at 100 ms"
        }
      ],
      "index": 0,
      "kinds": [],
      "seconds": 1.5,
      "seed": 42,
      "verdict": "safe"
    }
  ],
  "runs_failed": 0,
  "runs_per_minute": 6.0,
  "runs_total": 1,
  "seconds": 12.0,
  "shrink_runs": 0,
  "started_at": "2024-05-01T10:00:00Z",
  "violations_by_kind": {}
}
)";
  TempDir dir("exploration-bytes");
  write_exploration_file(doc, dir.path() / "explore.json");
  EXPECT_EQ(read_text(dir.path() / "explore.json"), expected);
  EXPECT_EQ(read_exploration_file(dir.path() / "explore.json"), doc);
}

TEST(ExploreJson, AFieldOfTheWrongTypeIsOneLineNamingTheFileAndTheField) {
  TempDir dir("exploration-wrong");
  const fs::path file = dir.path() / "explore.json";
  struct Case {
    std::string field;
    std::function<void(json&)> spoil;
    std::string problem;
  } cases[] = {
      {"runs[1].faults[0].fired", [](json& j) { j["runs"][1]["faults"][0]["fired"] = "yes"; },
       "must be true or false"},
      {"runs[0].seconds", [](json& j) { j["runs"][0]["seconds"] = "1.2"; }, "must be a number"},
      {"options.seed", [](json& j) { j["options"]["seed"] = -1; },
       "must be a non-negative integer"},
      {"options.reproduce.needed", [](json& j) { j["options"]["reproduce"]["needed"] = 1.5; },
       "must be an integer"},
      {"coverage.fault_kinds[0].ranges[0].drawn",
       [](json& j) { j["coverage"]["fault_kinds"][0]["ranges"][0]["drawn"] = json({1}); },
       "must be [low, high], two numbers"},
      {"found[0].same_cause_runs", [](json& j) { j["found"][0]["same_cause_runs"] = "3, 7"; },
       "must be an array of integers"},
      {"not_shrunk[0].why", [](json& j) { j["not_shrunk"][0]["why"] = 3; }, "must be a string"},
      {"kinds_seen.stale-write", [](json& j) { j["kinds_seen"]["stale-write"] = "2"; },
       "must be an integer"},
      {"runs", [](json& j) { j["runs"] = json::object(); }, "must be an array"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.field);
    json j = every_field().to_json();
    // A second run with a fault, so that runs[1].faults[0] exists.
    j["runs"][1]["faults"] = j["runs"][0]["faults"];
    c.spoil(j);
    write_text(file, j.dump(2));
    try {
      read_exploration_file(file);
      ADD_FAILURE() << "read without error";
    } catch (const ExploreError& e) {
      EXPECT_EQ(std::string(e.what()), file.string() + ": field '" + c.field + "' " + c.problem);
    }
  }
}

TEST(ExploreJson, NotAnExplorationIsOneLineNamingTheFile) {
  TempDir dir("exploration-not");
  const fs::path file = dir.path() / "explore.json";
  auto error_of = [&](const std::string& text) -> std::string {
    write_text(file, text);
    try {
      read_exploration_file(file);
    } catch (const ExploreError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_of(R"({"runs": [], "options": {}})"),
            file.string() + ": not an explore.json (no explore, options or runs)");
  EXPECT_EQ(error_of("[1, 2]"), file.string() + ": not a JSON object");
  const std::string broken = error_of("{\"explore\": ");
  EXPECT_EQ(broken.rfind(file.string() + ": not valid JSON", 0), 0u) << broken;
  EXPECT_EQ(broken.find('\n'), std::string::npos) << broken;
  try {
    read_exploration_file(dir.path() / "nowhere.json");
    ADD_FAILURE() << "read a missing file";
  } catch (const ExploreError& e) {
    EXPECT_NE(std::string(e.what()).find("nowhere.json: cannot be read"), std::string::npos);
  }
}

TEST(ExploreJson, UnknownFieldsAreIgnoredAndMissingOnesAbsentOrDefault) {
  const json j = json::parse(R"({"explore": "x", "options": {"seed": 3, "newer": true},
      "runs": [{"index": 2, "faults": [{"kind": "pause", "duration_ms": 5}]}],
      "report_style": "newer", "adapter": null})");
  const Exploration doc = Exploration::from_json(j, "explore.json");
  EXPECT_EQ(doc.explore, "x");
  EXPECT_EQ(doc.options.seed, 3u);
  EXPECT_EQ(doc.options.shard, "1/1");
  EXPECT_EQ(doc.options.max_faults, 3);
  EXPECT_FALSE(doc.options.max_runs);
  EXPECT_FALSE(doc.adapter);
  EXPECT_FALSE(doc.error);
  ASSERT_EQ(doc.runs.size(), 1u);
  EXPECT_EQ(doc.runs[0].index, 2u);
  EXPECT_EQ(doc.runs[0].verdict, Verdict::Unknown);
  EXPECT_TRUE(doc.runs[0].exercised);
  ASSERT_EQ(doc.runs[0].faults.size(), 1u);
  EXPECT_FALSE(doc.runs[0].faults[0].fired);
  EXPECT_EQ(doc.runs[0].faults[0].parameters, json({{"duration_ms", 5}}));
}

// A cell runner without servers: a fired pause longer than the lease breaks
// the lock, a fired clock jump shows a stale write; every fourth fault does
// not fire, and some runs fail.
RunResult fake_run(const Scenario& s, const std::string& algorithm, uint64_t seed,
                   const fs::path&) {
  RunResult r;
  r.algorithm = algorithm;
  r.seed = seed;
  if (s.seed % 9 == 4) {
    r.error = "fake failure";
    return r;
  }
  bool broke = false, stale = false;
  r.exercised = true;
  for (size_t i = 0; i < s.faults.size(); ++i) {
    const Fault& f = s.faults[i];
    const bool fired = (s.seed + i) % 4 != 0;
    r.exercised = r.exercised && fired;
    r.faults.push_back(
        {.index = i, .kind = std::string(f.name()), .trigger = f.trigger_text(), .fired = fired});
    broke = broke || (fired && f.kind == FaultKind::Pause && f.duration_ms &&
                      *f.duration_ms > s.workload.ttl_ms);
    stale = stale || (fired && f.kind == FaultKind::ClockJump);
  }
  Check c;
  c.counts = {{"mutual-exclusion", broke ? 2 : 0}, {"stale-write", stale ? 1 : 0}};
  c.verdict = broke || stale ? Verdict::Violated : Verdict::Safe;
  r.check = c;
  r.verdict = c.verdict;
  return r;
}

ExploreOptions fake_options(const fs::path& out, std::ostream& progress) {
  ExploreOptions o;
  o.space = space_for("set-nx-px");
  o.space.fault_kinds = {FaultKind::Pause, FaultKind::ClockJump, FaultKind::Delay};
  o.out_dir = out;
  o.max_runs = 24;
  o.seed = 11;
  o.confirm_runs = 2;
  o.shrink_candidates = 6;
  o.max_found = 1;
  o.invocation = {{"argv", {"test"}}};
  o.progress = &progress;
  return o;
}

TEST(ExploreJson, RunExploreReturnsTheDocumentItWrites) {
  TempDir out("exploration-fake");
  std::ostringstream progress;
  const Exploration doc = run_explore(fake_options(out.path(), progress), fake_run);
  const fs::path file = out.path() / "explore.json";
  EXPECT_EQ(read_text(file), doc.to_json().dump(2) + "\n");
  EXPECT_EQ(read_exploration_file(file), doc);
  EXPECT_EQ(doc.runs_total, 24);
  ASSERT_EQ(doc.runs.size(), 24u);
  for (size_t i = 0; i < doc.runs.size(); ++i) EXPECT_EQ(doc.runs[i].index, i);
  EXPECT_GT(doc.runs_failed, 0);
  EXPECT_EQ(doc.coverage.fault_kinds.size(), 3u);
  // A pause longer than the lease was found and shrunk; max_found left the rest unshrunk.
  ASSERT_EQ(doc.found.size(), 1u) << progress.str();
  EXPECT_EQ(doc.found[0].sought, std::vector<std::string>{"mutual-exclusion"});
  EXPECT_FALSE(doc.not_shrunk.empty());
  EXPECT_EQ(doc.exit_status, 1);
  EXPECT_TRUE(fs::exists(out.path() / "index.html"));
}

TEST(ExploreJson, MergedShardsAreOneTypedDocument) {
  TempDir out("exploration-merge");
  std::ostringstream progress;
  std::vector<fs::path> dirs;
  int64_t runs = 0;
  for (int shard : {1, 2}) {
    ExploreOptions o = fake_options(out.path() / std::to_string(shard), progress);
    o.shard = {.index = shard, .count = 2};
    o.max_runs = 10;
    o.jobs = shard;  // differs between shards of one exploration
    runs += run_explore(o, fake_run).runs_total;
    dirs.push_back(o.out_dir);
  }
  const Exploration merged = merge_explorations(dirs, out.path() / "merged");
  EXPECT_EQ(read_exploration_file(out.path() / "merged" / "explore.json"), merged);
  EXPECT_EQ(merged.runs_total, runs);
  EXPECT_EQ(merged.options.shard, "1/1");
  for (size_t i = 0; i < merged.runs.size(); ++i) EXPECT_EQ(merged.runs[i].index, i);
  EXPECT_EQ(merged.invocation["merged"].size(), 2u);

  // Shards of other explorations are refused, in one line naming the directory.
  ExploreOptions other = fake_options(out.path() / "other", progress);
  other.shard = {.index = 2, .count = 2};
  other.max_runs = 4;
  other.seed = 12;
  run_explore(other, fake_run);
  try {
    merge_explorations({dirs[0], other.out_dir}, out.path() / "bad");
    ADD_FAILURE() << "merged shards of two explorations";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(other.out_dir.string() + " explored \"set-nx-px\" with "
                                                                  "other options"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace locklab::explore
