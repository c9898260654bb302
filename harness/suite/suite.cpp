#include "suite.h"

#include <atomic>
#include <chrono>
#include <ctime>
#include <exception>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "atomic_file.h"
#include "junit.h"
#include "progress.h"
#include "report.h"
#include "reuse.h"
#include "runner.h"
#include "summary.h"
#include "version.h"

namespace locklab::suite {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string run_dir_name(int run) {
  return "run-" + std::to_string(run);
}

// The results.json of one scenario directory, in `locklab run`'s shape.
ScenarioResults scenario_results(const Scenario& scenario, uint64_t seed, int runs_per_algorithm,
                                 std::vector<RunResult> runs) {
  ScenarioResults results = results_of(scenario, seed, std::move(runs));
  results.runs_per_algorithm = runs_per_algorithm;
  return results;
}

// Runs the cells and keeps their documents in cell order.
class Execution {
 public:
  Execution(const std::vector<Scenario>& scenarios, const SuiteOptions& options,
            const CellRunner& run_cell, std::vector<Cell> cells, const CarriedRuns& carried)
      : scenarios_(scenarios),
        options_(options),
        run_cell_(run_cell),
        carried_(carried),
        cells_(std::move(cells)),
        runs_(cells_.size()),
        left_(scenarios.size(), 0),
        progress_(*options.progress, options.live_progress, cells_.size()) {
    for (const auto& cell : cells_) ++left_[cell.scenario];
  }

  // Returns each cell's run, in cell order. The cells on virtual time run
  // first, no more at once than the machine has cores: each takes a core
  // while it lasts, and beside real-time cells it would be load those
  // cells' timers feel. Then the others, `jobs` at once: they wait on
  // their stories' timers.
  std::vector<RunResult> run() {
    std::vector<size_t> on_virtual_time, others;
    for (size_t i = 0; i < cells_.size(); ++i) {
      const Cell& cell = cells_[i];
      const bool cpu_bound =
          options_.on_virtual_time &&
          !carried_.runs.count({scenarios_[cell.scenario].name, cell.algorithm, cell.run}) &&
          options_.on_virtual_time(scenarios_[cell.scenario], cell.algorithm);
      (cpu_bound ? on_virtual_time : others).push_back(i);
    }
    const size_t jobs = size_t(std::max(options_.jobs, 1));
    run_in_turn(on_virtual_time,
                std::min<size_t>(jobs, std::max(1u, std::thread::hardware_concurrency())));
    run_in_turn(others, jobs);
    progress_.close();
    if (write_error_) std::rethrow_exception(write_error_);
    return std::move(runs_);
  }

 private:
  std::string label(const Cell& cell) const {
    std::string text = scenarios_[cell.scenario].name + " × " + cell.algorithm;
    if (options_.matrix.runs > 1)
      text += " run " + std::to_string(cell.run) + "/" + std::to_string(options_.matrix.runs);
    return text;
  }

  // Runs the cells `order` names (indexes into cells_), `workers` at once.
  void run_in_turn(const std::vector<size_t>& order, size_t workers) {
    std::atomic<size_t> next = 0;
    workers = std::min(workers, order.size());
    if (workers <= 1) return work(order, next);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < workers; ++i) threads.emplace_back([&] { work(order, next); });
    for (auto& t : threads) t.join();
  }

