// JUnit XML, the report format CI systems read: <testsuites>, one
// <testsuite> per scenario, one <testcase> per scenario × algorithm
// (classname = scenario, name = algorithm) with a <failure> for an unmet
// expectation and an <error> for a run that could not be completed.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace locklab::suite {

struct JunitProblem {
  std::string type;     // "unmet-expectation" or "infrastructure"
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

// The test case of one scenario × algorithm from its suite entry (see
// summarize_cell) and its runs (run_algorithm documents, in run order).
// With several runs, the failure lists every run that missed; with the
// cell's scenario_file, each with the `locklab run` command that repeats it.
JunitCase junit_case(const nlohmann::json& cell, const std::vector<nlohmann::json>& runs);

// The whole document, UTF-8, with counts and times summed per suite.
std::string junit_xml(const std::string& name, const std::vector<JunitSuite>& suites);

}  // namespace locklab::suite
