// Violations grouped by cause, each told as numbered steps from the history.
#include "story.h"

#include <gtest/gtest.h>

#include "report.h"
#include "stalled_run.h"
#include "temp_dir.h"

namespace locklab::reports {
namespace {

using namespace fixtures;
namespace fs = std::filesystem;

// The text of the story steps of `cause_id` in `html`, in order, tags removed.
std::vector<std::string> steps_of(const std::string& html, const std::string& cause_id) {
  std::vector<std::string> out;
  const std::string start = "<li class=\"step\" id=\"" + cause_id + "-step-";
  for (size_t at = html.find(start); at != std::string::npos; at = html.find(start, at + 1)) {
    size_t open = html.find('>', at) + 1, close = html.find("</li>", open);
    std::string text;
    bool tag = false;
    for (char c : html.substr(open, close - open)) {
      if (c == '<') tag = true;
      if (!tag) text += c;
      if (c == '>') tag = false;
    }
    out.push_back(text);
  }
  return out;
}

Timeline timeline_of(const fs::path& history, const std::vector<Violation>& violations) {
  std::set<int64_t> events;
  for (const auto& v : violations) events.insert(v.events.begin(), v.events.end());
  return read_timeline(history, events, events);
}

TEST(ReportStory, AStalledHolderIsOneCauseWhateverTheNumberOfItsViolations) {
  TempDir dir("story-test");
  const fs::path history = dir.path() / "h.jsonl";
  StalledRun run = write_stalled_history(history, false);
  const auto violations = checkers::check_file(history).violations;
  Timeline timeline = timeline_of(history, violations);
  std::vector<Cause> causes = group_by_cause(timeline, violations);
  ASSERT_EQ(causes.size(), 1u);
  const Cause& cause = causes[0];
  EXPECT_EQ(cause.violations.size(), violations.size());
  ASSERT_TRUE(cause.hold);
  const Lane& lane = timeline.lanes[cause.hold->lane];
  EXPECT_EQ(lane.process, "c3");
  EXPECT_EQ(lane.holds[cause.hold->hold].start_index, run.c3_acquired);
  EXPECT_EQ(cause.kinds,
            (std::map<std::string, size_t>{
                {"mutual-exclusion", run.overlapping}, {"lost-update", 1}, {"stale-write", 1}}));
  EXPECT_EQ(kinds_text(cause.kinds), std::to_string(run.overlapping) +
                                         " overlapping acquisitions, 1 lost update, 1 stale write");
}

TEST(ReportStory, TheStoryTellsWhatHappenedInOrderAndLinksEachStepToItsEvent) {
  TempDir dir("story-test");
  StalledRun run = write_stalled_run(dir.path());
  std::string html = read_text(write_run_report(dir.path()));
  std::vector<std::string> steps = steps_of(html, "set-nx-px-cause-1");
  const std::vector<std::string> expected = {
      "c3 acquires A (owner 9f2c41d0-c3, token 33) at 0.412 s. event #" +
          std::to_string(run.c3_acquired),
      "The nemesis pauses c3 for 1.500 s at 0.414 s. event #" + std::to_string(run.pause_start),
      "c3's lease on A (500 ms, asked for at 0.410 s) runs out at 0.910 s by the run's clock; c3 "
      "has not released it.",
      "c2 acquires A (owner c2-1001, token 34) at 0.951 s, while c3 still holds it. event #18",
      "c2 writes 6 (it read 5) at 0.956 s: accepted. event #20",
      std::to_string(run.overlapping - 2) +
          " more acquisitions of A overlap c3's hold, the last at 1.854 s, by c1 ×11, c2 ×10, c4 "
          "×11, c5 ×11 (listed below).",
      "c2 acquires A (owner c2-1045, token 78) at 1.875 s, while c3 still holds it. event #282",
      "c2 writes 50 (it read 49) at 1.880 s: accepted. event #284",
      "c3 resumes at 1.914 s. event #" + std::to_string(run.pause_end),
      "c3 writes 6 (it read 5) at 1.916 s: accepted, so c2's write of 6 is lost. event #" +
          std::to_string(run.c3_write),
      "c3 releases A at 1.917 s. event #290"};
  EXPECT_EQ(steps, expected);
  // A step whose event the page lists links to its row; the others to the timeline.
  EXPECT_NE(html.find("<a class=\"step-event\" href=\"#set-nx-px-event-" +
                      std::to_string(run.c3_acquired) + "\">"),
            std::string::npos);
  EXPECT_NE(html.find("<a class=\"step-event\" href=\"#set-nx-px-timeline\">event #" +
                      std::to_string(run.pause_start) + "</a>"),
            std::string::npos);
  EXPECT_NE(html.find("id=\"set-nx-px-timeline\""), std::string::npos);
  // Each step carries its time and lane for the timeline mark.
  EXPECT_NE(html.find("id=\"set-nx-px-cause-1-step-2\" data-t=\"414000000\" data-lane=\"c3\""),
            std::string::npos);
  // The header counts causes, not violations; the violations are folded.
  EXPECT_NE(html.find("Violations: 1 cause, " + std::to_string(run.overlapping) +
                      " overlapping acquisitions, 1 lost update, 1 stale write</h3>"),
            std::string::npos);
  EXPECT_EQ(count(html, "<details class=\"folded\""), 2u);  // set-nx-px and fenced
  EXPECT_EQ(count(html, "<li id=\"set-nx-px-violation-"), size_t(run.overlapping + 2));
}

TEST(ReportStory, NoFaultIsNamedWhenNoneOverlaps) {
  TempDir dir("story-test");
  write_stalled_run(dir.path(), /*pause=*/false);
  std::string html = read_text(write_run_report(dir.path()));
  std::vector<std::string> steps = steps_of(html, "set-nx-px-cause-1");
  ASSERT_GT(steps.size(), 5u);
  for (const auto& step : steps) {
    EXPECT_EQ(step.find("nemesis"), std::string::npos) << step;
    EXPECT_EQ(step.find("pause"), std::string::npos) << step;
    EXPECT_EQ(step.find("resumes"), std::string::npos) << step;
  }
  EXPECT_EQ(steps.front().find("c3 acquires A"), 0u);
  EXPECT_EQ(html.find(", during pause"), std::string::npos);
}

// The checkers list the first 100 violations of each kind but count them
// all: the page says its causes are made of the listed ones.
TEST(ReportStory, CausesSayWhenTheCheckersFoundMoreThanTheyListed) {
  TempDir dir("story-test");
  StalledRun run = write_stalled_run(dir.path());
  ScenarioResults results = read_results_file(dir.path() / "results.json");
  results.runs[0].check->counts["mutual-exclusion"] = 250;
  write_text(dir.path() / "results.json", results.to_json().dump());
  std::string html = read_text(write_run_report(dir.path()));
  const std::string text = "1 cause, " + std::to_string(run.overlapping) +
                           " overlapping acquisitions, 1 lost update, 1 stale write listed (250 "
                           "mutual-exclusion found in all)";
  EXPECT_NE(html.find("Violations: " + text + "</h3>"), std::string::npos);
  EXPECT_NE(html.find("<td>" + text + "</td>"), std::string::npos);
  EXPECT_NE(html.find("the causes here are made of the listed violations"), std::string::npos);
  // fenced lists all it found.
  EXPECT_EQ(count(html, "found in all"), 3u);
}

// A stretch without a holder is not caused by the hold whose release began
// it: it groups by the fault window it falls in, and its story names it.
TEST(ReportStory, ALivenessViolationGroupsByItsFaultWindowNotByAHold) {
  TempDir dir("story-test");
  HistoryBuilder h;
  const json lock = {{"lock", "L"}};
  h.add(0, "c1", "invoke", "acquire", lock);
  h.add(1, "c1", "ok", "acquire", {{"lock", "L"}});
  h.nemesis(5, "partition", "start", {}, {{"nodes", {0}}});
  int64_t freed = h.add(10, "c1", "invoke", "release", lock);
  h.add(11, "c1", "ok", "release", lock);
  int64_t first = h.add(20, "c2", "invoke", "acquire", lock);
  int64_t last = h.add(900, "c2", "fail", "acquire", {{"lock", "L"}, {"error", "timeout"}});
  h.nemesis(950, "partition", "end", {}, {{"nodes", {0}}});
  h.write(dir.path() / "h.jsonl");
  Violation v{.kind = "liveness",
              .lock = "L",
              .processes = {"c2"},
              .events = {freed, first, last},
              .times_ns = {},
              .explanation = "no holder"};
  Timeline timeline = timeline_of(dir.path() / "h.jsonl", {v});
  std::vector<Cause> causes = group_by_cause(timeline, {v});
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_FALSE(causes[0].hold);
  EXPECT_EQ(causes[0].fault, std::optional<size_t>(0));
  std::vector<StoryStep> story = tell_story(causes[0], timeline, {v});
  ASSERT_FALSE(story.empty());
  EXPECT_EQ(story.front().html.find("The nemesis starts <b>partition</b> (nodes=[0]) at 0.005 s"),
            0u)
      << story.front().html;
  EXPECT_EQ(cause_headline(causes[0], timeline, {v}),
            "liveness by <b>c2</b> at 0.010 s, during partition for 945.0 ms");
}

// Two holders stall one after the other: two causes, each with its own
// story and count, linked to each other.
TEST(ReportStory, DifferentEarlierHoldsAreDifferentCauses) {
  TempDir dir("story-test");
  HistoryBuilder h;
  const json lock = {{"lock", "L"}};
  auto hold = [&](double from, double to, const std::string& c, int token) {
    h.add(from, c, "invoke", "acquire", lock);
    h.add(from + 1, c, "ok", "acquire", {{"lock", "L"}, {"owner", c + "x"}, {"token", token}});
    h.add(to, c, "invoke", "release", lock);
    h.add(to + 1, c, "ok", "release", lock);
  };
  h.add(0, "c1", "invoke", "acquire", lock);
  h.add(1, "c1", "ok", "acquire", {{"lock", "L"}, {"owner", "c1a"}, {"token", 1}});
  hold(100, 110, "c2", 2);  // overlaps c1's hold
  h.add(500, "c1", "invoke", "release", lock);
  h.add(501, "c1", "ok", "release", lock);
  h.add(600, "c3", "invoke", "acquire", lock);
  h.add(601, "c3", "ok", "acquire", {{"lock", "L"}, {"owner", "c3a"}, {"token", 3}});
  hold(700, 710, "c4", 4);  // overlaps c3's hold, twice
  hold(800, 810, "c4", 5);
  h.add(900, "c3", "invoke", "release", lock);
  h.add(901, "c3", "ok", "release", lock);
  const fs::path history = dir.path() / "a" / "history.jsonl";
  h.write(history);
  write_checked_run(dir.path(), "two-stalls", "a");
  std::string html = read_text(write_run_report(dir.path()));

  EXPECT_NE(html.find("Violations: 2 causes, 3 overlapping acquisitions</h3>"), std::string::npos);
  EXPECT_NE(html.find("<b>c1</b>'s hold of <b>L</b> from 0.001 s to 0.500 s: <b>1 overlapping "
                      "acquisition</b>"),
            std::string::npos);
  EXPECT_NE(html.find("<b>c3</b>'s hold of <b>L</b> from 0.601 s to 0.900 s: <b>2 overlapping "
                      "acquisitions</b>"),
            std::string::npos);
  EXPECT_NE(html.find("<a href=\"#a-cause-2\">next cause ▸</a>"), std::string::npos);
  EXPECT_NE(html.find("<a href=\"#a-cause-1\">◂ previous</a>"), std::string::npos);
  EXPECT_EQ(steps_of(html, "a-cause-1").front(),
            "c1 acquires L (owner c1a, token 1) at 0.001 s. event #1");
  EXPECT_EQ(steps_of(html, "a-cause-2").back(), "c3 releases L at 0.900 s. event #18");
  // The summary table counts causes too.
  EXPECT_NE(html.find("<td>2 causes, 3 overlapping acquisitions</td>"), std::string::npos);
}

}  // namespace
}  // namespace locklab::reports
