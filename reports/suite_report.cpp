// The index of a suite directory: one row per scenario, one column per
// algorithm, each cell the measured verdict against the expectation, so the
// cells that disagree with the literature stand out from across the room.
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include "html.h"
#include "report.h"
#include "run_results.h"

namespace locklab::reports {

namespace {

namespace fs = std::filesystem;

struct Row {
  fs::path dir;
  std::string link;  // the run report, relative to the index
  std::optional<RunResults> results;
  std::vector<std::string> ids;  // section ids in the run report
  std::string problem;           // why the row is broken, if it is
};

// `path` as a relative URL: unreserved characters kept, the rest
// percent-encoded, so any directory name makes a working link.
std::string url_path(const std::string& path) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/')
      out += char(c);
    else
      out += std::string("%") + hex[c >> 4] + hex[c & 15];
  }
  return out;
}

// The scenario directories: first those the suite's results.json lists, in
// its order, then any other subdirectory holding a results.json.
std::vector<fs::path> scenario_dirs(const fs::path& suite_dir,
                                    const nlohmann::ordered_json& suite) {
  std::vector<fs::path> dirs;
  auto add = [&](const fs::path& given) {
    fs::path dir = given.lexically_normal();
    if (dir.filename().empty()) dir = dir.parent_path();  // "x/" and "x" are one directory
    if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
  };
  for (const char* list : {"scenarios", "runs"}) {
    if (!suite.is_object() || !suite.contains(list) || !suite[list].is_array()) continue;
    for (const auto& entry : suite[list]) {
      // An entry names its directory, or only its scenario (which is the
      // directory's name when the runner used the default layout).
      std::string name = entry.is_string() ? entry.get<std::string>() : "";
      bool only_scenario = false;
      for (const char* key : {"dir", "out", "path", "directory", "scenario"})
        if (name.empty() && entry.is_object() && entry.contains(key) && entry[key].is_string()) {
          name = entry[key].get<std::string>();
          only_scenario = std::string(key) == "scenario";
        }
      if (name.empty()) continue;
      fs::path dir = fs::path(name).is_absolute() ? fs::path(name) : suite_dir / name;
      if (!only_scenario || fs::exists(dir / "results.json")) add(dir);
    }
  }
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(suite_dir))
    if (entry.is_directory() && fs::exists(entry.path() / "results.json"))
      found.push_back(entry.path());
  std::sort(found.begin(), found.end());
  for (const auto& dir : found) add(dir);
  return dirs;
}

Row read_row(const fs::path& suite_dir, const fs::path& dir) {
  Row row;
  row.dir = dir;
  row.link = url_path(fs::relative(dir / "report.html", suite_dir).generic_string());
  try {
    row.results = read_run_results(dir);
    row.ids = section_ids(*row.results);
    write_run_report(dir);
  } catch (const std::exception& e) {
    row.problem = e.what();
  }
  return row;
}

// "1 run", "2 runs".
std::string counted(size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// One cell: every run of `algorithm` in the row's scenario (a suite may
// repeat each one). It links to the first run that missed its expectation,
// else to the first run.
std::string cell(const Row& row, const std::string& algorithm) {
  const auto& runs = row.results->runs;
  std::vector<size_t> mine;
  for (size_t i = 0; i < runs.size(); ++i)
    if (runs[i].algorithm == algorithm) mine.push_back(i);
  if (mine.empty()) return "<td class=\"cell absent\">not run</td>";

  size_t met = 0, not_met = 0, failed = 0;
  std::map<std::string, size_t> verdicts;
  size_t target = mine.front();
  for (size_t i : mine) {
    const AlgorithmRun& run = runs[i];
    ++verdicts[run.verdict];
    if (run.error) ++failed;
    if (run.expectation_met == true) ++met;
    if (run.expectation_met == false && not_met++ == 0) target = i;
  }
  const AlgorithmRun& first = runs[mine.front()];
  std::string state = not_met ? "not-met" : met ? "met" : "none";
  if (failed) state += " failed";

  std::string tip = algorithm + " in " + row.results->scenario + ": measured";
  for (const auto& [verdict, n] : verdicts)
    tip += " " + verdict + (mine.size() > 1 ? " ×" + std::to_string(n) : "");
  if (first.expected_verdict) tip += ", expected " + *first.expected_verdict;
  for (size_t i = 0; i < first.expected_kinds.size(); ++i)
    tip += (i ? ", " : " with ") + first.expected_kinds[i];
  for (size_t i : mine)
    if (runs[i].error) tip += "; failed: " + *runs[i].error;

  std::string inner;
  for (const auto& [verdict, n] : verdicts) inner += verdict_pill(verdict, mine.size() > 1 ? n : 0);
  if (first.expected_verdict)
    inner +=
        "<span class=\"cell-expected\">expected " + escape(*first.expected_verdict) + "</span>";
  std::string mark;
  if (met + not_met > 0 && mine.size() > 1)
    mark = std::to_string(met) + "/" + std::to_string(mine.size()) + " met";
  else if (met + not_met > 0)
    mark = not_met ? "✗ NOT met" : "✓ met";
  inner += "<span class=\"cell-mark\">" + escape(mark) + "</span>";

  std::string out = "<td class=\"cell " + state + "\" title=\"" + escape(tip) + "\">";
  if (row.problem.empty())
    out += "<a href=\"" + escape(row.link) + "#" + escape(row.ids[target]) + "\">" + inner + "</a>";
  else
    out += inner;
  return out + "</td>";
}

}  // namespace