  void work(const std::vector<size_t>& order, std::atomic<size_t>& next) {
    const int runs_per_cell = options_.matrix.runs;
    for (size_t n; (n = next++) < order.size();) {
      const size_t i = order[n];
      const Cell& cell = cells_[i];
      const Scenario& scenario = scenarios_[cell.scenario];
      const fs::path scenario_dir = options_.out_dir / scenario.name;
      const fs::path run_dir =
          runs_per_cell > 1 ? scenario_dir / run_dir_name(cell.run) : scenario_dir;
      if (auto it = carried_.runs.find({scenario.name, cell.algorithm, cell.run});
          it != carried_.runs.end()) {
        carry(i, it->second, scenario_dir);
        continue;
      }
      progress_.started(label(cell));
      const auto start = std::chrono::steady_clock::now();
      RunResult run;
      try {
        run = run_cell_(scenario, cell.algorithm, cell.seed, run_dir);
      } catch (const std::exception& e) {
        run = failed_run(scenario, cell, e.what());
      }
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!run.seconds) run.seconds = seconds;  // a merge keeps the time the shard measured
      if (runs_per_cell > 1) {
        run.run = cell.run;
        const std::string history =
            run.history.empty() ? cell.algorithm + "/history.jsonl" : run.history;
        run.history = run_dir_name(cell.run) + "/" + history;
      }
      progress_.finished(label(cell), run, seconds);

      std::lock_guard lock(mu_);
      runs_[i] = std::move(run);
      if (--left_[cell.scenario] == 0) write_scenario(cell.scenario);
    }
  }

  // Cell i's run, carried over from an earlier suite with its files.
  void carry(size_t i, const RunResult& run, const fs::path& scenario_dir) {
    const Cell& cell = cells_[i];
    try {
      copy_run_files(run, carried_.from / scenarios_[cell.scenario].name, scenario_dir);
    } catch (const std::exception&) {
      std::lock_guard lock(mu_);
      if (!write_error_) write_error_ = std::current_exception();
    }
    progress_.finished(label(cell) + " (carried)", run, 0);
    std::lock_guard lock(mu_);
    runs_[i] = run;
    if (--left_[cell.scenario] == 0) write_scenario(cell.scenario);
  }

  // The run of a cell whose runner threw `error`.
  RunResult failed_run(const Scenario& scenario, const Cell& cell, const std::string& error) const {
    RunResult run;
    run.algorithm = cell.algorithm;
    run.expected = scenario.expectation_for(cell.algorithm);
    for (const LockUnderTest& lock : options_.locks)
      if (lock.name == cell.algorithm) {
        run.expected = expectation_for(scenario, lock);
        if (lock.adapter) run.adapter = lock.adapter->command;
        run.like = lock.like;
      }
    run.seed = cell.seed;
    run.verdict = Verdict::Unknown;
    run.error = error;
    run.outcome = decide_outcome(run);
    return run;
  }

  // mu_ held; every cell of scenario `s` has its run.
  void write_scenario(size_t s) {
    std::vector<RunResult> runs;
    for (size_t i = 0; i < cells_.size(); ++i)
      if (cells_[i].scenario == s) runs.push_back(runs_[i]);
    const Scenario& scenario = scenarios_[s];
    ScenarioResults results =
        scenario_results(scenario, options_.matrix.seed.value_or(scenario.seed),
                         options_.matrix.runs, std::move(runs));
    try {
      write_file_atomically(options_.out_dir / scenario.name / "results.json",
                            results.to_json().dump(2) + "\n");
    } catch (const std::exception&) {
      if (!write_error_) write_error_ = std::current_exception();
    }
  }

  const std::vector<Scenario>& scenarios_;
  const SuiteOptions& options_;
  const CellRunner& run_cell_;
  const CarriedRuns& carried_;
  const std::vector<Cell> cells_;
  std::mutex mu_;
  std::vector<RunResult> runs_;
  std::vector<size_t> left_;  // cells not yet finished, per scenario
  std::exception_ptr write_error_;
  Progress progress_;
};

// The compared locks, in column order: those with cells.
json locks_compared(const std::vector<LockUnderTest>& all, const std::vector<Cell>& cells) {
  json locks = json::array();
  for (const LockUnderTest& lock : all) {
    if (std::none_of(cells.begin(), cells.end(),
                     [&](const Cell& cell) { return cell.algorithm == lock.name; }))
      continue;
    json entry = {{"name", lock.name}, {"family", lock.family}};
    if (lock.like) entry["like"] = *lock.like;
    if (lock.adapter) entry["adapter"] = lock.adapter->command;
    if (!lock.version.empty()) entry["version"] = lock.version;
    if (!lock.unclassified_overlaps.empty())
      entry["unclassified_overlaps"] = lock.unclassified_overlaps;
    if (!lock.unlock_deletes_any_holder.empty())
      entry["unlock_deletes_any_holder"] = lock.unlock_deletes_any_holder;
    locks.push_back(std::move(entry));
  }
  return locks;
}

}  // namespace

