// A suite read as a comparison of locks: which lock survives what. The suite
// index draws it as a page; comparison_markdown() writes it as the table
// docs/COMPARISON.md holds, so that the table in the repository is what a
// run measured.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "results.h"
#include "word_table.h"

namespace locklab::reports {

// A column of the comparison: one lock under test.
struct LockColumn {
  std::string name;
  std::string family;   // "old recipe", …, "library"; empty when the suite does not say
  std::string version;  // a library's, as its adapter said
  std::string like;     // the built-in a library stands in for
};

// The locks a suite's results.json lists ("locks"), in its order: the order
// of their design, then the libraries. Empty for a suite that predates it.
std::vector<LockColumn> listed_locks(const nlohmann::ordered_json& suite);

// How one lock fared: the stories it was measured in (run, completed, every
// fault fired), those it survived (no run harmed the resource: no lost update
// and no stale write accepted, whatever the holds did), those in which its
// lease broke (some run had a broken-lease overlap), those in which holders
// only overran it (overrun overlaps, no broken lease), and the names of the
// stories that harmed the resource.
struct Survival {
  size_t measured = 0, survived = 0;
  size_t lease_broken = 0, only_overran = 0;
  std::vector<std::string> harmed_by;
};

// "3 stories", "1 story", "—" for none: a count of Survival's stories.
std::string counted_stories(size_t n);

// `lock`'s survival over `stories` (each scenario's results).
Survival survival(const std::vector<const ScenarioResults*>& stories, const std::string& lock);

// The runs of `lock` in one story.
std::vector<const RunResult*> runs_of(const ScenarioResults& story, const std::string& lock);

// What one cell (a story × a lock) came to, as the comparison's grid colours it.
enum class CellState {
  Harmed,         // some run's store accepted a lost update or a stale write
  LeaseBroken,    // no harm, but the lock granted a hold inside another's lease
  Overran,        // no harm, and the only overlaps were holders acting past their lease
  Unclassified,   // no harm, and overlaps whose cause the history cannot tell
  Safe,           // no harm and no overlap
  NotApplicable,  // the story cannot be told to the lock
  Unmeasured,     // a run failed or a fault never fired
};

// Each state's name (the CSS class and data-state of its square) and its
// legend's words, in the order the legend lists them.
inline constexpr auto kCellStates = word_table<CellState>({
    {CellState::Harmed, "harmed", "harmed: the store accepted a lost update or a stale write"},
    {CellState::LeaseBroken, "lease-broken", "lease broken, no harm"},
    {CellState::Overran, "overran", "overrun, no harm (stopped by fencing, or nothing written)"},
    {CellState::Unclassified, "unclassified", "overlap of unknown cause, no harm"},
    {CellState::Safe, "safe", "safe: no overlap, no harm"},
    {CellState::NotApplicable, "not-applicable", "not applicable"},
    {CellState::Unmeasured, "unmeasured", "not measured: a run failed or a fault never fired"},
});

// The state of the cell of `runs` (one lock's runs of one story); Unmeasured for none.
CellState cell_state(const std::vector<const RunResult*>& runs);

// What the cell of `runs` measured, in a few words that name whose fault
// the overlap was and what the resource suffered: "✓ safe", "✗ broken lease:
// lost update", "overrun, stopped by fencing", "liveness"; with several runs
// that disagree, how many harmed (or broke); "⚠" in front when the
// measurement is not what the story predicts; "↻" after when every run was
// carried over (--reuse), "◷" when every run kept virtual time.
std::string measured_words(const std::vector<const RunResult*>& runs);

// "violated (overlap), overrun": an expectation in the comparison's words.
std::string expected_words(const Expectation& expectation);

// A story of the grid: its results and the link to its report ("" for none).
struct GridStory {
  const ScenarioResults* results = nullptr;
  std::string link;
};

// The comparison at a glance, as HTML: one coloured square per story × lock
// (cell_state), the locks grouped by family, each square's details (what
// was measured, expected and why) shown on click and in its tooltip, and the
// legend. The square the address's #fragment names opens with its details.
std::string comparison_grid_html(const std::vector<GridStory>& stories,
                                 const std::vector<LockColumn>& locks);

// The id of the grid's square of `story` × `lock` (its #fragment).
std::string grid_square_id(const std::string& story, const std::string& lock);

// The comparison of the suite in SUITE_DIR as Markdown: where it comes from
// (the lab's version, the Redis version, the date, the command), what each
// lock survives, the matrix, and story by story each cell's measurement,
// expectation and why (or why it is not applicable). Throws
// std::runtime_error naming the file when the suite's results.json or a
// scenario's cannot be read.
// With SUITE_DIR/envelope/envelope.json beside it, the safety envelopes
// (envelope_markdown) follow the matrix.
std::string comparison_markdown(const std::filesystem::path& suite_dir);

// The safety envelopes of an envelope document (envelope.json;
// harness/suite/envelope.h) as Markdown: how they were measured, a table of
// lock × axis (the bound, its spread over the repeats, the prediction, ⚠
// where they disagree), and what each design predicts and why.
std::string envelope_markdown(const nlohmann::ordered_json& envelope);

}  // namespace locklab::reports
