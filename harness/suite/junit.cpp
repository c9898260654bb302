#include "junit.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "summary.h"

namespace locklab::suite {

using nlohmann::json;

namespace {

constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the UTF-8 sequence at text[i] if it encodes a character XML
// 1.0 allows, else 0.
size_t xml_char_length(std::string_view text, size_t i) {
  const unsigned char first = static_cast<unsigned char>(text[i]);
  if (first < 0x80) return first >= 0x20 || first == '\t' || first == '\n' || first == '\r';
  size_t length = 0;
  uint32_t code = 0;
  if ((first & 0xE0) == 0xC0) {
    length = 2, code = first & 0x1F;
  } else if ((first & 0xF0) == 0xE0) {
    length = 3, code = first & 0x0F;
  } else if ((first & 0xF8) == 0xF0) {
    length = 4, code = first & 0x07;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    const unsigned char next = static_cast<unsigned char>(text[i + k]);
    if ((next & 0xC0) != 0x80) return 0;
    code = (code << 6) | (next & 0x3F);
  }
  static const uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};  // shorter would be overlong
  if (code < kSmallest[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF) ||
      code == 0xFFFE || code == 0xFFFF)
    return 0;
  return length;
}

std::string escaped(std::string_view text, bool attribute) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t length = xml_char_length(text, i);
    if (length == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    const char c = text[i];
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else if (c == '\'')
      out += "&apos;";
    else if (c == '\r')
      out += "&#13;";
    else if (attribute && c == '\n')
      out += "&#10;";
    else if (attribute && c == '\t')
      out += "&#9;";
    else
      out.append(text.substr(i, length));
    i += length;
  }
  return out;
}

std::string seconds_text(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f", seconds < 0 ? 0.0 : seconds);
  return buffer;
}

// "run 2 (seed 9)": how a person finds the run again.
std::string run_label(const RunResult& run, size_t position) {
  std::string label = "run " + std::to_string(run.run.value_or(int64_t(position + 1)));
  if (run.seed) label += " (seed " + std::to_string(*run.seed) + ")";
  return label;
}

// The `locklab run` command that repeats `run` of the scenario in `file`.
std::string repeat_command(const std::string& file, const std::string& name, const RunResult& run) {
  std::string command = "locklab run " + file;
  if (run.adapter) {
    command += " --adapter '" + *run.adapter + "'";
    if (run.like) command += " --like " + *run.like;
  } else {
    command += " --algorithm " + name;
  }
  return command + " --seed " + std::to_string(*run.seed);
}

std::string counted(int part, size_t whole) {
  return whole > 1 ? std::to_string(part) + " of " + std::to_string(whole) + " runs: " : "";
}

// "mutual-exclusion (overrun): c2 acquired L …" and, for an overlap, its
// class's own sentence on the next line.
std::string violation_lines(const checkers::Violation& v) {
  if (!v.overlap) return "  " + v.kind + ": " + v.explanation + "\n";
  return "  " + v.kind + " (" + v.overlap->overlap_class + "): " + v.explanation + "\n    " +
         v.overlap->explanation + "\n";
}

std::string ms_text(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f ms", ms);
  return text;
}

