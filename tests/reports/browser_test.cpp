// The reports as a person sees them: loaded in headless Chromium, with their
// script run. No console error, the story's steps, the grouped violation and
// the plots in the rendered DOM, every link resolving, and a screenshot of
// each page under the test's output directory for a person to look at.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <regex>

#include "headless_browser.h"
#include "report.h"
#include "stalled_run.h"

namespace locklab::reports {
namespace {

using namespace fixtures;
namespace fs = std::filesystem;

// This test's own output directory (build/tests/reports/browser/<test>), fresh each run.
fs::path output_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path dir = fs::path(BROWSER_OUTPUT_DIR) / info->name();
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string chromium_or_skip() {
  auto chromium = find_chromium();
  return chromium.value_or("");
}

#define REQUIRE_BROWSER(chromium)                                                      \
  const std::string chromium = chromium_or_skip();                                     \
  if (chromium.empty())                                                                \
    GTEST_SKIP() << "no headless browser: chromium is not installed (Debian: apt-get " \
                    "install chromium; harness/scripts/lab.sh setup installs it)";

std::string unescape(std::string text) {
  for (auto [from, to] :
       {std::pair{"&amp;", "&"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&lt;", "<"}, {"&gt;", ">"}}) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + 1))
      text.replace(at, std::strlen(from), to);
  }
  return text;
}

std::string percent_decoded(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      out += char(std::stoi(text.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

bool has_id(const std::string& html, const std::string& id) {
  return html.find("id=\"" + id + "\"") != std::string::npos;
}

// Every href and src of the rendered page resolves: a #fragment to an
// element of the page, a relative file (and its fragment) to a file beside
// it; nothing points outside (no scheme, no absolute path). Returns how many.
size_t expect_links_resolve(const PageLoad& load, const fs::path& page) {
  static const std::regex attribute(R"re(\s(href|src)="([^"]*)")re");
  size_t links = 0;
  for (auto it = std::sregex_iterator(load.dom.begin(), load.dom.end(), attribute);
       it != std::sregex_iterator(); ++it) {
    std::string target = unescape((*it)[2].str());
    ++links;
    SCOPED_TRACE(target);
    EXPECT_EQ(target.find("://"), std::string::npos) << "an external link";
    EXPECT_FALSE(target.empty());
    if (target.empty()) continue;
    size_t hash = target.find('#');
    std::string file = percent_decoded(target.substr(0, hash));
    std::string fragment = hash == std::string::npos ? "" : target.substr(hash + 1);
    if (file.empty()) {
      EXPECT_TRUE(has_id(load.dom, fragment)) << "no element with this id in " << page;
      continue;
    }
    EXPECT_NE(file.front(), '/') << "an absolute path";
    fs::path linked = page.parent_path() / file;
    if (!fs::exists(linked)) {
      ADD_FAILURE() << "no file " << linked;
      continue;
    }
    if (!fragment.empty()) {
      EXPECT_TRUE(has_id(read_text(linked), fragment)) << linked;
    }
  }
  return links;
}

void expect_clean_console(const PageLoad& load) {
  for (const auto& line : load.console_lines) ADD_FAILURE() << "console: " << line;
  // The page's script ran to its end.
  EXPECT_NE(load.dom.find("data-interactive=\"ready\""), std::string::npos);
}

TEST(Browser, CleanRunReportRendersWithoutErrorsWithPlotsAndWorkingLinks) {
  REQUIRE_BROWSER(chromium);
  fs::path out = output_dir();
  write_calm_run(out / "run");
  fs::path report = write_run_report(out / "run");
  PageLoad load = load_page(chromium, report, "", out / "clean-run.png");
  expect_clean_console(load);
  EXPECT_GE(expect_links_resolve(load, report), 2u);
  EXPECT_NE(load.dom.find("Every algorithm with an expectation met it (2 of 2)"),
            std::string::npos);
  EXPECT_EQ(load.dom.find("class=\"cause\""), std::string::npos);
  EXPECT_EQ(count(load.dom, "<svg class=\"timeline\""), 2u);
  // Latency and throughput of both algorithms, side by side.
  EXPECT_EQ(count(load.dom, "<div class=\"plot-card\">"), 2u);
  EXPECT_EQ(count(load.dom, "<svg class=\"plot\""), 4u);
  EXPECT_EQ(count(load.dom, "class=\"series p50\""), 2u);
  EXPECT_GT(fs::file_size(out / "clean-run.png"), 10'000u);
}

TEST(Browser, ViolatedRunReportTellsTheStoryOfOneGroupedCause) {
  REQUIRE_BROWSER(chromium);
  fs::path out = output_dir();
  StalledRun run = write_stalled_run(out / "run");
  fs::path report = write_run_report(out / "run");
  PageLoad load = load_page(chromium, report, "", out / "violated-run.png");
  expect_clean_console(load);
  EXPECT_GT(expect_links_resolve(load, report), 100u);
  const std::string& dom = load.dom;
  // One cause, its count in the header, its violations folded under it.
  EXPECT_NE(dom.find("Violations: 1 cause, " + std::to_string(run.overlapping) +
                     " overlapping acquisitions, 1 lost update, 1 stale write"),
            std::string::npos);
  EXPECT_EQ(count(dom, "<div class=\"cause\" id=\"set-nx-px-cause-"), 1u);
  EXPECT_NE(dom.find("<details class=\"folded\" id=\"set-nx-px-cause-1-list\"><summary>Its " +
                     std::to_string(run.overlapping + 2) + " violations</summary>"),
            std::string::npos);
  // The story, in order, each step linking to its event.
  const std::vector<std::string> steps = {
      "<b>c3</b> acquires <b>A</b> (owner 9f2c41d0-c3, token 33) at 0.412 s.",
      "The nemesis pauses <b>c3</b> for 1.500 s at 0.414 s.",
      "<b>c3</b>'s lease on <b>A</b> (500 ms, asked for at 0.410 s) runs out at 0.910 s",
      "<b>c2</b> acquires <b>A</b> (owner c2-1001, token 34) at 0.951 s, while <b>c3</b> still "
      "holds it.",
      "<b>c3</b> resumes at 1.914 s.",
      "<b>c3</b> writes <b>6</b> (it read 5) at 1.916 s: accepted, so <b>c2</b>'s write of 6 is "
      "lost."};
  size_t at = 0;
  for (const auto& step : steps) {
    size_t found = dom.find(step, at);
    EXPECT_NE(found, std::string::npos) << step;
    if (found != std::string::npos) at = found;
  }
  EXPECT_NE(dom.find("href=\"#set-nx-px-event-" + std::to_string(run.c3_acquired) + "\">event #" +
                     std::to_string(run.c3_acquired) + "</a>"),
            std::string::npos);
  EXPECT_NE(dom.find(">event #" + std::to_string(run.pause_start) + "</a>"), std::string::npos);
  // fenced: the same story, c3's write rejected and no lost write.
  EXPECT_NE(dom.find("<b>c3</b>'s write at 1.916 s (read 5, wrote 6; fencing: token 33 is older "
                     "than 78) is rejected by fencing."),
            std::string::npos);
  // The plots shade the pause.
  EXPECT_EQ(count(dom, "<svg class=\"plot\""), 4u);
  EXPECT_EQ(count(dom, "<rect class=\"plot-fault\""), 4u);
  EXPECT_GT(fs::file_size(out / "violated-run.png"), 10'000u);
}

TEST(Browser, AStepNamedInTheAddressIsMarkedOnTheTimeline) {
  REQUIRE_BROWSER(chromium);
  fs::path out = output_dir();
  write_stalled_run(out / "run");
  fs::path report = write_run_report(out / "run");
  PageLoad load = load_page(chromium, report, "set-nx-px-cause-1-step-2", out / "step-2.png");
  expect_clean_console(load);
  EXPECT_NE(load.dom.find("<li class=\"step current\" id=\"set-nx-px-cause-1-step-2\""),
            std::string::npos);
  // Marked on the whole-run timeline of its section (and its close-up), not on fenced's.
  EXPECT_GE(count(load.dom, "<g class=\"step-highlight\">"), 1u);
  size_t fenced = load.dom.find("<section class=\"algorithm met\" id=\"fenced\"");
  ASSERT_NE(fenced, std::string::npos);
  EXPECT_EQ(load.dom.find("<g class=\"step-highlight\">", fenced), std::string::npos);
}

TEST(Browser, SuiteIndexRendersAndEveryCellLinksToARunReport) {
  REQUIRE_BROWSER(chromium);
  fs::path out = output_dir();
  fs::path suite = out / "suite";
  write_stalled_run(suite / "pause");
  write_calm_run(suite / "smoke");
  write_text(suite / "sweep-pause" / "sweep.json", pause_sweep(540, 470).dump());
  fs::path index = write_suite_report(suite);
  PageLoad load = load_page(chromium, index, "", out / "suite-index.png");
  expect_clean_console(load);
  EXPECT_GE(expect_links_resolve(load, index), 5u);
  EXPECT_NE(load.dom.find("href=\"pause/report.html#set-nx-px\""), std::string::npos);
  EXPECT_NE(load.dom.find("href=\"smoke/report.html#redlock\""), std::string::npos);
  // The sweep's breaking points as a chart.
  EXPECT_EQ(count(load.dom, "<svg class=\"plot sweep\""), 1u);
  EXPECT_NE(load.dom.find(">breaks at 540</text>"), std::string::npos);
  EXPECT_GT(fs::file_size(out / "suite-index.png"), 10'000u);
}

// The page's controls, driven by a script the test adds to a copy of the
// report: zoom in twice, click a story step, press n.
TEST(Browser, TimelineZoomsAStepClickedIsMarkedAndNJumpsToTheNextCause) {
  REQUIRE_BROWSER(chromium);
  fs::path out = output_dir();
  write_stalled_run(out / "run");
  std::string html = read_text(write_run_report(out / "run"));
  const std::string driver = R"(<script>
document.addEventListener("DOMContentLoaded", function () {
  var plus = document.querySelectorAll(".zoom-bar button")[1];
  plus.click(); plus.click();
  var svg = document.querySelector(".timeline-box svg.timeline");
  document.body.setAttribute("data-zoomed", svg.style.width + " " +
      document.querySelector(".zoom-level").textContent);
  document.getElementById("fenced-cause-1-step-4").click();
  document.dispatchEvent(new KeyboardEvent("keydown", {key: "n"}));
  document.body.setAttribute("data-hash", location.hash);
});
</script>)";
  const fs::path page = out / "run" / "driven.html";
  write_text(page, html.substr(0, html.rfind("</body>")) + driver + "</body></html>");
  PageLoad load = load_page(chromium, page, "", out / "driven.png");
  expect_clean_console(load);
  EXPECT_NE(load.dom.find("data-zoomed=\"400% 4×\""), std::string::npos);
  EXPECT_NE(load.dom.find("<li class=\"step current\" id=\"fenced-cause-1-step-4\""),
            std::string::npos);
  size_t fenced = load.dom.find("id=\"fenced\"");
  ASSERT_NE(fenced, std::string::npos);
  EXPECT_NE(load.dom.find("<g class=\"step-highlight\">", fenced), std::string::npos);
  EXPECT_NE(load.dom.find("data-hash=\"#set-nx-px-cause-1\""), std::string::npos);
}

// A million events: five clients taking turns for 16 s, one of them stalled
// by a pause while the others overtake it 40 times. The checkers measure it;
// the report stays small and the browser shows it, story included.
TEST(Browser, AMillionEventHistoryStaysSmallAndUsable) {
  REQUIRE_BROWSER(chromium);
  fs::path out = output_dir();
  fs::path run = out / "run";
  fs::create_directories(run / "set-nx-px");
  {
    std::ofstream history(run / "set-nx-px" / "history.jsonl");
    int64_t index = 0, time = 0;
    char line[256];
    auto event = [&](const char* process, const char* type, const char* f,
                     const std::string& extra) {
      std::snprintf(line, sizeof line,
                    "{\"index\":%lld,\"time_ns\":%lld,\"process\":\"%s\",\"type\":\"%s\","
                    "\"f\":\"%s\"%s}\n",
                    static_cast<long long>(index++), static_cast<long long>(time), process, type, f,
                    extra.c_str());
      history << line;
    };
    const std::string lock = ",\"lock\":\"A\"";
    int64_t counter = 0;
    const int64_t stall_at = 80'000, stall_for = 40;
    for (int64_t cycle = 0; index < 1'000'000 - 10; ++cycle) {
      if (cycle == stall_at) {
        event("c3", "invoke", "acquire", lock + ",\"value\":{\"ttl_ms\":500}");
        time += 50'000;
        event("c3", "ok", "acquire", lock + ",\"owner\":\"stalled\"");
        event("nemesis", "info", "pause",
              ",\"value\":{\"phase\":\"start\",\"targets\":[\"c3\"],\"duration_ms\":4}");
      }
      if (cycle == stall_at + stall_for) {
        event("nemesis", "info", "pause",
              ",\"value\":{\"phase\":\"end\",\"targets\":[\"c3\"],\"duration_ms\":4}");
        event("c3", "invoke", "release", lock);
        time += 50'000;
        event("c3", "fail", "release", lock + ",\"value\":{\"result\":\"not-owner\"}");
      }
      const std::string c = "c" + std::to_string(cycle % 5 + 1);
      if (c == "c3" && cycle >= stall_at && cycle < stall_at + stall_for) continue;
      event(c.c_str(), "invoke", "acquire", lock + ",\"value\":{\"ttl_ms\":500}");
      time += 50'000;
      event(c.c_str(), "ok", "acquire",
            lock + ",\"owner\":\"" + c + "-" + std::to_string(cycle) + "\"");
      const std::string write = lock + ",\"value\":{\"read\":" + std::to_string(counter) +
                                ",\"write\":" + std::to_string(counter + 1) + "}";
      ++counter;
      event(c.c_str(), "invoke", "write", write);
      time += 25'000;
      event(c.c_str(), "ok", "write", write);
      event(c.c_str(), "invoke", "release", lock);
      time += 25'000;
      event(c.c_str(), "ok", "release", lock);
    }
  }
  RunResult r = write_checked_run(run, "a-million-events", "set-nx-px");
  ASSERT_GE(r.check->counts["events"], 999'990);
  ASSERT_EQ(r.check->found("mutual-exclusion"), 32);  // 40 cycles, c3's own 8 skipped

  fs::path report = write_run_report(run);
  EXPECT_LT(fs::file_size(report), 5u << 20);
  PageLoad load = load_page(chromium, report, "", out / "million.png");
  expect_clean_console(load);
  expect_links_resolve(load, report);
  EXPECT_NE(load.dom.find("Violations: 1 cause, 32 overlapping acquisitions"), std::string::npos);
  EXPECT_NE(load.dom.find("The nemesis pauses <b>c3</b>"), std::string::npos);
  EXPECT_NE(load.dom.find("aggregated into"), std::string::npos);  // said, not hidden
  EXPECT_EQ(count(load.dom, "<svg class=\"plot\""), 2u);
}

}  // namespace
}  // namespace locklab::reports
