// The index of a suite directory: one row per scenario, one column per
// algorithm, each cell the measured verdict against the expectation, so the
// cells that disagree with the literature stand out from across the room.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "atomic_file.h"
#include "comparison.h"
#include "html.h"
#include "plots.h"
#include "report.h"
#include "run_results.h"

namespace locklab::reports {

namespace {

namespace fs = std::filesystem;

struct Row {
  fs::path dir;
  std::string link;  // the run report, relative to the index
  std::optional<ScenarioResults> results;
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

// What a matrix cell says for each cell outcome: its mark for one run, and
// the legend's words.
struct CellStyle {
  std::optional<RunOutcome> outcome;
  const char* mark;
  const char* legend;
};
const CellStyle kCellStyles[] = {
    {RunOutcome::kMet, "✓ met", "met: measured what the scenario expects"},
    {RunOutcome::kSaferThan, "✓ safer than", "safer: survived a story that breaks the built-in"},
    {RunOutcome::kNotApplicable, "not applicable", "not applicable: not run for this lock"},
    {RunOutcome::kNotExercised, "⚠ NOT EXERCISED", "NOT EXERCISED: a fault never fired"},
    {RunOutcome::kUnmet, "✗ NOT met", "NOT met: the expectation was not met"},
    {RunOutcome::kError, "✗ failed", "failed: the run could not be completed"},
    {std::nullopt, "", "no expectation"},
};

const CellStyle& style_of(std::optional<RunOutcome> outcome) {
  for (const auto& style : kCellStyles)
    if (style.outcome == outcome) return style;
  return kCellStyles[std::size(kCellStyles) - 1];
}

// The cell's tooltip: the verdicts measured against the one expected, and
// every failure, unfired fault, reason not to run and refusal of the runs
// `mine` of `runs`.
std::string cell_tip(const Row& row, const std::string& algorithm,
                     const std::vector<RunResult>& runs, const std::vector<size_t>& mine,
                     const std::map<std::string, size_t>& verdicts) {
  const RunResult& first = runs[mine.front()];
  std::string tip = algorithm + " in " + row.results->scenario + ": measured";
  for (const auto& [verdict, n] : verdicts)
    tip += " " + verdict + (mine.size() > 1 ? " ×" + std::to_string(n) : "");
  if (first.expected) tip += ", expected " + expected_text(*first.expected);
  if (first.like) tip += " (as " + *first.like + ")";
  for (size_t i : mine) {
    const RunResult& run = runs[i];
    if (run.error) tip += "; failed: " + *run.error;
    if (run.outcome == RunOutcome::kNotExercised) tip += "; " + never_fired(run);
    if (run.not_applicable) tip += "; not applicable: " + *run.not_applicable;
    if (run.check)
      for (const auto& stretch : run.check->unavailable) {
        std::string faults;
        for (const auto& f : stretch.faults) faults += (faults.empty() ? "" : ", ") + f;
        tip += "; refused " + stretch.lock + " for " +
               format_duration(stretch.to_ns - stretch.from_ns) + " under " + faults;
      }
  }
  return tip;
}

// The violation kinds found by the runs `mine` of `runs`, or "" when none.
std::string cell_kinds(const std::vector<RunResult>& runs, const std::vector<size_t>& mine) {
  std::set<std::string> kinds;
  for (size_t i : mine)
    for (const auto& kind : found_kinds(runs[i])) kinds.insert(kind);
  if (kinds.empty()) return "";
  std::string list;
  for (const auto& kind : kinds) list += (list.empty() ? "" : ", ") + kind;
  return "<span class=\"cell-kinds\">" + escape(list) + "</span>";
}

// Whose fault the overlaps of the runs `mine` of `runs` were and what the
// resource suffered (measured_words), or "" when they found nothing.
std::string cell_harm(const std::vector<RunResult>& runs, const std::vector<size_t>& mine) {
  std::vector<const RunResult*> cell;
  for (size_t i : mine) cell.push_back(&runs[i]);
  if (std::none_of(cell.begin(), cell.end(),
                   [](const RunResult* run) { return run->verdict == Verdict::Violated; }))
    return "";
  const std::string state(kCellStates.name(cell_state(cell)));
  return "<span class=\"cell-harm " + state + "\">" + escape(measured_words(cell)) + "</span>";
}

// The cell's mark: how many of `total` runs met their expectation (and how
// the others ended), or the one run's outcome.
std::string cell_mark(const std::optional<RunOutcome>& outcome,
                      std::map<RunOutcome, size_t>& counts, size_t total, const std::string& like) {
  std::string mark;
  if (outcome && total > 1) {
    mark = std::to_string(counts[RunOutcome::kMet]) + "/" + std::to_string(total) + " met";
    for (auto [o, words] : {std::pair{RunOutcome::kSaferThan, " safer"},
                            std::pair{RunOutcome::kNotApplicable, " not applicable"},
                            std::pair{RunOutcome::kNotExercised, " NOT EXERCISED"},
                            std::pair{RunOutcome::kError, " failed"}})
      if (counts[o] > 0) mark += ", " + std::to_string(counts[o]) + words;
  } else if (outcome == RunOutcome::kSaferThan) {
    mark = "✓ safer than " + like;
  } else if (outcome) {
    mark = style_of(outcome).mark;
  }
  return "<span class=\"cell-mark\">" + escape(mark) + "</span>";
}

// What the faults cost the runs `mine` of `runs`, said as its own neutral
// fact beside the verdict: the longest refusal and the faults under which
// the lock refused; "" when it never did.
std::string cell_unavailable(const std::vector<RunResult>& runs, const std::vector<size_t>& mine) {
  double longest_s = 0;
  std::set<std::string> under;
  for (size_t i : mine)
    if (runs[i].check)
      for (const auto& stretch : runs[i].check->unavailable) {
        longest_s = std::max(longest_s, double(stretch.to_ns - stretch.from_ns) / 1e9);
        under.insert(stretch.faults.begin(), stretch.faults.end());
      }
  if (under.empty()) return "";
  std::string faults;
  for (const auto& f : under) faults += (faults.empty() ? "" : ", ") + f;
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f s", longest_s);
  return "<span class=\"cell-unavailable\">refuses under " + escape(faults) + " for " + seconds +
         "</span>";
}

// One cell: every run of `algorithm` in the row's scenario (a suite may
// repeat each one), styled by the cell's outcome (cell_outcome). It links to
// the first run that does not pass, else to the first run.
std::string cell(const Row& row, const std::string& algorithm) {
  const auto& runs = row.results->runs;
  std::vector<size_t> mine;
  for (size_t i = 0; i < runs.size(); ++i)
    if (runs[i].algorithm == algorithm) mine.push_back(i);
  if (mine.empty()) return "<td class=\"cell absent\">not run</td>";

  std::map<std::string, size_t> verdicts;
  std::map<RunOutcome, size_t> counts;
  std::vector<RunOutcome> outcomes;
  std::optional<size_t> target;
  for (size_t i : mine) {
    const RunResult& run = runs[i];
    ++verdicts[std::string(verdict_name(run.verdict))];
    if (!run.outcome) continue;
    outcomes.push_back(*run.outcome);
    ++counts[*run.outcome];
    if (!passes(*run.outcome) && !target) target = i;
  }
  const RunResult& first = runs[mine.front()];
  const std::optional<RunOutcome> outcome = cell_outcome(outcomes);
  const std::string tip = cell_tip(row, algorithm, runs, mine, verdicts);
  if (outcome == RunOutcome::kNotApplicable) {
    // Not run: the reason is the whole cell.
    return "<td class=\"cell not-applicable\" title=\"" + escape(tip) +
           "\"><span class=\"cell-mark\">not applicable</span><span class=\"na-reason\">" +
           escape(first.not_applicable.value_or("not run")) + "</span></td>";
  }
  std::string inner;
  for (const auto& [verdict, n] : verdicts) inner += verdict_pill(verdict, mine.size() > 1 ? n : 0);
  inner += cell_harm(runs, mine);
  inner += cell_kinds(runs, mine);
  if (first.expected)
    inner += "<span class=\"cell-expected\">expected " + escape(expected_text(*first.expected)) +
             "</span>";
  inner += cell_mark(outcome, counts, mine.size(), first.like.value_or("the built-in"));

  std::string out =
      "<td class=\"cell " + outcome_class(outcome) + "\" title=\"" + escape(tip) + "\">";
  if (row.problem.empty())
    out += "<a href=\"" + escape(row.link) + "#" + escape(row.ids[target.value_or(mine.front())]) +
           "\">" + inner + "</a>";
  else
    out += inner;
  out += cell_unavailable(runs, mine);
  for (size_t i : mine)
    if (!runs[i].incidents.empty()) {
      out += "<span class=\"cell-incident\">⚑ " + escape(incident_text(runs[i].incidents.front())) +
             "</span>";
      break;
    }
  if (first.carried_from)
    out += "<span class=\"cell-carried\">↻ carried from " + escape(*first.carried_from) + "</span>";
  if (first.expected && !first.expected->why.empty())
    out += "<details class=\"why\"><summary>why</summary>" + escape(first.expected->why) +
           "</details>";
  return out + "</td>";
}

// The key to the cell styles.
std::string matrix_legend() {
  std::string out = "<div class=\"matrix-legend\">";
  for (const auto& style : kCellStyles)
    out += "<span class=\"cell-key " + outcome_class(style.outcome) + "\">" + escape(style.legend) +
           "</span>";
  return out + "<span class=\"cell-key absent\">not run: not in the scenario's list</span></div>";
}

// The charts of the sweeps found beside the suite: SUITE_DIR/sweep.json and
// each subdirectory's; a sweep file that cannot be read is said so, not hidden.
std::string sweep_charts(const fs::path& suite_dir) {
  std::vector<fs::path> files;
  if (fs::exists(suite_dir / "sweep.json")) files.push_back(suite_dir / "sweep.json");
  std::vector<fs::path> nested;
  for (const auto& entry : fs::directory_iterator(suite_dir))
    if (entry.is_directory() && fs::exists(entry.path() / "sweep.json"))
      nested.push_back(entry.path() / "sweep.json");
  std::sort(nested.begin(), nested.end());
  files.insert(files.end(), nested.begin(), nested.end());
  if (files.empty()) return "";
  std::string out =
      "<h2 class=\"plots-title\">Breaking points</h2><p class=\"hint\">Per sweep, the smallest "
      "value of the swept fault parameter at which each algorithm broke (red), the range it "
      "was measured safe in (green).</p><div class=\"plots\">";
  for (const auto& file : files) {
    std::string link = url_path(fs::relative(file, suite_dir).generic_string());
    try {
      std::string chart = sweep_chart_html(read_json_file(file), link);
      out += chart.empty() ? "<p class=\"notice\">" + escape(file.string()) +
                                 ": not a sweep document (no \"algorithms\")</p>"
                           : chart;
    } catch (const std::exception& e) {
      out += "<p class=\"notice\">" + escape(e.what()) + "</p>";
    }
  }
  return out + "</div>";
}

// The charts of the safety envelopes found beside the suite:
// SUITE_DIR/envelope.json (an envelope's own directory) or
// SUITE_DIR/envelope/envelope.json (a comparison's); a file that cannot be
// read is said so, not hidden.
std::string envelope_charts(const fs::path& suite_dir) {
  fs::path file = suite_dir / "envelope.json";
  if (!fs::exists(file)) file = suite_dir / "envelope" / "envelope.json";
  if (!fs::exists(file)) return "";
  std::string out =
      "<h2 class=\"plots-title\" id=\"envelopes\">Safety envelopes</h2><p class=\"hint\">How "
      "much of each fault every lock survives in one story (c1 holds the lock, c2 waits for it; "
      "lock_impls/envelope_axis.h): green, the sizes it was measured safe at; red, where two "
      "clients held it at once (the median of the repeats, a whisker from their least to their "
      "largest); a dark square, where the store was first harmed when that came later (fencing "
      "rejected the late write, or c1's own check stopped it; the row's words say \"no harm\" "
      "when it never was); the hollow diamond, the bound its design predicts for the overlap "
      "(at the right end: predicted never to break).</p>";
  const std::string link = url_path(fs::relative(file, suite_dir).generic_string());
  try {
    const nlohmann::json envelope = read_json_file(file);
    std::string charts = envelope_charts_html(envelope, link);
    if (charts.empty())
      return out + "<p class=\"notice\">" + escape(file.string()) +
             ": not an envelope document (no \"cells\")</p>";
    const nlohmann::json totals = envelope.value("totals", nlohmann::json::object());
    const int disagree = totals.value("disagree", 0), not_told = totals.value("not_exercised", 0),
              explained = totals.value("explained", 0);
    out += "<div class=\"banner " + std::string(disagree + not_told > explained ? "bad" : "good") +
           "\">" + std::to_string(totals.value("agree", 0)) + " of " +
           std::to_string(totals.value("cells", 0)) + " bounds as their design predicts; " +
           std::to_string(disagree) + " differ and " + std::to_string(not_told) +
           " could not be told, " + std::to_string(explained) + " of these explained; " +
           std::to_string(totals.value("not_applicable", 0)) +
           " not applicable</div><div class=\"envelope-plots\">" + charts + "</div>";
  } catch (const std::exception& e) {
    out += "<p class=\"notice\">" + escape(e.what()) + "</p>";
  }
  return out;
}

// The stories a suite's rows could read.
std::vector<const ScenarioResults*> stories_of(const std::vector<Row>& rows) {
  std::vector<const ScenarioResults*> out;
  for (const auto& row : rows)
    if (row.results) out.push_back(&*row.results);
  return out;
}

// "Which lock survives what": per lock, the stories in which the resource
// came to no harm out of those it was measured in, the stories in which its
// lease broke and those in which holders only overran it, and the ones that
// harmed the resource.
std::string survivors(const std::vector<Row>& rows, const std::vector<std::string>& algorithms) {
  if (algorithms.size() < 2) return "";
  std::string out =
      "<h2>Which lock survives what</h2><p class=\"hint\">Survives: no run harmed the resource "
      "(no lost update, no stale write accepted). Lease broken: the lock granted a hold inside "
      "another's lease. Only overran: the holds overlapped only because a holder acted after "
      "its lease ended.</p><table class=\"survivors\"><thead><tr><th>lock</th><th>survives</th>"
      "<th>lease broken in</th><th>only overran in</th><th>harmed by</th></tr></thead><tbody>";
  for (const auto& algorithm : algorithms) {
    const Survival tally = survival(stories_of(rows), algorithm);
    std::string harmed;
    for (const auto& story : tally.harmed_by) harmed += (harmed.empty() ? "" : ", ") + story;
    out += "<tr><td>" + escape(algorithm) + "</td><td>" + std::to_string(tally.survived) + " of " +
           std::to_string(tally.measured) + " stories</td><td>" +
           counted_stories(tally.lease_broken) + "</td><td>" + counted_stories(tally.only_overran) +
           "</td><td>" + escape(harmed.empty() ? "—" : harmed) + "</td></tr>";
  }
  return out + "</tbody></table>";
}

// The matrix's columns: the locks the suite lists, in its order (the order
// of their design), then any other lock a run names.
struct Columns {
  std::vector<std::string> algorithms;
  std::map<std::string, std::string> family;      // of a listed lock
  std::map<std::string, std::string> shown_name;  // of a listed lock: name, version, like
};

Columns columns_of(const nlohmann::ordered_json& suite, const std::vector<Row>& rows) {
  Columns columns;
  for (const LockColumn& lock : listed_locks(suite)) {
    columns.algorithms.push_back(lock.name);
    columns.family[lock.name] = lock.family;
    columns.shown_name[lock.name] = lock.name +
                                    (lock.version.empty() ? "" : " (" + lock.version + ")") +
                                    (lock.like.empty() ? "" : ", like " + lock.like);
  }
  std::vector<std::string>& algorithms = columns.algorithms;
  for (const auto& row : rows) {
    if (!row.results) continue;
    for (const auto& run : row.results->runs)
      if (std::find(algorithms.begin(), algorithms.end(), run.algorithm) == algorithms.end())
        algorithms.push_back(run.algorithm);
  }
  return columns;
}

// The grid at the top of a comparison (comparison_grid_html): its columns are
// the matrix's, the listed locks with their families first.
std::string grid(const nlohmann::ordered_json& suite, const std::vector<Row>& rows,
                 const Columns& columns) {
  if (columns.algorithms.size() < 2) return "";
  std::vector<LockColumn> locks = listed_locks(suite);
  for (const auto& algorithm : columns.algorithms)
    if (std::none_of(locks.begin(), locks.end(),
                     [&](const LockColumn& l) { return l.name == algorithm; }))
      locks.push_back({algorithm, "", "", ""});
  std::vector<GridStory> stories;
  for (const auto& row : rows)
    if (row.results) stories.push_back({&*row.results, row.problem.empty() ? row.link : ""});
  return comparison_grid_html(stories, locks);
}

// The banner over the matrix: each outcome counted apart, the rarer ones
// only when they happen.
std::string outcome_banner(const std::vector<Row>& rows) {
  std::map<RunOutcome, size_t> outcomes;  // runs per outcome
  size_t none = 0;                        // runs without an expectation
  for (const auto& row : rows) {
    if (!row.results) continue;
    for (const auto& run : row.results->runs) {
      if (run.outcome)
        ++outcomes[*run.outcome];
      else
        ++none;
    }
  }
  const size_t broken = size_t(
      std::count_if(rows.begin(), rows.end(), [](const Row& r) { return !r.problem.empty(); }));
  const size_t met = outcomes[RunOutcome::kMet], not_met = outcomes[RunOutcome::kUnmet],
               failed = outcomes[RunOutcome::kError],
               not_exercised = outcomes[RunOutcome::kNotExercised];
  bool bad = not_met > 0 || failed > 0 || not_exercised > 0 || broken > 0;
  std::string out = "<div class=\"banner " + std::string(bad ? "bad" : "good") + "\">" +
                    counted(met, "expectation") + " met, " + std::to_string(not_met) + " NOT met";
  if (failed) out += ", " + counted(failed, "run") + " failed";
  if (not_exercised) out += ", " + counted(not_exercised, "run") + " NOT EXERCISED";
  if (outcomes[RunOutcome::kSaferThan])
    out += ", " + counted(outcomes[RunOutcome::kSaferThan], "run") + " safer than the built-in";
  if (outcomes[RunOutcome::kNotApplicable])
    out += ", " + counted(outcomes[RunOutcome::kNotApplicable], "run") + " not applicable";
  if (broken) out += ", " + counted(broken, "scenario") + " unreadable";
  if (none) out += ", " + counted(none, "run") + " without expectation";
  return out + "</div>";
}

// The matrix's head: the families, in the order of the design's history,
// over their locks (when the suite lists them), then each lock with how many
// stories it survives.
std::string matrix_head(Columns& columns, const std::vector<Row>& rows) {
  const std::vector<std::string>& algorithms = columns.algorithms;
  std::string out = "<thead>";
  if (!columns.family.empty()) {
    out += "<tr class=\"families\"><th></th>";
    for (size_t i = 0; i < algorithms.size();) {
      size_t span = 1;
      while (i + span < algorithms.size() &&
             columns.family[algorithms[i + span]] == columns.family[algorithms[i]])
        ++span;
      out += "<th colspan=\"" + std::to_string(span) + "\" class=\"family\">" +
             escape(columns.family[algorithms[i]]) + "</th>";
      i += span;
    }
    out += "</tr>";
  }
  out += "<tr><th>story</th>";
  for (const auto& algorithm : algorithms) {
    const Survival tally = survival(stories_of(rows), algorithm);
    out += "<th class=\"lock\">" +
           escape(columns.shown_name.count(algorithm) ? columns.shown_name[algorithm] : algorithm) +
           "<span class=\"survives\">survives " + std::to_string(tally.survived) + " of " +
           std::to_string(tally.measured) + "</span></th>";
  }
  return out + "</tr></thead>";
}

// One scenario's row of the matrix: its name, linking its report, and a
// cell per lock; or what kept it from being read.
std::string matrix_row(const Row& row, const std::vector<std::string>& algorithms) {
  if (!row.results)
    return "<tr class=\"broken\"><th>" + escape(row.dir.filename().string()) +
           "</th><td colspan=\"" + std::to_string(std::max<size_t>(algorithms.size(), 1)) + "\">" +
           escape(row.problem) + "</td></tr>";
  const ScenarioResults& results = *row.results;
  std::string out = "<tr><th>";
  out += row.problem.empty()
             ? "<a href=\"" + escape(row.link) + "\">" + escape(results.scenario) + "</a>"
             : escape(results.scenario);
  if (!results.description.empty())
    out += "<span class=\"scenario-description\">" + escape(results.description) + "</span>";
  if (!row.problem.empty())
    out += "<span class=\"row-problem\">report not written: " + escape(row.problem) + "</span>";
  out += "</th>";
  for (const auto& algorithm : algorithms) out += cell(row, algorithm);
  return out + "</tr>";
}

// The page of a directory with charts but no scenarios (an envelope's or a
// sweep's own): a head of kind `kind` over `charts`.
std::string charts_page(const std::string& name, const std::string& kind,
                        const std::string& charts) {
  return html_page(name + " — locklab " + kind,
                   "<header class=\"page-head\"><div class=\"crumb\">"
                   "locklab " +
                       kind + "</div><h1>" + escape(name) + "</h1></header>" + charts);
}

// The suite's results.json (an empty document when there is none), and its
// name from it, else the directory's.
nlohmann::ordered_json read_suite(const std::filesystem::path& suite_dir, std::string& name) {
  nlohmann::ordered_json suite;
  name = suite_dir.filename().string();
  if (fs::exists(suite_dir / "results.json")) {
    suite = read_json_file(suite_dir / "results.json");
    if (!suite.is_object())
      throw std::runtime_error((suite_dir / "results.json").string() + ": not a JSON object");
    for (const char* key : {"suite", "name"})
      if (suite.contains(key) && suite[key].is_string()) name = suite[key].get<std::string>();
  }
  if (!fs::is_directory(suite_dir))
    throw std::runtime_error("cannot read suite directory " + suite_dir.string());
  return suite;
}

}  // namespace

std::filesystem::path write_suite_report(const std::filesystem::path& suite_dir) {
  std::string name;
  const nlohmann::ordered_json suite = read_suite(suite_dir, name);
  std::vector<Row> rows;
  for (const auto& dir : scenario_dirs(suite_dir, suite)) rows.push_back(read_row(suite_dir, dir));
  Columns columns = columns_of(suite, rows);
  const std::string sweeps = sweep_charts(suite_dir);
  const std::string envelopes = envelope_charts(suite_dir);
  auto path = suite_dir / "index.html";
  if (rows.empty() && !envelopes.empty()) {
    write_file_atomically(path, charts_page(name, "envelope", envelopes + sweeps));
    return path;
  }
  if (rows.empty() && !sweeps.empty()) {
    // No empty matrix above the charts.
    write_file_atomically(path, charts_page(name, "sweep", sweeps));
    return path;
  }
  std::string body = "<header class=\"page-head\"><div class=\"crumb\">locklab suite</div><h1>" +
                     escape(name) + "</h1><p class=\"meta\">" + std::to_string(rows.size()) +
                     " scenarios × " + std::to_string(columns.algorithms.size()) +
                     " algorithms</p></header>";
  body += outcome_banner(rows);
  body += grid(suite, rows, columns);
  body += survivors(rows, columns.algorithms);
  body +=
      "<div class=\"matrix-box\"><table class=\"matrix\">" + matrix_head(columns, rows) + "<tbody>";
  for (const auto& row : rows) body += matrix_row(row, columns.algorithms);
  body += "</tbody></table></div>";
  if (!rows.empty()) body += matrix_legend();
  if (rows.empty())
    body += "<p class=\"notice\">No scenario directories (with a results.json) here.</p>";
  body += envelopes;
  body += sweeps;
  write_file_atomically(path, html_page(name + " — locklab suite", body));
  return path;
}

}  // namespace locklab::reports
