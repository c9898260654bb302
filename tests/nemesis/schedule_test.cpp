// The schedule alone: which faults fire when, without servers or clocks.
#include "schedule.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace locklab {
namespace {

Fault at(FaultKind kind, int64_t ms) {
  Fault f;
  f.kind = kind;
  f.at_ms = ms;
  return f;
}

Fault on(FaultKind kind, const std::string& client, const std::string& step, int nth = 1) {
  Fault f;
  f.kind = kind;
  f.when = StepTrigger{client, step, nth};
  return f;
}

TEST(Schedule, TimedFaultsComeEarliestFirstAndTiesInScenarioOrder) {
  Schedule schedule({at(FaultKind::Partition, 500), at(FaultKind::Pause, 0),
                     at(FaultKind::Delay, 500), on(FaultKind::Pause, "c1", "acquired")},
                    "set-nx-px");
  using Entry = std::pair<int64_t, size_t>;
  EXPECT_EQ(schedule.timed(), (std::vector<Entry>{{0, 1}, {500, 0}, {500, 2}}));
}

TEST(Schedule, AStepFiresOnlyOnItsNthArrivalOfItsClient) {
  Schedule schedule(
      {on(FaultKind::Pause, "c1", "acquired", 2), on(FaultKind::CrashClient, "c2", "acquired", 1)},
      "set-nx-px");
  EXPECT_TRUE(schedule.on_step("c1", "acquired").empty());                // c1's 1st arrival
  EXPECT_TRUE(schedule.on_step("c1", "before-write").empty());            // another step
  EXPECT_EQ(schedule.on_step("c1", "acquired"), std::vector<size_t>{0});  // 2nd
  EXPECT_TRUE(schedule.on_step("c1", "acquired").empty());                // 3rd: never again
  EXPECT_EQ(schedule.on_step("c2", "acquired"), std::vector<size_t>{1});
  EXPECT_EQ(schedule.step_count("c1", "acquired"), 3);
  EXPECT_EQ(schedule.step_count("c3", "acquired"), 0);
}

TEST(Schedule, WatchesTheStepsOfItsApplicableFaultsOnly) {
  Fault other = on(FaultKind::Pause, "c2", "after-setnx");
  other.algorithms = {"setnx-expire"};
  Schedule schedule({on(FaultKind::Pause, "c1", "acquired", 2), other, at(FaultKind::Delay, 5)},
                    "set-nx-px");
  EXPECT_TRUE(schedule.watches("c1", "acquired"));
  EXPECT_FALSE(schedule.watches("c2", "acquired"));
  EXPECT_FALSE(schedule.watches("c1", "released"));
  EXPECT_FALSE(schedule.watches("c2", "after-setnx"));  // not this algorithm's
}

TEST(Schedule, AnUntilStepIsWatchedAndReachedOnItsNthArrival) {
  Fault pause = at(FaultKind::Pause, 0);
  pause.clients = {"c2"};
  pause.until = StepTrigger{"c1", "acquired", 2};
  Fault other = pause;
  other.algorithms = {"setnx-expire"};
  Schedule schedule({pause, other}, "set-nx-px");
  EXPECT_TRUE(schedule.watches("c1", "acquired"));
  EXPECT_FALSE(schedule.watches("c2", "acquired"));
  EXPECT_TRUE(schedule.on_step("c1", "acquired").empty());  // it fires nothing
  EXPECT_TRUE(schedule.until_reached("c1", "acquired").empty());
  EXPECT_FALSE(schedule.until_passed(0));
  schedule.on_step("c2", "acquired");
  EXPECT_TRUE(schedule.until_reached("c2", "acquired").empty());
  schedule.on_step("c1", "acquired");
  EXPECT_EQ(schedule.until_reached("c1", "acquired"), std::vector<size_t>{0});  // not `other`
  EXPECT_TRUE(schedule.until_passed(0));
  schedule.on_step("c1", "acquired");
  EXPECT_TRUE(schedule.until_reached("c1", "acquired").empty());  // once only
  EXPECT_TRUE(schedule.until_passed(0));
}

TEST(Schedule, TheFaultsWaitingForAFaultsEndAreThoseOfThisRunThatNameIt) {
  Fault failover = on(FaultKind::Failover, "c1", "acquired");
  Fault pause = at(FaultKind::Pause, 0);
  pause.clients = {"c2"};
  pause.until_fault_ends = 0;
  Fault other = pause;
  other.algorithms = {"setnx-expire"};
  Schedule schedule({failover, pause, other, at(FaultKind::Pause, 5)}, "set-nx-px");
  EXPECT_EQ(schedule.waiting_for_end_of(0), std::vector<size_t>{1});  // not `other`
  EXPECT_TRUE(schedule.waiting_for_end_of(1).empty());
  EXPECT_FALSE(schedule.watches("c2", "acquired"));  // a fault's end is no client step
}

TEST(Schedule, FaultsMeantForOtherAlgorithmsNeverFire) {
  Fault only_expire = on(FaultKind::CrashClient, "c1", "after-setnx");
  only_expire.algorithms = {"setnx-expire"};
  Fault others = on(FaultKind::CrashClient, "c1", "acquired");
  others.algorithms = {"set-nx-px"};
  Fault timed = at(FaultKind::Partition, 100);
  timed.algorithms = {"setnx-expire"};

  Schedule expire({only_expire, others, timed}, "setnx-expire");
  EXPECT_TRUE(expire.applies(0));
  EXPECT_FALSE(expire.applies(1));
  EXPECT_EQ(expire.on_step("c1", "after-setnx"), std::vector<size_t>{0});
  EXPECT_TRUE(expire.on_step("c1", "acquired").empty());
  EXPECT_EQ(expire.timed().size(), 1u);

  Schedule atomic({only_expire, others, timed}, "set-nx-px");
  EXPECT_TRUE(atomic.on_step("c1", "after-setnx").empty());
  EXPECT_EQ(atomic.on_step("c1", "acquired"), std::vector<size_t>{1});
  EXPECT_TRUE(atomic.timed().empty());

  // A lock that stands in for no built-in algorithm gets only the faults for everyone.
  Schedule external({only_expire, others, at(FaultKind::Pause, 5)}, "");
  EXPECT_FALSE(external.applies(0));
  EXPECT_FALSE(external.applies(1));
  EXPECT_TRUE(external.applies(2));
}

// Whatever the arrivals, each step-triggered fault fires exactly once if its
// client reaches its step at least nth times, and never otherwise.
RC_GTEST_PROP(Schedule, EachStepFaultFiresOnceIffItsNthArrivalHappens, ()) {
  const std::vector<std::string> clients = {"c1", "c2"};
  const std::vector<std::string> steps = {"acquired", "before-write", "released"};
  const auto faults = *rc::gen::container<std::vector<Fault>>(rc::gen::apply(
      [&](int c, int s, int nth) { return on(FaultKind::Pause, clients[c], steps[s], nth); },
      rc::gen::inRange(0, 2), rc::gen::inRange(0, 3), rc::gen::inRange(1, 4)));
  const auto arrivals = *rc::gen::container<std::vector<std::pair<int, int>>>(
      rc::gen::pair(rc::gen::inRange(0, 2), rc::gen::inRange(0, 3)));
  Schedule schedule(faults, "set-nx-px");
  std::vector<int> fired(faults.size(), 0);
  for (auto [c, s] : arrivals) {
    const std::vector<size_t> now = schedule.on_step(clients[c], steps[s]);
    // A step the schedule does not watch fires nothing: skipping it is safe.
    if (!schedule.watches(clients[c], steps[s])) RC_ASSERT(now.empty());
    for (size_t i : now) ++fired[i];
  }
  for (size_t i = 0; i < faults.size(); ++i) {
    const auto& when = *faults[i].when;
    const bool reached = schedule.step_count(when.client, when.step) >= when.nth;
    RC_ASSERT(fired[i] == (reached ? 1 : 0));
  }
}

}  // namespace
}  // namespace locklab
