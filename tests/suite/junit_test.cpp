// JUnit XML: escaping, the failure/error of a test case, and the document as
// a real XML parser reads it.
#include "junit.h"

#include <gtest/gtest.h>

#include <random>

#include "suite_test_support.h"
#include "temp_dir.h"

namespace locklab::suite {
namespace {

using nlohmann::json;
using suite_test::parse_junit;

const std::string kReplacement = "\xEF\xBF\xBD";

std::string xml_of(const std::vector<JunitSuite>& suites, const TempDir& dir,
                   const std::string& name = "t.xml") {
  std::ofstream(dir.path() / name) << junit_xml("locklab test", suites);
  return (dir.path() / name).string();
}

TEST(XmlEscape, MarkupAndQuotesBecomeEntities) {
  EXPECT_EQ(xml_text("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(xml_attribute("x & y"), "x &amp; y");
}

TEST(XmlEscape, WhitespaceSurvivesInAttributes) {
  EXPECT_EQ(xml_text("a\tb\nc\rd"), "a\tb\nc&#13;d");
  EXPECT_EQ(xml_attribute("a\tb\nc\rd"), "a&#9;b&#10;c&#13;d");
}

TEST(XmlEscape, CharactersXmlCannotCarryAreReplaced) {
  EXPECT_EQ(xml_text(std::string("a\0b", 3)), "a" + kReplacement + "b");
  EXPECT_EQ(xml_text("\x01\x1b[31m"), kReplacement + kReplacement + "[31m");
  EXPECT_EQ(xml_text("caf\xC3\xA9 \xC3\x97 \xF0\x9F\x94\x92"),
            "caf\xC3\xA9 \xC3\x97 \xF0\x9F\x94\x92")
      << "valid UTF-8 is kept";
  EXPECT_EQ(xml_text("\xC3"), kReplacement) << "truncated sequence";
  EXPECT_EQ(xml_text("\xC0\xAF"), kReplacement + kReplacement) << "overlong encoding of '/'";
  EXPECT_EQ(xml_text("\xED\xA0\x80"), kReplacement + kReplacement + kReplacement)
      << "a UTF-16 surrogate";
  EXPECT_EQ(xml_text("\xEF\xBF\xBF"), kReplacement + kReplacement + kReplacement) << "U+FFFF";
  EXPECT_EQ(xml_text("\xFF"), kReplacement);
}

CellSummary cell(const std::string& scenario, const std::string& algorithm,
                 std::vector<std::string> verdicts) {
  CellSummary c;
  c.scenario = scenario;
  c.algorithm = algorithm;
  c.expected = Expectation{Verdict::Violated, {}, {}};
  c.runs = int64_t(verdicts.size());
  c.detections = 1;
  c.verdicts = verdicts;
  c.seeds = {3, 4};
  c.seconds = 2.25;
  return c;
}

RunResult run(const std::string& verdict, bool met, int number, json violations = json::array()) {
  return RunResult::from_json(
      {{"algorithm", "set-nx-px"},
       {"expected", {{"verdict", "violated"}}},
       {"verdict", verdict},
       {"expectation_met", met},
       {"error", nullptr},
       {"seed", 2 + number},
       {"run", number},
       {"check", {{"verdict", verdict}, {"counts", json::object()}, {"violations", violations}}}},
      "test");
}

TEST(JunitCase, AvailabilityLostIsNoFailureAndIsSaid) {
  CellSummary c = cell("majority-down", "redlock", {"safe"});
  c.expected = Expectation{};
  c.runs_unavailable = 1;
  c.unavailable_under = {"crash-node"};
  c.longest_unavailable_seconds = 4.25;
  RunResult safe = run("safe", true, 1);
  JunitCase test = junit_case(c, {safe});
  EXPECT_FALSE(test.failure);
  EXPECT_FALSE(test.error);
  EXPECT_NE(test.system_out.find("availability lost under faults (not a violation): refused "
                                 "while crash-node was in force, for up to 4.2 s"),
            std::string::npos)
      << test.system_out;
}

TEST(JunitCase, MetExpectationHasNoProblem) {
  JunitCase test = junit_case(cell("pause", "set-nx-px", {"violated"}), {run("violated", true, 1)});
  EXPECT_EQ(test.classname, "pause");
  EXPECT_EQ(test.name, "set-nx-px");
  EXPECT_DOUBLE_EQ(test.seconds, 2.25);
  EXPECT_FALSE(test.failure);
  EXPECT_FALSE(test.error);
  EXPECT_FALSE(test.skipped);
}

TEST(JunitCase, UnmetRunsBecomeOneFailureNamingEachRun) {
  JunitCase test =
      junit_case(cell("pause", "set-nx-px", {"safe", "violated", "safe"}),
                 {run("safe", false, 1), run("violated", true, 2), run("safe", false, 3)});
  ASSERT_TRUE(test.failure);
  EXPECT_FALSE(test.error);
  EXPECT_EQ(test.failure->type, "unmet-expectation");
  EXPECT_EQ(test.failure->message,
            "2 of 3 runs: expected violated, measured safe: no violation found");
  EXPECT_NE(test.failure->text.find("run 1 (seed 3)"), std::string::npos) << test.failure->text;
  EXPECT_NE(test.failure->text.find("run 3 (seed 5)"), std::string::npos) << test.failure->text;
  EXPECT_EQ(test.failure->text.find("run 2 "), std::string::npos) << test.failure->text;
}

TEST(JunitCase, FailureSaysHowToRepeatEachRun) {
  CellSummary c = cell("pause", "set-nx-px", {"safe"});
  c.scenario_file = "scenarios/pause.json";
  JunitCase test = junit_case(c, {run("safe", false, 1)});
  ASSERT_TRUE(test.failure);
  EXPECT_NE(test.failure->text.find(
                "repeat: locklab run scenarios/pause.json --algorithm set-nx-px --seed 3"),
            std::string::npos)
      << test.failure->text;

  RunResult adapter = run("safe", false, 1);
  adapter.adapter = "python3 mine.py";
  adapter.like = "set-nx-px";
  test = junit_case(c, {adapter});
  ASSERT_TRUE(test.failure);
  EXPECT_NE(test.failure->text.find("repeat: locklab run scenarios/pause.json --adapter "
                                    "'python3 mine.py' --like set-nx-px --seed 3"),
            std::string::npos)
      << test.failure->text;
}

TEST(JunitCase, UnexpectedViolationCarriesItsExplanation) {
  RunResult r = run("violated", false, 1,
                    json::array({{{"kind", "mutual-exclusion"},
                                  {"explanation", "c2 acquired L while c1 held it"}}}));
  r.expected = Expectation{Verdict::Safe, {}, {}};
  JunitCase test = junit_case(cell("calm", "set-nx-px", {"violated"}), {r});
  ASSERT_TRUE(test.failure);
  EXPECT_NE(test.failure->message.find("c2 acquired L while c1 held it"), std::string::npos);
  EXPECT_NE(test.failure->text.find("mutual-exclusion: c2 acquired L while c1 held it"),
            std::string::npos);
}

TEST(JunitCase, AnOverlapIsNamedByItsClassAndTheHarmIsSaid) {
  RunResult r = run(
      "violated", false, 1,
      json::array({{{"kind", "mutual-exclusion"},
                    {"explanation", "c2 acquired L while c1 held it"},
                    {"class", "overrun"},
                    {"overlap",
                     {{"explanation", "overrun: c2 was granted the lock after c1's lease ended"},
                      {"late_writes", {{"accepted", 0}, {"rejected", 1}}}}}}}));
  r.expected = Expectation{Verdict::Safe, {}, {}};
  r.check->harm = checkers::Harm{
      0,
      0,
      1,
      {{"broken-lease", 0}, {"overrun", 1}, {"unclassified", 0}, {"stopped-by-fencing", 1}}};
  r.check->closest_call.write_before_lease_end =
      checkers::Margin{12.5, 0.0125, "L", {"c1"}, {}, {}, ""};
  JunitCase test = junit_case(cell("calm", "fenced", {"violated"}), {r});
  ASSERT_TRUE(test.failure);
  EXPECT_NE(test.failure->text.find("mutual-exclusion (overrun): c2 acquired L while c1 held it\n"
                                    "    overrun: c2 was granted the lock after c1's lease ended"),
            std::string::npos)
      << test.failure->text;
  EXPECT_NE(test.system_out.find("harm: 0 of 1 runs harmful (the store accepted 0 lost updates "
                                 "and 0 stale writes; fencing rejected 1 writes)\n"
                                 "overlaps: broken-lease 0, overrun 1, unclassified 0, stopped by "
                                 "fencing 1\n"),
            std::string::npos)
      << test.system_out;
  EXPECT_NE(test.system_out.find("an accepted write 12.5 ms before its lease ended"),
            std::string::npos)
      << test.system_out;
}

TEST(JunitCase, FailedRunIsAnError) {
  RunResult failed = run("unknown", false, 2);
  failed.error = "redis-server exited at start";
  failed.outcome = decide_outcome(failed);
  JunitCase test =
      junit_case(cell("calm", "set-nx-px", {"safe", "error"}), {run("safe", false, 1), failed});
  ASSERT_TRUE(test.error);
  EXPECT_EQ(test.error->type, "infrastructure");
  EXPECT_EQ(test.error->message, "1 of 2 runs: the run failed: redis-server exited at start");
  EXPECT_FALSE(test.failure) << "one element per test case: the error";
}

// A run whose fault 1 never fired, whatever it measured.
RunResult not_exercised(int number) {
  RunResult r = run("violated", true, number);
  r.faults = {{0, "partition", "at 100 ms", true, 100.0, 400.0},
              {1, "pause", "c1 at step acquired (1st time)", false, std::nullopt, std::nullopt}};
  r.exercised = false;
  r.outcome = decide_outcome(r);
  return r;
}

TEST(JunitCase, NotExercisedIsAFailureNamingTheFaultThatNeverFired) {
  JunitCase test = junit_case(cell("pause", "set-nx-px", {"violated", "violated"}),
                              {run("violated", true, 1), not_exercised(2)});
  ASSERT_TRUE(test.failure);
  EXPECT_FALSE(test.error);
  EXPECT_EQ(test.failure->type, "not-exercised");
  EXPECT_EQ(test.failure->message,
            "1 of 2 runs: fault 1 (pause, c1 at step acquired (1st time)) never fired");
  EXPECT_NE(test.failure->text.find("run 2 (seed 4): fault 1 (pause"), std::string::npos)
      << test.failure->text;
  EXPECT_EQ(test.failure->text.find("fault 0"), std::string::npos)
      << "fault 0 fired: " << test.failure->text;

  // Next to an unmet run, the failure is the unmet expectation's.
  test = junit_case(cell("pause", "set-nx-px", {"safe", "violated"}),
                    {run("safe", false, 1), not_exercised(2)});
  ASSERT_TRUE(test.failure);
  EXPECT_EQ(test.failure->type, "unmet-expectation");
  EXPECT_NE(test.failure->text.find("never fired"), std::string::npos) << test.failure->text;
}

TEST(JunitCase, NotApplicableIsSkippedWithItsReason) {
  RunResult r = run("unknown", false, 1);
  r.check.reset();
  r.not_applicable = "step after-validity-check exists only in the built-in redlock";
  r.outcome = decide_outcome(r);
  JunitCase test = junit_case(cell("redlock-clock", "redis-py-lock", {"not-applicable"}), {r});
  EXPECT_FALSE(test.failure);
  EXPECT_FALSE(test.error);
  ASSERT_TRUE(test.skipped);
  EXPECT_EQ(*test.skipped, "step after-validity-check exists only in the built-in redlock");
}

TEST(JunitCase, SaferThanPassesAndSaysSo) {
  RunResult r = run("safe", false, 1);
  r.expected = Expectation{Verdict::Violated, {"mutual-exclusion"}, {}};
  r.like = "set-nx-px";
  r.outcome = decide_outcome(r);
  ASSERT_EQ(r.outcome, RunOutcome::kSaferThan);
  JunitCase test = junit_case(cell("pause", "redis-py-lock", {"safe"}), {r});
  EXPECT_FALSE(test.failure);
  EXPECT_FALSE(test.error);
  EXPECT_FALSE(test.skipped);
  EXPECT_NE(test.system_out.find(
                "safer than set-nx-px: expected violated (mutual-exclusion), measured safe\n"),
            std::string::npos)
      << test.system_out;
}

TEST(JunitXml, ParsesWithCountsPerSuiteAndTotals) {
  TempDir dir("junit-test");
  JunitCase ok{"calm", "set-nx-px", 1.0, std::nullopt, std::nullopt, "out"};
  JunitCase failing{
      "pause",
      "fenced",
      2.5,
      JunitProblem{"unmet-expectation", "expected <safe> & \"quiet\"", "line 1\nline 2"},
      std::nullopt,
      ""};
  JunitCase broken{
      "pause", "redlock", 0.5, std::nullopt, JunitProblem{"infrastructure", "port\tin use", "x"},
      ""};
  JunitCase skipped{"pause", "adapter", 0, std::nullopt, std::nullopt, "", "not <applicable>"};
  auto doc = parse_junit(
      xml_of({{"calm", {{"seed", "1"}}, {ok}}, {"pause", {}, {failing, broken, skipped}}}, dir));
  ASSERT_FALSE(doc.is_null());
  EXPECT_EQ(doc["root"], "testsuites");
  EXPECT_EQ(doc["tests"], "4");
  EXPECT_EQ(doc["failures"], "1");
  EXPECT_EQ(doc["errors"], "1");
  EXPECT_EQ(doc["skipped"], "1");
  EXPECT_EQ(doc["time"], "4.000");
  ASSERT_EQ(doc["suites"].size(), 2u);
  EXPECT_EQ(doc["suites"][0]["name"], "calm");
  EXPECT_EQ(doc["suites"][0]["properties"]["seed"], "1");
  EXPECT_EQ(doc["suites"][0]["cases"][0]["system_out"], "out");
  const json& pause = doc["suites"][1];
  EXPECT_EQ(pause["tests"], "3");
  EXPECT_EQ(pause["failures"], "1");
  EXPECT_EQ(pause["errors"], "1");
  EXPECT_EQ(pause["skipped"], "1");
  EXPECT_EQ(pause["cases"][2]["skipped"], "not <applicable>");
  EXPECT_TRUE(pause["cases"][0]["skipped"].is_null());
  EXPECT_EQ(pause["time"], "3.000");
  EXPECT_EQ(pause["cases"][0]["classname"], "pause");
  EXPECT_EQ(pause["cases"][0]["name"], "fenced");
  EXPECT_EQ(pause["cases"][0]["failure"]["message"], "expected <safe> & \"quiet\"");
  EXPECT_EQ(pause["cases"][0]["failure"]["text"], "line 1\nline 2");
  EXPECT_TRUE(pause["cases"][0]["error"].is_null());
  EXPECT_EQ(pause["cases"][1]["error"]["message"], "port\tin use");
}

// Text from an alphabet that has markup, quotes, whitespace, multi-byte
// characters and control characters; `expected` is what an XML reader must
// get back: the same, with each control character replaced.
struct Sample {
  std::string text, expected;
};

Sample random_sample(std::mt19937& random) {
  static const std::vector<std::string> pieces = {"a",
                                                  "Z",
                                                  "<",
                                                  ">",
                                                  "&",
                                                  "\"",
                                                  "'",
                                                  " ",
                                                  "\t",
                                                  "\n",
                                                  "\r",
                                                  "×",
                                                  "é",
                                                  "🔒",
                                                  "]]>",
                                                  "&amp;",
                                                  "\x01",
                                                  "\x1f",
                                                  std::string(1, '\0')};
  Sample s;
  const size_t length = random() % 12;
  for (size_t k = 0; k < length; ++k) {
    const std::string& piece = pieces[random() % pieces.size()];
    const auto first = static_cast<unsigned char>(piece[0]);
    const bool control =
        piece.size() == 1 && first < 0x20 && piece != "\t" && piece != "\n" && piece != "\r";
    s.text += piece;
    s.expected += control ? kReplacement : piece;
  }
  return s;
}

// Many random names, messages and texts in one document, parsed once (a
// parser process per sample would be slow): every one comes back exactly.
TEST(JunitXml, AnyTextRoundTripsThroughAnXmlParser) {
  std::mt19937 random(20240531);
  std::vector<Sample> names, messages;
  JunitSuite suite{"roundtrip", {}, {}};
  for (int i = 0; i < 2000; ++i) {
    names.push_back(random_sample(random));
    messages.push_back(random_sample(random));
    suite.cases.push_back({"class", names.back().text, 0.1,
                           JunitProblem{"t", messages.back().text, names.back().text}, std::nullopt,
                           messages.back().text});
  }
  TempDir dir("junit-roundtrip");
  auto doc = parse_junit(xml_of({suite}, dir));
  ASSERT_FALSE(doc.is_null());
  const json& cases = doc["suites"][0]["cases"];
  ASSERT_EQ(cases.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    SCOPED_TRACE(json(names[i].expected).dump() + " / " + json(messages[i].expected).dump());
    EXPECT_EQ(cases[i]["name"], names[i].expected);
    EXPECT_EQ(cases[i]["failure"]["message"], messages[i].expected);
    EXPECT_EQ(cases[i]["failure"]["text"], names[i].expected);
    const json& out = cases[i]["system_out"];  // absent when empty
    EXPECT_EQ(out.is_null() ? std::string() : out.get<std::string>(), messages[i].expected);
  }
}

}  // namespace
}  // namespace locklab::suite
