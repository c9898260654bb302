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
  for (const auto& id : ids) {
    bool known = false;
    for (const auto& a : algorithms()) known = known || a.id == id;
    if (!known)
      throw std::invalid_argument(option + ": unknown algorithm '" + id + "' (see `locklab list`)");
  }
}

Shard parse_shard(const std::string& text) {
  Shard shard;
  bool valid = false;
  if (size_t slash = text.find('/'); slash != std::string::npos) {
    const std::string index = text.substr(0, slash), count = text.substr(slash + 1);
    try {
      size_t index_used = 0, count_used = 0;
      shard.index = std::stoi(index, &index_used);
      shard.count = std::stoi(count, &count_used);
      valid = index_used == index.size() && count_used == count.size() && shard.index >= 1 &&
              shard.index <= shard.count;
    } catch (const std::logic_error&) {  // std::stoi: not a number, or out of range
    }
  }
  if (!valid)
    throw std::invalid_argument("--shard: expected I/N with 1 <= I <= N (e.g. 2/4), got \"" + text +
                                "\"");
  return shard;
}

uint64_t run_seed(uint64_t base, int run) {
  return base + uint64_t(run - 1);
}

std::vector<Cell> build_matrix(const std::vector<Scenario>& scenarios,
                               const MatrixOptions& options) {
  std::vector<Cell> cells;
  for (size_t s = 0; s < scenarios.size(); ++s) {
    const Scenario& scenario = scenarios[s];
    uint64_t base = options.seed.value_or(scenario.seed);
    const auto& own = scenario.algorithms;
    if (options.external_lock && options.like &&
        std::find(own.begin(), own.end(), *options.like) == own.end())
      continue;
    const std::vector<std::string> external{options.external_lock.value_or("")};
    for (const auto& algorithm : options.external_lock ? external : scenario.algorithms) {
      const auto& only = options.algorithms;
      if (!only.empty() && std::find(only.begin(), only.end(), algorithm) == only.end()) continue;
      for (int run = 1; run <= options.runs; ++run)
        cells.push_back(Cell{cells.size(), s, algorithm, run, run_seed(base, run)});
    }
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
