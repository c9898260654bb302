// Progress of a suite on stderr. On a terminal: one live status line,
// redrawn in place, with a permanent line for each run that does not pass
// (unmet, not exercised, failed). Elsewhere (CI logs): one plain line per
// finished run, e.g.
//   [3/40] pause-longer-than-lease × redlock: violated (expected violated) ok 2.1s
// Safe to call from several worker threads.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <ostream>
#include <set>
#include <string>

#include "results.h"

namespace locklab::suite {

// The plain line for a finished run (`label` names the cell, `done` of
// `total` runs are finished including this one), by outcome:
//   met             LABEL: VERDICT (expected V) ok 2.1s
//   unmet           LABEL: VERDICT (expected V) NOT MET 2.1s — <why>
//   not-exercised   LABEL: VERDICT (expected V) NOT EXERCISED 2.1s — fault 0 (...) never fired
//   safer-than      LABEL: VERDICT (expected V) safer than LIKE 2.1s
//   not-applicable  LABEL: not applicable 0.0s — <why>
//   error           LABEL: error ERROR 2.1s — the run failed: <why>
std::string progress_line(size_t done, size_t total, const std::string& label, const RunResult& run,
                          double seconds);

class Progress {
 public:
  // `live`: redraw a status line (only for a terminal: it uses \r and an
  // ANSI erase); otherwise print plain lines.
  Progress(std::ostream& out, bool live, size_t total);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // A run of the cell named `label` begins.
  void started(const std::string& label);
  // That run ended with `run` (its outcome decided) after `seconds`.
  void finished(const std::string& label, const RunResult& run, double seconds);
  // Ends the live line, if any; call once after the last run.
  void close();

 private:
  void redraw();  // mu_ held

  std::mutex mu_;
  std::ostream& out_;
  const bool live_;
  const size_t total_;
  size_t done_ = 0;
  std::map<RunOutcome, size_t> outcomes_;  // finished runs per outcome
  std::multiset<std::string> running_;
};

}  // namespace locklab::suite
