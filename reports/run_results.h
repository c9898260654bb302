// The results.json of a run directory as the reports read it: the one typed
// document of harness/results (FORMAT.md there), read tolerantly. Only
// `runs[].algorithm` is required; every other field may be missing (an older
// or newer runner, a run that failed before checking) and then shows as absent.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "results.h"

namespace locklab::reports {

using Violation = checkers::Violation;

// Reads RUN_DIR/results.json; a document without a scenario name gets the
// directory's. Throws ResultsError (a std::runtime_error) naming the file
// (and the field, when one has the wrong type) if it cannot be read or is
// not a results document.
ScenarioResults read_run_results(const std::filesystem::path& run_dir);

// Where the history of `run` is: its `history` resolved against RUN_DIR (an
// absolute path as it is), or RUN_DIR/<algorithm>/history.jsonl when it
// names none.
std::filesystem::path history_path(const std::filesystem::path& run_dir, const RunResult& run);

// The HTML id of each run's section in a run report, in `runs` order: the
// algorithm's slug, with "-run-K" for a repeated run, numbered when two runs
// still share it. Suite indexes link with them.
std::vector<std::string> section_ids(const ScenarioResults& results);

// Parses `path` as one JSON document. Throws std::runtime_error naming the
// file when it cannot be opened or is not JSON.
nlohmann::ordered_json read_json_file(const std::filesystem::path& path);

}  // namespace locklab::reports