// What the runs' stores suffered, their overlaps by class and their closest
// calls, for the system-out; empty when no run's check says (older files).
std::string harm_text(const std::vector<RunResult>& runs) {
  int harmful = 0, checked = 0;
  checkers::Harm sum;
  std::optional<double> grant, write;
  for (const auto& run : runs) {
    if (!run.check || !run.check->harm) continue;
    const checkers::Harm& h = *run.check->harm;
    ++checked;
    harmful += h.harmful();
    sum.lost_updates += h.lost_updates;
    sum.stale_writes += h.stale_writes;
    sum.rejected_by_fencing += h.rejected_by_fencing;
    for (const auto& [name, n] : h.overlaps) sum.overlaps[name] += n;
    const auto& closest = run.check->closest_call;
    if (closest.grant_after_lease)
      grant = std::min(grant.value_or(1e300), closest.grant_after_lease->ms);
    if (closest.write_before_lease_end)
      write = std::min(write.value_or(1e300), closest.write_before_lease_end->ms);
  }
  if (checked == 0) return "";
  std::string text = "harm: " + std::to_string(harmful) + " of " + std::to_string(checked) +
                     " runs harmful (the store accepted " + std::to_string(sum.lost_updates) +
                     " lost updates and " + std::to_string(sum.stale_writes) +
                     " stale writes; fencing rejected " + std::to_string(sum.rejected_by_fencing) +
                     " writes)\noverlaps:";
  for (const auto& row : overlap_classes())
    text += " " + std::string(row.name) + " " +
            std::to_string(sum.overlaps[std::string(row.name)]) + ",";
  text += " " + std::string(kStoppedByFencingLabel) + " " +
          std::to_string(sum.overlaps[std::string(kStoppedByFencing)]) + "\n";
  if (grant || write) {
    text += "closest call:";
    if (grant) text += " a grant " + ms_text(*grant) + " after a lease ended (at most);";
    if (write)
      text += " an accepted write " + ms_text(*write) + " before its lease ended (at most)";
    text += "\n";
  }
  return text;
}

void write_problem(std::string& out, const char* element, const JunitProblem& problem) {
  out += "      <" + std::string(element) + " message=\"" + xml_attribute(problem.message) +
         "\" type=\"" + xml_attribute(problem.type) + "\">" + xml_text(problem.text) + "</" +
         element + ">\n";
}

}  // namespace

std::string xml_text(std::string_view text) {
  return escaped(text, false);
}
std::string xml_attribute(std::string_view text) {
  return escaped(text, true);
}

JunitCase junit_case(const CellSummary& cell, const std::vector<RunResult>& runs) {
  JunitCase test;
  test.classname = cell.scenario;
  test.name = cell.algorithm;
  test.seconds = cell.seconds;

  JunitProblem error{"infrastructure", "", ""},
      failure{std::string(outcome_name(RunOutcome::kNotExercised)), "", ""};
  int errors = 0, misses = 0;
  size_t not_applicable = 0;
  std::optional<std::string> skip_reason;
  std::string notes;
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunResult& run = runs[i];
    const RunOutcome outcome = run.outcome.value_or(decide_outcome(run));
    if (outcome == RunOutcome::kNotApplicable) {
      ++not_applicable;
      if (!skip_reason) skip_reason = run.not_applicable.value_or("not applicable");
      continue;
    }
    if (outcome == RunOutcome::kSaferThan) {
      notes += (runs.size() > 1 ? run_label(run, i) + ": " : "") + passing_note(run) + "\n";
      continue;
    }
    const std::string reason = unmet_reason(run);
    if (reason.empty()) continue;
    const bool failed = outcome == RunOutcome::kError;
    if (outcome == RunOutcome::kUnmet) failure.type = "unmet-expectation";
    JunitProblem& problem = failed ? error : failure;
    if (problem.message.empty()) problem.message = reason;
    problem.text += run_label(run, i) + ": " + reason + "\n";
    if (!failed && run.check) {
      const auto& listed = run.check->violations;
      for (size_t v = 0; v < listed.size() && v < 10; ++v)
        problem.text += violation_lines(listed[v]);
      if (listed.size() > 10) problem.text += "  … and more in the run's results.json\n";
    }
    if (!cell.scenario_file.empty() && run.seed)
      problem.text += "  repeat: " + repeat_command(cell.scenario_file, test.name, run) + "\n";
    ++(failed ? errors : misses);
  }
  if (errors > 0) {
    error.message = counted(errors, runs.size()) + error.message;
    test.error = error;
  } else if (misses > 0) {
    failure.message = counted(misses, runs.size()) + failure.message;
    test.failure = failure;
  } else if (!runs.empty() && not_applicable == runs.size()) {
    test.skipped = skip_reason;
  }

  std::string verdicts;
  for (const auto& v : cell.verdicts) verdicts += (verdicts.empty() ? "" : ", ") + v;
  json seeds = json::array();
  for (const auto& seed : cell.seeds) seeds.push_back(seed ? json(*seed) : json());
  test.system_out =
      "expected: " + (cell.expected ? expectation_json(*cell.expected) : json::object()).dump() +
      (cell.like ? " (as " + *cell.like + ")" : "") + "\nmeasured: " + verdicts + " (detections " +
      std::to_string(cell.detections) + " of " + std::to_string(cell.runs) +
      " runs)\nseeds: " + seeds.dump() + "\n" + notes + harm_text(runs);
  if (cell.runs_unavailable > 0) {
    std::string faults;
    for (const auto& f : cell.unavailable_under) faults += (faults.empty() ? "" : ", ") + f;
    char longest[32];
    std::snprintf(longest, sizeof longest, "%.1f", cell.longest_unavailable_seconds);
    test.system_out += "availability lost under faults (not a violation): " +
                       counted(int(cell.runs_unavailable), runs.size()) + "refused while " +
                       faults + " was in force, for up to " + longest + " s\n";
  }
  if (cell.first_incident)
    test.system_out += "incidents in " + std::to_string(cell.runs_with_incidents) + " of " +
                       std::to_string(runs.size()) +
                       " runs: " + incident_text(*cell.first_incident) + "\n";
  return test;
}

