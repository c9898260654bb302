// Merging the explorations of a sharded `locklab explore` (explore.h).
#include <algorithm>
#include <fstream>
#include <set>
#include <stdexcept>

#include "atomic_file.h"
#include "coverage.h"
#include "explore.h"
#include "lock.h"
#include "matrix.h"

namespace locklab::explore {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json read_exploration(const fs::path& dir) {
  const fs::path file = dir / "explore.json";
  std::ifstream in(file);
  if (!in) throw std::runtime_error(file.string() + ": cannot be read (not an exploration?)");
  try {
    json doc = json::parse(in);
    if (doc.is_object() && doc.contains("explore") && doc.contains("runs") &&
        doc.contains("options"))
      return doc;
  } catch (const json::exception& e) {
    throw std::runtime_error(file.string() + ": not JSON: " + e.what());
  }
  throw std::runtime_error(file.string() + ": not an explore.json (no explore, runs, options)");
}

// The space the shards drew from, as their options record it.
Space space_of(const json& doc) {
  Space space;
  space.algorithm = doc.at("algorithm").get<std::string>();
  space.lock_steps = doc["options"].value("lock_steps", std::vector<std::string>{});
  space.max_faults = doc["options"].value("max_faults", 3);
  if (doc["options"].contains("network") && doc["options"]["network"].is_string())
    space.network = doc["options"]["network"].get<std::string>();
  for (const auto& name : doc["options"].value("fault_kinds", std::vector<std::string>{}))
    if (auto kind = fault_kind_named(name)) space.fault_kinds.push_back(*kind);
  // Every kind listed is the same as none listed: generate() draws from all.
  if (space.fault_kinds.size() == kFaultKindCount) space.fault_kinds.clear();
  return space;
}

void copy_tree(const fs::path& from, const fs::path& to) {
  if (!fs::exists(from)) return;
  fs::create_directories(to.parent_path());
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
}

}  // namespace

json merge_explorations(const std::vector<fs::path>& dirs, const fs::path& out_dir) {
  if (dirs.empty()) throw std::runtime_error("merge: no exploration directories given");
  std::vector<std::pair<suite::Shard, fs::path>> shards;
  std::vector<json> docs;
  for (const auto& dir : dirs) {
    docs.push_back(read_exploration(dir));
    shards.emplace_back(suite::parse_shard(docs.back()["options"].value("shard", "1/1")), dir);
  }
  const json& first = docs.front();
  std::set<int> indices;
  for (size_t i = 0; i < docs.size(); ++i) {
    json a = first["options"], b = docs[i]["options"];
    a.erase("shard"), b.erase("shard"), a.erase("jobs"), b.erase("jobs");
    if (docs[i]["explore"] != first["explore"] || a != b)
      throw std::runtime_error("merge: " + dirs[i].string() + " explored " +
                               docs[i]["explore"].dump() + " with other options than " +
                               dirs[0].string() + ": not shards of one exploration");
    if (shards[i].first.count != shards[0].first.count ||
        !indices.insert(shards[i].first.index).second)
      throw std::runtime_error("merge: " + dirs[i].string() + " is shard " +
                               docs[i]["options"].value("shard", "1/1") +
                               ", given twice or of another count");
  }
  for (int i = 1; i <= shards[0].first.count; ++i)
    if (!indices.count(i))
      throw std::runtime_error("merge: exploration shard " + std::to_string(i) + "/" +
                               std::to_string(shards[0].first.count) + " is missing");

  const Space space = space_of(first);
  const uint64_t seed = first["options"]["seed"].get<uint64_t>();
  const std::vector<std::string> sought =
      first["options"].value("kinds", std::vector<std::string>{});
  fs::create_directories(out_dir);
  fs::remove_all(out_dir / "found");
  fs::remove_all(out_dir / "runs");

  json runs = json::array();
  Coverage coverage;
  std::map<std::string, int64_t> by_kind, seen;
  json found = json::array(), not_shrunk = json::array();
  std::set<std::string> found_names;
  double seconds = 0, explore_seconds = 0;
  int64_t failed = 0, shrink_runs = 0;
  bool interrupted = false;
  for (size_t i = 0; i < docs.size(); ++i) {
    const json& doc = docs[i];
    for (const auto& run : doc["runs"]) {
      runs.push_back(run);
      if (run.contains("dir"))
        copy_tree(dirs[i] / run["dir"].get<std::string>(), out_dir / run["dir"].get<std::string>());
      if (run.contains("error")) continue;
      // The run's scenario is the generated one of its index: coverage is counted from it.
      std::vector<bool> fired;
      for (const auto& f : run["faults"]) fired.push_back(f.value("fired", false));
      coverage.add(generate(space, seed, run["index"].get<uint64_t>()), fired);
      for (const auto& kind : run["kinds"]) {
        ++seen[kind.get<std::string>()];
        if (sought.empty() || std::count(sought.begin(), sought.end(), kind)) ++by_kind[kind];
      }
    }
    for (const auto& f : doc["found"]) {
      if (!found_names.insert(f["name"].get<std::string>()).second) continue;
      found.push_back(f);
      copy_tree(dirs[i] / f["file"].get<std::string>(), out_dir / f["file"].get<std::string>());
      if (f["report"].is_string())
        copy_tree(dirs[i] / "found" / f["name"].get<std::string>(),
                  out_dir / "found" / f["name"].get<std::string>());
    }
    for (const auto& n : doc["not_shrunk"]) not_shrunk.push_back(n);
    seconds = std::max(seconds, doc.value("seconds", 0.0));
    explore_seconds = std::max(explore_seconds, doc.value("explore_seconds", 0.0));
    failed += doc.value("runs_failed", int64_t(0));
    shrink_runs += doc.value("shrink_runs", int64_t(0));
    interrupted = interrupted || doc.value("interrupted", false);
  }
  std::sort(runs.begin(), runs.end(),
            [](const json& a, const json& b) { return a["index"] < b["index"]; });

  const std::vector<FaultKind> allowed = drawn_kinds(space);

  json merged = first;
  merged["invocation"] = suite::current_invocation();
  merged["invocation"]["merged"] = json::array();
  for (const auto& dir : dirs) merged["invocation"]["merged"].push_back(dir.string());
  merged["options"]["shard"] = "1/1";
  merged["seconds"] = seconds;
  merged["explore_seconds"] = explore_seconds;
  merged["interrupted"] = interrupted;
  merged["runs"] = runs;
  merged["runs_total"] = runs.size();
  merged["runs_failed"] = failed;
  merged["runs_per_minute"] =
      explore_seconds > 0 ? std::round(double(runs.size()) / (explore_seconds / 60) * 10) / 10 : 0;
  merged["shrink_runs"] = shrink_runs;
  merged["violations_by_kind"] = by_kind;
  merged["kinds_seen"] = seen;
  merged["coverage"] = coverage.to_json(allowed, coverable_steps(space));
  merged["found"] = found;
  merged["not_shrunk"] = not_shrunk;
  int status = found.empty() && not_shrunk.empty() ? 0 : 1;
  merged.erase("error");
  if (failed > 0 && failed == int64_t(runs.size())) {
    status = 2;
    merged["error"] = "no run could be made in any shard";
  }
  merged["exit_status"] = status;
  write_file_atomically(out_dir / "explore.json", merged.dump(2) + "\n");
  write_explore_index(merged, out_dir);
  return merged;
}

}  // namespace locklab::explore
