#include "merge.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include "lock.h"
#include "matrix.h"
#include "results.h"
#include "suite.h"

namespace locklab::suite {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct ShardOutput {
  fs::path dir;
  json document;
  Shard shard;
};

json read_document(const fs::path& dir) {
  const fs::path file = dir / "results.json";
  std::ifstream in(file);
  if (!in) throw std::runtime_error(file.string() + ": cannot be read (not a suite's output?)");
  json document;
  try {
    document = json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error(file.string() + ": not JSON: " + e.what());
  }
  if (!document.is_object() || !document.contains("suite") || !document.contains("cells") ||
      !document.contains("options"))
    throw std::runtime_error(file.string() +
                             ": not a suite's results.json (no suite, cells, options)");
  return document;
}

// The shards, checked to be the N slices of one suite run, in shard order.
std::vector<ShardOutput> read_shards(const std::vector<fs::path>& dirs) {
  if (dirs.empty()) throw std::runtime_error("merge: no shard directories given");
  std::vector<ShardOutput> shards;
  for (const auto& dir : dirs) {
    ShardOutput s{dir, read_document(dir), {}};
    try {
      s.shard = parse_shard(s.document["options"].value("shard", "1/1"));
    } catch (const std::exception& e) {
      throw std::runtime_error((dir / "results.json").string() + ": options.shard: " + e.what());
    }
    shards.push_back(std::move(s));
  }
  const ShardOutput& first = shards.front();
  auto same = [&](const ShardOutput& s, const char* field) {
    const json& a = first.document["options"];
    const json& b = s.document["options"];
    if (a.value(field, json()) != b.value(field, json()))
      throw std::runtime_error("merge: " + s.dir.string() + " ran with " + field + " " +
                               b.value(field, json()).dump() + ", " + first.dir.string() +
                               " with " + a.value(field, json()).dump() +
                               ": not shards of one suite run");
  };
  std::set<int> indices;
  for (const auto& s : shards) {
    if (s.document["suite"] != first.document["suite"])
      throw std::runtime_error("merge: " + s.dir.string() + " is suite " +
                               s.document["suite"].dump() + ", " + first.dir.string() + " is " +
                               first.document["suite"].dump());
    for (const char* field : {"runs", "seed", "algorithms", "time", "adapters_kept"})
      same(s, field);
    if (s.shard.count != first.shard.count)
      throw std::runtime_error("merge: " + s.dir.string() + " is a shard of " +
                               std::to_string(s.shard.count) + ", " + first.dir.string() + " of " +
                               std::to_string(first.shard.count));
    if (!indices.insert(s.shard.index).second)
      throw std::runtime_error("merge: shard " + std::to_string(s.shard.index) + "/" +
                               std::to_string(s.shard.count) + " is given twice");
  }
  for (int i = 1; i <= first.shard.count; ++i)
    if (!indices.count(i))
      throw std::runtime_error("merge: shard " + std::to_string(i) + "/" +
                               std::to_string(first.shard.count) +
                               " is missing: an unsharded result needs every shard");
  std::sort(shards.begin(), shards.end(),
            [](const auto& a, const auto& b) { return a.shard.index < b.shard.index; });
  return shards;
}

// A scenario file as the shard recorded it: as given, or relative to the
// directory the shard ran in.
fs::path scenario_file(const std::string& given, const json& document) {
  if (fs::exists(given)) return given;
  const json& invocation = document.value("invocation", json::object());
  if (invocation.is_object() && invocation.contains("working_directory") &&
      invocation["working_directory"].is_string()) {
    const fs::path there = fs::path(invocation["working_directory"].get<std::string>()) / given;
    if (fs::exists(there)) return there;
  }
  return given;
}

// The scenario files in suite order. A shard's cells are the matrix cells
// I-1, I-1+N, … in matrix order, one per run of each cell entry; so each
// scenario's first matrix index is known, and sorting by it gives the order
// the unsharded suite loaded them in.
std::vector<fs::path> suite_order(const std::vector<ShardOutput>& shards) {
  std::map<std::string, std::pair<size_t, fs::path>> first_index;  // scenario -> index, file
  for (const auto& s : shards) {
    size_t k = 0;
    for (const auto& cell : s.document["cells"]) {
      const size_t global = k * size_t(s.shard.count) + size_t(s.shard.index - 1);
      const std::string name = cell.value("scenario", "");
      const fs::path file = scenario_file(cell.value("scenario_file", ""), s.document);
      auto [it, fresh] = first_index.try_emplace(name, global, file);
      if (!fresh && global < it->second.first) it->second = {global, file};
      k += size_t(std::max<int64_t>(1, cell.value("runs", int64_t(1))));
    }
  }
  std::vector<std::pair<size_t, fs::path>> ordered;
  for (auto& [name, entry] : first_index) ordered.push_back(entry);
  std::sort(ordered.begin(), ordered.end());
  std::vector<fs::path> files;
  for (auto& [index, file] : ordered) files.push_back(file);
  return files;
}

// Where a cell's run is: the shard's scenario directory and its entry.
struct StoredRun {
  fs::path scenario_dir;
  RunResult run;
};

std::string run_key(const std::string& scenario, const std::string& algorithm, int64_t run) {
  return scenario + "\n" + algorithm + "\n" + std::to_string(run);
}

std::map<std::string, StoredRun> stored_runs(const std::vector<ShardOutput>& shards) {
  std::map<std::string, StoredRun> runs;
  for (const auto& s : shards) {
    std::set<std::string> scenarios;
    for (const auto& cell : s.document["cells"]) scenarios.insert(cell.value("scenario", ""));
    for (const auto& name : scenarios) {
      const fs::path dir = s.dir / name;
      const ScenarioResults results = read_results_file(dir / "results.json");
      for (const RunResult& run : results.runs)
        runs[run_key(name, run.algorithm, run.run.value_or(1))] = {dir, run};
    }
  }
  return runs;
}

}  // namespace

