// Merging the explorations of a sharded `locklab explore` (explore.h).
#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "atomic_file.h"
#include "coverage.h"
#include "explore.h"
#include "invocation.h"
#include "lock.h"
#include "shard.h"

namespace locklab::explore {
namespace {

namespace fs = std::filesystem;

// The space the shards drew from, as their options record it.
Space space_of(const Exploration& doc) {
  Space space;
  space.algorithm = doc.algorithm;
  space.lock_steps = doc.options.lock_steps;
  space.max_faults = doc.options.max_faults;
  space.network = doc.options.network.value_or("");
  for (const auto& name : doc.options.fault_kinds)
    if (auto kind = fault_kind_named(name)) space.fault_kinds.push_back(*kind);
  // Every kind listed is the same as none listed: generate() draws from all.
  if (space.fault_kinds.size() == kFaultKindCount) space.fault_kinds.clear();
  return space;
}

// The options that must be the same in every shard of one exploration.
RecordedOptions shared_options(RecordedOptions options) {
  options.shard.clear();
  options.jobs = 0;
  return options;
}

void copy_tree(const fs::path& from, const fs::path& to) {
  if (!fs::exists(from)) return;
  fs::create_directories(to.parent_path());
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
}

// Throws std::runtime_error unless `docs` (read from `dirs`, of shards
// `shards`) are every shard of one exploration, each once.
void check_shards(const std::vector<fs::path>& dirs, const std::vector<Exploration>& docs,
                  const std::vector<std::pair<Shard, fs::path>>& shards) {
  const Exploration& first = docs.front();
  std::set<int> indices;
  for (size_t i = 0; i < docs.size(); ++i) {
    if (docs[i].explore != first.explore ||
        shared_options(docs[i].options) != shared_options(first.options))
      throw std::runtime_error(
          "merge: " + dirs[i].string() + " explored " + nlohmann::json(docs[i].explore).dump() +
          " with other options than " + dirs[0].string() + ": not shards of one exploration");
    if (shards[i].first.count != shards[0].first.count ||
        !indices.insert(shards[i].first.index).second)
      throw std::runtime_error("merge: " + dirs[i].string() + " is shard " + docs[i].options.shard +
                               ", given twice or of another count");
  }
  for (int i = 1; i <= shards[0].first.count; ++i)
    if (!indices.count(i))
      throw std::runtime_error("merge: exploration shard " + std::to_string(i) + "/" +
                               std::to_string(shards[0].first.count) + " is missing");
}

}  // namespace

Exploration merge_explorations(const std::vector<fs::path>& dirs, const fs::path& out_dir) {
  if (dirs.empty()) throw std::runtime_error("merge: no exploration directories given");
  std::vector<std::pair<Shard, fs::path>> shards;
  std::vector<Exploration> docs;
  for (const auto& dir : dirs) {
    docs.push_back(read_exploration_file(dir / "explore.json"));
    shards.emplace_back(parse_shard(docs.back().options.shard), dir);
  }
  check_shards(dirs, docs, shards);
  const Exploration& first = docs.front();

  const Space space = space_of(first);
  const uint64_t seed = first.options.seed;
  const std::vector<std::string>& sought = first.options.kinds;
  fs::create_directories(out_dir);
  fs::remove_all(out_dir / "found");
  fs::remove_all(out_dir / "runs");

  Exploration merged = first;
  merged.runs.clear();
  merged.found.clear();
  merged.not_shrunk.clear();
  merged.violations_by_kind.clear();
  merged.kinds_seen.clear();
  Coverage coverage;
  std::set<std::string> found_names;
  double seconds = 0, explore_seconds = 0;
  int64_t failed = 0, shrink_runs = 0;
  bool interrupted = false;
  for (size_t i = 0; i < docs.size(); ++i) {
    const Exploration& doc = docs[i];
    for (const auto& run : doc.runs) {
      merged.runs.push_back(run);
      if (run.dir) copy_tree(dirs[i] / *run.dir, out_dir / *run.dir);
      if (run.error) continue;
      // The run's scenario is the generated one of its index: coverage is counted from it.
      std::vector<bool> fired;
      for (const auto& f : run.faults) fired.push_back(f.fired.value_or(false));
      coverage.add(generate(space, seed, run.index), fired);
      for (const auto& kind : run.kinds) {
        ++merged.kinds_seen[kind];
        if (sought.empty() || std::count(sought.begin(), sought.end(), kind))
          ++merged.violations_by_kind[kind];
      }
    }
    for (const auto& f : doc.found) {
      if (!found_names.insert(f.name).second) continue;
      merged.found.push_back(f);
      copy_tree(dirs[i] / f.file, out_dir / f.file);
      if (f.report) copy_tree(dirs[i] / "found" / f.name, out_dir / "found" / f.name);
    }
    for (const auto& n : doc.not_shrunk) merged.not_shrunk.push_back(n);
    seconds = std::max(seconds, doc.seconds);
    explore_seconds = std::max(explore_seconds, doc.explore_seconds);
    failed += doc.runs_failed;
    shrink_runs += doc.shrink_runs;
    interrupted = interrupted || doc.interrupted;
  }
  std::sort(merged.runs.begin(), merged.runs.end(),
            [](const ExploredRun& a, const ExploredRun& b) { return a.index < b.index; });

  merged.invocation = current_invocation();
  merged.invocation["merged"] = nlohmann::json::array();
  for (const auto& dir : dirs) merged.invocation["merged"].push_back(dir.string());
  merged.options.shard = "1/1";
  merged.seconds = seconds;
  merged.explore_seconds = explore_seconds;
  merged.interrupted = interrupted;
  merged.runs_total = int64_t(merged.runs.size());
  merged.runs_failed = failed;
  merged.runs_per_minute =
      explore_seconds > 0
          ? std::round(double(merged.runs.size()) / (explore_seconds / 60) * 10) / 10
          : 0;
  merged.shrink_runs = shrink_runs;
  merged.coverage = coverage.summary(drawn_kinds(space), coverable_steps(space));
  merged.exit_status = merged.found.empty() && merged.not_shrunk.empty() ? 0 : 1;
  merged.error.reset();
  if (failed > 0 && failed == merged.runs_total) {
    merged.exit_status = 2;
    merged.error = "no run could be made in any shard";
  }
  write_exploration_file(merged, out_dir / "explore.json");
  write_explore_index(merged, out_dir);
  return merged;
}

}  // namespace locklab::explore
