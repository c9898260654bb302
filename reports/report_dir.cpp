// Which report a directory gets: `locklab report DIR` regenerates it from the
// files alone, e.g. a CI artefact copied home.
#include <stdexcept>
#include <system_error>

#include "report.h"
#include "run_results.h"

namespace locklab::reports {

namespace fs = std::filesystem;

fs::path write_report(const fs::path& dir) {
  std::error_code error;
  if (!fs::exists(dir, error)) throw std::runtime_error(dir.string() + ": no such directory");
  if (!fs::is_directory(dir, error)) throw std::runtime_error(dir.string() + ": not a directory");
  const fs::path results = dir / "results.json";
  if (fs::exists(results, error)) {
    nlohmann::ordered_json document = read_json_file(results);
    if (!document.is_object()) throw std::runtime_error(results.string() + ": not a JSON object");
    if (document.contains("runs")) return write_run_report(dir);
    if (document.contains("cells") || document.contains("scenarios"))
      return write_suite_report(dir);
    throw std::runtime_error(
        results.string() + ": neither a run's results (no \"runs\") nor a suite's (no \"cells\")");
  }
  if (fs::exists(dir / "sweep.json", error) || fs::exists(dir / "envelope.json", error))
    return write_suite_report(dir);
  for (const auto& entry : fs::directory_iterator(dir, error))
    if (entry.is_directory() &&
        (fs::exists(entry.path() / "results.json") || fs::exists(entry.path() / "sweep.json")))
      return write_suite_report(dir);
  throw std::runtime_error(dir.string() +
                           ": no results.json here or in a subdirectory (not a run or suite "
                           "directory written by locklab)");
}

}  // namespace locklab::reports
