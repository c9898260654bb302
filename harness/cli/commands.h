// The subcommands of `locklab`. Each add_*_command() registers its options on
// `parent` and returns the action to run when that subcommand was given.
// Actions return the exit status: 0 as expected, 1 a violation, an unmet
// expectation or a fault that never fired, 2 a usage, input or infrastructure
// error. They may throw; the
// caller turns an exception into one line on stderr and status 2.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>

#include "target.h"
#include "virtual_time.h"

namespace locklab {

using Action = std::function<int()>;

Action add_run_command(CLI::App& parent);
Action add_check_command(CLI::App& parent);
Action add_list_command(CLI::App& parent);
Action add_suite_command(CLI::App& parent);
Action add_sweep_command(CLI::App& parent);
Action add_envelope_command(CLI::App& parent);
Action add_explore_command(CLI::App& parent);
Action add_report_command(CLI::App& parent);
Action add_merge_command(CLI::App& parent);

constexpr int kUsageError = 2;

// The help text of --target, shared by run, suite and explore.
inline constexpr const char* kTargetHelp =
    "Run against existing Redis servers described by this target file (harness/runner/TARGET.md) "
    "instead of starting servers; faults needing control of the servers are reported "
    "not-applicable";

// The help text of --time, shared by run, suite, sweep, envelope and explore.
inline constexpr const char* kTimeHelp =
    "The clock the runs keep: real; virtual (a clock the lab advances whenever everyone waits: "
    "many times faster, and a seed repeats its history byte for byte; a cell that cannot keep "
    "it is not applicable, with the reason; explore without --faults draws only the faults "
    "that act on it); auto (virtual where a cell can, real elsewhere). "
    "README \"Which clock\"";

// Adds --time (kTimeHelp) to `command`, into `time`.
inline void add_time_option(CLI::App& command, std::string& time) {
  std::vector<std::string> modes;
  for (const auto& mode : kTimeModes) modes.emplace_back(mode.name);
  command.add_option("--time", time, kTimeHelp)->check(CLI::IsMember(modes))->capture_default_str();
}

}  // namespace locklab
