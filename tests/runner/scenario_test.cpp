#include "scenario.h"

#include <gtest/gtest.h>

#include <fstream>

#include "temp_dir.h"

namespace locklab {
namespace {

using nlohmann::json;

std::string error_of(const json& document) {
  try {
    parse_scenario(document, "s.json");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

TEST(Scenario, DefaultsAndExpectations) {
  Scenario s = parse_scenario(json::parse(R"({"name":"x","algorithms":["set-nx-px"],
                      "expect":{"default":{"verdict":"violated","kinds":["mutual-exclusion"]},
                                "set-nx-px":{"verdict":"safe"}}})"),
                              "s.json");
  EXPECT_EQ(s.name, "x");
  EXPECT_EQ(s.clients, 4);
  EXPECT_EQ(s.workload.locks, std::vector<std::string>{"lock"});
  EXPECT_EQ(s.expectation_for("set-nx-px").verdict, Verdict::Safe);
  EXPECT_EQ(s.expectation_for("redlock").verdict, Verdict::Violated);
}

// Each cell says why: an expectation carries its reason, and a story that
// cannot be told to an algorithm says so instead of a verdict.
TEST(Scenario, ExpectationsSayWhyAndNotApplicableCellsSayWhyNot) {
  Scenario s = parse_scenario(json::parse(R"({"name":"x","algorithms":["set-nx-px","redlock"],
      "faults":[{"kind":"pause","duration_ms":10,"when":{"client":"c1","step":"after-send"}}],
      "expect":{"default":{"verdict":"safe","why":"the lease outlives the pause"},
                "set-nx-px":{"not_applicable":"set-nx-px sends one command: it has no after-send"}}})"),
                              "s.json");
  EXPECT_EQ(s.expectation_for("redlock").why, "the lease outlives the pause");
  EXPECT_EQ(s.not_applicable.at("set-nx-px"), "set-nx-px sends one command: it has no after-send");
  const json again = scenario_to_json(s);
  EXPECT_EQ(again["expect"]["set-nx-px"],
            json({{"not_applicable", s.not_applicable.at("set-nx-px")}}));
  EXPECT_EQ(again["expect"]["default"]["why"], "the lease outlives the pause");
  EXPECT_EQ(parse_scenario(again, "s.json").not_applicable, s.not_applicable);

  EXPECT_NE(error_of(json::parse(R"({"algorithms":["set-nx-px"],
                "expect":{"set-nx-px":{"not_applicable":"no","verdict":"safe"}}})"))
                .find("'expect.set-nx-px.verdict' is not a known field"),
            std::string::npos);
  EXPECT_NE(error_of(json::parse(R"({"algorithms":["set-nx-px"],
                "expect":{"set-nx-px":{"not_applicable":""}}})"))
                .find("'expect.set-nx-px.not_applicable' must say"),
            std::string::npos);
  EXPECT_NE(error_of(json::parse(R"({"algorithms":["set-nx-px"],
                "expect":{"redlock":{"verdict":"safe"}}})"))
                .find("'expect.redlock' is about redlock, which the scenario does not run"),
            std::string::npos);
}

// An expectation can name whose fault the overlap is: the class is checked
// against the vocabulary, needs a violated verdict, and is kept in the JSON.
// An expectation can name what a library must leave behind, in the
// vocabulary's words.
TEST(Scenario, AnExpectationNamesTheIncidentsALibraryLeaves) {
  Scenario s = parse_scenario(json::parse(R"({"name":"x","algorithms":["set-nx-px"],
      "expect":{"default":{"verdict":"safe","incidents":["unhandled-rejection"]}}})"),
                              "s.json");
  EXPECT_EQ(s.expectation_for("set-nx-px").incidents,
            std::vector<std::string>{"unhandled-rejection"});
  EXPECT_EQ(scenario_to_json(s)["expect"]["default"]["incidents"],
            json::array({"unhandled-rejection"}));
  EXPECT_NE(error_of(json::parse(R"({"algorithms":["set-nx-px"],
                "expect":{"default":{"verdict":"safe","incidents":["crash"]}}})"))
                .find("'expect.default.incidents' has an unknown incident kind \"crash\" (known: "
                      "unhandled-rejection, uncaught-exception)"),
            std::string::npos);
}

TEST(Scenario, AnExpectationNamesTheOverlapClass) {
  Scenario s = parse_scenario(json::parse(R"({"name":"x","algorithms":["set-nx-px"],
      "expect":{"default":{"verdict":"violated","kinds":["mutual-exclusion"],
                           "classes":["overrun"]}}})"),
                              "s.json");
  EXPECT_EQ(s.expectation_for("set-nx-px").classes, std::vector<std::string>{"overrun"});
  EXPECT_EQ(scenario_to_json(s)["expect"]["default"]["classes"], json::array({"overrun"}));
  EXPECT_NE(error_of(json::parse(R"({"algorithms":["set-nx-px"],
                "expect":{"default":{"verdict":"violated","classes":["late"]}}})"))
                .find("'expect.default.classes' has an unknown overlap class \"late\" (known: "
                      "broken-lease, overrun, unclassified)"),
            std::string::npos);
  EXPECT_NE(error_of(json::parse(R"({"algorithms":["set-nx-px"],
                "expect":{"default":{"verdict":"safe","classes":["overrun"]}}})"))
                .find("'expect.default.classes' lists overlap classes"),
            std::string::npos);
}

