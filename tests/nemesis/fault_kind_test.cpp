// The fault vocabulary is one table; everything that lists the kinds agrees
// with it.
#include "fault_kind.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "fault.h"

namespace locklab {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(FaultKinds, OneRowPerKindInEnumOrderWithUniqueNames) {
  ASSERT_EQ(fault_kinds().size(), kFaultKindCount);
  std::set<std::string_view> names;
  for (size_t i = 0; i < fault_kinds().size(); ++i) {
    const FaultKindInfo& row = fault_kinds()[i];
    EXPECT_EQ(static_cast<size_t>(row.kind), i) << row.name;
    EXPECT_FALSE(row.name.empty()) << "row " << i;
    EXPECT_FALSE(row.meaning.empty()) << row.name;
    EXPECT_TRUE(names.insert(row.name).second) << row.name << " twice";
    EXPECT_EQ(fault_kind_named(row.name), row.kind);
    EXPECT_EQ(&info(row.kind), &row);
  }
  EXPECT_FALSE(fault_kind_named("acquird").has_value());
  EXPECT_EQ(fault_colour("never-heard-of-it"), "#6b7280");
}

TEST(FaultKinds, EveryParameterHasAFieldAndStaysWithinItsRange) {
  for (const auto& row : fault_kinds())
    for (const auto& p : row.params) {
      SCOPED_TRACE(std::string(row.name) + "." + std::string(p.name));
      Fault f;
      f.kind = row.kind;
      if (p.type == ParamType::Choice) {
        EXPECT_GE(p.choices.size(), 2u);
        EXPECT_EQ(f.describe().value(std::string(p.name), ""), p.choices.front());
        continue;
      }
      EXPECT_LT(p.min, p.max);
      EXPECT_NO_THROW(f.set_number(p.name, p.max));
      EXPECT_EQ(f.number(p.name), p.max);
      EXPECT_TRUE(f.describe().contains(std::string(p.name)));
    }
}

TEST(FaultKinds, DescribeCarriesOnlyTheKindsOwnParameters) {
  Fault pause;
  pause.kind = FaultKind::Pause;
  pause.when = StepTrigger{"c1", "acquired", 1};
  pause.duration_ms = 1500;
  EXPECT_EQ(pause.describe(),
            nlohmann::json::parse(
                R"({"when":{"client":"c1","step":"acquired","nth":1},"duration_ms":1500})"));
  EXPECT_EQ(pause.trigger_text(), "c1 at step acquired (1st time)");
  Fault delay;
  delay.kind = FaultKind::Delay;
  delay.at_ms = 200;
  delay.delay_ms = 30;
  EXPECT_EQ(delay.describe(),
            nlohmann::json::parse(R"({"at_ms":200,"delay_ms":30,"jitter_ms":0})"));
  EXPECT_EQ(delay.trigger_text(), "at 200 ms");
}

// FORMAT.md shows the table as fault_kinds_markdown() writes it.
TEST(FaultKinds, TheHistoryFormatPageListsExactlyTheTable) {
  const std::string page = read(SOURCE_DIR "/harness/history/FORMAT.md");
  ASSERT_FALSE(page.empty());
  EXPECT_NE(page.find(fault_kinds_markdown()), std::string::npos)
      << "harness/history/FORMAT.md must contain, verbatim:\n"
      << fault_kinds_markdown();
}

// The scenario schema (for editors) names the same kinds and parameters.
TEST(FaultKinds, TheScenarioSchemaNamesTheSameKindsAndParameters) {
  const auto schema = nlohmann::json::parse(read(SOURCE_DIR "/scenarios/schema.json"));
  const auto& fault = schema["properties"]["faults"]["items"];
  std::vector<std::string> kinds = fault["properties"]["kind"]["enum"];
  std::vector<std::string> table;
  for (const auto& row : fault_kinds()) table.emplace_back(row.name);
  EXPECT_EQ(kinds, table);
  for (const auto& row : fault_kinds())
    for (const auto& p : row.params)
      EXPECT_TRUE(fault["properties"].contains(std::string(p.name))) << p.name;
}

// fault_kind.h's promise: adding a kind is one row and one case in
// Nemesis::start_fault. Every other decision about a kind reads the row (its
// needs, parameters, explore ranges), so no other switch over the kinds may
// exist: it would be one more place to change.
TEST(FaultKinds, OnlyTheNemesisSwitchesOverThem) {
  const std::regex a_case(R"(case\s+FaultKind::)");
  std::vector<std::string> switching;
  for (const char* folder : {"harness", "reports", "lock_impls", "bench"})
    for (const auto& entry :
         std::filesystem::recursive_directory_iterator(std::string(SOURCE_DIR "/") + folder)) {
      const auto& path = entry.path();
      if (path.extension() != ".cpp" && path.extension() != ".h") continue;
      if (std::regex_search(read(path.string()), a_case))
        switching.push_back(std::filesystem::relative(path, SOURCE_DIR).string());
    }
  EXPECT_EQ(switching, std::vector<std::string>{"harness/nemesis/nemesis.cpp"});
}

TEST(FaultKinds, EveryRowSaysWhatItNeedsAndHowExploreDrawsIt) {
  for (const auto& row : fault_kinds()) {
    SCOPED_TRACE(std::string(row.name));
    EXPECT_GT(row.explore_weight, 0);
    EXPECT_FALSE(row.colour.empty());
    Fault f;
    f.kind = row.kind;
    for (const DrawnRange& range : row.explore_ranges) {
      EXPECT_LE(range.low, range.high) << range.param;
      EXPECT_NO_THROW(f.set_number(range.param, range.low)) << range.param;
      EXPECT_TRUE(range.param == "duration_ms" || find_param(row.kind, range.param))
          << range.param << " is not a field of the kind";
    }
    for (const auto& p : row.params) {
      if (!p.choice_needs.empty()) {
        EXPECT_EQ(p.choice_needs.size(), p.choices.size());
      }
      if (!p.choice_weights.empty()) {
        EXPECT_EQ(p.choice_weights.size(), p.choices.size());
      }
    }
    // A kind acting on links needs them; one on replication needs a replica.
    if (row.target == FaultTarget::Link) {
      EXPECT_TRUE(row.needs.has(Need::ClientLinks));
    }
    if (row.target == FaultTarget::Replication) {
      EXPECT_TRUE(row.needs.has(Need::Replica));
    }
  }
}

TEST(FaultKinds, AFaultNeedsWhatItsKindAndItsChoicesNeed) {
  Fault failover;
  failover.kind = FaultKind::Failover;
  failover.mode = FailoverMode::Manual;
  EXPECT_EQ(failover.needs(), Need::Replica | Need::Promotion | Need::ClientLinks);
  failover.set_choice("mode", "sentinel");
  EXPECT_EQ(failover.mode, FailoverMode::Sentinel);
  EXPECT_EQ(failover.needs(),
            Need::Replica | Need::Promotion | Need::ClientLinks | Need::Sentinels);
  Fault pause;
  pause.kind = FaultKind::Pause;
  EXPECT_TRUE(pause.needs().empty());
  Fault jump;
  jump.kind = FaultKind::ServerClockJump;
  EXPECT_EQ(needs_of({pause, jump, failover}).without(Need::Sentinels),
            Need::ServerClock | Need::Replica | Need::Promotion | Need::ClientLinks);
  EXPECT_THROW(pause.set_choice("rate", "x"), std::invalid_argument);
  EXPECT_THROW(failover.set_choice("mode", "x"), std::invalid_argument);
}

}  // namespace
}  // namespace locklab
