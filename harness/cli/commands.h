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

}  // namespace locklab
