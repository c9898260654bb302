// The matrix: which files make a suite, the cells and their seeds, shards.
#include "matrix.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "temp_dir.h"

namespace locklab::suite {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

std::string minimal_scenario(const std::string& name) {
  return R"({"name": ")" + name + R"(", "algorithms": ["set-nx-px"]})";
}

Scenario named_scenario(const std::string& name, std::vector<std::string> algorithms,
                        uint64_t seed) {
  Scenario s;
  s.name = name;
  s.algorithms = std::move(algorithms);
  s.seed = seed;
  return s;
}

TEST(ScenarioFiles, DirectoryMeansItsJsonFilesByNameWithoutSchema) {
  TempDir dir("suite-files");
  for (const char* name : {"b.json", "a.json", "schema.json", "notes.txt", "nested/c.json"})
    write(dir.path() / name, "{}");
  write(dir.path() / "extra.json", "{}");
  auto files = scenario_files({dir.path().string()});
  std::vector<fs::path> expected = {dir.path() / "a.json", dir.path() / "b.json",
                                    dir.path() / "extra.json"};
  EXPECT_EQ(files, expected);

  // A file keeps its place among the inputs.
  files = scenario_files({(dir.path() / "b.json").string(), dir.path().string()});
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files[0], dir.path() / "b.json");
  EXPECT_EQ(files[1], dir.path() / "a.json");
}

TEST(ScenarioFiles, MissingInputOrEmptyDirectoryIsNamed) {
  TempDir dir("suite-files");
  write(dir.path() / "empty" / "schema.json", "{}");
  for (const fs::path& input : {dir.path() / "nope.json", dir.path() / "empty"}) {
    try {
      scenario_files({input.string()});
      ADD_FAILURE() << "accepted " << input;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(input.string()), std::string::npos) << e.what();
    }
  }
}