// The editors' schema offers the classes the vocabulary has, no others.
TEST(Scenario, TheSchemaNamesEveryOverlapClass) {
  std::ifstream in(SOURCE_DIR "/scenarios/schema.json");
  const json schema = json::parse(in);
  std::vector<std::string> classes;
  for (const auto& row : overlap_classes()) classes.emplace_back(row.name);
  const json& expect = schema["properties"]["expect"];
  for (const json* entry :
       {&expect["properties"]["default"], &expect["additionalProperties"]["oneOf"][0],
        &schema["properties"]["libraries"]["additionalProperties"]["oneOf"][0]})
    EXPECT_EQ((*entry)["properties"]["classes"]["items"]["enum"], json(classes));
}

// A story about a published library says what it expects of that library by
// the name its adapter answers hello with; a built-in's id there is a slip.
TEST(Scenario, LibrariesHaveExpectationsOfTheirOwn) {
  Scenario s = parse_scenario(json::parse(R"({"name":"x","algorithms":["redlock"],
      "workload":{"checks_validity":false},
      "expect":{"default":{"verdict":"safe","why":"Redlock refuses an expired quorum"}},
      "libraries":{"node-redlock-v5":{"verdict":"violated","kinds":["mutual-exclusion"],
                                      "why":"validity counted from the first attempt"},
                   "node-redlock-v4":{"not_applicable":"no after-send step"}}})"),
                              "s.json");
  EXPECT_FALSE(s.workload.checks_validity);
  EXPECT_EQ(s.library_expectations.at("node-redlock-v5").verdict, Verdict::Violated);
  EXPECT_EQ(s.library_not_applicable.at("node-redlock-v4"), "no after-send step");
  const Scenario again = parse_scenario(scenario_to_json(s), "s.json");
  EXPECT_FALSE(again.workload.checks_validity);
  EXPECT_EQ(again.library_expectations.at("node-redlock-v5").why,
            "validity counted from the first attempt");
  EXPECT_EQ(again.library_not_applicable, s.library_not_applicable);
  EXPECT_TRUE(parse_scenario(json::parse(R"({"algorithms":["redlock"]})"), "s.json")
                  .workload.checks_validity)
      << "a client checks the validity it is handed unless the story says otherwise";

  EXPECT_NE(error_of(json::parse(R"({"algorithms":["redlock"],
                "libraries":{"redlock":{"verdict":"safe"}}})"))
                .find("'libraries.redlock' names the built-in redlock"),
            std::string::npos);
  EXPECT_NE(error_of(json::parse(R"({"algorithms":["redlock"],
                "libraries":{"x":{"verdict":"maybe"}}})"))
                .find("'libraries.x.verdict'"),
            std::string::npos);
}