std::filesystem::path write_suite_report(const std::filesystem::path& suite_dir) {
  nlohmann::ordered_json suite;
  std::string name = suite_dir.filename().string();
  if (fs::exists(suite_dir / "results.json")) {
    suite = read_json_file(suite_dir / "results.json");
    if (!suite.is_object())
      throw std::runtime_error((suite_dir / "results.json").string() + ": not a JSON object");
    for (const char* key : {"suite", "name"})
      if (suite.contains(key) && suite[key].is_string()) name = suite[key].get<std::string>();
  }
  if (!fs::is_directory(suite_dir))
    throw std::runtime_error("cannot read suite directory " + suite_dir.string());

  std::vector<Row> rows;
  for (const auto& dir : scenario_dirs(suite_dir, suite)) rows.push_back(read_row(suite_dir, dir));

  std::vector<std::string> algorithms;
  size_t met = 0, not_met = 0, failed = 0, none = 0;
  for (const auto& row : rows) {
    if (!row.results) continue;
    for (const auto& run : row.results->runs) {
      if (std::find(algorithms.begin(), algorithms.end(), run.algorithm) == algorithms.end())
        algorithms.push_back(run.algorithm);
      if (run.error) ++failed;
      if (!run.expectation_met)
        ++none;
      else
        ++(*run.expectation_met ? met : not_met);
    }
  }
  size_t broken = size_t(
      std::count_if(rows.begin(), rows.end(), [](const Row& r) { return !r.problem.empty(); }));

  std::string body = "<header class=\"page-head\"><div class=\"crumb\">locklab suite</div><h1>" +
                     escape(name) + "</h1><p class=\"meta\">" + std::to_string(rows.size()) +
                     " scenarios × " + std::to_string(algorithms.size()) +
                     " algorithms</p></header>";
  bool bad = not_met > 0 || failed > 0 || broken > 0;
  body += "<div class=\"banner " + std::string(bad ? "bad" : "good") + "\">" +
          counted(met, "expectation") + " met, " + std::to_string(not_met) + " NOT met";
  if (failed) body += ", " + counted(failed, "run") + " failed";
  if (broken) body += ", " + counted(broken, "scenario") + " unreadable";
  if (none) body += ", " + counted(none, "run") + " without expectation";
  body += "</div>";

  body += "<div class=\"matrix-box\"><table class=\"matrix\"><thead><tr><th>scenario</th>";
  for (const auto& algorithm : algorithms) body += "<th>" + escape(algorithm) + "</th>";
  body += "</tr></thead><tbody>";
  for (const auto& row : rows) {
    if (!row.results) {
      body += "<tr class=\"broken\"><th>" + escape(row.dir.filename().string()) +
              "</th><td colspan=\"" + std::to_string(std::max<size_t>(algorithms.size(), 1)) +
              "\">" + escape(row.problem) + "</td></tr>";
      continue;
    }
    const RunResults& results = *row.results;
    body += "<tr><th>";
    body += row.problem.empty()
                ? "<a href=\"" + escape(row.link) + "\">" + escape(results.scenario) + "</a>"
                : escape(results.scenario);
    if (!results.description.empty())
      body += "<span class=\"scenario-description\">" + escape(results.description) + "</span>";
    if (!row.problem.empty())
      body += "<span class=\"row-problem\">report not written: " + escape(row.problem) + "</span>";
    body += "</th>";
    for (const auto& algorithm : algorithms) body += cell(row, algorithm);
    body += "</tr>";
  }
  body += "</tbody></table></div>";
  if (rows.empty())
    body += "<p class=\"notice\">No scenario directories (with a results.json) here.</p>";

  auto path = suite_dir / "index.html";
  write_file_atomically(path, html_page(name + " — locklab suite", body));
  return path;
}

}  // namespace locklab::reports