TEST(LoadScenarios, FirstBadFileIsNamedInOneLine) {
  TempDir dir("suite-load");
  write(dir.path() / "a.json", minimal_scenario("a"));
  write(dir.path() / "b.json", R"({"name": "b", "algorithms": ["set-nx-px"], "clients": "four"})");
  try {
    load_scenarios(scenario_files({dir.path().string()}));
    FAIL() << "a bad scenario was accepted";
  } catch (const ScenarioError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("b.json"), std::string::npos) << what;
    EXPECT_NE(what.find("clients"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(LoadScenarios, NamesMustBeUniqueAndUsableAsDirectories) {
  TempDir dir("suite-load");
  write(dir.path() / "one.json", minimal_scenario("same"));
  write(dir.path() / "two.json", minimal_scenario("same"));
  write(dir.path() / "slash.json", minimal_scenario("a/b"));
  try {
    load_scenarios({dir.path() / "one.json", dir.path() / "two.json"});
    FAIL() << "two scenarios named alike were accepted";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("one.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("two.json"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_scenarios({dir.path() / "slash.json"}), ScenarioError);
  EXPECT_EQ(load_scenarios({dir.path() / "one.json"}).at(0).name, "same");
}

TEST(BuildMatrix, ScenarioThenAlgorithmThenRunWithDerivedSeeds) {
  std::vector<Scenario> scenarios = {named_scenario("first", {"set-nx-px", "redlock"}, 10),
                                     named_scenario("second", {"fenced"}, 50)};
  MatrixOptions options;
  options.runs = 2;
  auto cells = build_matrix(scenarios, options);
  ASSERT_EQ(cells.size(), 6u);
  struct Want {
    size_t scenario;
    std::string algorithm;
    int run;
    uint64_t seed;
  } want[] = {{0, "set-nx-px", 1, 10}, {0, "set-nx-px", 2, 11}, {0, "redlock", 1, 10},
              {0, "redlock", 2, 11},   {1, "fenced", 1, 50},    {1, "fenced", 2, 51}};
  for (size_t i = 0; i < cells.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(cells[i].index, i);
    EXPECT_EQ(cells[i].scenario, want[i].scenario);
    EXPECT_EQ(cells[i].algorithm, want[i].algorithm);
    EXPECT_EQ(cells[i].run, want[i].run);
    EXPECT_EQ(cells[i].seed, want[i].seed);
  }
  EXPECT_EQ(run_seed(10, 1), 10u) << "run 1 repeats `locklab run` with the same seed";
}

TEST(BuildMatrix, SeedOverrideAndAlgorithmFilter) {
  std::vector<Scenario> scenarios = {named_scenario("first", {"set-nx-px", "redlock"}, 10),
                                     named_scenario("second", {"fenced"}, 50)};
  MatrixOptions options;
  options.seed = 7;
  options.algorithms = {"redlock", "fenced"};
  auto cells = build_matrix(scenarios, options);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].algorithm, "redlock");
  EXPECT_EQ(cells[1].algorithm, "fenced");
  EXPECT_EQ(cells[0].seed, 7u);
  EXPECT_EQ(cells[1].seed, 7u);
  EXPECT_EQ(cells[1].index, 1u) << "indices count the cells that exist";

  options.algorithms = {"setnx-expire"};
  EXPECT_TRUE(build_matrix(scenarios, options).empty());
}

TEST(BuildMatrix, AnExternalLockReplacesEveryScenariosAlgorithms) {
  std::vector<Scenario> scenarios = {named_scenario("first", {"set-nx-px", "redlock"}, 10),
                                     named_scenario("second", {"fenced"}, 50)};
  MatrixOptions options;
  options.built_ins = false;
  options.extra = {{"my-lock", std::nullopt}};
  options.runs = 2;
  auto cells = build_matrix(scenarios, options);
  ASSERT_EQ(cells.size(), 4u);
  for (const Cell& cell : cells) EXPECT_EQ(cell.algorithm, "my-lock");
  EXPECT_EQ(cells[0].scenario, 0u);
  EXPECT_EQ(cells[2].scenario, 1u);
  EXPECT_EQ(cells[3].seed, 51u);

  options.extra[0].like = "fenced";
  cells = build_matrix(scenarios, options);
  ASSERT_EQ(cells.size(), 2u) << "only the scenarios that run fenced";
  EXPECT_EQ(cells[0].scenario, 1u);
  EXPECT_EQ(cells[0].algorithm, "my-lock");
}

TEST(BuildMatrix, ExtraLocksRunBesideEachScenariosOwnAlgorithms) {
  std::vector<Scenario> scenarios = {named_scenario("first", {"set-nx-px", "redlock"}, 10),
                                     named_scenario("second", {"fenced"}, 50)};
  MatrixOptions options;
  options.extra = {{"redlock-library", "redlock"}, {"any-lock", std::nullopt}};
  std::vector<std::pair<size_t, std::string>> cells;
  for (const Cell& cell : build_matrix(scenarios, options))
    cells.emplace_back(cell.scenario, cell.algorithm);
  const std::vector<std::pair<size_t, std::string>> expected = {
      {0, "set-nx-px"}, {0, "redlock"}, {0, "redlock-library"},
      {0, "any-lock"},  {1, "fenced"},  {1, "any-lock"}};
  EXPECT_EQ(cells, expected);
}

TEST(Shard, ParsesIOverN) {
  Shard s = parse_shard("2/4");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 4);
  EXPECT_EQ(parse_shard("1/1").count, 1);
  for (const char* bad :
       {"0/2", "3/2", "2", "a/b", "1/0", "-1/2", "1/2x", "", "/", "1/99999999999"}) {
    SCOPED_TRACE(bad);
    try {
      parse_shard(bad);
      ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("--shard"), std::string::npos) << e.what();
    }
  }
}

TEST(Shard, SelectsByIndexModuloCount) {
  std::vector<Scenario> scenarios = {named_scenario("s", {"set-nx-px", "redlock", "fenced"}, 1)};
  MatrixOptions options;
  options.runs = 2;
  auto cells = build_matrix(scenarios, options);  // six cells
  auto second = select_shard(cells, {2, 2});
  ASSERT_EQ(second.size(), 3u);
  for (const auto& cell : second) EXPECT_EQ(cell.index % 2, 1u);
  EXPECT_EQ(second[0].algorithm, "set-nx-px");
  EXPECT_EQ(second[0].run, 2);
}

RC_GTEST_PROP(Shard, ShardsPartitionTheMatrixEvenly, ()) {
  const int scenario_count = *rc::gen::inRange(1, 6);
  const int runs = *rc::gen::inRange(1, 4);
  const int shards = *rc::gen::inRange(1, 9);
  const std::vector<std::string> ids = {"set-nx-px", "redlock", "fenced", "setnx-expire"};
  std::vector<Scenario> scenarios;
  for (int s = 0; s < scenario_count; ++s) {
    auto count = size_t(*rc::gen::inRange(1, int(ids.size()) + 1));
    scenarios.push_back(named_scenario("s" + std::to_string(s),
                                       {ids.begin(), ids.begin() + long(count)}, uint64_t(s)));
  }
  MatrixOptions options;
  options.runs = runs;
  const auto cells = build_matrix(scenarios, options);
  std::multiset<size_t> seen;
  size_t smallest = cells.size(), largest = 0;
  for (int i = 1; i <= shards; ++i) {
    auto part = select_shard(cells, {i, shards});
    smallest = std::min(smallest, part.size());
    largest = std::max(largest, part.size());
    for (size_t k = 1; k < part.size(); ++k) RC_ASSERT(part[k - 1].index < part[k].index);
    for (const auto& cell : part) seen.insert(cell.index);
  }
  RC_ASSERT(seen.size() == cells.size());
  RC_ASSERT(std::set<size_t>(seen.begin(), seen.end()).size() == cells.size());
  RC_ASSERT(largest - smallest <= 1);
}

}  // namespace
}  // namespace locklab::suite