json run_suite(const std::vector<Scenario>& scenarios, const SuiteOptions& options,
               const CellRunner& run_cell) {
  const std::vector<Cell> cells =
      select_shard(build_matrix(scenarios, options.matrix), options.shard);
  const std::string started_at = utc_now();
  const auto start = std::chrono::steady_clock::now();
  fs::create_directories(options.out_dir);
  const CarriedRuns carried =
      options.reuse ? carried_runs(*options.reuse, scenarios, options) : CarriedRuns{};
  std::vector<RunResult> runs = Execution(scenarios, options, run_cell, cells, carried).run();

  // Group the runs by scenario × algorithm, in cell order.
  std::vector<std::pair<size_t, std::string>> keys;
  std::map<std::pair<size_t, std::string>, std::vector<RunResult>> grouped;
  for (size_t i = 0; i < cells.size(); ++i) {
    auto key = std::make_pair(cells[i].scenario, cells[i].algorithm);
    if (!grouped.count(key)) keys.push_back(key);
    grouped[key].push_back(runs[i]);
  }
  json scenario_entries = json::array();
  std::vector<CellSummary> summaries;
  std::vector<JunitSuite> junit;
  for (const auto& key : keys) {
    const Scenario& scenario = scenarios[key.first];
    if (junit.empty() || junit.back().name != scenario.name) {
      const uint64_t seed = options.matrix.seed.value_or(scenario.seed);
      scenario_entries.push_back({{"scenario", scenario.name},
                                  {"dir", scenario.name},
                                  {"file", scenario.file.string()},
                                  {"fingerprint", fingerprint(scenario)},
                                  {"seed", seed},
                                  {"algorithms", json::array()}});
      junit.push_back({scenario.name,
                       {{"scenario_file", scenario.file.string()},
                        {"seed", std::to_string(seed)},
                        {"runs_per_algorithm", std::to_string(options.matrix.runs)},
                        {"results", (options.out_dir / scenario.name / "results.json").string()}},
                       {}});
    }
    scenario_entries.back()["algorithms"].push_back(key.second);
    CellSummary cell = summarize_cell(scenario.name, grouped[key]);
    cell.scenario_file = scenario.file.string();
    cell.results = scenario.name + "/results.json";
    junit.back().cases.push_back(junit_case(cell, grouped[key]));
    summaries.push_back(std::move(cell));
  }

  const json locks = locks_compared(options.locks, cells);
  const SuiteTotals totals = suite_totals(summaries);
  const int status = suite_exit_status(totals);
  json cell_entries = json::array();
  for (const auto& cell : summaries) cell_entries.push_back(cell.to_json());
  json document{
      {"suite", options.name},
      {"locklab_version", kVersion},
      {"invocation", options.invocation},
      {"started_at", started_at},
      {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()},
      {"options",
       {{"runs", options.matrix.runs},
        {"seed", options.matrix.seed ? json(*options.matrix.seed) : json()},
        {"shard", std::to_string(options.shard.index) + "/" + std::to_string(options.shard.count)},
        {"jobs", options.jobs},
        {"time", time_mode_name(options.time)},
        {"algorithms", options.matrix.algorithms},
        {"adapters_kept", options.adapters_kept}}},
      {"seeds",
       "run k (1-based) of a scenario × algorithm uses seed + k - 1, where seed is --seed or "
       "else the scenario's own (each scenario's is listed under scenarios); each run records "
       "its seed"},
      {"scenarios", scenario_entries},
      {"cells", cell_entries},
      {"totals", totals.to_json()},
      {"exit_status", status},
      {"redis_version", options.redis_version},
      {"lab_build", lab_build()},
      {"locks", locks}};
  if (options.reuse)
    document["reuse"] = {{"from", options.reuse->string()}, {"cells_carried", carried.cells}};
  const AdapterPool::Counts adapters = options.adapter_counts();
  document["adapters"] = {
      {"kept", options.adapters_kept}, {"started", adapters.started}, {"reused", adapters.reused}};
  write_file_atomically(options.out_dir / "results.json", document.dump(2) + "\n");
  if (options.junit_file)
    write_file_atomically(*options.junit_file, junit_xml("locklab " + options.name, junit));
  if (options.html_report) {
    try {
      reports::write_suite_report(options.out_dir);
    } catch (const std::exception& e) {
      *options.progress << "locklab: warning: HTML report not written: " << e.what() << "\n";
    }
  }
  return document;
}

}  // namespace locklab::suite