json merge_suites(const MergeOptions& options) {
  const std::vector<ShardOutput> shards = read_shards(options.shard_dirs);
  const json& shard_options = shards.front().document["options"];
  std::vector<Scenario> scenarios;
  try {
    scenarios = load_scenarios(suite_order(shards));
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("merge needs the scenario files the shards ran: ") +
                             e.what());
  }
  const std::map<std::string, StoredRun> runs = stored_runs(shards);

  SuiteOptions suite;
  suite.name = shards.front().document["suite"].get<std::string>();
  suite.out_dir = options.out_dir;
  suite.junit_file = options.junit_file;
  suite.progress = options.progress;
  suite.matrix.runs = shard_options.value("runs", 1);
  if (shard_options.contains("seed") && shard_options["seed"].is_number())
    suite.matrix.seed = shard_options["seed"].get<uint64_t>();
  suite.matrix.algorithms = shard_options.value("algorithms", std::vector<std::string>{});
  suite.time = time_mode_named(shard_options.value("time", "real"));
  // Each shard kept its adapters in a pool of its own, or none did.
  suite.adapters_kept = shard_options.value("adapters_kept", false);
  AdapterPool::Counts adapters;
  for (const ShardOutput& shard : shards) {
    const json used = shard.document.value("adapters", json::object());
    adapters.started += used.value("started", 0);
    adapters.reused += used.value("reused", 0);
  }
  suite.adapter_counts = [adapters] { return adapters; };
  // The locks compared, in column order (a suite that predates "locks":
  // its cells' names, an adapter's in place of a built-in id).
  suite.matrix.built_ins = false;
  const json& listed =
      shards.front().document.contains("locks") ? shards.front().document["locks"] : json::array();
  std::vector<std::pair<std::string, std::optional<std::string>>> names;
  for (const auto& entry : listed) {
    LockUnderTest lock;
    lock.name = entry.value("name", "");
    lock.family = entry.value("family", "");
    lock.version = entry.value("version", "");
    if (entry.contains("like") && entry["like"].is_string()) lock.like = entry["like"];
    if (entry.contains("adapter") && entry["adapter"].is_string())
      lock.adapter = AdapterConfig{.command = entry["adapter"]};
    names.emplace_back(lock.name, lock.like);
    suite.locks.push_back(std::move(lock));
  }
  if (names.empty())
    for (const ShardOutput& shard : shards)
      for (const auto& cell : shard.document["cells"]) {
        const std::string lock = cell.value("algorithm", "");
        std::optional<std::string> like;
        if (cell.contains("like") && cell["like"].is_string()) like = cell["like"];
        if (std::none_of(names.begin(), names.end(),
                         [&](const auto& n) { return n.first == lock; }))
          names.emplace_back(lock, like);
      }
  for (const auto& [lock, like] : names) {
    if (find_algorithm(lock))
      suite.matrix.built_ins = true;
    else
      suite.matrix.extra.push_back({lock, like});
  }
  suite.redis_version = shards.front().document.value("redis_version", "");
  json invocation = current_invocation();
  invocation["merged"] = json::array();
  for (const auto& s : shards) invocation["merged"].push_back(s.dir.string());
  suite.invocation = invocation;

  const CellRunner fetch = [&runs](const Scenario& scenario, const std::string& algorithm, uint64_t,
                                   const fs::path& out_dir) {
    // run_suite puts run k of a repeated cell in <scenario>/run-<k>.
    const std::string leaf = out_dir.filename().string();
    const int64_t run = leaf.rfind("run-", 0) == 0 ? std::stoll(leaf.substr(4)) : 1;
    auto it = runs.find(run_key(scenario.name, algorithm, run));
    if (it == runs.end())
      throw std::runtime_error("no shard holds run " + std::to_string(run) + " of " +
                               scenario.name + " × " + algorithm);
    RunResult result = it->second.run;
    if (!result.history.empty()) {
      const fs::path from = it->second.scenario_dir / result.history;
      // Stored relative to the scenario directory; run_suite adds "run-<k>/" again.
      std::string history = result.history;
      if (history.rfind(leaf + "/", 0) == 0) history = history.substr(leaf.size() + 1);
      const fs::path to = out_dir / history;
      if (fs::exists(from)) {
        fs::create_directories(to.parent_path());
        fs::copy_file(from, to, fs::copy_options::overwrite_existing);
      }
      result.history = history;
    }
    return result;
  };
  json merged = run_suite(scenarios, suite, fetch);
  return merged;
}

}  // namespace locklab::suite
