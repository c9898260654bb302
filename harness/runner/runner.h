// Runs a scenario: for each algorithm, a fresh cluster, the clients and the
// nemesis for the scenario's duration; then the history is merged, written,
// checked, and compared with the scenario's expectation.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "adapter_process.h"
#include "results.h"
#include "scenario.h"
#include "target.h"

namespace locklab {

// A lock under test that is not built in: an adapter program.
struct ExternalLock {
  AdapterConfig adapter;
  // The built-in algorithm it stands in for: it is held to that algorithm's
  // expectation in each scenario. Absent: to the scenario's default one.
  std::optional<std::string> like;
};

// The expectation a run of `algorithm` (or of `external`, which `algorithm`
// then only names) is held to in `scenario`.
const Expectation& expectation_of(const Scenario& scenario, const std::string& algorithm,
                                  const ExternalLock* external);

struct RunOptions {
  std::vector<std::string> algorithms;  // empty = the scenario's own list
  std::optional<uint64_t> seed;         // overrides the scenario's seed
  std::filesystem::path out_dir;        // results.json and <algorithm>/history.jsonl go here
  // Test an external lock instead of the built-in algorithms: its name (from
  // the adapter's hello) replaces the scenario's algorithm list.
  std::optional<ExternalLock> external;
  // Run against these existing servers instead of starting fresh ones.
  std::shared_ptr<const Target> target;
};

// The results.json document of `scenario` with `runs` (base seed `seed`),
// as `locklab run` and each scenario directory of a suite write it.
ScenarioResults results_of(const Scenario& scenario, uint64_t seed, std::vector<RunResult> runs);

// Runs every selected algorithm of `scenario` and writes out_dir/results.json
// (written last and atomically: a results file on disk is always complete).
// Returns that document. An algorithm whose run hit an infrastructure error
// gets verdict "unknown", its error and outcome error; the other algorithms
// still run. Throws std::runtime_error only when nothing can be run or written.
// exit_status() (results.h) gives the exit status the document calls for.
ScenarioResults run_scenario(const Scenario& scenario, const RunOptions& options);

class Cluster;

// What a benchmark needs of one run: the servers while the clients run, and
// a run that records nothing, to measure what recording costs.
struct RunProbe {
  bool record_history = true;  // false: no history is recorded, written or checked
  bool client_links = false;   // true: clients go through fault proxies even with no link fault
  std::function<void(Cluster&)> started;   // before the clients start
  std::function<void(Cluster&)> finished;  // after they stopped, the servers still up
  int64_t commands = 0;                    // out: Redis commands the clients sent
};

// One algorithm's run, an entry of results.json's "runs", with its outcome
// decided (decide_outcome). With `external`, the lock is that adapter
// program and `algorithm` only names it. With `target`, the run uses those
// servers and keys under the target's key prefix (removed when it ends); a
// fault the target cannot take, or a topology it lacks, makes the run
// not-applicable with the reason.
RunResult run_algorithm(const Scenario& scenario, const std::string& algorithm, uint64_t seed,
                        const std::filesystem::path& out_dir,
                        const ExternalLock* external = nullptr, RunProbe* probe = nullptr,
                        const Target* target = nullptr);

}  // namespace locklab