TEST(Scenario, BadInputNamesTheFieldInOneLine) {
  EXPECT_EQ(error_of(json::parse(R"({"algorithms":["nope"]})")).substr(0, 47),
            "s.json: field 'algorithms' names unknown algori");
  EXPECT_NE(error_of(json::parse(R"({"algorithms":["set-nx-px"],"clinets":3})"))
                .find("'clinets' is not a known field"),
            std::string::npos);
  EXPECT_NE(error_of(json::parse(R"({"algorithms":["set-nx-px"],"workload":{"ttl_ms":"2s"}})"))
                .find("'workload.ttl_ms' must be an integer"),
            std::string::npos);
  EXPECT_NE(error_of(json::parse(R"({"algorithms":["set-nx-px"],"clients":0})"))
                .find("'clients' must be between 1 and 64"),
            std::string::npos);
  EXPECT_NE(
      error_of(
          json::parse(R"({"algorithms":["set-nx-px"],"expect":{"default":{"verdict":"broken"}}})"))
          .find("'expect.default.verdict'"),
      std::string::npos);
  EXPECT_NE(
      error_of(json::parse(R"({"algorithms":[]})")).find("'algorithms' must name at least one"),
      std::string::npos);
  for (const auto& doc : {R"([1,2])", R"({"algorithms":["set-nx-px"],"faults":{}})"}) {
    std::string error = error_of(json::parse(doc));
    EXPECT_FALSE(error.empty()) << doc;
    EXPECT_EQ(error.find('\n'), std::string::npos);
  }
}

TEST(Scenario, NetworkBackendIsProxyUnlessNamedAndKeptInTheScenarioJson) {
  Scenario plain = parse_scenario(json::parse(R"({"algorithms":["set-nx-px"]})"), "s.json");
  EXPECT_EQ(plain.topology.network, "proxy");
  EXPECT_FALSE(scenario_to_json(plain)["topology"].contains("network"));
  Scenario netns = parse_scenario(
      json::parse(R"({"algorithms":["set-nx-px"],"topology":{"network":"netns"}})"), "s.json");
  EXPECT_EQ(netns.topology.network, "netns");
  EXPECT_EQ(scenario_to_json(netns)["topology"]["network"], "netns");
  EXPECT_NE(error_of(json::parse(R"({"algorithms":["set-nx-px"],"topology":{"network":"tun"}})"))
                .find("'topology.network' must be \"proxy\" or \"netns\""),
            std::string::npos);
}

TEST(Scenario, MalformedJsonReportsLineAndColumn) {
  TempDir dir;
  auto file = dir.path() / "bad.json";
  std::ofstream(file) << "{\n  \"name\": \"x\",\n  \"clients\": ,\n}\n";
  try {
    load_scenario(file);
    FAIL();
  } catch (const ScenarioError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("bad.json: malformed JSON at line 3, column 14"), std::string::npos)
        << what;
  }
  EXPECT_THROW(load_scenario(dir.path() / "missing.json"), ScenarioError);
}

}  // namespace
}  // namespace locklab

namespace locklab {
namespace {

TEST(Scenario, EveryCanonicalScenarioLoads) {
  int loaded = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(SOURCE_DIR) + "/scenarios")) {
    if (entry.path().extension() != ".json" || entry.path().filename() == "schema.json") continue;
    SCOPED_TRACE(entry.path().string());
    Scenario s = load_scenario(entry.path());
    EXPECT_EQ(s.name, entry.path().stem().string()) << "a scenario's name is its file name";
    EXPECT_FALSE(s.description.empty());
    ++loaded;
  }
  EXPECT_GE(loaded, 15);
}

}  // namespace
}  // namespace locklab

