// Runs a scenario: for each lock, its plan (plan.h), then a cluster, the
// clients and the nemesis for the scenario's duration; then the history is
// merged, written, checked, and compared with the scenario's expectation.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "plan.h"
#include "results.h"
#include "scenario.h"

namespace locklab {

struct RunOptions {
  std::vector<std::string> algorithms;  // empty = the scenario's own list
  std::optional<uint64_t> seed;         // overrides the scenario's seed
  std::filesystem::path out_dir;        // results.json and <lock>/history.jsonl go here
  // Test this lock instead of the built-in algorithms (an adapter): its name
  // replaces the scenario's algorithm list.
  std::optional<LockUnderTest> lock;
  Servers servers;  // the lab's own, or a target's
};

// The results.json document of `scenario` with `runs` (base seed `seed`),
// as `locklab run` and each scenario directory of a suite write it.
ScenarioResults results_of(const Scenario& scenario, uint64_t seed, std::vector<RunResult> runs);

// Runs every selected lock of `scenario` and writes out_dir/results.json
// (written last and atomically: a results file on disk is always complete).
// Returns that document. A lock whose run hit an infrastructure error gets
// verdict unknown, its error and outcome error; the other locks still run.
// Throws std::runtime_error only when nothing can be run or written.
// exit_status() (results.h) gives the exit status the document calls for.
ScenarioResults run_scenario(const Scenario& scenario, const RunOptions& options);

class Cluster;

// What a benchmark needs of one run: the servers while the clients run, and
// a run that records nothing, to measure what recording costs.
struct RunProbe {
  bool record_history = true;              // false: no history is recorded, written or checked
  std::function<void(Cluster&)> started;   // before the clients start
  std::function<void(Cluster&)> finished;  // after they stopped, the servers still up
  int64_t commands = 0;                    // out: Redis commands the clients sent
};

// Runs `plan` (plan_run's) of `lock` on `servers` and returns the run, an
// entry of results.json's "runs", with its outcome decided (decide_outcome):
// the cluster, the clients and the nemesis for the scenario's duration, then
// the history written to out_dir/<lock>/history.jsonl and checked.
RunResult run_plan(const RunPlan& plan, const Expectation& expected, const LockUnderTest& lock,
                   const Servers& servers, uint64_t seed, const std::filesystem::path& out_dir,
                   RunProbe* probe = nullptr);

// Plans one cell (plan_run) and runs it (run_plan), or returns it not
// applicable with the reason.
RunResult run_cell(const Scenario& scenario, const LockUnderTest& lock, const Servers& servers,
                   uint64_t seed, const std::filesystem::path& out_dir, RunProbe* probe = nullptr);

// Runs one cell of a suite or an exploration: `lock` names one of the locks
// under test. Returns the run (run_cell's contract) and writes
// out_dir/<lock>/history.jsonl. Tests may pass a fake.
using CellRunner = std::function<RunResult(const Scenario& scenario, const std::string& lock,
                                           uint64_t seed, const std::filesystem::path& out_dir)>;

// Whether the cell of `lock` (one of `locks`, by name) in `scenario` would
// run on virtual time on `servers`: such a run waits on nothing real, so it
// takes a core for as long as it lasts (plan_run decides; seeds do not).
using CellOnVirtualTime = std::function<bool(const Scenario& scenario, const std::string& lock)>;
CellOnVirtualTime cell_on_virtual_time(std::vector<LockUnderTest> locks, Servers servers);

// The CellRunner of `locks` on `servers`: run_cell with the lock of that name.
// A name that is none of them throws std::invalid_argument.
CellRunner cell_runner(std::vector<LockUnderTest> locks, Servers servers);

}  // namespace locklab
