// What a scenario predicts a run will measure: one entry of a scenario
// file's "expect" block (scenarios/schema.json), and the "expected" field of
// each run in results.json (FORMAT.md beside this file).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "violation_kind.h"

namespace locklab {

struct Expectation {
  Verdict verdict = Verdict::Safe;  // Safe or Violated
  std::vector<std::string> kinds;   // with "violated": every kind that must be found
  std::vector<std::string> absent;  // kinds that must not be found (e.g. fencing: no "stale-write")
  // With "violated": every overlap class (OverlapClass's name) that must be
  // found among the run's overlaps: whose fault the design says the overlap is.
  std::vector<std::string> classes;
  // Every incident kind (vocabulary/incident_kind.h) the library must leave
  // behind in the run: what its design leaves to nobody (an unhandled
  // rejection of a background refresh, say), whatever the verdict.
  std::vector<std::string> incidents;
  // Why the design predicts this, in one sentence, written before the cell
  // was measured (and, where a measurement corrected it, what the history showed).
  std::string why;

  bool operator==(const Expectation&) const = default;
};

// `expectation` as results.json writes it: {"verdict": ...}, plus "kinds",
// "absent", "classes", "incidents" and "why" when they are not empty.
nlohmann::json expectation_json(const Expectation& expectation);

}  // namespace locklab
