#include "run_results.h"

#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "html.h"

namespace locklab::reports {

ScenarioResults read_run_results(const std::filesystem::path& run_dir) {
  ScenarioResults results = read_results_file(run_dir / "results.json");
  if (results.scenario.empty()) results.scenario = run_dir.filename().string();
  return results;
}

std::filesystem::path history_path(const std::filesystem::path& run_dir, const RunResult& run) {
  std::filesystem::path history = run.history;
  if (history.empty()) history = std::filesystem::path(run.algorithm) / "history.jsonl";
  return history.is_absolute() ? history : run_dir / history;
}

std::vector<std::string> section_ids(const ScenarioResults& results) {
  std::vector<std::string> ids;
  std::set<std::string> taken;
  for (const auto& run : results.runs) {
    std::string base = slug(run.algorithm);
    if (run.run) base += "-run-" + std::to_string(*run.run);
    std::string id = base;
    for (int n = 2; taken.count(id); ++n) id = base + "-" + std::to_string(n);
    taken.insert(id);
    ids.push_back(id);
  }
  return ids;
}

nlohmann::ordered_json read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw std::runtime_error("cannot read " + path.string());
  try {
    return nlohmann::ordered_json::parse(text.str());
  } catch (const nlohmann::ordered_json::parse_error& e) {
    throw std::runtime_error(path.string() + ": not valid JSON (" + e.what() + ")");
  }
}

}  // namespace locklab::reports
