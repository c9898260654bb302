// Progress of a suite on stderr. On a terminal: one live status line,
// redrawn in place, with a permanent line for each run that missed its
// expectation or failed. Elsewhere (CI logs): one plain line per finished
// run, e.g.
//   [3/40] pause-longer-than-lease × redlock: violated (expected violated) ok 2.1s
// Safe to call from several worker threads.
#pragma once

#include <cstddef>
#include <mutex>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <string>

namespace locklab::suite {

// The plain line for a finished run (`label` names the cell, `done` of
// `total` runs are finished including this one).
std::string progress_line(size_t done, size_t total, const std::string& label,
                          const nlohmann::json& run, double seconds);

class Progress {
 public:
  // `live`: redraw a status line (only for a terminal: it uses \r and an
  // ANSI erase); otherwise print plain lines.
  Progress(std::ostream& out, bool live, size_t total);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // A run of the cell named `label` begins.
  void started(const std::string& label);
  // That run ended with the run_algorithm document `run` after `seconds`.
  void finished(const std::string& label, const nlohmann::json& run, double seconds);
  // Ends the live line, if any; call once after the last run.
  void close();

 private:
  void redraw();  // mu_ held

  std::mutex mu_;
  std::ostream& out_;
  const bool live_;
  const size_t total_;
  size_t done_ = 0, met_ = 0, unmet_ = 0, errors_ = 0;
  std::multiset<std::string> running_;
};

}  // namespace locklab::suite
