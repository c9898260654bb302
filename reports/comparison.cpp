#include "comparison.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "joined.h"
#include "run_results.h"
#include "violation_kind.h"

namespace locklab::reports {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

std::string text_at(const json& object, const char* key) {
  return object.is_object() && object.contains(key) && object[key].is_string()
             ? object[key].get<std::string>()
             : "";
}

RunOutcome outcome_of(const RunResult& run) {
  return run.outcome.value_or(decide_outcome(run));
}

// The labels of `kinds` found, in the vocabulary's order.
std::vector<std::string> labels_of(const std::set<std::string>& kinds) {
  std::vector<std::string> out;
  for (const auto& row : violation_kinds())
    if (kinds.count(std::string(row.name))) out.emplace_back(row.label);
  return out;
}

bool is_harm_kind(const std::string& kind) {
  return std::any_of(std::begin(checkers::kHarmKinds), std::end(checkers::kHarmKinds),
                     [&](ViolationKind k) { return name(k) == kind; });
}

// What the runs of one cell found, gathered for its words and its state.
struct Found {
  std::set<OverlapClass> classes;
  std::set<std::string> harm_kinds, other_kinds;  // other: neither an overlap nor harm
  bool overlap = false, harmed = false, stopped_by_fencing = false, violated = false;
  size_t runs_harmed = 0, runs_violated = 0;
};

Found found_in(const std::vector<const RunResult*>& runs) {
  Found out;
  const std::string overlap(name(ViolationKind::MutualExclusion));
  for (const RunResult* run : runs) {
    out.runs_violated += run->verdict == Verdict::Violated;
    if (!run->check) continue;
    const Check& check = *run->check;
    for (OverlapClass c : check.found_classes()) out.classes.insert(c);
    const bool harmed = check.harmful();
    out.runs_harmed += harmed;
    out.harmed = out.harmed || harmed;
    out.stopped_by_fencing =
        out.stopped_by_fencing || check.found_class(std::string(kStoppedByFencing)) > 0;
    for (const auto& kind : check.found_kinds()) {
      if (kind == overlap)
        out.overlap = true;
      else
        (is_harm_kind(kind) ? out.harm_kinds : out.other_kinds).insert(kind);
    }
  }
  out.violated = out.runs_violated > 0;
  return out;
}

// "broken lease and overrun": the classes' labels; "overlap" for overlaps
// of a file that does not classify them.
std::string classes_words(const Found& found) {
  std::vector<std::string> labels;
  for (OverlapClass c : found.classes) labels.emplace_back(info(c).label);
  if (labels.empty() && found.overlap)
    labels.emplace_back(info(ViolationKind::MutualExclusion).label);
  return joined(labels, " and ");
}

// The cell's words before any count of runs or mark of an unmet expectation.
std::string found_words(const Found& found) {
  if (!found.violated) return "✓ safe";
  std::string out = classes_words(found);
  if (found.harmed) {
    const std::string harm = joined(labels_of(found.harm_kinds));
    out = "✗ " + out + (out.empty() || harm.empty() ? "" : ": ") + harm;
  } else if (found.stopped_by_fencing) {
    out += ", " + std::string(kStoppedByFencingLabel);
  }
  if (!found.other_kinds.empty())
    out += (out.empty() ? "" : "; ") + joined(labels_of(found.other_kinds));
  return out;
}

std::optional<RunOutcome> outcome_of_cell(const std::vector<const RunResult*>& runs) {
  std::vector<RunOutcome> outcomes;
  for (const RunResult* run : runs) outcomes.push_back(outcome_of(*run));
  return cell_outcome(outcomes);
}

// A table cell can hold no '|' or line break.
std::string cell_text(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

// "refuses 2.1 s under crash-node": what the faults cost, when they cost anything.
std::string refusals(const std::vector<const RunResult*>& runs) {
  double longest = 0;
  std::set<std::string> under;
  for (const RunResult* run : runs)
    if (run->check)
      for (const auto& stretch : run->check->unavailable) {
        longest = std::max(longest, double(stretch.to_ns - stretch.from_ns) / 1e9);
        under.insert(stretch.faults.begin(), stretch.faults.end());
      }
  if (under.empty()) return "";
  std::string faults;
  for (const auto& f : under) faults += (faults.empty() ? "" : ", ") + f;
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f s", longest);
  return "refuses " + std::string(seconds) + " under " + faults;
}

// "⚑ c1: unhandled-rejection at 2.41 s (…); an application … would have
// crashed here (2 of 3 runs)": what the library left behind, from the first
// run that left something; "" when no run did.
std::string incident_words(const std::vector<const RunResult*>& runs) {
  const RunResult* first = nullptr;
  size_t with = 0;
  for (const RunResult* run : runs)
    if (!run->incidents.empty()) {
      ++with;
      if (!first) first = run;
    }
  if (!first) return "";
  std::string out = "⚑ " + incident_text(first->incidents.front());
  if (with < runs.size())
    out += " (" + std::to_string(with) + " of " + std::to_string(runs.size()) + " runs)";
  return out;
}

}  // namespace

std::string expected_words(const Expectation& e) {
  if (e.verdict != Verdict::Violated) return std::string(verdict_name(Verdict::Safe));
  std::string kinds;
  for (const auto& kind : e.kinds) {
    const auto known = violation_kind_named(kind);
    kinds += (kinds.empty() ? "" : ", ") + (known ? std::string(info(*known).label) : kind);
  }
  std::string classes;
  for (const auto& c : e.classes) {
    const auto known = overlap_class_named(c);
    classes += (classes.empty() ? "" : " or ") + (known ? std::string(info(*known).label) : c);
  }
  return std::string(verdict_name(Verdict::Violated)) + (kinds.empty() ? "" : " (" + kinds + ")") +
         (classes.empty() ? "" : ", " + classes);
}

std::string counted_stories(size_t n) {
  if (n == 0) return "—";
  return std::to_string(n) + (n == 1 ? " story" : " stories");
}

namespace {

std::string column_title(const LockColumn& lock) {
  std::string out = "`" + lock.name + "`";
  if (!lock.version.empty()) out += " " + lock.version;
  return out;
}

}  // namespace

std::vector<LockColumn> listed_locks(const json& suite) {
  std::vector<LockColumn> out;
  if (!suite.is_object() || !suite.contains("locks") || !suite["locks"].is_array()) return out;
  for (const auto& lock : suite["locks"]) {
    LockColumn column{text_at(lock, "name"), text_at(lock, "family"), text_at(lock, "version"),
                      text_at(lock, "like")};
    if (!column.name.empty()) out.push_back(std::move(column));
  }
  return out;
}

std::vector<const RunResult*> runs_of(const ScenarioResults& story, const std::string& lock) {
  std::vector<const RunResult*> out;
  for (const auto& run : story.runs)
    if (run.algorithm == lock) out.push_back(&run);
  return out;
}

namespace {

// Whether every run of a cell completed with its faults fired.
bool measured_all(const std::vector<const RunResult*>& runs) {
  return std::all_of(runs.begin(), runs.end(), [](const RunResult* run) {
    const RunOutcome outcome = outcome_of(*run);
    return outcome != RunOutcome::kNotApplicable && outcome != RunOutcome::kError &&
           outcome != RunOutcome::kNotExercised;
  });
}

}  // namespace

CellState cell_state(const std::vector<const RunResult*>& runs) {
  if (runs.empty()) return CellState::Unmeasured;
  const auto outcome = outcome_of_cell(runs);
  if (outcome == RunOutcome::kNotApplicable) return CellState::NotApplicable;
  if (!measured_all(runs)) return CellState::Unmeasured;
  const Found found = found_in(runs);
  if (found.harmed) return CellState::Harmed;
  if (found.classes.count(OverlapClass::BrokenLease)) return CellState::LeaseBroken;
  if (found.classes.count(OverlapClass::Overrun)) return CellState::Overran;
  if (found.overlap) return CellState::Unclassified;
  return CellState::Safe;
}

std::string measured_words(const std::vector<const RunResult*>& runs) {
  if (runs.empty()) return "—";
  const auto outcome = outcome_of_cell(runs);
  if (outcome == RunOutcome::kNotApplicable) return "n/a";
  if (outcome == RunOutcome::kError) return "⚠ failed";
  if (outcome == RunOutcome::kNotExercised) return "⚠ not exercised";
  const Found found = found_in(runs);
  std::string out = found_words(found);
  // How many runs the words are about, when not all of them.
  const size_t about = found.harmed ? found.runs_harmed : found.runs_violated;
  if (about > 0 && about < runs.size())
    out += " (" + std::to_string(about) + " of " + std::to_string(runs.size()) + " runs)";
  if (outcome == RunOutcome::kUnmet) out = "⚠ " + out;
  if (std::any_of(runs.begin(), runs.end(),
                  [](const RunResult* r) { return !r->incidents.empty(); }))
    out += " ⚑";
  if (std::all_of(runs.begin(), runs.end(),
                  [](const RunResult* r) { return r->carried_from.has_value(); }))
    out += " ↻";
  if (std::all_of(runs.begin(), runs.end(),
                  [](const RunResult* r) { return r->time == "virtual"; }))
    out += " ◷";
  return out;
}

Survival survival(const std::vector<const ScenarioResults*>& stories, const std::string& lock) {
  Survival out;
  for (const ScenarioResults* story : stories) {
    const auto runs = runs_of(*story, lock);
    if (runs.empty() || !measured_all(runs)) continue;
    ++out.measured;
    const Found found = found_in(runs);
    if (found.harmed)
      out.harmed_by.push_back(story->scenario);
    else
      ++out.survived;
    if (found.classes.count(OverlapClass::BrokenLease))
      ++out.lease_broken;
    else if (found.classes.count(OverlapClass::Overrun))
      ++out.only_overran;
  }
  return out;
}

namespace {

// The command line an invocation recorded, its program without its directory.
std::string command_of(const json& results, const std::string& otherwise) {
  std::string command;
  if (results.contains("invocation") && results["invocation"].contains("command_line"))
    for (const auto& arg : results["invocation"]["command_line"])
      if (arg.is_string()) {
        std::string word = arg.get<std::string>();
        if (command.empty()) word = fs::path(word).filename().string();  // the program, not where
        command += (command.empty() ? "" : " ") + word;
      }
  return command.empty() ? otherwise : command;
}

// The stories of a suite's results directory, in the suite's order.
std::vector<ScenarioResults> read_stories(const fs::path& suite_dir, const json& suite) {
  if (!suite.is_object() || !suite.contains("scenarios") || !suite["scenarios"].is_array())
    throw std::runtime_error((suite_dir / "results.json").string() +
                             ": not the results.json of a suite (no \"scenarios\")");
  std::vector<ScenarioResults> stories;
  for (const auto& entry : suite["scenarios"]) {
    const std::string dir = text_at(entry, "dir");
    if (!dir.empty()) stories.push_back(read_run_results(suite_dir / dir));
  }
  return stories;
}

// The suite's locks, then any lock a run names that the suite did not list
// (a suite that predates "locks": its runs' order).
std::vector<LockColumn> columns_of(const json& suite, const std::vector<ScenarioResults>& stories) {
  std::vector<LockColumn> locks = listed_locks(suite);
  for (const auto& story : stories)
    for (const auto& run : story.runs)
      if (std::none_of(locks.begin(), locks.end(),
                       [&](const LockColumn& l) { return l.name == run.algorithm; }))
        locks.push_back({run.algorithm, "", "", run.like.value_or("")});
  return locks;
}

// "- adapters kept …" for a suite's or an envelope's document that kept its
// adapters between runs, else nothing.
std::string adapters_line(const json& document) {
  const json adapters = document.value("adapters", json::object());
  if (!adapters.value("kept", false)) return "";
  return "- adapters kept between runs (harness/adapter/PROTOCOL.md, \"Kept between runs\"): " +
         adapters.value("started", json(0)).dump() + " processes started, taken again " +
         adapters.value("reused", json(0)).dump() +
         " times; an adapter that cannot be reset is stopped, and one on a clock of its own is "
         "kept with that clock, set back to real time between runs\n";
}

std::string comparison_header(const json& suite) {
  const int64_t runs_per_cell =
      suite.contains("options") ? suite["options"].value("runs", int64_t(1)) : 1;
  std::string md =
      "# Which lock survives what\n\n"
      "Every lock of the lab, and every library added to the run, against every story of the "
      "suite: what each run measured, what the lock's design predicts and why. Generated from "
      "a suite's results by `locklab report DIR --comparison docs/COMPARISON.md`; do not edit "
      "it by hand, run the suite again.\n\n";
  md += "- lab: locklab " + text_at(suite, "locklab_version") + "\n";
  md += "- Redis: " +
        (text_at(suite, "redis_version").empty() ? "unknown" : text_at(suite, "redis_version")) +
        "\n";
  md += "- run on: " + text_at(suite, "started_at") + "\n";
  md += "- command: `" + command_of(suite, "locklab suite") + "`\n";
  md += "- runs per cell: " + std::to_string(runs_per_cell) + "\n";
  md += adapters_line(suite);
  if (suite.contains("reuse") && suite["reuse"].is_object())
    md += "- carried over: " + std::to_string(suite["reuse"].value("cells_carried", 0)) +
          " cells were not run again but carried from the earlier run in `" +
          text_at(suite["reuse"], "from") +
          "`, measured under the same conditions (`--reuse`); ↻ marks them\n";
  return md + "\n";
}

std::string survival_section(const std::vector<const ScenarioResults*>& stories,
                             const std::vector<LockColumn>& locks) {
  std::string md =
      "## What each lock survives\n\nA lock survives a story when no run of it harmed the "
      "resource: the store accepted no lost update and no stale write. Beside it, the stories "
      "in which the lock's lease broke (it granted a hold inside another's lease) and those in "
      "which holders only overran their lease (the lock was right; the holder acted on after "
      "its lease ended), harmful or not.\n\n"
      "| lock | family | survives | lease broken in | only overran in | harmed by |\n"
      "| --- | --- | --- | --- | --- | --- |\n";
  for (const auto& lock : locks) {
    const Survival tally = survival(stories, lock.name);
    std::string family = lock.family;
    if (!lock.like.empty())
      family += (family.empty() ? "" : ", ") + std::string("like ") + lock.like;
    md += "| " + column_title(lock) + " | " + cell_text(family) + " | " +
          std::to_string(tally.survived) + " of " + std::to_string(tally.measured) + " stories | " +
          counted_stories(tally.lease_broken) + " | " + counted_stories(tally.only_overran) +
          " | " + cell_text(tally.harmed_by.empty() ? "—" : joined(tally.harmed_by)) + " |\n";
  }
  return md;
}

std::string matrix_section(const std::vector<ScenarioResults>& stories,
                           const std::vector<LockColumn>& locks) {
  std::string md =
      "\n## The matrix\n\n✓ no violation in any run; ✗ the resource was harmed, after whose "
      "fault the holds overlapped (broken lease: the lock granted a hold inside another's "
      "lease; overrun: a holder acted after its lease ended; unclassified: the history cannot "
      "tell which, and when only where the requests' transit times fell kept it from telling, "
      "another run of the cell may name the class) and what the store accepted; without ✗, an "
      "overlap or a violation that harmed nothing (stopped by fencing: the late "
      "holder's writes were all rejected); n/a: the story cannot be told to that lock (its "
      "reason is below); ⚠: the measurement is not what the story predicts; ↻: carried from an "
      "earlier run (--reuse); ◷: measured on virtual time (README \"Which clock\"); ⚑: the library "
      "left something its caller never saw (an unhandled rejection, an exception that ended one "
      "of its threads), listed below the matrix.\n\n| story |";
  for (const auto& lock : locks) md += " " + column_title(lock) + " |";
  md += "\n| --- |";
  for (size_t i = 0; i < locks.size(); ++i) md += " --- |";
  md += "\n";
  for (const auto& story : stories) {
    md += "| [" + story.scenario + "](#" + story.scenario + ") |";
    for (const auto& lock : locks)
      md += " " + cell_text(measured_words(runs_of(story, lock.name))) + " |";
    md += "\n";
  }
  return md;
}

std::string left_behind_section(const std::vector<ScenarioResults>& stories,
                                const std::vector<LockColumn>& locks) {
  std::string left_behind;
  for (const auto& story : stories)
    for (const auto& lock : locks)
      if (const std::string words = incident_words(runs_of(story, lock.name)); !words.empty())
        left_behind += "- " + story.scenario + " × `" + lock.name + "`: " + words + "\n";
  if (left_behind.empty()) return "";
  return "\n## What the libraries left behind\n\nNot violations: what a library left that its "
         "caller never saw, as its adapter caught it (harness/adapter/PROTOCOL.md, "
         "\"Incidents\"). The lab's adapters survive it; an application on its runtime's "
         "defaults would not have, or would never have known.\n\n" +
         left_behind;
}

std::string story_sections(const std::vector<ScenarioResults>& stories,
                           const std::vector<LockColumn>& locks) {
  std::string md = "\n## Story by story\n";
  for (const auto& story : stories) {
    md += "\n### " + story.scenario + "\n\n" + story.description + "\n\n" +
          "| lock | measured | expected | why |\n| --- | --- | --- | --- |\n";
    for (const auto& lock : locks) {
      const auto runs = runs_of(story, lock.name);
      if (runs.empty()) continue;
      const RunResult& first = *runs.front();
      std::string result = measured_words(runs);
      if (const std::string cost = refusals(runs); !cost.empty()) result += "; " + cost;
      if (const std::string left = incident_words(runs); !left.empty()) result += "; " + left;
      const bool not_applicable = outcome_of(first) == RunOutcome::kNotApplicable;
      const std::string expected =
          not_applicable ? "—" : expected_words(first.expected.value_or(Expectation{}));
      const std::string why = not_applicable ? first.not_applicable.value_or("")
                                             : first.expected.value_or(Expectation{}).why;
      md += "| " + column_title(lock) + " | " + cell_text(result) + " | " + cell_text(expected) +
            " | " + cell_text(why) + " |\n";
    }
  }
  return md;
}

}  // namespace

std::string comparison_markdown(const fs::path& suite_dir) {
  const json suite = read_json_file(suite_dir / "results.json");
  const std::vector<ScenarioResults> stories = read_stories(suite_dir, suite);
  std::vector<const ScenarioResults*> all;
  for (const auto& story : stories) all.push_back(&story);
  const std::vector<LockColumn> locks = columns_of(suite, stories);

  std::string md = comparison_header(suite) + survival_section(all, locks) +
                   matrix_section(stories, locks) + left_behind_section(stories, locks);
  if (const fs::path file = suite_dir / "envelope" / "envelope.json"; fs::exists(file))
    md += "\n" + envelope_markdown(read_json_file(file));
  return md + story_sections(stories, locks);
}

namespace {

std::string bound_text(const json& value) {
  if (!value.is_number()) return "?";
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", value.get<double>());
  return text;
}

// One bound of an envelope cell ({outcome, median, min, max}), `bold` for the headline.
std::string bound_words(const json& bound, bool bold) {
  const std::string outcome = text_at(bound, "outcome");
  if (outcome == search_outcome_name(SearchOutcome::kBreaks))
    return (bold ? "**" : "") + bound_text(bound["median"]) + (bold ? "** (" : " (") +
           bound_text(bound["min"]) + "–" + bound_text(bound["max"]) + ")";
  if (outcome == search_outcome_name(SearchOutcome::kNeverBreaks)) return "never";
  if (outcome == search_outcome_name(SearchOutcome::kBreaksWithoutFault))
    return "0 (without the fault)";
  return outcome;
}

std::string envelope_cell(const json& cell) {
  const std::string outcome = text_at(cell, "outcome");
  std::string out;
  const json harm = cell.value("harm", json());
  if (outcome == search_outcome_name(SearchOutcome::kNotApplicable)) return "n/a";
  if (outcome != search_outcome_name(SearchOutcome::kBreaks) &&
      outcome != search_outcome_name(SearchOutcome::kNeverBreaks) &&
      outcome != search_outcome_name(SearchOutcome::kBreaksWithoutFault))
    out =
        outcome + (cell.value("error", json()).is_string() ? ": " + cell["error"].get<std::string>()
                                                           : std::string());
  else if (envelope_harm_is_overlap(cell))
    out = bound_words(cell, true);
  else
    out = "harm " +
          (text_at(harm, "outcome") == search_outcome_name(SearchOutcome::kNeverBreaks)
               ? std::string("**never**")
               : bound_words(harm, true)) +
          ", overlap " + bound_words(cell, false);
  const json prediction = cell.value("prediction", json());
  if (prediction.is_object()) {
    const json bound = prediction.value("bound", json());
    out += "; predicted " + (bound.is_null() ? std::string("never") : bound_text(bound));
  }
  if (cell.value("agrees", json()) == false)
    out += cell.value("gap", json()).is_string() ? " †" : " ⚠";
  if (cell.contains("carried_from")) out += " ↻";
  return out;
}

// The cells of an envelope.json, with its locks in their first order.
struct EnvelopeCells {
  explicit EnvelopeCells(const json& envelope)
      : axes(envelope.value("axes", json::array())), cells(envelope.value("cells", json::array())) {
    for (const auto& cell : cells)
      if (std::find(locks.begin(), locks.end(), text_at(cell, "lock")) == locks.end())
        locks.push_back(text_at(cell, "lock"));
  }
  const json* find(const std::string& lock, const std::string& axis) const {
    for (const auto& cell : cells)
      if (text_at(cell, "lock") == lock && text_at(cell, "axis") == axis) return &cell;
    return nullptr;
  }
  json axes;
  json cells;
  std::vector<std::string> locks;
};

std::string envelope_header(const json& envelope) {
  const json settings = envelope.value("envelope", json::object());
  const json totals = envelope.value("totals", json::object());
  std::string md =
      "## Safety envelopes\n\n"
      "How much of each fault every lock survives, in one story told the same way to each "
      "(lock_impls/envelope_axis.h): c1 takes the lock (lease " +
      settings.value("lease_ms", json(0)).dump() +
      " ms), c2 waits for it; c1 works for half the lease (1.5 leases on the partition axis), "
      "checks its lease, writes and lets go. A size breaks a lock when the store is harmed: it "
      "accepted a lost update or a stale write. Where the two clients first held the lock at "
      "once can come sooner (the store's fencing rejected the late write, or c1's own check "
      "stopped it): a cell then gives both, \"harm …, overlap …\"; one bound means the store "
      "was harmed where the holds first overlapped. Sizes are in leases, clock rates as rates "
      "(below 1: slower). Each bound is the "
      "median of " +
      settings.value("repeats", json(0)).dump() +
      " searches with fresh seeds, their least and largest in brackets; near the boundary a "
      "size counts as breaking when the majority of " +
      settings.value("confirm_runs", json(0)).dump() +
      " runs break. The prediction is where the lock's design lets the holds overlap (the "
      "algorithm's "
      "header says why; a library is held to the built-in it stands in for, its own retry "
      "interval allowed for); ⚠ marks a "
      "measurement farther from it than the waiting client's retry interval and the search's "
      "precision explain, † one whose reason is given below the table.\n\n";
  md += "- measured: " + text_at(envelope, "started_at") + ", " +
        envelope.value("seconds", json(0)).dump() + " s, Redis " +
        text_at(envelope, "redis_version") + "\n";
  md += "- command: `" + command_of(envelope, "locklab envelope") + "`\n";
  md += adapters_line(envelope);
  if (envelope.contains("reuse"))
    md += "- carried over (↻): " + envelope["reuse"].value("searches_carried", json(0)).dump() +
          " searches were not made again but carried from the earlier envelope in `" +
          text_at(envelope["reuse"], "from") +
          "` (the same lab build, Redis, story, lock and seeds)\n";
  md += "- " + totals.value("agree", json(0)).dump() + " of " +
        totals.value("cells", json(0)).dump() + " bounds as predicted, " +
        totals.value("disagree", json(0)).dump() + " not, " +
        totals.value("not_exercised", json(0)).dump() + " could not be told (" +
        totals.value("explained", json(0)).dump() + " of these explained), " +
        totals.value("not_applicable", json(0)).dump() + " not applicable, " +
        totals.value("unpredicted", json(0)).dump() + " without a prediction\n\n";
  return md;
}

std::string envelope_table(const EnvelopeCells& envelope) {
  std::string md = "| lock |";
  for (const auto& axis : envelope.axes) md += " " + text_at(axis, "axis") + " |";
  md += "\n| --- |";
  for (size_t i = 0; i < envelope.axes.size(); ++i) md += " --- |";
  md += "\n";
  for (const auto& lock : envelope.locks) {
    md += "| `" + lock + "` |";
    for (const auto& axis : envelope.axes) {
      const json* cell = envelope.find(lock, text_at(axis, "axis"));
      md += " " + (cell ? cell_text(envelope_cell(*cell)) : std::string("—")) + " |";
    }
    md += "\n";
  }
  return md;
}

// The reasons below the table: why a lock has no envelope, why a bound differs.
std::string envelope_notes(const EnvelopeCells& envelope) {
  std::string md;
  std::string not_applicable;
  for (const auto& lock : envelope.locks)
    for (const auto& cell : envelope.cells)
      if (text_at(cell, "lock") == lock &&
          text_at(cell, "outcome") == search_outcome_name(SearchOutcome::kNotApplicable)) {
        not_applicable += "- `" + lock + "`: " + text_at(cell, "error") + "\n";
        break;
      }
  if (!not_applicable.empty()) md += "\nNot applicable:\n\n" + not_applicable;
  std::string gaps;
  for (const auto& cell : envelope.cells)
    if (cell.value("gap", json()).is_string())
      gaps += "- `" + text_at(cell, "lock") + "`, " + text_at(cell, "axis") + ": " +
              text_at(cell, "gap") + "\n";
  if (!gaps.empty()) md += "\nDisagreements explained:\n\n" + gaps;
  return md;
}

std::string predictions_section(const EnvelopeCells& envelope) {
  std::string md =
      "\n### What each design predicts, and why\n\n| lock | axis | predicted | measured | why |\n"
      "| --- | --- | --- | --- | --- |\n";
  for (const auto& lock : envelope.locks)
    for (const auto& axis : envelope.axes) {
      const json* cell = envelope.find(lock, text_at(axis, "axis"));
      if (!cell || !(*cell)["prediction"].is_object()) continue;
      const json& prediction = (*cell)["prediction"];
      // A library's prediction is its built-in's: said once, under the built-in.
      if (text_at(prediction, "from") != lock && (*cell)["agrees"] != false) continue;
      const json bound = prediction.value("bound", json());
      md += "| `" + lock + "` | " + text_at(axis, "axis") + " | " +
            (bound.is_null() ? std::string("never") : bound_text(bound)) + " | " +
            cell_text(envelope_cell(*cell)) + " | " + cell_text(text_at(prediction, "why")) +
            " |\n";
    }
  return md;
}

}  // namespace

std::string envelope_markdown(const json& envelope) {
  const EnvelopeCells cells(envelope);
  return envelope_header(envelope) + envelope_table(cells) + envelope_notes(cells) +
         predictions_section(cells);
}

}  // namespace locklab::reports
