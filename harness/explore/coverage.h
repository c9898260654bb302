// What an exploration covered: for each fault kind, the runs that had it,
// its faults generated and fired, and the range of each drawn field among
// those that fired; for each trigger step, the faults set there and fired.
// The summary's "what was explored, and what never was" is read from it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "exploration.h"
#include "fault_kind.h"
#include "results.h"
#include "scenario.h"

namespace locklab::explore {

class Coverage {
 public:
  // Counts the faults of `s` as `run` recorded them (fired or not).
  void add(const Scenario& s, const RunResult& run);
  // The same with `fired[i]`: whether fault i of `s` fired.
  void add(const Scenario& s, const std::vector<bool>& fired);

  // explore.json's "coverage" (exploration.h), over the kinds `allowed` and
  // the trigger steps `steps` the exploration could use.
  CoverageSummary summary(const std::vector<FaultKind>& allowed,
                          const std::vector<std::string>& steps) const;

  // "pause 20/25, clock-jump 3/9": fired / generated, for the progress line.
  std::string line() const;

 private:
  struct Kind {
    int64_t runs = 0, generated = 0, fired = 0;  // runs with it; its faults; of which fired
    std::map<std::string, std::pair<double, double>> ranges;  // param -> [min, max] fired
  };
  std::map<std::string, Kind> kinds_;
  std::map<std::string, std::pair<int64_t, int64_t>> steps_;  // generated, fired
};

}  // namespace locklab::explore
