// A realistic violated run, written the way `locklab run` writes one: five
// clients on lock A (ttl 500 ms); c3 acquires, reads the counter and is
// paused for 1.5 s; its lease runs out, and the other four take turns on A,
// each acquiring, writing and releasing; c3 resumes, writes what it computed
// before the pause (accepted: set-nx-px has no fencing) and its release is
// refused. The checkers themselves measure the history, so the violations
// and their events are exactly those a real run would list. A second
// algorithm, fenced, tells the same story with c3's late write rejected.
#pragma once

#include <filesystem>
#include <string>

#include "checkers.h"
#include "results.h"
#include "run_dir.h"

namespace locklab::reports::fixtures {

struct StalledRun {
  int overlapping = 0;  // acquisitions by others during c3's hold
  int64_t c3_acquired = -1, pause_start = -1, pause_end = -1, c3_write = -1;
};

// Writes DIR/<algorithm>/history.jsonl for a stalled holder; `fenced`
// rejects the stale write by its token.
inline StalledRun write_stalled_history(const std::filesystem::path& path, bool fenced,
                                        bool pause = true) {
  HistoryBuilder h;
  StalledRun run;
  const json lock = {{"lock", "A"}};
  const json ask = {{"lock", "A"}, {"value", {{"ttl_ms", 500}, {"wait_ms", 2000}}}};
  int64_t token = 31, counter = 3;
  double t = 300;
  // Before the fault: c1 and c2 take turns, then c3.
  for (const char* c : {"c1", "c2"}) {
    h.add(t, c, "invoke", "acquire", ask);
    h.add(t + 1.2, c, "ok", "acquire",
          {{"lock", "A"},
           {"owner", std::string(c) + "-7d1e"},
           {"token", ++token - 1},
           {"value", {{"validity_ms", 500}, {"reentry", 1}}}});
    json write = {{"lock", "A"},
                  {"token", token - 1},
                  {"value", {{"read", counter}, {"write", counter + 1}}}};
    h.add(t + 2, c, "invoke", "write", write);
    h.add(t + 2.4, c, "ok", "write", write);
    ++counter;
    h.add(t + 3, c, "invoke", "release", lock);
    h.add(t + 3.5, c, "ok", "release", {{"lock", "A"}, {"value", {{"result", "released"}}}});
    t += 50;
  }
  h.add(410, "c3", "invoke", "acquire", ask);
  run.c3_acquired = h.add(412, "c3", "ok", "acquire",
                          {{"lock", "A"},
                           {"owner", "9f2c41d0-c3"},
                           {"token", 33},
                           {"value", {{"validity_ms", 500}, {"reentry", 1}}}});
  const int64_t c3_read = counter;  // c3 read the counter, then the pause hit
  if (pause)
    run.pause_start = h.nemesis(
        414, "pause", "start", {"c3"},
        {{"when", {{"client", "c3"}, {"step", "acquired"}, {"nth", 1}}}, {"duration_ms", 1500}});
  // The others wait for A; it is free once c3's lease is gone (912 ms).
  token = 34;
  t = 420;
  const char* others[] = {"c1", "c2", "c4", "c5"};
  for (int turn = 0; t + 20 < 1900; ++turn) {
    const char* c = others[turn % 4];
    double start = std::max(t, 950.0 + 21.0 * (turn - 1));
    if (turn == 0) start = 420;
    h.add(start, c, "invoke", "acquire", ask);
    if (turn == 0) {  // the first asks while c3's lease still runs: refused
      h.add(start + 1, c, "fail", "acquire", {{"lock", "A"}, {"error", "held"}});
      t = 950;
      continue;
    }
    h.add(start + 1, c, "ok", "acquire",
          {{"lock", "A"},
           {"owner", std::string(c) + "-" + std::to_string(1000 + turn)},
           {"token", token},
           {"value", {{"validity_ms", 500}, {"reentry", 1}}}});
    ++run.overlapping;
    json write = {
        {"lock", "A"}, {"token", token}, {"value", {{"read", counter}, {"write", counter + 1}}}};
    h.add(start + 5, c, "invoke", "write", write);
    h.add(start + 6, c, "ok", "write", write);
    ++counter;
    h.add(start + 8, c, "invoke", "release", lock);
    h.add(start + 9, c, "ok", "release", {{"lock", "A"}, {"value", {{"result", "released"}}}});
    ++token;
    t = start + 21;
  }
  if (pause) run.pause_end = h.nemesis(1914, "pause", "end", {"c3"}, {{"duration_ms", 1500}});
  json write = {
      {"lock", "A"}, {"token", 33}, {"value", {{"read", c3_read}, {"write", c3_read + 1}}}};
  h.add(1915, "c3", "invoke", "write", write);
  if (fenced) {
    json rejected = write;
    rejected["error"] = "fencing: token 33 is older than " + std::to_string(token - 1);
    run.c3_write = h.add(1916, "c3", "fail", "write", rejected);
  } else {
    run.c3_write = h.add(1916, "c3", "ok", "write", write);
  }
  h.add(1917, "c3", "invoke", "release", lock);
  h.add(1918, "c3", "fail", "release",
        {{"lock", "A"}, {"error", "not owner"}, {"value", {{"result", "not-owner"}}}});
  h.write(path);
  return run;
}

// DIR/results.json and a history per algorithm: set-nx-px and fenced, both
// expected to show the overlapping holds; fenced, to lose no write.
inline StalledRun write_stalled_run(const std::filesystem::path& dir, bool pause = true) {
  StalledRun run;
  ScenarioResults results;
  results.scenario = "pause-longer-than-lease";
  results.description =
      "A stop-the-world pause of the holder outlasts its 500 ms lease; four other clients take "
      "the lock meanwhile.";
  results.scenario_file = "scenarios/pause-longer-than-lease.json";
  results.seed = 7;
  results.locklab_version = "0.1.0";
  for (const char* algorithm : {"set-nx-px", "fenced"}) {
    const bool fenced = std::string(algorithm) == "fenced";
    const std::filesystem::path history = dir / algorithm / "history.jsonl";
    StalledRun written = write_stalled_history(history, fenced, pause);
    if (!fenced) run = written;
    RunResult r;
    r.algorithm = algorithm;
    r.history = std::string(algorithm) + "/history.jsonl";
    r.seed = 7;
    r.seconds = 2.4;
    Expectation expected;
    expected.verdict = Verdict::Violated;
    expected.kinds = {"mutual-exclusion"};
    if (fenced) expected.absent = {"lost-update", "stale-write"};
    r.expected = expected;
    r.check = Check::of(checkers::check_file(history));
    r.verdict = r.check->verdict;
    if (pause)
      r.faults = {FaultFiring{.index = 0,
                              .kind = "pause",
                              .trigger = "c3 at step acquired (1st time)",
                              .fired = true,
                              .fired_at_ms = 414,
                              .ended_at_ms = 1914}};
    r.outcome = decide_outcome(r);
    results.runs.push_back(std::move(r));
  }
  write_text(dir / "results.json", results.to_json().dump(2));
  return run;
}

// DIR/results.json for scenario `scenario` with one run of `algorithm`, whose
// history DIR/<algorithm>/history.jsonl is written already, measured by the
// checkers as the runner would. Returns the run.
inline RunResult write_checked_run(const std::filesystem::path& dir, const std::string& scenario,
                                   const std::string& algorithm) {
  ScenarioResults results;
  results.scenario = scenario;
  RunResult run;
  run.algorithm = algorithm;
  run.history = algorithm + "/history.jsonl";
  run.check = Check::of(checkers::check_file(dir / run.history));
  run.verdict = run.check->verdict;
  results.runs.push_back(run);
  write_text(dir / "results.json", results.to_json().dump());
  return run;
}

// A sweep.json as `locklab sweep` writes one: the pause of
// pause-longer-than-lease searched over 0…3000 ms, set-nx-px breaking at
// `breaks_at` (safe at `safe_at`), fenced never.
inline json pause_sweep(int breaks_at, int safe_at) {
  return {{"scenario", "pause-longer-than-lease"},
          {"param", "duration_ms"},
          {"from", 0},
          {"to", 3000},
          {"algorithms",
           {{{"algorithm", "set-nx-px"},
             {"outcome", "breaks"},
             {"breaking_value", breaks_at},
             {"last_safe_value", safe_at}},
            {{"algorithm", "fenced"}, {"outcome", "never-breaks"}}}}};
}

// A clean run: the five clients take turns on A, no fault; the checkers find nothing.
inline void write_calm_run(const std::filesystem::path& dir) {
  HistoryBuilder h;
  const json ask = {{"lock", "A"}, {"value", {{"ttl_ms", 500}, {"wait_ms", 2000}}}};
  int64_t counter = 0, token = 1;
  for (double t = 5; t < 1500; t += 12, ++token) {
    std::string c = "c" + std::to_string(token % 5 + 1);
    h.add(t, c, "invoke", "acquire", ask);
    h.add(t + 1 + double(token % 3), c, "ok", "acquire",
          {{"lock", "A"}, {"owner", c + "-" + std::to_string(token)}, {"token", token}});
    json write = {
        {"lock", "A"}, {"token", token}, {"value", {{"read", counter}, {"write", counter + 1}}}};
    h.add(t + 4, c, "invoke", "write", write);
    h.add(t + 5, c, "ok", "write", write);
    ++counter;
    h.add(t + 7, c, "invoke", "release", {{"lock", "A"}});
    h.add(t + 8, c, "ok", "release", {{"lock", "A"}, {"value", {{"result", "released"}}}});
  }
  ScenarioResults results;
  results.scenario = "smoke";
  results.description = "Five clients take turns on one lock; nothing goes wrong.";
  results.seed = 1;
  for (const char* algorithm : {"set-nx-px", "redlock"}) {
    const std::filesystem::path history = dir / algorithm / "history.jsonl";
    h.write(history);
    RunResult r;
    r.algorithm = algorithm;
    r.history = std::string(algorithm) + "/history.jsonl";
    r.expected = Expectation{};
    r.check = Check::of(checkers::check_file(history));
    r.verdict = r.check->verdict;
    r.outcome = decide_outcome(r);
    results.runs.push_back(std::move(r));
  }
  write_text(dir / "results.json", results.to_json().dump(2));
}

}  // namespace locklab::reports::fixtures
