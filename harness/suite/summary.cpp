#include "summary.h"

#include <algorithm>
#include <map>
#include <set>

namespace locklab::suite {

using nlohmann::json;

namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::vector<std::string> strings(const json& array) {
  std::vector<std::string> out;
  if (array.is_array())
    for (const auto& item : array)
      if (item.is_string()) out.push_back(item.get<std::string>());
  return out;
}

const json& violations(const json& run) {
  static const json none = json::array();
  auto check = run.find("check");
  if (check == run.end() || !check->is_object()) return none;
  auto listed = check->find("violations");
  return listed != check->end() && listed->is_array() ? *listed : none;
}

// The first listed violation of `kind` (any kind when empty), explained.
std::string explanation_of(const json& run, const std::string& kind) {
  for (const auto& v : violations(run))
    if (kind.empty() || v.value("kind", "") == kind) {
      std::string text = v.value("explanation", "");
      return text.empty() ? v.value("kind", "violation") : text;
    }
  return "";
}

std::string expected_text(const json& expected) {
  std::string text = expected.value("verdict", "safe");
  auto kinds = strings(expected.value("kinds", json::array()));
  if (!kinds.empty()) text += " (" + joined(kinds) + ")";
  return text;
}

}  // namespace

std::vector<std::string> found_kinds(const json& run) {
  std::set<std::string> kinds;
  for (const auto& v : violations(run))
    if (v.contains("kind") && v["kind"].is_string()) kinds.insert(v["kind"].get<std::string>());
  return {kinds.begin(), kinds.end()};
}

std::string unmet_reason(const json& run) {
  if (run.contains("error") && run["error"].is_string())
    return "the run failed: " + run["error"].get<std::string>();
  if (run.value("expectation_met", false)) return "";
  const json expected = run.value("expected", json::object());
  const std::string want = expected.value("verdict", "safe");
  const std::string got = run.value("verdict", "unknown");
  const auto found = found_kinds(run);
  if (want == "safe" && got == "violated")
    return "expected safe, found " + joined(found) + ": " + explanation_of(run, "");
  if (want != got) {
    return "expected " + expected_text(expected) + ", measured " + got +
           (got == "safe" ? ": no violation found" : "");
  }
  for (const auto& kind : strings(expected.value("kinds", json::array())))
    if (std::find(found.begin(), found.end(), kind) == found.end())
      return "expected " + expected_text(expected) + ", but no " + kind +
             " was found (found: " + (found.empty() ? "nothing" : joined(found)) + ")";
  for (const auto& kind : strings(expected.value("absent", json::array())))
    if (std::find(found.begin(), found.end(), kind) != found.end())
      return "found " + kind + ", which the scenario rules out: " + explanation_of(run, kind);
  return "expected " + expected_text(expected) + ", measured " + got + " (expectation not met)";
}

json summarize_cell(const std::string& scenario, const std::vector<json>& runs) {
  json cell{
      {"scenario", scenario},
      {"algorithm", runs.empty() ? "" : runs.front().value("algorithm", "")},
      {"expected", runs.empty() ? json::object() : runs.front().value("expected", json::object())}};
  int met = 0, detections = 0, errors = 0;
  double seconds = 0;
  std::map<std::string, int> kinds;
  json verdicts = json::array(), seeds = json::array();
  for (const auto& run : runs) {
    const bool failed = run.contains("error") && !run["error"].is_null();
    errors += failed;
    met += !failed && run.value("expectation_met", false);
    detections += run.value("verdict", "") == "violated";
    for (const auto& kind : found_kinds(run)) ++kinds[kind];
    verdicts.push_back(failed ? "error" : run.value("verdict", "unknown"));
    seeds.push_back(run.value("seed", json()));
    seconds += run.value("seconds", 0.0);
  }
  const int completed = int(runs.size()) - errors;
  cell["runs"] = runs.size();
  cell["runs_met"] = met;
  cell["met"] = !runs.empty() && met == int(runs.size());
  cell["detections"] = detections;
  cell["detection_rate"] = completed > 0 ? double(detections) / completed : 0.0;
  cell["errors"] = errors;
  cell["kinds"] = kinds;
  cell["verdicts"] = verdicts;
  cell["seeds"] = seeds;
  cell["seconds"] = seconds;
  return cell;
}

json suite_totals(const json& cells) {
  int64_t met = 0, with_errors = 0, runs = 0, runs_met = 0, detections = 0, errors = 0;
  for (const auto& cell : cells) {
    met += cell.value("met", false);
    with_errors += cell.value("errors", 0) > 0;
    runs += cell.value("runs", 0);
    runs_met += cell.value("runs_met", 0);
    detections += cell.value("detections", 0);
    errors += cell.value("errors", 0);
  }
  return {{"cells", cells.size()},
          {"cells_met", met},
          {"cells_unmet", int64_t(cells.size()) - met},
          {"cells_with_errors", with_errors},
          {"runs", runs},
          {"runs_met", runs_met},
          {"detections", detections},
          {"errors", errors}};
}

int suite_exit_status(const json& totals) {
  if (totals.value("errors", 0) > 0) return 2;
  return totals.value("cells_unmet", 0) > 0 ? 1 : 0;
}

}  // namespace locklab::suite
