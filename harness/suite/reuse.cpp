#include "reuse.h"

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace locklab::suite {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// FNV-1a 64: small, stable across builds and machines; no secret to keep.
class Fnv64 {
 public:
  void add(const char* data, size_t size) {
    for (size_t i = 0; i < size; ++i) {
      hash_ ^= uint8_t(data[i]);
      hash_ *= 0x100000001b3ull;
    }
  }
  std::string hex() const {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash_));
    return text;
  }

 private:
  uint64_t hash_ = 0xcbf29ce484222325ull;
};

std::string text(const json& object, const char* field) {
  auto it = object.find(field);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// Whether the earlier suite ran `lock` as this one does: same name, version
// and adapter command.
bool same_lock(const json& earlier, const LockUnderTest& lock) {
  const json* entry = entry_named(earlier, "locks", "name", lock.name);
  return entry && text(*entry, "version") == lock.version &&
         text(*entry, "adapter") == (lock.adapter ? lock.adapter->command : "");
}

// Whether the earlier suite ran `scenario` as this one would.
bool same_scenario(const json& earlier, const Scenario& scenario, const SuiteOptions& options) {
  const json* entry = entry_named(earlier, "scenarios", "scenario", scenario.name);
  if (!entry || text(*entry, "fingerprint") != fingerprint(scenario)) return false;
  const uint64_t seed = options.matrix.seed.value_or(scenario.seed);
  return entry->value("seed", json()) == json(seed);
}

// Whether the earlier cell ended without a failed run, with as many runs as this suite asks.
bool complete(const json& earlier, const std::string& scenario, const std::string& lock, int runs) {
  auto cells = earlier.find("cells");
  if (cells == earlier.end() || !cells->is_array()) return false;
  for (const json& cell : *cells)
    if (text(cell, "scenario") == scenario && text(cell, "algorithm") == lock)
      return cell.value("runs", json()) == json(runs) && cell.value("errors", json()) == json(0);
  return false;
}

}  // namespace

const json* entry_named(const json& document, const char* list, const char* field,
                        std::string_view value) {
  auto it = document.find(list);
  if (it == document.end() || !it->is_array()) return nullptr;
  for (const json& entry : *it)
    if (entry.is_object() && text(entry, field) == value) return &entry;
  return nullptr;
}

std::optional<json> earlier_document(const fs::path& file) {
  if (!fs::exists(file)) return std::nullopt;
  std::ifstream in(file);
  if (!in) throw std::runtime_error(file.string() + ": cannot be read (--reuse)");
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error(file.string() + ": not JSON (--reuse): " + e.what());
  }
}

std::string fingerprint(const Scenario& scenario) {
  const std::string canonical = scenario_to_json(scenario).dump();
  Fnv64 hash;
  hash.add(canonical.data(), canonical.size());
  return hash.hex();
}

std::string lab_build() {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  Fnv64 hash;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) hash.add(buffer, size_t(in.gcount()));
  // Without /proc the lab cannot tell its build: nothing is carried then.
  return in.bad() ? "" : hash.hex();
}

CarriedRuns carried_runs(const fs::path& dir, const std::vector<Scenario>& scenarios,
                         const SuiteOptions& options) {
  CarriedRuns out;
  out.from = dir;
  const std::optional<json> document = earlier_document(dir / "results.json");
  if (!document) return out;
  const json& earlier = *document;
  const std::string build = lab_build();
  if (build.empty() || text(earlier, "lab_build") != build ||
      text(earlier, "redis_version") != options.redis_version ||
      earlier.value("options", json::object()).value("runs", json()) != json(options.matrix.runs) ||
      earlier.value("options", json::object()).value("time", "real") !=
          time_mode_name(options.time) ||
      earlier.value("options", json::object()).value("adapters_kept", false) !=
          options.adapters_kept)
    return out;
  for (const Scenario& scenario : scenarios) {
    if (!same_scenario(earlier, scenario, options)) continue;
    std::optional<ScenarioResults> results;
    for (const LockUnderTest& lock : options.locks) {
      if (!same_lock(earlier, lock) ||
          !complete(earlier, scenario.name, lock.name, options.matrix.runs))
        continue;
      if (!results) results = read_results_file(dir / scenario.name / "results.json");
      std::vector<RunResult> runs;
      for (const RunResult& run : results->runs)
        if (run.algorithm == lock.name && !run.error) runs.push_back(run);
      if (runs.size() != size_t(options.matrix.runs)) continue;
      for (RunResult& run : runs) {
        run.carried_from = run.carried_from.value_or(dir.string());
        out.runs[{scenario.name, lock.name, int(run.run.value_or(1))}] = std::move(run);
      }
      ++out.cells;
    }
  }
  return out;
}

void copy_run_files(const RunResult& run, const fs::path& from, const fs::path& to) {
  if (run.history.empty()) return;
  const fs::path relative = fs::path(run.history).parent_path();
  const fs::path source = from / relative, target = to / relative;
  std::error_code same;
  if (!fs::exists(source) || fs::equivalent(source, target, same)) return;
  fs::create_directories(target);
  fs::copy(source, target, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
}

}  // namespace locklab::suite
