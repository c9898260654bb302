// `locklab report DIR`: the run or suite report written again from the
// directory's files alone (results.json, the histories), with no run.
#include <iostream>

#include "commands.h"
#include "report.h"

namespace locklab {

Action add_report_command(CLI::App& parent) {
  auto dir = std::make_shared<std::string>();
  auto* report = parent.add_subcommand(
      "report",
      "Write the HTML report of a run or suite directory again from its files (results.json, "
      "history.jsonl), e.g. a CI artefact copied home");
  report
      ->add_option("dir", *dir,
                   "A run directory (locklab run --out) or a suite directory (locklab suite --out)")
      ->required();
  report->footer("Exit status: 0 written, 2 the directory or its files cannot be read.");
  return [dir] {
    std::cerr << "report: " << reports::write_report(*dir).string() << "\n";
    return 0;
  };
}

}  // namespace locklab
