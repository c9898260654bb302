// `locklab check HISTORY` and `locklab list`: the two commands that start no server.
#include <iostream>

#include "checkers.h"
#include "commands.h"
#include "fault_kind.h"
#include "lock.h"

namespace locklab {

Action add_check_command(CLI::App& parent) {
  auto history_file = std::make_shared<std::string>();
  auto* check = parent.add_subcommand(
      "check",
      "Check a history file (JSONL, see harness/history/FORMAT.md); print the results as JSON");
  check->add_option("history", *history_file, "History file")->required();
  return [history_file] {
    auto results = checkers::check_file(*history_file);
    std::cout << results.to_json().dump(2) << "\n";
    return results.violated() ? 1 : 0;
  };
}

Action add_list_command(CLI::App& parent) {
  CLI::App* list =
      parent.add_subcommand("list", "List the built-in lock algorithms and what each supports");
  auto faults = std::make_shared<bool>(false);
  list->add_flag("--faults", *faults,
                 "List the fault kinds instead: target, duration, parameters (Markdown)");
  return [faults] {
    if (*faults) {
      std::cout << fault_kinds_markdown();
      return 0;
    }
    for (const auto& a : algorithms()) {
      std::string features;
      if (a.reentrant) features += " reentrant";
      if (a.fencing) features += " fencing";
      if (a.multi_node) features += " multi-node";
      if (a.needs_replica) features += " replicas";
      std::string steps;
      for (const auto& step : a.steps) steps += (steps.empty() ? "\tsteps: " : ", ") + step;
      std::cout << a.id << "\t" << a.description << "\t[" << (features.empty() ? " -" : features)
                << " ]" << steps << "\n";
    }
    return 0;
  };
}

}  // namespace locklab
