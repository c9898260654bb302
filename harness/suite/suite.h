// `locklab suite`: a matrix of scenario × algorithm × run, run in parallel,
// written as one run directory per scenario plus a suite-level results.json,
// an optional JUnit XML file and the HTML reports.
//
// Output layout (OUT = SuiteOptions::out_dir):
//   OUT/results.json                     the suite (see run_suite)
//   OUT/index.html                       the HTML matrix, linking each scenario's report
//   OUT/<scenario>/results.json          as `locklab run` writes it: one entry per run
//   OUT/<scenario>/<algorithm>/history.jsonl          with one run per cell (--runs 1)
//   OUT/<scenario>/run-<k>/<algorithm>/history.jsonl  with --runs K > 1, k = 1..K
// Every JSON and XML file is written atomically (temporary file + rename).
#pragma once

#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "adapter_pool.h"
#include "invocation.h"
#include "matrix.h"
#include "results.h"
#include "runner.h"
#include "scenario.h"
#include "virtual_time.h"

namespace locklab::suite {

struct SuiteOptions {
  std::string name = "suite";  // the suite's name in results.json, JUnit and the HTML index
  std::filesystem::path out_dir;
  std::optional<std::filesystem::path> junit_file;
  int jobs = 1;  // cells run at the same time (each starts its own servers)
  // Which cells run on virtual time (cell_on_virtual_time): they run first,
  // at most a core's worth at once; none when empty.
  CellOnVirtualTime on_virtual_time;
  Shard shard;
  MatrixOptions matrix;
  // The locks the cells name, in the order of the comparison's columns: for
  // the suite document's "locks" and for what a cell whose runner throws was
  // held to (a name not among them: the scenario's expectation for that name).
  std::vector<LockUnderTest> locks;
  // The Redis version the cells ran against, as results record it ("" unknown).
  std::string redis_version;
  // The clock the cells keep (Servers::time), as results record it.
  TimeMode time = TimeMode::Real;
  // An earlier suite's results directory whose cells measured under the same
  // conditions are carried over instead of run again (reuse.h).
  std::optional<std::filesystem::path> reuse;
  bool html_report = true;
  // How the suite was started (command line, working directory), recorded
  // as given in results.json so that the suite can be repeated.
  nlohmann::json invocation = nlohmann::json::object();
  std::ostream* progress = &std::cerr;
  bool live_progress = false;  // a redrawn status line instead of one line per run
  // Whether the cells keep their adapters between runs (the cell runner's
  // locks carry the pool: AdapterConfig::pool), and how many adapters the
  // pool started and took again, read when the document is written (a
  // merge: the shards' sums). Only read here, for the document's
  // "adapters" and for --reuse.
  bool adapters_kept = false;
  std::function<AdapterPool::Counts()> adapter_counts = [] { return AdapterPool::Counts{}; };
};

// Runs the cells of `options.shard` and writes the output layout above. Each
// scenario's results.json (a ScenarioResults) is written as soon as its last
// cell ends. The returned document, also written to OUT/results.json
// (harness/results/FORMAT.md), holds: suite, locklab_version, invocation,
// started_at, seconds, options {runs, seed, shard, jobs, time, algorithms,
// adapters_kept}, adapters {kept, started, reused} (as envelope.h), seeds
// (how run seeds are derived), scenarios [{scenario, dir, file, seed,
// algorithms}] (those with cells in this shard), cells [CellSummary entries,
// each with scenario_file and results: its results.json], totals
// (SuiteTotals), exit_status (suite_exit_status), redis_version, and locks
// [{name, family, like, adapter, version}]: the locks with cells, in column order.
// A cell whose runner throws counts as a run with that error (outcome
// error); only output that cannot be written throws (std::runtime_error
// naming the file).
nlohmann::json run_suite(const std::vector<Scenario>& scenarios, const SuiteOptions& options,
                         const CellRunner& run_cell);

}  // namespace locklab::suite