namespace locklab {
namespace {

// A scenario with one fault, given as JSON text, for `algorithms`.
json document_with_fault(const std::string& fault,
                         const std::string& algorithms = R"(["set-nx-px"])",
                         const std::string& extra = "") {
  return json::parse(R"({"algorithms":)" + algorithms + R"(,"duration_ms":500,"clients":2)" +
                     extra + R"(,"faults":[)" + fault + "]}");
}

void expect_error(const json& document, const std::vector<std::string>& parts) {
  const std::string error = error_of(document);
  ASSERT_FALSE(error.empty()) << document.dump();
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  for (const auto& part : parts) EXPECT_NE(error.find(part), std::string::npos) << error;
}

TEST(ScenarioFaults, AnUnknownStepIsRejectedNamingTheValidOnes) {
  expect_error(document_with_fault(R"({"kind":"pause","when":{"client":"c1","step":"acquird"},
                              "duration_ms":100})"),
               {"'faults[0].when.step'", "\"acquird\"", "not a step of set-nx-px",
                "valid: before-acquire, acquired,", "released"});
  // The algorithm's own steps are valid for it, and listed.
  expect_error(document_with_fault(R"({"kind":"pause","when":{"client":"c1","step":"after-sned"},
                              "duration_ms":100})",
                                   R"(["redlock"])"),
               {"after-send, after-validity-check"});
  EXPECT_EQ(
      error_of(document_with_fault(R"({"kind":"pause","when":{"client":"c1","step":"after-send"},
                                    "duration_ms":100})",
                                   R"(["redlock"])")),
      "");
}

TEST(ScenarioFaults, AStepOfSomeAlgorithmsOnlyMustSayWhichRunsItIsFor) {
  const std::string fault = R"({"kind":"crash-client","when":{"client":"c1","step":"after-setnx"})";
  expect_error(
      document_with_fault(fault + "}", R"(["setnx-expire","set-nx-px"])"),
      {"a step of setnx-expire only", "set-nx-px would never reach it", "faults[0].algorithms"});
  EXPECT_EQ(error_of(document_with_fault(fault + R"(,"algorithms":["setnx-expire"]})",
                                         R"(["setnx-expire","set-nx-px"])")),
            "");
  expect_error(document_with_fault(fault + R"(,"algorithms":["redlock"]})", R"(["setnx-expire"])"),
               {"'faults[0].algorithms'", "\"redlock\"", "does not run"});
}

TEST(ScenarioFaults, NestingStepsNeedReentryAndAReentrantLock) {
  const std::string fault =
      R"({"kind":"pause","duration_ms":50,"when":{"client":"c1","step":"reacquired"}})";
  expect_error(document_with_fault(fault, R"(["redisson-hash"])"), {"workload.reentry > 1"});
  expect_error(document_with_fault(fault, R"(["set-nx-px"])", R"(,"workload":{"reentry":2})"),
               {"re-entrant", "set-nx-px does not nest"});
  EXPECT_EQ(
      error_of(document_with_fault(fault, R"(["redisson-hash"])", R"(,"workload":{"reentry":2})")),
      "");
}

TEST(ScenarioFaults, ATimeAtOrPastTheEndOfTheRunIsRejected) {
  expect_error(document_with_fault(R"({"kind":"partition","at_ms":500})"),
               {"'faults[0].at_ms'", "500 ms", "duration_ms 500", "never fire"});
  EXPECT_EQ(error_of(document_with_fault(R"({"kind":"partition","at_ms":499})")), "");
}

