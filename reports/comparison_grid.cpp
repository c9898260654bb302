// The comparison at a glance: with twenty locks and more, a matrix of text
// cells no longer fits a screen, so the page opens with one square per cell,
// coloured by what the resource suffered, and the words on demand.
#include <cctype>

#include "comparison.h"
#include "html.h"

namespace locklab::reports {

namespace {

// A square and the gap beside it (report.css, table.grid).
constexpr size_t kSquarePitchPx = 20;

// The locks of one family, in the suite's order.
struct Family {
  std::string name;
  std::vector<const LockColumn*> locks;
};

// Consecutive locks of one family form a group (the suite lists them by family).
std::vector<Family> families_of(const std::vector<LockColumn>& locks) {
  std::vector<Family> out;
  for (const auto& lock : locks) {
    if (out.empty() || out.back().name != lock.family) out.push_back({lock.family, {}});
    out.back().locks.push_back(&lock);
  }
  return out;
}

std::string lock_title(const LockColumn& lock) {
  return lock.name + (lock.version.empty() ? "" : " (" + lock.version + ")") +
         (lock.like.empty() ? "" : ", like " + lock.like);
}

// What a person reads when a square is clicked: the lock and the story, what
// was measured, what the design expected and why (or why it was not told).
std::string square_detail(const ScenarioResults& story, const LockColumn& lock,
                          const std::vector<const RunResult*>& runs) {
  std::string out = lock_title(lock) + " in " + story.scenario + ": ";
  if (runs.empty()) return out + "not run";
  const RunResult& first = *runs.front();
  if (cell_state(runs) == CellState::NotApplicable)
    return out + "not applicable: " + first.not_applicable.value_or("not run");
  out += measured_words(runs);
  if (first.expected) {
    out += ". Expected " + expected_words(*first.expected);
    if (!first.expected->why.empty()) out += ": " + first.expected->why;
  }
  return out;
}

std::string square(const GridStory& story, const LockColumn& lock) {
  const auto runs = runs_of(*story.results, lock.name);
  if (runs.empty()) return "<td class=\"grid-cell\"></td>";
  const std::string_view state = kCellStates.name(cell_state(runs));
  const std::string detail = square_detail(*story.results, lock, runs);
  return "<td class=\"grid-cell\"><button type=\"button\" class=\"grid-sq " + std::string(state) +
         "\" id=\"" + escape(grid_square_id(story.results->scenario, lock.name)) +
         "\" data-state=\"" + std::string(state) + "\" data-detail=\"" + escape(detail) +
         "\" title=\"" + escape(detail) + "\" aria-label=\"" + escape(detail) + "\"></button></td>";
}

std::string grid_head(const std::vector<Family>& families) {
  std::string out = "<thead><tr class=\"grid-families\"><th></th>";
  for (const auto& family : families)
    // As wide as its squares, whatever its name: the full name is its tooltip.
    out += "<th colspan=\"" + std::to_string(family.locks.size()) + "\" title=\"" +
           escape(family.name) + "\"><div class=\"grid-family\" style=\"width:" +
           std::to_string(family.locks.size() * kSquarePitchPx - 4) + "px\">" +
           escape(family.name) + "</div></th>";
  out += "</tr><tr class=\"grid-locks\"><th></th>";
  for (const auto& family : families)
    for (size_t i = 0; i < family.locks.size(); ++i)
      out += std::string("<th") + (i == 0 ? " class=\"family-start\"" : "") + " title=\"" +
             escape(lock_title(*family.locks[i])) + "\"><span>" + escape(family.locks[i]->name) +
             "</span></th>";
  return out + "</tr></thead>";
}

std::string grid_row(const GridStory& story, const std::vector<Family>& families) {
  const std::string& name = story.results->scenario;
  std::string out = "<tr><th class=\"grid-story\">";
  out += story.link.empty() ? escape(name)
                            : "<a href=\"" + escape(story.link) + "\">" + escape(name) + "</a>";
  out += "</th>";
  for (const auto& family : families)
    for (const LockColumn* lock : family.locks) out += square(story, *lock);
  return out + "</tr>";
}

std::string grid_legend() {
  std::string out = "<div class=\"grid-legend\">";
  for (const auto& state : kCellStates)
    out += "<span class=\"grid-key\"><span class=\"grid-sq " + std::string(state.name) +
           "\"></span>" + escape(state.meaning) + "</span>";
  return out + "</div>";
}

}  // namespace

std::string grid_square_id(const std::string& story, const std::string& lock) {
  std::string id = "sq-";
  for (const std::string& part : {story, std::string("--"), lock})
    for (unsigned char c : part) id += std::isalnum(c) || c == '-' || c == '_' ? char(c) : '_';
  return id;
}

std::string comparison_grid_html(const std::vector<GridStory>& stories,
                                 const std::vector<LockColumn>& locks) {
  if (stories.empty() || locks.empty()) return "";
  const std::vector<Family> families = families_of(locks);
  std::string out =
      "<h2 id=\"at-a-glance\">At a glance</h2><p class=\"hint\">One square per story and lock: "
      "what the resource came to. Click a square for what was measured, what the design "
      "expected and why.</p>" +
      grid_legend() + "<div class=\"grid-box\"><table class=\"grid\">" + grid_head(families) +
      "<tbody>";
  for (const auto& story : stories) out += grid_row(story, families);
  return out +
         "</tbody></table></div><p class=\"grid-detail\" id=\"grid-detail\" "
         "aria-live=\"polite\">Click a square for its details.</p>";
}

}  // namespace locklab::reports
