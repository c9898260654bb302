// `locklab suite --reuse DIR`: the cells an earlier suite already measured
// under the same conditions are carried over from DIR instead of measured
// again, so that adding a library measures one column. A cell (scenario ×
// lock) is carried when DIR's results.json has it with
//   - the same scenario, by fingerprint: its faults, timings, workload and
//     expectations, as scenario_to_json() writes them;
//   - the same lock: name, version (as its adapter's hello announced it) and
//     adapter command;
//   - the same lab build (the locklab executable, byte for byte) and the
//     same Redis version;
//   - the same runs per cell and base seed, the same clock (--time), adapters
//     kept between runs or started anew alike, and no run that failed.
// An adapter's own code is not compared beyond its version: after changing
// an adapter without changing what it announces, do not reuse its column.
//
// `locklab envelope --reuse DIR` carries searches the same way
// (envelope.h, run_envelope).
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "results.h"
#include "scenario.h"
#include "suite.h"

namespace locklab::suite {

// 16 hex digits that change whenever anything of the scenario that a run
// reads changes (FNV-1a 64 of its canonical JSON).
std::string fingerprint(const Scenario& scenario);

// 16 hex digits of the running locklab executable's bytes: two suites ran
// the same lab exactly when these agree.
std::string lab_build();

// The JSON document `file` of an earlier run, or nullopt when there is no
// such file (a first run). Throws std::runtime_error naming the file when it
// cannot be read or is not JSON.
std::optional<nlohmann::json> earlier_document(const std::filesystem::path& file);

// The entry of document[list] (an array of objects) whose `field` is the
// string `value`, or nullptr.
const nlohmann::json* entry_named(const nlohmann::json& document, const char* list,
                                  const char* field, std::string_view value);

// The runs an earlier suite measured that this one may carry over, by
// (scenario name, lock name, run number: 1 when the suite runs each cell
// once), each with carried_from set to `dir`.
struct CarriedRuns {
  std::filesystem::path from;
  std::map<std::tuple<std::string, std::string, int>, RunResult> runs;
  size_t cells = 0;  // cells carried whole
};

// What of `dir`'s suite this suite (`scenarios`, `options`) may carry over;
// nothing when `dir` holds no suite's results.json (a first run). Throws
// std::runtime_error naming the file when `dir` holds a results.json that
// cannot be read.
CarriedRuns carried_runs(const std::filesystem::path& dir, const std::vector<Scenario>& scenarios,
                         const SuiteOptions& options);

// Copies the directory of `run`'s history (its lock's logs beside it) from
// the scenario directory `from` to `to`; nothing when both are the same.
void copy_run_files(const RunResult& run, const std::filesystem::path& from,
                    const std::filesystem::path& to);

}  // namespace locklab::suite