TEST(ScenarioFaults, TargetsTheTopologyDoesNotHaveAreRejected) {
  expect_error(
      document_with_fault(R"({"kind":"sigstop-node","at_ms":10,"duration_ms":10,"nodes":[1]})"),
      {"'faults[0].nodes'", "server 1", "set-nx-px runs on 1 server"});
  // Redlock runs on five masters even when the topology names one node.
  EXPECT_EQ(error_of(document_with_fault(R"({"kind":"sigstop-node","at_ms":10,"duration_ms":10,
                                    "nodes":[4]})",
                                         R"(["redlock"])")),
            "");
  expect_error(
      document_with_fault(R"({"kind":"pause","at_ms":10,"duration_ms":10,"clients":["c3"]})"),
      {"'faults[0].clients'", "c1…c2"});
  expect_error(document_with_fault(R"({"kind":"pause","duration_ms":10,"when":{"client":"c9",
                              "step":"acquired"}})"),
               {"'faults[0].when.client'", "c9"});
}

// "until": a client step before which the fault is not undone.
TEST(ScenarioFaults, AFaultLastsUntilAWorkloadStepOfAClientItDoesNotStop) {
  const std::string until = R"("until":{"client":"c1","step":"acquired"})";
  Scenario s = parse_scenario(
      document_with_fault(R"({"kind":"pause","at_ms":0,"clients":["c2"],"duration_ms":300,)" +
                          until + "}"),
      "s.json");
  ASSERT_TRUE(s.faults[0].until);
  EXPECT_EQ(s.faults[0].until->client, "c1");
  EXPECT_EQ(s.faults[0].until->step, "acquired");
  EXPECT_EQ(s.faults[0].until->nth, 1);
  // Written back as given, and read again the same.
  const json again = scenario_to_json(s);
  EXPECT_EQ(again["faults"][0]["until"], json({{"client", "c1"}, {"step", "acquired"}}));
  EXPECT_EQ(parse_scenario(again, "s.json").faults[0].until->step, "acquired");
  // The step alone ends it: a pause needs no duration then.
  EXPECT_EQ(
      error_of(document_with_fault(R"({"kind":"pause","at_ms":0,"clients":["c2"],)" + until + "}")),
      "");
  expect_error(document_with_fault(R"({"kind":"pause","at_ms":0,"clients":["c2"]})"),
               {"'faults[0].duration_ms'", "required for pause", "\"until\""});
  expect_error(document_with_fault(R"({"kind":"crash-client","at_ms":10,)" + until + "}"),
               {"'faults[0].until'", "crash-client", "does not undo"});
  // A step an algorithm declares, as "when" may name it: for the algorithms
  // that declare it only.
  const std::string after_send =
      R"({"kind":"pause","at_ms":0,"clients":["c2"],"until":{"client":"c1","step":"after-send"})";
  EXPECT_EQ(error_of(document_with_fault(after_send + "}", R"(["redlock"])")), "");
  expect_error(document_with_fault(after_send + "}", R"(["redlock","set-nx-px"])"),
               {"'faults[0].until.step'", "\"after-send\"", "a step of redlock only",
                "set-nx-px would never reach it", "faults[0].algorithms"});
  EXPECT_EQ(error_of(document_with_fault(after_send + R"(,"algorithms":["redlock"]})",
                                         R"(["redlock","set-nx-px"])")),
            "");
  expect_error(document_with_fault(R"({"kind":"pause","at_ms":0,"clients":["c2"],
                              "until":{"client":"c1","step":"after-sned"}})",
                                   R"(["redlock"])"),
               {"'faults[0].until.step'", "\"after-sned\"", "not a step of redlock", "acquired"});
  expect_error(
      document_with_fault(R"({"kind":"pause","at_ms":0,"clients":["c1","c2"],)" + until + "}"),
      {"'faults[0].until.client'", "c1, which this pause stops"});
  expect_error(document_with_fault(R"({"kind":"pause","at_ms":0,)" + until + "}"),
               {"'faults[0].until.client'", "which this pause stops"});
  expect_error(document_with_fault(R"({"kind":"pause","at_ms":0,"clients":["c2"],
                              "until":{"client":"c7","step":"acquired"}})"),
               {"'faults[0].until.client'", "c7"});
}

