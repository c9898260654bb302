// The plots: acquire latency percentiles and throughput per run, and a
// sweep's breaking points, drawn by the lab as inline SVG.
#include "plots.h"

#include <gtest/gtest.h>

#include "report.h"
#include "stalled_run.h"
#include "temp_dir.h"

namespace locklab::reports {
namespace {

using namespace fixtures;
namespace fs = std::filesystem;

TEST(ReportPlots, LatencyPercentilesAndThroughputPerBinFromTheAcquiresThatSucceeded) {
  TempDir dir("plots-test");
  HistoryBuilder h;
  // 1 s, two bins of 500 ms. First bin: ten acquires ok taking 1..10 ms and
  // one that failed after 400 ms (not counted). Second bin: one of 50 ms.
  h.add(0, "c2", "invoke", "acquire", {{"lock", "L"}});
  double t = 0;
  for (int ms = 1; ms <= 10; ++ms, t += 20) {
    h.add(t, "c1", "invoke", "acquire", {{"lock", "L"}});
    h.add(t + ms, "c1", "ok", "acquire", {{"lock", "L"}});
    h.add(t + ms + 1, "c1", "invoke", "release", {{"lock", "L"}});
    h.add(t + ms + 2, "c1", "ok", "release", {{"lock", "L"}});
  }
  h.add(400, "c2", "fail", "acquire", {{"lock", "L"}});
  h.add(900, "c2", "invoke", "acquire", {{"lock", "L"}});
  h.add(950, "c2", "ok", "acquire", {{"lock", "L"}});
  h.add(1000, "c2", "invoke", "release", {{"lock", "L"}});
  h.write(dir.path() / "h.jsonl");
  Timeline timeline = read_timeline(dir.path() / "h.jsonl", {}, {});
  RunPlot plot = run_plot(timeline, "a", "a", 2);
  EXPECT_EQ(plot.acquires_ok, 11);
  EXPECT_EQ(plot.bin_ns, 500'000'000);
  ASSERT_EQ(plot.p50.size(), 2u);
  EXPECT_DOUBLE_EQ(plot.p50[0].value(), 5);
  EXPECT_DOUBLE_EQ(plot.p90[0].value(), 9);
  EXPECT_DOUBLE_EQ(plot.p99[0].value(), 10);
  EXPECT_DOUBLE_EQ(plot.p50[1].value(), 50);
  EXPECT_EQ(plot.throughput, (std::vector<double>{20, 2}));  // per second
}

TEST(ReportPlots, TheRunReportDrawsEachAlgorithmSideBySideWithItsFaultsShaded) {
  TempDir dir("plots-test");
  write_stalled_run(dir.path());
  std::string html = read_text(write_run_report(dir.path()));
  EXPECT_EQ(count(html, "<div class=\"plot-card\">"), 2u);
  EXPECT_EQ(count(html, "<svg class=\"plot\""), 4u);         // latency and throughput, twice
  EXPECT_EQ(count(html, "<rect class=\"plot-fault\""), 4u);  // the pause on each plot
  EXPECT_NE(html.find("<h4><a href=\"#set-nx-px\">set-nx-px</a>"), std::string::npos);
  EXPECT_NE(html.find("<h4><a href=\"#fenced\">fenced</a>"), std::string::npos);
  EXPECT_EQ(count(html, "class=\"series p99\""), 2u);
  EXPECT_GT(count(html, "<rect class=\"throughput\""), 10u);
}

TEST(ReportPlots, ASweepBesideASuiteIsChartedWithEachAlgorithmsBreakingPoint) {
  TempDir suite("plots-test");
  write_calm_run(suite.path() / "smoke");
  json sweep = pause_sweep(980, 930);
  sweep["algorithms"].push_back(
      {{"algorithm", "<redlock>"}, {"outcome", "error"}, {"error", "no server"}});
  write_text(suite.path() / "sweep-pause" / "sweep.json", sweep.dump());
  std::string html = read_text(write_suite_report(suite.path()));
  EXPECT_NE(html.find("Breaking points</h2>"), std::string::npos);
  EXPECT_NE(html.find(">breaks at 980</text>"), std::string::npos);
  EXPECT_NE(html.find("<title>set-nx-px breaks at duration_ms ≥ 980 (safe at 930)</title>"),
            std::string::npos);
  EXPECT_NE(html.find(">never breaks up to 3000</text>"), std::string::npos);
  EXPECT_NE(html.find(">search failed: no server</text>"), std::string::npos);
  EXPECT_NE(html.find(">&lt;redlock&gt;</text>"), std::string::npos);
  EXPECT_NE(html.find("<a href=\"sweep-pause/sweep.json\">sweep.json</a>"), std::string::npos);
  EXPECT_EQ(count(html, "<circle class=\"breaking\""), 1u);
  // A directory holding only a sweep is a report of its own.
  TempDir alone("plots-test");
  write_text(alone.path() / "sweep.json", sweep.dump());
  EXPECT_EQ(write_report(alone.path()), alone.path() / "index.html");
  const std::string page = read_text(alone.path() / "index.html");
  EXPECT_NE(page.find(">breaks at 980</text>"), std::string::npos);
  // A sweep alone is not an empty suite: no matrix, no "0 expectations met".
  EXPECT_NE(page.find("locklab sweep"), std::string::npos);
  EXPECT_EQ(page.find("class=\"matrix\""), std::string::npos);
  EXPECT_EQ(page.find("expectations met"), std::string::npos);
}

}  // namespace
}  // namespace locklab::reports
