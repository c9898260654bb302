// locklab: the command line. Exit status everywhere: 0 as expected (for
// `check`: no violation), 1 a violation found, an expectation unmet or a
// fault that never fired, 2 a usage, input or infrastructure error (one line
// on stderr says which).
#include <iostream>

#include "commands.h"
#include "process.h"
#include "version.h"

int main(int argc, char** argv) {
  using namespace locklab;
  install_termination_cleanup();

  CLI::App app{"locklab — a correctness and fault-injection lab for Redis distributed locks"};
  app.set_version_flag("--version", kVersion);
  app.require_subcommand(1);
  app.footer(
      "Exit status: 0 as expected, 1 violation, unmet expectation or a fault that never fired, 2 "
      "usage/input/infrastructure error.");
  std::vector<Action> actions = {
      add_run_command(app),     add_check_command(app),  add_list_command(app),
      add_suite_command(app),   add_sweep_command(app),  add_envelope_command(app),
      add_explore_command(app), add_report_command(app), add_merge_command(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int status = app.exit(e);
    return status == 0 ? 0 : kUsageError;
  }
  try {
    auto subcommands = app.get_subcommands({});
    for (size_t i = 0; i < subcommands.size(); ++i)
      if (subcommands[i]->parsed()) return actions[i]();
  } catch (const std::exception& e) {
    std::cerr << "locklab: error: " << e.what() << "\n";
    return kUsageError;
  }
  return kUsageError;
}
