// `locklab report DIR`: the run or suite report written again from the
// directory's files alone (results.json, the histories), with no run.
#include <iostream>

#include "atomic_file.h"
#include "commands.h"
#include "comparison.h"
#include "report.h"

namespace locklab {

Action add_report_command(CLI::App& parent) {
  auto dir = std::make_shared<std::string>();
  auto comparison = std::make_shared<std::string>();
  auto* report = parent.add_subcommand(
      "report",
      "Write the HTML report of a run or suite directory again from its files (results.json, "
      "history.jsonl), e.g. a CI artefact copied home");
  report
      ->add_option("dir", *dir,
                   "A run directory (locklab run --out) or a suite directory (locklab suite --out)")
      ->required();
  report->add_option("--comparison", *comparison,
                     "Of a suite directory: also write which lock survives what as Markdown to "
                     "this file (docs/COMPARISON.md is written so)");
  report->footer("Exit status: 0 written, 2 the directory or its files cannot be read.");
  return [dir, comparison] {
    std::cerr << "report: " << reports::write_report(*dir).string() << "\n";
    if (!comparison->empty()) {
      write_file_atomically(*comparison, reports::comparison_markdown(*dir));
      std::cerr << "comparison: " << *comparison << "\n";
    }
    return 0;
  };
}

}  // namespace locklab