std::string junit_xml(const std::string& name, const std::vector<JunitSuite>& suites) {
  std::string body;
  size_t tests = 0, failures = 0, errors = 0, skipped = 0;
  double seconds = 0;
  for (const auto& suite : suites) {
    size_t suite_failures = 0, suite_errors = 0, suite_skipped = 0;
    double suite_seconds = 0;
    for (const auto& test : suite.cases) {
      suite_failures += test.failure.has_value();
      suite_errors += test.error.has_value();
      suite_skipped += !test.failure && !test.error && test.skipped;
      suite_seconds += test.seconds;
    }
    body += "  <testsuite name=\"" + xml_attribute(suite.name) + "\" tests=\"" +
            std::to_string(suite.cases.size()) + "\" failures=\"" + std::to_string(suite_failures) +
            "\" errors=\"" + std::to_string(suite_errors) + "\" skipped=\"" +
            std::to_string(suite_skipped) + "\" time=\"" + seconds_text(suite_seconds) + "\">\n";
    if (!suite.properties.empty()) {
      body += "    <properties>\n";
      for (const auto& [key, value] : suite.properties)
        body += "      <property name=\"" + xml_attribute(key) + "\" value=\"" +
                xml_attribute(value) + "\"/>\n";
      body += "    </properties>\n";
    }
    for (const auto& test : suite.cases) {
      body += "    <testcase classname=\"" + xml_attribute(test.classname) + "\" name=\"" +
              xml_attribute(test.name) + "\" time=\"" + seconds_text(test.seconds) + "\">\n";
      if (test.error) write_problem(body, "error", *test.error);
      if (test.failure) write_problem(body, "failure", *test.failure);
      if (test.skipped && !test.error && !test.failure)
        body += "      <skipped message=\"" + xml_attribute(*test.skipped) + "\"/>\n";
      if (!test.system_out.empty())
        body += "      <system-out>" + xml_text(test.system_out) + "</system-out>\n";
      body += "    </testcase>\n";
    }
    body += "  </testsuite>\n";
    tests += suite.cases.size(), failures += suite_failures, errors += suite_errors;
    skipped += suite_skipped, seconds += suite_seconds;
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"" + xml_attribute(name) +
         "\" tests=\"" + std::to_string(tests) + "\" failures=\"" + std::to_string(failures) +
         "\" errors=\"" + std::to_string(errors) + "\" skipped=\"" + std::to_string(skipped) +
         "\" time=\"" + seconds_text(seconds) + "\">\n" + body + "</testsuites>\n";
}

}  // namespace locklab::suite
