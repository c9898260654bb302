// Runs a scenario: for each algorithm, a fresh cluster, the clients and the
// nemesis for the scenario's duration; then the history is merged, written,
// checked, and compared with the scenario's expectation.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "adapter_process.h"
#include "results.h"
#include "scenario.h"

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

// One algorithm's run, an entry of results.json's "runs", with its outcome
// decided (decide_outcome). With `external`, the lock is that adapter
// program and `algorithm` only names it.
RunResult run_algorithm(const Scenario& scenario, const std::string& algorithm, uint64_t seed,
                        const std::filesystem::path& out_dir,
                        const ExternalLock* external = nullptr);

}  // namespace locklab