// "one_of": faults that tell one moment of the story in different ways.
TEST(ScenarioFaults, AlternativesShareAName) {
  const std::string c2 = R"({"kind":"pause","duration_ms":200,"one_of":"takeover",
                             "when":{"client":"c2","step":"acquired"}})";
  const std::string c1 = R"({"kind":"pause","duration_ms":200,"one_of":"takeover",
                             "when":{"client":"c1","step":"acquired"}})";
  Scenario s = parse_scenario(document_with_fault(c2 + "," + c1), "s.json");
  EXPECT_EQ(s.faults[0].one_of, "takeover");
  EXPECT_EQ(s.faults[1].one_of, "takeover");
  const json again = scenario_to_json(s);
  EXPECT_EQ(again["faults"][1]["one_of"], "takeover");
  EXPECT_EQ(parse_scenario(again, "s.json").faults[0].one_of, "takeover");
  Scenario plain = parse_scenario(document_with_fault(R"({"kind":"pause","duration_ms":200,
                              "when":{"client":"c1","step":"acquired"}})"),
                                  "s.json");
  EXPECT_TRUE(plain.faults[0].one_of.empty());
  EXPECT_FALSE(scenario_to_json(plain)["faults"][0].contains("one_of"));
  // Alone under its name, a fault would be allowed never to fire.
  expect_error(document_with_fault(c2), {"'faults[0].one_of'", "takeover", "no other fault"});
  expect_error(document_with_fault(R"({"kind":"pause","duration_ms":200,"one_of":3,
                              "when":{"client":"c1","step":"acquired"}})"),
               {"'faults[0].one_of'"});
}

// "when" with "after_ms": a time counted from a client's step.
TEST(ScenarioFaults, AFaultFiresATimeAfterAClientStep) {
  const std::string when = R"("when":{"client":"c1","step":"acquired","after_ms":1500})";
  Scenario s = parse_scenario(
      document_with_fault(R"({"kind":"debug-sleep","duration_ms":200,)" + when + "}"), "s.json");
  ASSERT_TRUE(s.faults[0].when);
  EXPECT_EQ(s.faults[0].when->after_ms, 1500);
  EXPECT_EQ(s.faults[0].trigger_text(), "1500 ms after c1 at step acquired (1st time)");
  const json again = scenario_to_json(s);
  EXPECT_EQ(again["faults"][0]["when"],
            json({{"client", "c1"}, {"step", "acquired"}, {"after_ms", 1500}}));
  EXPECT_EQ(parse_scenario(again, "s.json").faults[0].when->after_ms, 1500);
  // Right after the step unless told: nothing written back.
  Scenario at_step = parse_scenario(document_with_fault(R"({"kind":"debug-sleep","duration_ms":200,
                              "when":{"client":"c1","step":"acquired"}})"),
                                    "s.json");
  EXPECT_EQ(at_step.faults[0].when->after_ms, 0);
  EXPECT_FALSE(scenario_to_json(at_step)["faults"][0]["when"].contains("after_ms"));
  expect_error(document_with_fault(R"({"kind":"debug-sleep","duration_ms":200,
                              "when":{"client":"c1","step":"acquired","after_ms":-1}})"),
               {"'faults[0].when.after_ms'"});
}

