// The results.json of a run directory as the reports read it. Only
// `runs[].algorithm` is required; every other field may be missing (an older
// or newer runner, a run that failed before checking) and then shows as absent.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace locklab::reports {

// One violation found by a checker.
struct Violation {
  std::string kind;                    // "mutual-exclusion", "stale-write", ...
  std::string lock;                    // empty when not about one lock
  std::vector<std::string> processes;  // the clients involved
  std::vector<int64_t> events;         // history indices that show it
  std::string explanation;
};

// One algorithm's part of a run.
struct AlgorithmRun {
  std::string algorithm;
  std::string verdict;         // "safe", "violated", "error", ... ("unknown" when absent)
  std::optional<int64_t> run;  // 1, 2, ... when a suite repeats the algorithm
  std::string seed;            // as written; empty when absent
  std::optional<double> seconds;
  std::optional<std::string> expected_verdict;
  std::vector<std::string> expected_kinds;   // must be found
  std::vector<std::string> expected_absent;  // must not be found
  // What the runner decided; when it did not say, the verdict compared with
  // the expected verdict; nullopt when nothing was expected.
  std::optional<bool> expectation_met;
  std::filesystem::path history;  // resolved against the run directory
  std::optional<std::string> error;
  nlohmann::ordered_json stats;   // object, or null when absent
  nlohmann::ordered_json counts;  // the checker's counts; object or null
  std::vector<Violation> violations;
};

struct RunResults {
  std::filesystem::path file;  // the results.json read
  std::string scenario;        // falls back to the directory name
  std::string description;
  std::string scenario_file;
  std::string seed;  // as written (it may not fit any one integer type)
  std::string locklab_version;
  std::vector<AlgorithmRun> runs;
};

// Reads RUN_DIR/results.json. Throws std::runtime_error naming the file (and
// the field, when one has the wrong type) if it cannot be read or is not a
// results document.
RunResults read_run_results(const std::filesystem::path& run_dir);

// The HTML id of each run's section in a run report, in `runs` order: the
// algorithm's slug, with "-run-K" for a repeated run, numbered when two runs
// still share it. Suite indexes link with them.
std::vector<std::string> section_ids(const RunResults& results);

// Parses `path` as one JSON document. Throws std::runtime_error naming the
// file when it cannot be opened or is not JSON.
nlohmann::ordered_json read_json_file(const std::filesystem::path& path);

}  // namespace locklab::reports
