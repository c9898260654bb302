// The run and suite reports, generated from small hand-made run directories.
#include "report.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <chrono>

#include "run_dir.h"
#include "temp_dir.h"

namespace locklab::reports {
namespace {

using namespace fixtures;
namespace fs = std::filesystem;

// Two clients taking turns on lock L, no faults: 2 holds each, one failed
// acquire by c2 while c1 held the lock.
void write_safe_run(const fs::path& dir) {
  HistoryBuilder h;
  json lock = {{"lock", "L"}};
  h.add(0, "c1", "invoke", "acquire", lock);
  h.add(1, "c1", "ok", "acquire", {{"lock", "L"}, {"owner", "a1"}});
  h.add(2, "c2", "invoke", "acquire", lock);
  h.add(3, "c2", "fail", "acquire", {{"lock", "L"}, {"error", "held by someone else"}});
  h.add(4, "c1", "invoke", "release", lock);
  h.add(5, "c1", "ok", "release", lock);
  h.add(6, "c2", "invoke", "acquire", lock);
  h.add(7, "c2", "ok", "acquire", {{"lock", "L"}, {"owner", "b1"}});
  h.add(8, "c2", "invoke", "release", lock);
  h.add(9, "c2", "ok", "release", lock);
  h.add(10, "c1", "invoke", "acquire", lock);
  h.add(11, "c1", "ok", "acquire", {{"lock", "L"}, {"owner", "a2"}});
  h.add(12, "c1", "invoke", "release", lock);
  h.add(13, "c1", "ok", "release", lock);
  h.add(14, "c2", "invoke", "acquire", lock);
  h.add(15, "c2", "ok", "acquire", {{"lock", "L"}, {"owner", "b2"}});
  h.add(16, "c2", "invoke", "release", lock);
  h.add(17, "c2", "ok", "release", lock);
  h.write(dir / "set-nx-px" / "history.jsonl");
  json run = {
      {"algorithm", "set-nx-px"},
      {"verdict", "safe"},
      {"expected", {{"verdict", "safe"}, {"kinds", json::array()}}},
      {"expectation_met", true},
      {"history", "set-nx-px/history.jsonl"},
      {"error", nullptr},
      {"stats", {{"acquires_ok", 4}, {"acquires_failed", 1}}},
      {"check",
       {{"verdict", "safe"}, {"counts", {{"events", h.size()}}}, {"violations", json::array()}}}};
  json results = {{"scenario", "no-faults"},
                  {"description", "Two clients, nothing goes wrong."},
                  {"seed", 7},
                  {"runs", json::array({run})}};
  write_text(dir / "results.json", results.dump(2));
}

// Kleppmann's pause: c1 acquires, is paused past its lease, c2 acquires and
// writes, c1 resumes and writes too. Two algorithms share the history shape:
// set-nx-px was expected to break (met), "fenced" was expected to hold (not met).
struct ViolatedRun {
  std::set<int64_t> violation_events;  // of set-nx-px
  std::string explanation = "c2 acquired L at event 6 while c1 held it since event 1 <overlap>";
};

ViolatedRun write_violated_run(const fs::path& dir) {
  HistoryBuilder h;
  json lock = {{"lock", "L"}};
  h.add(0, "c1", "invoke", "acquire", lock);
  int64_t c1_acquired =
      h.add(1, "c1", "ok", "acquire", {{"lock", "L"}, {"owner", "a"}, {"token", 33}});
  h.nemesis(2, "pause", "start", {"c1"}, {{"ms", 1500}});
  h.add(5, "c2", "invoke", "acquire", lock);
  h.add(6, "c2", "fail", "acquire", {{"lock", "L"}, {"error", "held"}});
  h.add(1000, "c2", "invoke", "acquire", lock);
  int64_t c2_acquired =
      h.add(1001, "c2", "ok", "acquire", {{"lock", "L"}, {"owner", "b"}, {"token", 34}});
  h.add(1002, "c2", "invoke", "write",
        {{"lock", "L"}, {"token", 34}, {"value", {{"read", 0}, {"write", 1}}}});
  int64_t c2_wrote = h.add(1003, "c2", "ok", "write",
                           {{"lock", "L"}, {"token", 34}, {"value", {{"read", 0}, {"write", 1}}}});
  int64_t c2_released = h.add(1004, "c2", "invoke", "release", lock);
  h.add(1005, "c2", "ok", "release", {{"lock", "L"}, {"value", {{"result", "released"}}}});
  h.nemesis(1502, "pause", "end", {"c1"}, {{"ms", 1500}});
  h.add(1503, "c1", "invoke", "write",
        {{"lock", "L"}, {"token", 33}, {"value", {{"read", 0}, {"write", 1}}}});
  int64_t c1_wrote = h.add(1504, "c1", "ok", "write",
                           {{"lock", "L"}, {"token", 33}, {"value", {{"read", 0}, {"write", 1}}}});
  h.add(1505, "c1", "invoke", "release", lock);
  h.add(1506, "c1", "fail", "release", {{"lock", "L"}, {"value", {{"result", "not-owner"}}}});
  h.write(dir / "set-nx-px" / "history.jsonl");
  h.write(dir / "fenced" / "history.jsonl");

  ViolatedRun run;
  run.violation_events = {c1_acquired, c2_acquired, c2_released, c2_wrote, c1_wrote};
  json violations = {{{"kind", "mutual-exclusion"},
                      {"lock", "L"},
                      {"processes", {"c1", "c2"}},
                      {"events", {c1_acquired, c2_acquired, c2_released}},
                      {"explanation", run.explanation}},
                     {{"kind", "lost-update"},
                      {"lock", "L"},
                      {"processes", {"c2", "c1"}},
                      {"events", {c2_wrote, c1_wrote}},
                      {"explanation", "c1 wrote 1 over c2's 1, both read 0"}}};
  auto entry = [&](const std::string& algorithm, const std::string& expected, bool met) {
    json expectation = {{"verdict", expected}};
    if (expected == "violated") expectation["kinds"] = {"mutual-exclusion"};
    if (expected == "safe") expectation["absent"] = {"lost-update"};
    return json{{"algorithm", algorithm},
                {"verdict", "violated"},
                {"expected", expectation},
                {"expectation_met", met},
                {"history", algorithm + "/history.jsonl"},
                {"error", nullptr},
                {"stats", {{"acquires_ok", 2}, {"counter", 1}}},
                {"check",
                 {{"verdict", "violated"},
                  {"counts", {{"mutual-exclusion", 1}, {"lost-update", 1}, {"events", h.size()}}},
                  {"violations", violations}}}};
  };
  json results = {{"scenario", "pause-longer-than-lease"},
                  {"description", "A stop-the-world pause outlasts the lease."},
                  {"scenario_file", "scenarios/pause.json"},
                  {"seed", 7},
                  {"locklab_version", "0.1.0"},
                  {"runs", {entry("set-nx-px", "violated", true), entry("fenced", "safe", false)}}};
  write_text(dir / "results.json", results.dump(2));
  return run;
}

// A run whose redis-server never started: no history, an error to show.
void write_error_run(const fs::path& dir) {
  json run = {{"algorithm", "redlock"},
              {"verdict", "error"},
              {"expected", {{"verdict", "safe"}}},
              {"expectation_met", false},
              {"history", "redlock/history.jsonl"},
              {"error", "redis-server <node 3> did not start: port 6381 in use"},
              {"check", nullptr}};
  json results = {{"scenario", "broken-setup"}, {"runs", json::array({run})}};
  write_text(dir / "results.json", results.dump(2));
}

// One run of each outcome a run can pass or fail with besides met/unmet/error:
// set-nx-px met (its fault fired), fenced not exercised (its fault never
// fired), redis-py-lock safer than set-nx-px, and mine not applicable.
void write_outcomes_run(const fs::path& dir) {
  HistoryBuilder h;
  h.add(0, "c1", "invoke", "acquire", {{"lock", "L"}});
  h.add(1, "c1", "ok", "acquire", {{"lock", "L"}});
  h.add(2, "c1", "invoke", "release", {{"lock", "L"}});
  h.add(3, "c1", "ok", "release", {{"lock", "L"}});
  for (const char* algorithm : {"set-nx-px", "fenced", "redis-py-lock"})
    h.write(dir / algorithm / "history.jsonl");
  json check = {{"verdict", "safe"},
                {"counts", {{"mutual-exclusion", 0}, {"events", h.size()}}},
                {"violations", json::array()}};
  auto entry = [&](const std::string& algorithm, const std::string& expected,
                   const std::string& outcome, json faults) {
    return json{{"algorithm", algorithm},
                {"verdict", "safe"},
                {"expected", {{"verdict", expected}}},
                {"outcome", outcome},
                {"expectation_met", outcome == "met"},
                {"history", algorithm + "/history.jsonl"},
                {"error", nullptr},
                {"check", check},
                {"faults", faults},
                {"exercised", outcome != "not-exercised"}};
  };
  json fired = {{{"index", 0},
                 {"kind", "pause"},
                 {"trigger", "c1 at step acquired (1st time)"},
                 {"fired", true},
                 {"fired_at_ms", 12.5},
                 {"ended_at_ms", 1012.5}}};
  json idle = {{{"index", 0},
                {"kind", "pause"},
                {"trigger", "c1 at step acquired (1st time)"},
                {"fired", false}}};
  json safer = entry("redis-py-lock", "violated", "safer-than", fired);
  safer["like"] = "set-nx-px";
  safer["adapter"] = "python3 redis_py_lock.py";
  json skipped = {
      {"algorithm", "mine"},
      {"verdict", "unknown"},
      {"expected", {{"verdict", "safe"}}},
      {"outcome", "not-applicable"},
      {"expectation_met", false},
      {"error", nullptr},
      {"not_applicable", "step after-validity-check exists only in the built-in redlock"},
      {"faults", idle}};
  json results = {{"scenario", "outcomes"},
                  {"runs",
                   {entry("set-nx-px", "safe", "met", fired),
                    entry("fenced", "safe", "not-exercised", idle), safer, skipped}}};
  write_text(dir / "results.json", results.dump(2));
}

TEST(RunReport, EachOutcomeHasItsBadgeAndTheFaultsTableSaysWhatNeverFired) {
  TempDir dir("report-test");
  write_outcomes_run(dir.path());
  std::string html = read_text(write_run_report(dir.path()));
  // A badge per run, in the summary table and in its section.
  EXPECT_EQ(count(html, ">✓ met</span>"), 2u);
  EXPECT_EQ(count(html, ">⚠ NOT EXERCISED</span>"), 2u);
  EXPECT_EQ(count(html, ">✓ safer than set-nx-px</span>"), 2u);
  EXPECT_EQ(count(html, ">not applicable</span>"), 2u);
  EXPECT_EQ(count(html, ">✗ UNMET</span>"), 0u);
  EXPECT_NE(html.find("<section class=\"algorithm not-exercised\" id=\"fenced\">"),
            std::string::npos);
  EXPECT_NE(html.find("<section class=\"algorithm safer\" id=\"redis-py-lock\">"),
            std::string::npos);
  EXPECT_NE(html.find("<section class=\"algorithm not-applicable\" id=\"mine\">"),
            std::string::npos);
  EXPECT_NE(html.find("1 of 4 algorithms did NOT do what was expected (1 NOT EXERCISED: a fault "
                      "never fired)"),
            std::string::npos);

  // The faults table: when each fired and ended, and the one that never fired highlighted.
  EXPECT_EQ(count(html, "<table class=\"faults\">"), 4u);
  EXPECT_NE(html.find("<tr><td>0</td><td>pause</td><td>c1 at step acquired (1st time)</td><td>12.5 "
                      "ms</td><td>1.012 s</td></tr>"),
            std::string::npos);
  EXPECT_EQ(count(html, "<tr class=\"never-fired\"><td>0</td><td>pause</td>"), 2u);  // fenced, mine
  EXPECT_EQ(count(html, "<td colspan=\"2\" class=\"never-fired\">never fired</td>"), 2u);
  EXPECT_NE(html.find("<b>Not exercised:</b> fault 0 (pause, c1 at step acquired (1st time)) "
                      "never fired"),
            std::string::npos);
  // Not applicable: the reason, and nothing drawn.
  EXPECT_NE(html.find("<b>Not applicable:</b> step after-validity-check exists only in the "
                      "built-in redlock"),
            std::string::npos);
  EXPECT_EQ(count(html, "<svg class=\"timeline\""), 3u);
  EXPECT_NE(html.find("(as for set-nx-px, which this lock stands in for)"), std::string::npos);
}

// Of faults that are alternatives ("whoever takes over"), the one that did
// not fire is no defect of the run: its row says who told its moment.
TEST(RunReport, AnAlternativeThatNeverFiredIsNotHighlighted) {
  TempDir dir("report-test");
  HistoryBuilder h;
  h.add(0, "c1", "invoke", "acquire", {{"lock", "L"}});
  h.add(1, "c1", "ok", "acquire", {{"lock", "L"}});
  h.write(dir.path() / "set-nx-px" / "history.jsonl");
  json faults = {{{"index", 0},
                  {"kind", "pause"},
                  {"trigger", "c2 at step acquired (1st time)"},
                  {"fired", false},
                  {"one_of", "takeover"}},
                 {{"index", 1},
                  {"kind", "pause"},
                  {"trigger", "c3 at step acquired (1st time)"},
                  {"fired", true},
                  {"fired_at_ms", 1000.0},
                  {"one_of", "takeover"}}};
  json run = {{"algorithm", "set-nx-px"},
              {"verdict", "safe"},
              {"expected", {{"verdict", "safe"}}},
              {"outcome", "met"},
              {"history", "set-nx-px/history.jsonl"},
              {"check", {{"verdict", "safe"}, {"violations", json::array()}}},
              {"faults", faults}};
  write_text(dir.path() / "results.json",
             json({{"scenario", "takeover"}, {"runs", {run}}}).dump(2));
  const std::string html = read_text(write_run_report(dir.path()));
  EXPECT_EQ(count(html, "<tr class=\"never-fired\">"), 0u);
  EXPECT_NE(html.find("<td>c2 at step acquired (1st time) <span class=\"one-of\">(one of "
                      "“takeover”)</span></td><td colspan=\"2\">never fired: another of "
                      "“takeover” told its moment</td>"),
            std::string::npos);
}

// A lock that refused everyone while a fault was in force: said apart from
// the violations, with the fault and how long.
TEST(RunReport, AvailabilityLostUnderAFaultIsToldApartFromViolations) {
  TempDir dir("report-test");
  write_outcomes_run(dir.path());
  json results = json::parse(read_text(dir.path() / "results.json"));
  results["runs"][0]["check"]["unavailable"] = {
      {{"lock", "L"},
       {"faults", {"crash-node"}},
       {"from_ns", 1'000'000},
       {"to_ns", 3'001'000'000},
       {"events", {1, 2, 3}},
       {"times_ns", {1'000'000, 2'000'000, 3'001'000'000}},
       {"explanation", "L could not be taken for 3000.0 ms while crash-node was in force"}}};
  write_text(dir.path() / "results.json", results.dump(2));
  std::string html = read_text(write_run_report(dir.path()));
  EXPECT_EQ(count(html, "<h3>Availability lost under faults</h3>"), 1u);
  EXPECT_NE(html.find("<b>L</b> refused for 3.000 s (from 1.0 ms to 3.001 s) under crash-node"),
            std::string::npos)
      << html.substr(html.find("Availability lost"), 600);
  EXPECT_EQ(count(html, ">✗ UNMET</span>"), 0u) << "not a violation";
}

TEST(RunReport, SafeRunShowsMetExpectationHoldsAndNoViolation) {
  TempDir dir("report-test");
  write_safe_run(dir.path());
  fs::path report = write_run_report(dir.path());
  EXPECT_EQ(report, dir.path() / "report.html");
  std::string html = read_text(report);

  EXPECT_NE(html.find("<h1>no-faults</h1>"), std::string::npos);
  EXPECT_NE(html.find("verdict-safe"), std::string::npos);
  EXPECT_NE(html.find(">✓ met</span>"), std::string::npos);
  EXPECT_EQ(html.find("NOT met"), std::string::npos);
  EXPECT_EQ(count(html, "class=\"hold\""), 4u);  // c1 and c2 took L twice each
  EXPECT_EQ(count(html, "class=\"mark acquire-failed\""),
            1u + 1u);  // one on the lane, one in the legend
  EXPECT_EQ(count(html, "<g class=\"violation\">"), 0u);
  EXPECT_TRUE(event_anchors(html, "set-nx-px").empty());
  EXPECT_EQ(count(html, "class=\"fault-band\""), 0u);
  // Self-contained: nothing is fetched from anywhere.
  EXPECT_EQ(html.find("http://www.w3.org/2000/svg\" viewBox"), html.find("http://"));
  EXPECT_EQ(html.find("https://"), std::string::npos);
  // One script, the page's own, inline.
  EXPECT_EQ(count(html, "<script"), 1u);
  EXPECT_EQ(count(html, "<script>"), 1u);
  EXPECT_EQ(html.find("<link"), std::string::npos);
}

TEST(RunReport, ViolatedRunShowsVerdictsExplanationBandAndExactlyTheViolatingEvents) {
  TempDir dir("report-test");
  ViolatedRun run = write_violated_run(dir.path());
  std::string html = read_text(write_run_report(dir.path()));

  EXPECT_NE(html.find("verdict-violated"), std::string::npos);
  EXPECT_EQ(count(html, ">✓ met</span>"), 2u);    // set-nx-px: summary row + section
  EXPECT_EQ(count(html, ">✗ UNMET</span>"), 2u);  // fenced: summary row + section
  EXPECT_NE(html.find("1 of 2 algorithms did NOT do what was expected"), std::string::npos);
  // Why: the kinds expected to be found, and to be absent, against what was found.
  EXPECT_NE(html.find("with <span class=\"kind found\">mutual-exclusion ✓</span>"),
            std::string::npos);
  EXPECT_NE(html.find("and no <span class=\"kind missing\">lost-update (found!)</span>"),
            std::string::npos);

  // The explanation, escaped, and its events as links into the event table.
  // Event numbers in the explanation link to the event table.
  EXPECT_NE(html.find("c2 acquired L at <a href=\"#set-nx-px-event-6\">event 6</a> while c1 held "
                      "it since <a href=\"#set-nx-px-event-1\">event 1</a> &lt;overlap&gt;"),
            std::string::npos);
  EXPECT_EQ(html.find("<overlap>"), std::string::npos);
  EXPECT_EQ(event_anchors(html, "set-nx-px"), run.violation_events);
  EXPECT_EQ(event_anchors(html, "fenced"), run.violation_events);
  for (int64_t e : run.violation_events)
    EXPECT_NE(html.find("href=\"#set-nx-px-event-" + std::to_string(e) + "\""), std::string::npos)
        << e;
  EXPECT_NE(html.find("id=\"set-nx-px-violation-1\""), std::string::npos);
  EXPECT_NE(html.find("id=\"set-nx-px-violation-2\""), std::string::npos);
  // The event table shows each event as it was written.
  EXPECT_NE(html.find("&quot;owner&quot;:&quot;b&quot;,<wbr>&quot;token&quot;:34"),
            std::string::npos);

  // Per algorithm: one pause band labelled with its kind and target, the
  // target lane hatched; two violations drawn; both holds; the writes with tokens.
  EXPECT_EQ(count(html, "class=\"fault-band\""), 2u);
  EXPECT_EQ(count(html, ">pause c1</text>"), 2u);
  EXPECT_EQ(count(html, "fill=\"url(#set-nx-px-hatch-"), 1u);
  // Mutual exclusion: the overlap highlighted on both lanes; the lost update:
  // a line through its two writes.
  EXPECT_EQ(count(html, "<g class=\"violation\">"), 2u * 2u);
  EXPECT_EQ(count(html, "class=\"violation-link\""), 2u);
  EXPECT_EQ(count(html, "class=\"hold\""), 4u);
  EXPECT_EQ(count(html, "class=\"write-token\" "), 4u);  // 33 and 34, twice
  // c1's refused release once per algorithm, plus each section's legend.
  EXPECT_EQ(count(html, "class=\"mark refused\""), 2u + 2u);
}

TEST(RunReport, MutualExclusionIsHighlightedWhereTheHoldsOverlap) {
  TempDir dir("report-test");
  write_violated_run(dir.path());
  std::string html = read_text(write_run_report(dir.path()));
  // c1 holds from 1 ms to 1505 ms, c2 from 1001 ms to 1004 ms: the overlap is c2's hold.
  EXPECT_NE(
      html.find("V1 mutual-exclusion: c2 acquired L at event 6 while c1 held it since event 1 "
                "&lt;overlap&gt; (1.001 s → 1.004 s)"),
      std::string::npos);
}

TEST(RunReport, RunWithAnErrorShowsItWithoutAHistory) {
  TempDir dir("report-test");
  write_error_run(dir.path());
  std::string html = read_text(write_run_report(dir.path()));
  EXPECT_NE(html.find("verdict-error"), std::string::npos);
  EXPECT_NE(html.find("redis-server &lt;node 3&gt; did not start: port 6381 in use"),
            std::string::npos);
  EXPECT_NE(html.find("the run failed before writing one"), std::string::npos);
  EXPECT_NE(html.find(">✗ run failed</span>"), std::string::npos);
}

TEST(RunReport, ReplacesAnOldReportAndLeavesNoTemporaryFile) {
  TempDir dir("report-test");
  write_safe_run(dir.path());
  write_text(dir.path() / "report.html", "old");
  write_run_report(dir.path());
  EXPECT_NE(read_text(dir.path() / "report.html"), "old");
  EXPECT_EQ(files_in(dir.path()),
            (std::set<std::string>{"results.json", "set-nx-px", "report.html"}));
}

void expect_error_naming(const fs::path& dir, const std::string& file, const std::string& detail) {
  try {
    write_run_report(dir);
    ADD_FAILURE() << "no error for " << file;
  } catch (const std::runtime_error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find(file), std::string::npos) << what;
    EXPECT_NE(what.find(detail), std::string::npos) << what;
  }
  EXPECT_FALSE(fs::exists(dir / "report.html"));
  for (const auto& name : files_in(dir)) EXPECT_EQ(name.find("report"), std::string::npos) << name;
}

TEST(RunReport, BadResultsGiveAnErrorNamingTheFileAndNoReport) {
  TempDir dir("report-test");
  fs::path results = dir.path() / "results.json";
  expect_error_naming(dir.path(), results.string(), "cannot read");  // missing

  write_text(results, "{\"scenario\": \"x\", \"runs\": [");
  expect_error_naming(dir.path(), results.string(), "not valid JSON");

  write_text(results, R"({"scenario": "x", "runs": 3})");
  expect_error_naming(dir.path(), results.string(), "'runs'");

  write_text(
      results,
      R"({"scenario": "x", "runs": [{"algorithm": "a", "check": {"violations": [{"events": ["7"]}]}}]})");
  expect_error_naming(dir.path(), results.string(), "'runs[0].check.violations[0].events'");

  write_text(results, "[]");
  expect_error_naming(dir.path(), results.string(), "not a JSON object");
}

TEST(RunReport, MalformedHistoryLineGivesAnErrorNamingFileAndLine) {
  TempDir dir("report-test");
  write_safe_run(dir.path());
  fs::path history = dir.path() / "set-nx-px" / "history.jsonl";
  std::string text = read_text(history);
  size_t second_line = text.find('\n') + 1;
  write_text(history, text.substr(0, second_line) + "{\"index\": 1, \"time_ns\": \"soon\"}\n" +
                          text.substr(second_line));
  expect_error_naming(dir.path(), history.string() + ":2", "time_ns");

  write_text(history, text + "{oops\n");
  expect_error_naming(dir.path(), history.string() + ":19", "malformed JSON");
}

TEST(RunReport, HostileTextIsEscapedEverywhere) {
  TempDir dir("report-test");
  HistoryBuilder h;
  h.add(0, "<c1>", "ok", "acquire", {{"lock", "<L>"}, {"token", 1}});
  h.nemesis(1, "<b>partition</b>", "start", {"<n1>"});
  h.add(2, "<c1>", "fail", "write", {{"lock", "<L>"}, {"token", 1}, {"error", "</td><script>"}});
  h.write(dir.path() / "a" / "history.jsonl");
  json violation = {{"kind", "<k>"},
                    {"processes", {"<c1>"}},
                    {"events", {0, 2}},
                    {"explanation", "</li><script>"}};
  json run = {{"algorithm", "a\"><img>"},
              {"history", "a/history.jsonl"},
              {"check", {{"violations", json::array({violation})}}}};
  json results = {{"scenario", "<script>alert(1)</script>"}, {"runs", json::array({run})}};
  write_text(dir.path() / "results.json", results.dump());
  std::string page = read_text(write_run_report(dir.path()));
  // The page's own script is its last element; nothing from the files is one.
  std::string html = page.substr(0, page.rfind("<script>"));
  for (const char* raw : {"<script", "<img", "<c1>", "<L>", "<n1>", "<b>partition", "<k>"})
    EXPECT_EQ(html.find(raw), std::string::npos) << raw;
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
}

TEST(RunReport, LargeHistoryStaysSmallAndKeepsEveryViolationInDetail) {
  TempDir dir("report-test");
  HistoryBuilder h;
  std::set<int64_t> violating;
  json violations = json::array();
  const int kClients = 4;
  double t = 0;
  // 100k events: each client in turn takes the lock, writes and releases;
  // every 10,000th cycle a second client barges in (a violation).
  for (int cycle = 0; h.size() < 100'000; ++cycle) {
    std::string c = "c" + std::to_string(cycle % kClients + 1);
    if (cycle == 1'000) h.nemesis(t, "partition", "start", {"n1"});
    if (cycle == 4'000) h.nemesis(t, "partition", "end", {"n1"});
    h.add(t, c, "invoke", "acquire", {{"lock", "L"}});
    int64_t acquired = h.add(t + 0.01, c, "ok", "acquire", {{"lock", "L"}, {"token", cycle}});
    if (cycle % 10'000 == 5'000) {
      std::string other = "c" + std::to_string((cycle + 1) % kClients + 1);
      int64_t barged = h.add(t + 0.02, other, "ok", "acquire", {{"lock", "L"}, {"token", cycle}});
      int64_t other_released = h.add(t + 0.03, other, "invoke", "release", {{"lock", "L"}});
      violating.insert({acquired, barged, other_released});
      violations.push_back({{"kind", "mutual-exclusion"},
                            {"lock", "L"},
                            {"processes", {c, other}},
                            {"events", {acquired, barged, other_released}},
                            {"explanation", "barged in at cycle " + std::to_string(cycle)}});
    }
    h.add(t + 0.04, c, "invoke", "write", {{"lock", "L"}, {"token", cycle}});
    h.add(t + 0.05, c, "ok", "write",
          {{"lock", "L"}, {"token", cycle}, {"value", {{"read", cycle}, {"write", cycle + 1}}}});
    h.add(t + 0.06, c, "invoke", "release", {{"lock", "L"}});
    h.add(t + 0.07, c, "ok", "release", {{"lock", "L"}});
    t += 0.1;
  }
  h.write(dir.path() / "set-nx-px" / "history.jsonl");
  json run = {{"algorithm", "set-nx-px"},
              {"verdict", "violated"},
              {"history", "set-nx-px/history.jsonl"},
              {"check", {{"verdict", "violated"}, {"violations", violations}}}};
  json results = {{"scenario", "busy"}, {"runs", json::array({run})}};
  write_text(dir.path() / "results.json", results.dump());

  auto started = std::chrono::steady_clock::now();
  std::string html = read_text(write_run_report(dir.path()));
  auto took = std::chrono::steady_clock::now() - started;

  EXPECT_LT(html.size(), 5u << 20);
  EXPECT_LT(took, std::chrono::seconds(20));
  EXPECT_EQ(event_anchors(html, "set-nx-px"), violating);
  // The whole run: every lane drawn as time bins, and the page says so...
  EXPECT_GT(count(html, "class=\"hold-bin\""), 0u);
  EXPECT_NE(html.find("Lanes c1, c2, c3, c4: "), std::string::npos);
  EXPECT_EQ(count(html, "aggregated into 400 time bins"), 1u);
  // ...and each violation, a sliver of the run, gets a close-up with every hold in it.
  EXPECT_EQ(count(html, "<h4>Close-up: "), violations.size());
  EXPECT_GT(count(html, "class=\"hold\""), 0u);
  // Each violation highlighted on its two lanes, in the whole picture and in its close-up.
  EXPECT_EQ(count(html, "<g class=\"violation\">"), 2 * 2 * violations.size());
  EXPECT_EQ(count(html, "class=\"fault-band\""), 1u);
}

TEST(RunReport, ManyViolationsKeepThePageBoundedAndSaySo) {
  TempDir dir("report-test");
  HistoryBuilder h;
  json violations = json::array();
  for (int i = 0; i < 5000; ++i) {
    int64_t a = h.add(i, "c1", "ok", "acquire", {{"lock", "L"}});
    int64_t b = h.add(i + 0.5, "c2", "ok", "acquire", {{"lock", "L"}});
    h.add(i + 0.6, "c1", "invoke", "release", {{"lock", "L"}});
    h.add(i + 0.7, "c2", "invoke", "release", {{"lock", "L"}});
    violations.push_back({{"kind", "mutual-exclusion"},
                          {"processes", {"c1", "c2"}},
                          {"events", {a, b}},
                          {"explanation", "overlap " + std::to_string(i)}});
  }
  h.write(dir.path() / "a" / "history.jsonl");
  json run = {{"algorithm", "a"}, {"verdict", "violated"}, {"check", {{"violations", violations}}}};
  json results = {{"scenario", "everything-breaks"}, {"runs", json::array({run})}};
  write_text(dir.path() / "results.json", results.dump());
  std::string html = read_text(write_run_report(dir.path()));
  EXPECT_LT(html.size(), 5u << 20);
  // The first violations keep every event; the page says the rest are listed without.
  std::set<int64_t> anchors = event_anchors(html, "a");
  EXPECT_EQ(anchors.size(), 2000u);
  EXPECT_TRUE(anchors.count(0) && anchors.count(1));
  EXPECT_NE(html.find("the other 4,000 violations are listed without them"), std::string::npos);
  EXPECT_NE(html.find("Only the first 200 of 5,000 violations are drawn"), std::string::npos);
  // Drawn violations that touch merge into one highlight per lane, in the
  // whole picture and in the close-up of the first 200 ms.
  EXPECT_EQ(count(html, "<h4>Close-up: "), 1u);
  EXPECT_EQ(count(html, "<g class=\"violation\">"), 2u * 2u);
  EXPECT_NE(html.find("200 violations overlap here"), std::string::npos);
}

TEST(RunReport, APageWithManySectionsIsDrawnWithLessDetailAndSaysSo) {
  TempDir dir("report-test");
  HistoryBuilder h;
  double t = 0;
  for (int cycle = 0; h.size() < 20'000; ++cycle, t += 0.1) {
    std::string c = "c" + std::to_string(cycle % 4 + 1);
    h.add(t, c, "invoke", "acquire", {{"lock", "L"}});
    h.add(t + 0.01, c, "ok", "acquire", {{"lock", "L"}, {"token", cycle}});
    h.add(t + 0.02, c, "ok", "write", {{"lock", "L"}, {"token", cycle}});
    h.add(t + 0.03, c, "invoke", "release", {{"lock", "L"}});
  }
  h.write(dir.path() / "shared" / "history.jsonl");
  json runs = json::array();
  for (int k = 1; k <= 12; ++k)
    runs.push_back({{"algorithm", "a"}, {"run", k}, {"history", "shared/history.jsonl"}});
  write_text(dir.path() / "results.json", json({{"scenario", "repeated"}, {"runs", runs}}).dump());

  std::string html = read_text(write_run_report(dir.path()));
  EXPECT_LT(html.size(), 5u << 20);
  EXPECT_NE(html.find("% of the usual detail to stay small"), std::string::npos);
  EXPECT_EQ(count(html, "<svg class=\"timeline\""), 12u);
}

// Whatever subset of events the violations name, the page anchors exactly those.
RC_GTEST_PROP(RunReportProperty, AnchorsExactlyTheViolatingEvents, ()) {
  const int events = *rc::gen::inRange(2, 40);
  auto picked = *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, events));
  TempDir dir("report-prop");
  HistoryBuilder h;
  for (int i = 0; i < events; ++i)
    h.add(i, "c" + std::to_string(i % 3 + 1), i % 2 ? "invoke" : "ok", "acquire", {{"lock", "L"}});
  h.write(dir.path() / "x" / "history.jsonl");
  json violation = {{"kind", "mutual-exclusion"}, {"events", picked}};
  json run = {{"algorithm", "x"}, {"check", {{"violations", json::array({violation})}}}};
  json results = {{"scenario", "prop"}, {"runs", json::array({run})}};
  write_text(dir.path() / "results.json", results.dump());
  std::string html = read_text(write_run_report(dir.path()));
  RC_ASSERT(event_anchors(html, "x") == std::set<int64_t>(picked.begin(), picked.end()));
}

TEST(SuiteReport, MatrixShowsEachCellAgainstItsExpectationAndLinksToRunReports) {
  TempDir suite("suite-test");
  write_violated_run(suite.path() / "pause");
  write_safe_run(suite.path() / "calm");
  write_error_run(suite.path() / "broken setup");
  write_text(suite.path() / "garbled" / "results.json", "{not json");
  write_text(
      suite.path() / "results.json",
      json({{"suite", "canonical"},
            {"scenarios", json::array({{{"scenario", "pause-longer-than-lease"}, {"dir", "pause"}},
                                       {{"scenario", "no-faults"}, {"dir", "calm"}}})}})
          .dump());

  fs::path index = write_suite_report(suite.path());
  EXPECT_EQ(index, suite.path() / "index.html");
  std::string html = read_text(index);

  EXPECT_NE(html.find("<h1>canonical</h1>"), std::string::npos);
  // Listed scenarios first, in the suite's order; then the others by name.
  size_t pause = html.find(">pause-longer-than-lease</a>"), calm = html.find(">no-faults</a>"),
         broken = html.find(">broken-setup</a>"), garbled = html.find(">garbled</th>");
  ASSERT_NE(pause, std::string::npos);
  ASSERT_NE(calm, std::string::npos);
  ASSERT_NE(broken, std::string::npos);
  ASSERT_NE(garbled, std::string::npos);
  EXPECT_LT(pause, calm);
  EXPECT_LT(calm, broken);
  EXPECT_LT(broken, garbled);

  // Columns: set-nx-px, fenced, redlock. Cells: pause has a met and a not-met
  // cell; calm a met one; broken-setup a failed one; the rest not run.
  EXPECT_EQ(count(html, "class=\"cell met\""), 2u);
  EXPECT_EQ(count(html, "class=\"cell not-met\""), 1u);
  EXPECT_EQ(count(html, "class=\"cell failed\""), 1u);
  EXPECT_EQ(count(html, "class=\"cell absent\""), 5u);
  EXPECT_NE(html.find("2 expectations met, 1 NOT met, 1 run failed, 1 scenario unreadable"),
            std::string::npos);
  EXPECT_NE(html.find("href=\"pause/report.html#set-nx-px\""), std::string::npos);
  EXPECT_NE(html.find("href=\"pause/report.html#fenced\""), std::string::npos);
  EXPECT_NE(html.find("href=\"calm/report.html#set-nx-px\""), std::string::npos);
  EXPECT_NE(html.find("href=\"broken%20setup/report.html#redlock\""), std::string::npos);
  // The broken scenario is a row naming its file, not a failed index.
  EXPECT_NE(html.find((suite.path() / "garbled" / "results.json").string() + ": not valid JSON"),
            std::string::npos);

  // The run reports the cells link to were written.
  for (const char* scenario : {"pause", "calm", "broken setup"})
    EXPECT_TRUE(fs::exists(suite.path() / scenario / "report.html")) << scenario;
  EXPECT_FALSE(fs::exists(suite.path() / "garbled" / "report.html"));
}

TEST(SuiteReport, RepeatedRunsShareACellThatLinksToTheFirstMiss) {
  TempDir suite("suite-test");
  HistoryBuilder h;
  h.add(0, "c1", "ok", "acquire", {{"lock", "L"}});
  json runs = json::array();
  for (int k = 1; k <= 3; ++k) {
    std::string history = "run-" + std::to_string(k) + "/set-nx-px/history.jsonl";
    h.write(suite.path() / "pause" / history);
    bool met = k != 2;
    runs.push_back({{"algorithm", "set-nx-px"},
                    {"run", k},
                    {"seed", 6 + k},
                    {"verdict", met ? "violated" : "safe"},
                    {"expected", {{"verdict", "violated"}}},
                    {"expectation_met", met},
                    {"history", history}});
  }
  write_text(suite.path() / "pause" / "results.json",
             json({{"scenario", "pause"}, {"runs", runs}}).dump());
  std::string index = read_text(write_suite_report(suite.path()));
  EXPECT_EQ(count(index, "class=\"cell not-met\""), 1u);
  EXPECT_NE(index.find("2/3 met"), std::string::npos);
  EXPECT_NE(index.find(">violated ×2</span>"), std::string::npos);
  EXPECT_NE(index.find(">safe ×1</span>"), std::string::npos);
  EXPECT_NE(index.find("href=\"pause/report.html#set-nx-px-run-2\""), std::string::npos);

  std::string report = read_text(suite.path() / "pause" / "report.html");
  for (const char* id : {"set-nx-px-run-1", "set-nx-px-run-2", "set-nx-px-run-3"})
    EXPECT_NE(report.find("id=\"" + std::string(id) + "\""), std::string::npos) << id;
  EXPECT_NE(report.find("<h2>set-nx-px run 2</h2>"), std::string::npos);
  EXPECT_NE(report.find("seed 8"), std::string::npos);
}

TEST(SuiteReport, EachOutcomeHasItsCellStyleAndTheTotalsCountThemApart) {
  TempDir suite("suite-test");
  write_outcomes_run(suite.path() / "outcomes");
  std::string html = read_text(write_suite_report(suite.path()));
  for (const char* style : {"met", "not-exercised", "safer", "not-applicable"})
    EXPECT_EQ(count(html, "<td class=\"cell " + std::string(style) + "\""), 1u) << style;
  EXPECT_EQ(count(html, "class=\"cell not-met"), 0u);
  EXPECT_NE(html.find("<span class=\"cell-mark\">⚠ NOT EXERCISED</span>"), std::string::npos);
  EXPECT_NE(html.find("<span class=\"cell-mark\">✓ safer than set-nx-px</span>"),
            std::string::npos);
  EXPECT_NE(html.find("<span class=\"cell-mark\">not applicable</span>"), std::string::npos);
  EXPECT_NE(html.find("never fired"), std::string::npos) << "the cell's tooltip names the fault";
  // A legend with a key for every style.
  EXPECT_EQ(count(html, "class=\"matrix-legend\""), 1u);
  for (const char* style :
       {"met", "safer", "not-applicable", "not-exercised", "not-met", "failed", "absent"})
    EXPECT_EQ(count(html, "<span class=\"cell-key " + std::string(style) + "\">"), 1u) << style;
  EXPECT_NE(html.find("<div class=\"banner bad\">1 expectation met, 0 NOT met, 1 run NOT "
                      "EXERCISED, 1 run safer than the built-in, 1 run not applicable</div>"),
            std::string::npos);
}

TEST(SuiteReport, MalformedSuiteResultsGiveAnErrorNamingTheFileAndNoIndex) {
  TempDir suite("suite-test");
  write_safe_run(suite.path() / "calm");
  write_text(suite.path() / "results.json", "{\"suite\": ");
  try {
    write_suite_report(suite.path());
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find((suite.path() / "results.json").string()),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(suite.path() / "index.html"));
}

TEST(SuiteReport, WorksWithoutASuiteResultsFile) {
  TempDir suite("suite-test");
  write_safe_run(suite.path() / "calm");
  std::string html = read_text(write_suite_report(suite.path()));
  EXPECT_EQ(count(html, "class=\"cell met\""), 1u);
  EXPECT_NE(html.find("1 expectation met, 0 NOT met"), std::string::npos);
}

}  // namespace
}  // namespace locklab::reports
