// `locklab explore`: generated scenarios run against real redis-servers until
// a budget is spent; each distinct violation found is shrunk to the smallest
// scenario that still breaks the lock, its reproduction rate measured, and
// written as a scenario file with its run report.
//
// Output layout (OUT = ExploreOptions::out_dir):
//   OUT/explore.json                   every run's seed and verdict, coverage, what was found
//   OUT/index.html                     the same for people
//   OUT/found/<name>.json              a minimal scenario: input to `locklab run`
//   OUT/found/<name>/                  one of its violating runs: results.json, history, report
//   OUT/runs/run-<i>/                  each violating generated run: scenario.json, history
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "exploration.h"
#include "generator.h"
#include "runner.h"
#include "shard.h"

namespace locklab::explore {

struct ExploreOptions {
  Space space;
  // The lock explored when it is not the built-in space.algorithm: an adapter.
  std::optional<LockUnderTest> external;
  // The lock's name in runs and files: an adapter's (from its hello); empty:
  // space.algorithm.
  std::string name;
  std::filesystem::path out_dir;
  // The budget: generated runs stop at whichever comes first.
  std::optional<int64_t> max_runs;
  std::chrono::seconds max_time{300};
  int jobs = 1;  // runs at the same time, each with its own servers
  // This process explores the generated scenarios of its shard only (see
  // run_index), so N processes given the same seed never repeat a scenario.
  Shard shard;
  uint64_t seed = 1;               // names the sequence of generated scenarios
  std::vector<std::string> kinds;  // violation kinds sought (empty: any)
  // "Still breaks" while shrinking: broke in `needed` of `reruns` runs.
  int reruns = 3;
  int needed = 2;
  int confirm_runs = 10;       // runs that measure a minimal scenario's reproduction rate
  int shrink_candidates = 60;  // scenarios a shrink tries at most
  // Per distinct violation; all shrinking together takes at most as long
  // as the generated runs did (at least 3 minutes).
  std::chrono::seconds shrink_time{180};
  int max_found = 8;  // distinct violations shrunk at most
  nlohmann::json invocation = nlohmann::json::object();
  std::ostream* progress = &std::cerr;
  // Set to stop early (Ctrl-C): runs in flight finish, what was found so far
  // is written (unshrunk candidates listed as such).
  const std::atomic<bool>* stop = nullptr;
};

// The index of the k-th (0-based) generated scenario shard I/N explores:
// I-1, I-1+N, I-1+2N, … With --runs R, the shards together run indices
// 0 … R-1, exactly the scenarios one unsharded exploration would run.
uint64_t run_index(const Shard& shard, uint64_t k);

// Throws std::invalid_argument naming the option when the options cannot be
// used: no budget, jobs < 1, needed > reruns, an unknown violation kind.
void validate(const ExploreOptions& options);

// Explores, writes the output layout and returns explore.json's document
// (exploration.h, harness/explore/FORMAT.md). `run_cell` runs one scenario
// (run_cell's contract; cell_runner()). exit_status in the
// document: 1 when something was found, 0 when not, 2 when the runs could
// not be made (every run failed; the first error is named in "error").
Exploration run_explore(const ExploreOptions& options, const CellRunner& run_cell);

// The explorations of shards 1/N … N/N of one `explore --shard` (same lock,
// seed and options) made into one: every run, in index order, coverage and
// violation counts over all of them (what one unsharded exploration of the
// same runs would count), the scenarios each shard found and shrank (a
// violation two shards found is kept once, from the lower shard), the
// generated runs' and found scenarios' files, explore.json and index.html.
// Throws std::runtime_error, one line naming the directory, when the
// directories are not the whole of one sharded exploration.
Exploration merge_explorations(const std::vector<std::filesystem::path>& shard_dirs,
                               const std::filesystem::path& out_dir);

// Writes OUT/index.html from explore.json's document.
void write_explore_index(const Exploration& explore, const std::filesystem::path& out_dir);

}  // namespace locklab::explore
