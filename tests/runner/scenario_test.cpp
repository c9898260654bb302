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
  EXPECT_EQ(s.expectation_for("set-nx-px").verdict, "safe");
  EXPECT_EQ(s.expectation_for("redlock").verdict, "violated");
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
