// JUnit XML, the report format CI systems read: <testsuites>, one
// <testsuite> per scenario, one <testcase> per scenario × algorithm
// (classname = scenario, name = algorithm) with an <error> for a run that
// could not be completed, a <failure> for an unmet expectation or a fault
// that never fired, and <skipped> for a cell that was not applicable.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "results.h"
#include "summary.h"

namespace locklab::suite {

struct JunitProblem {
  std::string type;     // "unmet-expectation", "not-exercised" or "infrastructure"
  std::string message;  // one line
  std::string text;     // the details, several lines
};

struct JunitCase {
  std::string classname;
  std::string name;
  double seconds = 0;
  std::optional<JunitProblem> failure;
  std::optional<JunitProblem> error;
  std::string system_out;
  std::optional<std::string> skipped;  // why the case was not run (its message)
};

struct JunitSuite {
  std::string name;
  std::vector<std::pair<std::string, std::string>> properties;
  std::vector<JunitCase> cases;
};

// `text` as XML character data: markup characters become entities,
// characters XML 1.0 cannot carry (control characters other than tab,
// newline and carriage return, malformed UTF-8) become U+FFFD.
std::string xml_text(std::string_view text);
// The same for a double-quoted attribute value, where tab, newline and
// carriage return are also written as character references so that they
// survive attribute normalization.
std::string xml_attribute(std::string_view text);

// The test case of one scenario × algorithm from its suite entry and its
// runs (in run order). Some run failed: an <error> (type "infrastructure").
// Else some run unmet or not exercised: a <failure> of type
// "unmet-expectation", or "not-exercised" when no run is unmet, whose
// message says why (naming each fault that never fired) and whose text lists
// every run that missed, each with the `locklab run` command that repeats it
// when the cell has its scenario_file. Else every run not applicable:
// skipped, with the reason. Otherwise it passes; each safer-than run adds a
// line "safer than <like>: ..." to system-out.
JunitCase junit_case(const CellSummary& cell, const std::vector<RunResult>& runs);

// The whole document, UTF-8, with counts (tests, failures, errors, skipped)
// and times summed per suite.
std::string junit_xml(const std::string& name, const std::vector<JunitSuite>& suites);

}  // namespace locklab::suite