// "until" with "after_ms": a fault held until a time after a client's step.
TEST(ScenarioFaults, AFaultLastsUntilATimeAfterAClientStep) {
  Scenario s = parse_scenario(document_with_fault(R"({"kind":"pause","at_ms":0,"clients":["c2"],
                              "until":{"client":"c1","step":"acquired","after_ms":400}})"),
                              "s.json");
  ASSERT_TRUE(s.faults[0].until);
  EXPECT_EQ(s.faults[0].until->after_ms, 400);
  const json again = scenario_to_json(s);
  EXPECT_EQ(again["faults"][0]["until"],
            json({{"client", "c1"}, {"step", "acquired"}, {"after_ms", 400}}));
  EXPECT_EQ(parse_scenario(again, "s.json").faults[0].until->after_ms, 400);
  Scenario at_step = parse_scenario(document_with_fault(R"({"kind":"pause","at_ms":0,
                              "clients":["c2"],"until":{"client":"c1","step":"acquired"}})"),
                                    "s.json");
  EXPECT_EQ(at_step.faults[0].until->after_ms, 0);
  EXPECT_FALSE(scenario_to_json(at_step)["faults"][0]["until"].contains("after_ms"));
  expect_error(document_with_fault(R"({"kind":"pause","at_ms":0,"clients":["c2"],
                              "until":{"client":"c1","step":"acquired","after_ms":-1}})"),
               {"'faults[0].until.after_ms'"});
}

// "until": {"fault": N} waits for another fault's end: "c2 begins once the
// failover is done", whatever c2's start-up costs.
TEST(ScenarioFaults, AFaultLastsUntilAnotherFaultHasEnded) {
  const std::string failover =
      R"({"kind":"failover","mode":"manual","when":{"client":"c1","step":"acquired"}})";
  const std::string two = R"(,"topology":{"replicas":1})";
  Scenario s = parse_scenario(
      document_with_fault(
          R"({"kind":"pause","at_ms":0,"clients":["c2"],"until":{"fault":1}},)" + failover,
          R"(["set-nx-px"])", two),
      "s.json");
  ASSERT_TRUE(s.faults[0].until_fault_ends);
  EXPECT_EQ(*s.faults[0].until_fault_ends, 1u);
  EXPECT_FALSE(s.faults[0].until);
  EXPECT_TRUE(s.faults[0].waits());
  // Written back as given, and read again the same.
  const json again = scenario_to_json(s);
  EXPECT_EQ(again["faults"][0]["until"], json({{"fault", 1}}));
  EXPECT_EQ(parse_scenario(again, "s.json").faults[0].until_fault_ends, 1u);

  auto pause_until = [](const std::string& fault) {
    return R"({"kind":"pause","at_ms":0,"clients":["c2"],"until":{"fault":)" + fault + "}}";
  };
  expect_error(document_with_fault(pause_until("2") + "," + failover, R"(["set-nx-px"])", two),
               {"'faults[0].until.fault'", "is 2", "2 faults (0…1)"});
  expect_error(document_with_fault(pause_until("0")), {"'faults[0].until.fault'", "itself"});
  expect_error(document_with_fault(pause_until("1") + R"(,{"kind":"crash-client","at_ms":10})"),
               {"'faults[0].until.fault'", "faults[1] (crash-client)", "records no end"});
  expect_error(document_with_fault(pause_until("-1")), {"'faults[0].until.fault'"});
  expect_error(
      document_with_fault(pause_until("1") + R"(,{"kind":"pause","at_ms":10,"clients":["c1"],
                                                   "until":{"fault":0}})"),
      {"'faults[0].until.fault'", "waits for this one's end"});
  // A pause of c1 would keep c1 from the step that fires the failover.
  expect_error(document_with_fault(
                   R"({"kind":"pause","at_ms":0,"clients":["c1"],"until":{"fault":1}},)" + failover,
                   R"(["set-nx-px"])", two),
               {"'faults[0].until.fault'", "c1's step fires", "never fire"});
  // Only a fault the nemesis undoes waits.
  expect_error(
      document_with_fault(R"({"kind":"crash-client","at_ms":10,"until":{"fault":1}},)" + failover,
                          R"(["set-nx-px"])", two),
      {"'faults[0].until'", "crash-client", "does not undo"});
}

