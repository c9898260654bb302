// The one breaking-point search (boundary_search.h): the order of sizes it
// probes, and that the sweep's use of it probes what a plain binary search
// from `to` and `from` probes, value for value.
#include "boundary_search.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <vector>

#include "sweep.h"

namespace locklab::suite {
namespace {

SearchRange lease_axis() {
  return SearchRange{
      .gentle = 0,
      .harsh = 3,
      .precision = 0.02,
      .first_step = 0.08,
      .near_zone = 0.08,
      .confirm = true,
      .snap = [](double s) { return std::round(s * 1000) / 1000; },
      .middle = [](double safe,
                   double broken) { return std::round((safe + broken) / 2 * 1000) / 1000; }};
}

TEST(BoundarySearch, GallopsUpFromASafeStartThenBisects) {
  std::vector<double> probed;
  Boundary b = find_boundary(lease_axis(), 0.2, [&](double size, bool) {
    probed.push_back(size);
    return std::optional<bool>(size >= 0.5);
  });
  EXPECT_EQ(b.outcome, SearchOutcome::kBreaks);
  ASSERT_TRUE(b.breaking && b.last_safe);
  EXPECT_GE(*b.breaking, 0.5);
  EXPECT_LT(*b.last_safe, 0.5);
  EXPECT_LE(*b.breaking - *b.last_safe, 0.02 + 1e-9);
  // 0.2, then steps of 0.08, 0.16, 0.32 up: 0.28, 0.44, 0.76 (broken).
  ASSERT_GE(probed.size(), 4u);
  EXPECT_DOUBLE_EQ(probed[0], 0.2);
  EXPECT_DOUBLE_EQ(probed[1], 0.28);
  EXPECT_DOUBLE_EQ(probed[2], 0.44);
  EXPECT_DOUBLE_EQ(probed[3], 0.76);
}

TEST(BoundarySearch, NeverBreaksAtTheHarshEndAndBreaksAtTheGentleOne) {
  Boundary never =
      find_boundary(lease_axis(), 2.9, [](double, bool) { return std::optional<bool>(false); });
  EXPECT_EQ(never.outcome, SearchOutcome::kNeverBreaks);
  EXPECT_EQ(never.last_safe, 3);
  Boundary always =
      find_boundary(lease_axis(), 0.1, [](double, bool) { return std::optional<bool>(true); });
  EXPECT_EQ(always.outcome, SearchOutcome::kBreaksWithoutFault);
  EXPECT_EQ(always.breaking, 0);
}

TEST(BoundarySearch, AVoteThatDisownsTheBoundGoesOnAboveIt) {
  // A size that broke once by chance (0.3) is voted on and found safe: the
  // search goes on and finds the true bound above it.
  std::vector<std::pair<double, bool>> probed;
  bool fluke_done = false;
  Boundary b = find_boundary(lease_axis(), 0.3, [&](double size, bool near) {
    probed.emplace_back(size, near);
    if (size == 0.3 && !fluke_done) return std::optional<bool>(fluke_done = true);
    return std::optional<bool>(size >= 1.0);
  });
  EXPECT_EQ(b.outcome, SearchOutcome::kBreaks);
  ASSERT_TRUE(b.breaking);
  EXPECT_GE(*b.breaking, 1.0);
  EXPECT_LT(*b.breaking, 1.0 + 0.02 + 1e-9);
  bool voted_on_fluke = false;
  for (auto [size, near] : probed) voted_on_fluke |= size == 0.3 && near;
  EXPECT_TRUE(voted_on_fluke);
}

TEST(BoundarySearch, StopsWhereASizeCannotBeDecided) {
  int calls = 0;
  Boundary b = find_boundary(lease_axis(), 0.2, [&](double, bool) -> std::optional<bool> {
    if (++calls == 2) return std::nullopt;
    return false;
  });
  EXPECT_EQ(b.outcome, SearchOutcome::kError);
  EXPECT_EQ(calls, 2);
}

TEST(BoundarySearch, MajorityDecidesByKOfNAndStopsEarly) {
  Majority three(3);
  three.add(true);
  three.add(true);
  EXPECT_FALSE(three.open());
  EXPECT_TRUE(three.breaks());
  Majority mixed(3);
  for (bool run : {true, false, false}) mixed.add(run);
  EXPECT_FALSE(mixed.open());
  EXPECT_FALSE(mixed.breaks());
  EXPECT_EQ(mixed.runs(), 3);
  Majority one(1);
  EXPECT_TRUE(one.open());
  one.add(false);
  EXPECT_FALSE(one.open());
}

// The sweep's search as it was written before it used the shared engine:
// `to`, then `from`, then plain halving.
std::vector<double> plain_binary_search(const SweepSpec& spec, double threshold) {
  std::vector<double> probed{spec.to};
  if (spec.to < threshold) return probed;
  probed.push_back(spec.from);
  if (spec.from >= threshold) return probed;
  double safe = spec.from, broken = spec.to;
  const bool integer = spec.param != "rate";
  // Widths within a rounding error of the precision are done (0.03 - 0.02
  // is a hair above 0.01 in doubles).
  while (broken - safe > effective_precision(spec) + 1e-9) {
    double middle = safe + (broken - safe) / 2;
    if (integer) middle = std::round(middle);
    if (middle <= safe || middle >= broken) break;
    probed.push_back(middle);
    (middle >= threshold ? broken : safe) = middle;
  }
  return probed;
}

RC_GTEST_PROP(BoundarySearch, TheSweepProbesWhatAPlainBinarySearchProbes, ()) {
  const bool integer = *rc::gen::arbitrary<bool>();
  const int from = *rc::gen::inRange(0, 1000);
  const int to = from + *rc::gen::inRange(2, 5000);
  const int precision = *rc::gen::inRange(0, (to - from) / 2 + 2);
  SweepSpec s;
  s.param = integer ? "duration_ms" : "rate";
  s.from = integer ? from : from / 100.0 + 0.01;
  s.to = integer ? to : to / 100.0 + 0.01;
  s.precision = integer ? precision : precision / 100.0;
  const double threshold = s.from + (s.to - s.from) * *rc::gen::inRange(-10, 120) / 100.0;
  std::vector<double> probed;
  search_breaking_point(s, [&](double value) {
    probed.push_back(value);
    Probe p;
    p.value = value;
    p.runs = 1;
    p.broken = value >= threshold;
    return p;
  });
  RC_ASSERT(probed == plain_binary_search(s, threshold));
}

}  // namespace
}  // namespace locklab::suite
