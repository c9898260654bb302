// `locklab merge DIR… --out DIR`: the outputs of a suite's shards made into
// what one unsharded run would have written (harness/suite/merge.h), or the
// explorations of an explore's shards made into one (harness/explore/explore.h).
#include <iostream>

#include "commands.h"
#include "explore.h"
#include "merge.h"
#include "summary.h"

namespace locklab {

Action add_merge_command(CLI::App& parent) {
  struct Options {
    std::vector<std::string> dirs;
    std::string out_dir, junit;
  };
  auto options = std::make_shared<Options>();
  auto* merge = parent.add_subcommand(
      "merge",
      "Merge the outputs of a suite's shards (suite --shard I/N), or of an exploration's "
      "(explore --shard I/N), into one");
  merge->add_option("dirs", options->dirs, "The shards' output directories, every shard once")
      ->required();
  merge->add_option("--out,-o", options->out_dir, "Output directory of the merged suite")
      ->required();
  merge->add_option("--junit", options->junit, "Suites: also write the merged JUnit XML here");
  merge->footer(
      "The scenario files the shards ran must be readable (as given, or relative to the "
      "directory the shard ran in). Exit status: the merged suite's (0 every cell passed, 1 a "
      "cell unmet or not exercised, 2 a run failed); 2 when the shards cannot be merged.");
  return [options] {
    if (std::filesystem::exists(std::filesystem::path(options->dirs.front()) / "explore.json")) {
      std::vector<std::filesystem::path> dirs(options->dirs.begin(), options->dirs.end());
      const explore::Exploration merged = explore::merge_explorations(dirs, options->out_dir);
      std::cerr << "explore: " << merged.runs_total << " runs, " << merged.found.size()
                << " found\nresults: "
                << (std::filesystem::path(options->out_dir) / "explore.json").string() << "\n";
      return merged.exit_status;
    }
    suite::MergeOptions merge_options;
    for (const auto& dir : options->dirs) merge_options.shard_dirs.push_back(dir);
    merge_options.out_dir = options->out_dir;
    if (!options->junit.empty()) merge_options.junit_file = options->junit;
    const nlohmann::json merged = suite::merge_suites(merge_options);
    std::cerr << suite::totals_line(suite::SuiteTotals::from_json(merged["totals"])) << "\n"
              << "results: " << (merge_options.out_dir / "results.json").string() << "\n";
    return merged["exit_status"].get<int>();
  };
}

}  // namespace locklab
