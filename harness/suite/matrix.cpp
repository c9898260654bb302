#include "matrix.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "lock.h"

namespace locklab::suite {

namespace fs = std::filesystem;

std::vector<fs::path> scenario_files(const std::vector<std::string>& inputs) {
  std::vector<fs::path> files;
  for (const auto& input : inputs) {
    fs::path path(input);
    std::error_code error;
    if (fs::is_directory(path, error)) {
      std::vector<fs::path> found;
      for (const auto& entry : fs::directory_iterator(path)) {
        const fs::path& p = entry.path();
        if (p.extension() == ".json" && p.filename() != "schema.json" && !entry.is_directory())
          found.push_back(p);
      }
      if (found.empty())
        throw std::invalid_argument(input + ": no scenario files (*.json) in this directory");
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(path, error)) {
      files.push_back(path);
    } else {
      throw std::invalid_argument(input + ": no such scenario file or directory");
    }
  }
  if (files.empty()) throw std::invalid_argument("no scenario given");
  return files;
}

std::vector<Scenario> load_scenarios(const std::vector<fs::path>& files) {
  std::vector<Scenario> scenarios;
  std::map<std::string, fs::path> by_name;
  for (const auto& file : files) {
    Scenario scenario = load_scenario(file);
    const std::string& name = scenario.name;
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
      throw ScenarioError(file.string() + ": field 'name' \"" + name +
                          "\" cannot name the scenario's output directory");
    auto [it, added] = by_name.emplace(name, file);
    if (!added)
      throw ScenarioError(file.string() + ": scenario name \"" + name + "\" is already used by " +
                          it->second.string());
    scenarios.push_back(std::move(scenario));
  }
  return scenarios;
}

void check_algorithm_ids(const std::vector<std::string>& ids, const std::string& option) {
  for (const auto& id : ids)
    if (!find_algorithm(id))
      throw std::invalid_argument(option + ": unknown algorithm '" + id + "' (see `locklab list`)");
}

uint64_t run_seed(uint64_t base, int run) {
  return base + uint64_t(run - 1);
}

std::vector<Cell> build_matrix(const std::vector<Scenario>& scenarios,
                               const MatrixOptions& options) {
  std::vector<Cell> cells;
  auto has = [](const std::vector<std::string>& items, const std::string& item) {
    return std::find(items.begin(), items.end(), item) != items.end();
  };
  for (size_t s = 0; s < scenarios.size(); ++s) {
    const Scenario& scenario = scenarios[s];
    const uint64_t base = options.seed.value_or(scenario.seed);
    std::vector<std::string> locks;
    if (options.built_ins)
      for (const auto& algorithm : scenario.algorithms)
        if (options.algorithms.empty() || has(options.algorithms, algorithm))
          locks.push_back(algorithm);
    for (const ExtraLock& extra : options.extra)
      if ((!extra.like || has(scenario.algorithms, *extra.like)) &&
          (options.algorithms.empty() || has(options.algorithms, extra.name)))
        locks.push_back(extra.name);
    for (const auto& lock : locks)
      for (int run = 1; run <= options.runs; ++run)
        cells.push_back(Cell{cells.size(), s, lock, run, run_seed(base, run)});
  }
  return cells;
}

std::vector<Cell> select_shard(const std::vector<Cell>& cells, Shard shard) {
  std::vector<Cell> selected;
  for (const auto& cell : cells)
    if (cell.index % size_t(shard.count) == size_t(shard.index - 1)) selected.push_back(cell);
  return selected;
}

}  // namespace locklab::suite
