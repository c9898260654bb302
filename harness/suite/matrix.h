// The suite's matrix: which scenario files make a suite, and the cells
// scenario × algorithm × run that it runs, with their seeds and shards.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "scenario.h"
#include "shard.h"

namespace locklab::suite {

// The scenario files named by `inputs`, in suite order. A directory stands
// for every *.json file directly in it except schema.json, sorted by name;
// a file stands for itself, where it appears. Throws std::invalid_argument
// naming the input when it does not exist or a directory holds no scenario.
std::vector<std::filesystem::path> scenario_files(const std::vector<std::string>& inputs);

// Loads every file with load_scenario() before anything runs: the first bad
// file throws its ScenarioError (one line naming it). Also throws
// ScenarioError when two files share a scenario name, or a name cannot be a
// directory name (the output has one directory per scenario).
std::vector<Scenario> load_scenarios(const std::vector<std::filesystem::path>& files);

// Throws std::invalid_argument (naming `option`) unless every id names a
// built-in algorithm.
void check_algorithm_ids(const std::vector<std::string>& ids,
                         const std::string& option = "--algorithm");

// The seed of run `run` (1-based) of a cell whose base seed is `base`:
// base + run - 1, so run 1 repeats `locklab run SCENARIO --seed base`.
uint64_t run_seed(uint64_t base, int run);

// One cell of the matrix: one run of one algorithm on one scenario.
struct Cell {
  size_t index = 0;     // position in the whole matrix, before sharding
  size_t scenario = 0;  // index into the suite's scenarios
  std::string algorithm;
  int run = 1;  // 1..runs
  uint64_t seed = 0;
};

// A lock of a suite beside the scenarios' own algorithms: an adapter.
struct ExtraLock {
  std::string name;                 // its hello name, which its cells carry
  std::optional<std::string> like;  // the built-in it stands in for: only the scenarios that run it
};

struct MatrixOptions {
  // Keep only these locks: built-in ids or extra locks' names (empty: all).
  std::vector<std::string> algorithms;
  bool built_ins = true;  // each scenario runs its own algorithms
  // And these locks: each in every scenario that runs its `like`, or in
  // every scenario when it stands in for none.
  std::vector<ExtraLock> extra;
  int runs = 1;                  // runs per scenario × lock
  std::optional<uint64_t> seed;  // base seed for every scenario (default: each scenario's)
};

// Every cell, scenario by scenario in suite order, then each scenario's
// algorithms in its own order and the extra locks in theirs, then run 1..runs. The order and so
// each cell's index depend only on the inputs and options: a shard of the same suite selects the
// same cells on every machine.
std::vector<Cell> build_matrix(const std::vector<Scenario>& scenarios,
                               const MatrixOptions& options);

// The cells of `shard`: those whose index % count == index - 1.
std::vector<Cell> select_shard(const std::vector<Cell>& cells, Shard shard);

}  // namespace locklab::suite