// A replication cut or a failover names node 0's replicas by number: the
// story of a WAIT acknowledged by one replica while another is promoted.
TEST(ScenarioFaults, ReplicationFaultsNameTheReplicasTheyActOn) {
  const std::string two = R"(,"topology":{"replicas":2})";
  Scenario s =
      parse_scenario(document_with_fault(R"({"kind":"cut-replication","at_ms":0,"nodes":[1]},
                    {"kind":"failover","at_ms":10,"mode":"manual","nodes":[1]})",
                                         R"(["set-nx-px"])", two),
                     "s.json");
  EXPECT_EQ(s.faults[0].nodes, std::vector<int>{1});
  EXPECT_EQ(s.faults[1].nodes, std::vector<int>{1});
  EXPECT_EQ(scenario_to_json(s)["faults"][1]["nodes"], json({1}));
  expect_error(document_with_fault(R"({"kind":"cut-replication","at_ms":0,"nodes":[2]})",
                                   R"(["set-nx-px"])", two),
               {"'faults[0].nodes' names replica 2, but node 0 has 2"});
  expect_error(document_with_fault(R"({"kind":"failover","at_ms":0,"mode":"manual","nodes":[0,1]})",
                                   R"(["set-nx-px"])", two),
               {"'faults[0].nodes' names the one replica that becomes the master"});
  expect_error(
      document_with_fault(R"({"kind":"failover","at_ms":0,"nodes":[1]})", R"(["set-nx-px"])",
                          R"(,"topology":{"replicas":2,"sentinels":3})"),
      {"'faults[0].nodes'", "only a manual failover"});
  expect_error(document_with_fault(R"({"kind":"pause","at_ms":0,"duration_ms":5,"nodes":[0]})"),
               {"'faults[0].nodes' does not apply to pause"});
}

TEST(ScenarioFaults, FieldsAreReadAsTheFaultVocabularySays) {
  expect_error(document_with_fault(R"({"kind":"pauze","at_ms":10})"),
               {"'faults[0].kind'", "pause, crash-client", "failover", "\"pauze\""});
  expect_error(document_with_fault(R"({"kind":"pause","at_ms":10})"),
               {"'faults[0].duration_ms' is required for pause"});
  expect_error(document_with_fault(R"({"kind":"crash-client","at_ms":10,"duration_ms":5})"),
               {"'faults[0].duration_ms' does not apply to crash-client"});
  expect_error(document_with_fault(R"({"kind":"pause","at_ms":10,"duration_ms":5,"delta_ms":3})"),
               {"'faults[0].delta_ms' does not apply to pause", "its parameters: none"});
  expect_error(document_with_fault(R"({"kind":"delay","at_ms":10,"rate":2})"),
               {"'faults[0].rate' does not apply to delay", "delay_ms, jitter_ms"});
  expect_error(document_with_fault(R"({"kind":"partition","at_ms":10,"how":"drop"})"),
               {"'faults[0].how' must be \"blackhole\" or \"reject\""});
  expect_error(document_with_fault(R"({"kind":"sigstop-node","at_ms":10,"duration_ms":5,
                              "clients":["c1"]})"),
               {"'faults[0].clients' does not apply to sigstop-node"});
  expect_error(document_with_fault(R"({"kind":"clock-rate","at_ms":10,"duration_ms":5,"rate":0})"),
               {"'faults[0].rate' must be a number in (0, 1000]"});
  const Scenario s = parse_scenario(
      document_with_fault(R"({"kind":"delay","at_ms":10,"delay_ms":40,"jitter_ms":5,"nodes":[0]})"),
      "s.json");
  ASSERT_EQ(s.faults.size(), 1u);
  EXPECT_EQ(s.faults[0].kind, FaultKind::Delay);
  EXPECT_EQ(s.faults[0].delay_ms, 40);
  EXPECT_EQ(s.faults[0].jitter_ms, 5);
}

}  // namespace
}  // namespace locklab
