// `locklab merge`: the outputs of a suite's shards (`suite --shard I/N`, one
// per CI runner) made into what one unsharded run would have written: the
// scenario directories with their results.json and histories, the suite's
// results.json, the JUnit file and the HTML reports. The merge goes through
// run_suite() itself, with a cell runner that takes each cell's run from the
// shard that made it, so the layout and every derived figure come from the
// same code as an unsharded run's.
#pragma once

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

namespace locklab::suite {

struct MergeOptions {
  std::vector<std::filesystem::path> shard_dirs;  // each holds a suite's results.json
  std::filesystem::path out_dir;
  std::optional<std::filesystem::path> junit_file;
  std::ostream* progress = &std::cerr;
};

// Merges and returns the merged results.json document (whose exit_status is
// the unsharded suite's). Throws std::runtime_error, one line naming the
// directory or file, when the shards cannot be merged: a directory without a
// suite's results.json, shards of different suites or options, a shard
// missing or given twice, a cell whose run no shard holds, or a scenario
// file that can no longer be read.
nlohmann::json merge_suites(const MergeOptions& options);

}  // namespace locklab::suite
