// Reading run documents: why an expectation was missed, detection rates, totals.
#include "summary.h"

#include <gtest/gtest.h>

namespace locklab::suite {
namespace {

using nlohmann::json;

json violation(const std::string& kind, const std::string& explanation) {
  return {{"kind", kind},     {"lock", "L"},          {"processes", {"c1", "c2"}},
          {"events", {3, 7}}, {"times_ns", {30, 70}}, {"explanation", explanation}};
}

// A completed run as run_algorithm() documents it.
json run(const std::string& expected, const std::string& verdict, std::vector<json> violations,
         bool met, uint64_t seed = 1) {
  json counts = json::object();
  for (const auto& v : violations)
    counts[v["kind"].get<std::string>()] = counts.value(v["kind"].get<std::string>(), 0) + 1;
  return {{"algorithm", "set-nx-px"},
          {"expected", {{"verdict", expected}}},
          {"verdict", verdict},
          {"expectation_met", met},
          {"error", nullptr},
          {"seed", seed},
          {"check", {{"verdict", verdict}, {"counts", counts}, {"violations", violations}}}};
}

json failed_run(const std::string& error, uint64_t seed = 1) {
  return {{"algorithm", "set-nx-px"}, {"expected", {{"verdict", "safe"}}},
          {"verdict", "unknown"},     {"expectation_met", false},
          {"error", error},           {"seed", seed}};
}

TEST(Summary, FoundKindsAreSortedAndUnique) {
  json r = run("violated", "violated",
               {violation("stale-write", "w"), violation("mutual-exclusion", "m"),
                violation("stale-write", "w2")},
               true);
  EXPECT_EQ(found_kinds(r), (std::vector<std::string>{"mutual-exclusion", "stale-write"}));
  EXPECT_TRUE(found_kinds(failed_run("boom")).empty());
}

TEST(Summary, UnmetReasonSaysWhatWasMissed) {
  EXPECT_EQ(unmet_reason(run("safe", "safe", {}, true)), "");

  std::string reason = unmet_reason(
      run("safe", "violated",
          {violation("mutual-exclusion", "c2 acquired L at event 7 while c1 held it")}, false));
  EXPECT_NE(reason.find("expected safe"), std::string::npos) << reason;
  EXPECT_NE(reason.find("c2 acquired L at event 7 while c1 held it"), std::string::npos) << reason;

  json missed = run("violated", "safe", {}, false);
  missed["expected"]["kinds"] = {"mutual-exclusion"};
  EXPECT_EQ(unmet_reason(missed),
            "expected violated (mutual-exclusion), measured safe: no violation found");

  json wrong_kind = run("violated", "violated", {violation("mutual-exclusion", "m")}, false);
  wrong_kind["expected"]["kinds"] = {"mutual-exclusion", "stale-write"};
  reason = unmet_reason(wrong_kind);
  EXPECT_NE(reason.find("no stale-write was found"), std::string::npos) << reason;

  json ruled_out = run(
      "violated", "violated",
      {violation("mutual-exclusion", "m"), violation("stale-write", "c1 wrote after c2")}, false);
  ruled_out["expected"]["absent"] = {"stale-write"};
  reason = unmet_reason(ruled_out);
  EXPECT_NE(reason.find("found stale-write, which the scenario rules out: c1 wrote after c2"),
            std::string::npos)
      << reason;

  EXPECT_EQ(unmet_reason(failed_run("redis-server did not start")),
            "the run failed: redis-server did not start");
}

TEST(Summary, CellCountsDetectionsOverCompletedRuns) {
  std::vector<json> runs = {
      run("violated", "violated", {violation("mutual-exclusion", "m")}, true, 5),
      run("violated", "safe", {}, false, 6),
      run("violated", "violated", {violation("mutual-exclusion", "m")}, true, 7),
      failed_run("port in use", 8)};
  runs[0]["seconds"] = 1.5;
  runs[1]["seconds"] = 2.0;
  json cell = summarize_cell("pause", runs);
  EXPECT_EQ(cell["scenario"], "pause");
  EXPECT_EQ(cell["algorithm"], "set-nx-px");
  EXPECT_EQ(cell["runs"], 4);
  EXPECT_EQ(cell["detections"], 2);
  EXPECT_DOUBLE_EQ(cell["detection_rate"].get<double>(), 2.0 / 3.0)
      << "a failed run measured nothing";
  EXPECT_EQ(cell["runs_met"], 2);
  EXPECT_EQ(cell["met"], false);
  EXPECT_EQ(cell["errors"], 1);
  EXPECT_EQ(cell["kinds"]["mutual-exclusion"], 2);
  EXPECT_EQ(cell["verdicts"], json({"violated", "safe", "violated", "error"}));
  EXPECT_EQ(cell["seeds"], json({5, 6, 7, 8}));
  EXPECT_DOUBLE_EQ(cell["seconds"].get<double>(), 3.5);

  json all_met = summarize_cell("calm", {run("safe", "safe", {}, true)});
  EXPECT_EQ(all_met["met"], true);
  EXPECT_EQ(all_met["detection_rate"], 0.0);
}

TEST(Summary, TotalsAndExitStatus) {
  json met = summarize_cell("a", {run("safe", "safe", {}, true)});
  json unmet = summarize_cell("b", {run("safe", "violated", {violation("ownership", "o")}, false)});
  json failed = summarize_cell("c", {failed_run("boom")});

  json totals = suite_totals(json::array({met}));
  EXPECT_EQ(totals["cells"], 1);
  EXPECT_EQ(suite_exit_status(totals), 0);

  totals = suite_totals(json::array({met, unmet}));
  EXPECT_EQ(totals["cells_unmet"], 1);
  EXPECT_EQ(totals["detections"], 1);
  EXPECT_EQ(suite_exit_status(totals), 1);

  totals = suite_totals(json::array({met, unmet, failed}));
  EXPECT_EQ(totals["errors"], 1);
  EXPECT_EQ(totals["cells_with_errors"], 1);
  EXPECT_EQ(totals["runs"], 3);
  EXPECT_EQ(suite_exit_status(totals), 2) << "an error outranks an unmet expectation";

  EXPECT_EQ(suite_exit_status(suite_totals(json::array())), 0)
      << "an empty shard has nothing unmet";
}

}  // namespace
}  // namespace locklab::suite
