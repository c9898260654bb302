// How a history becomes timeline shapes: FORMAT.md's hold semantics and the
// pairing of nemesis start/end events.
#include "timeline.h"

#include <gtest/gtest.h>

#include "run_dir.h"
#include "temp_dir.h"

namespace locklab::reports {
namespace {

using namespace fixtures;

Timeline read(const HistoryBuilder& h, const std::set<int64_t>& keep = {},
              const std::set<int64_t>& locate = {}) {
  TempDir dir("timeline-test");
  h.write(dir.path() / "history.jsonl");
  return read_timeline(dir.path() / "history.jsonl", keep, locate);
}

const Lane& lane(const Timeline& t, const std::string& process) {
  for (const auto& lane : t.lanes)
    if (lane.process == process) return lane;
  throw std::runtime_error("no lane " + process);
}

TEST(Timeline, ReentrantAcquiresNestIntoOneHoldEndedByTheOutermostRelease) {
  HistoryBuilder h;
  h.add(0, "c1", "invoke", "acquire", {{"lock", "L"}});
  int64_t first = h.add(1, "c1", "ok", "acquire", {{"lock", "L"}, {"token", 5}});
  h.add(2, "c1", "invoke", "acquire", {{"lock", "L"}});
  h.add(3, "c1", "ok", "acquire", {{"lock", "L"}, {"token", 5}});
  h.add(4, "c1", "invoke", "release", {{"lock", "L"}});
  h.add(5, "c1", "ok", "release", {{"lock", "L"}});
  int64_t last = h.add(6, "c1", "invoke", "release", {{"lock", "L"}});
  h.add(7, "c1", "ok", "release", {{"lock", "L"}});
  Timeline t = read(h);
  const auto& holds = lane(t, "c1").holds;
  ASSERT_EQ(holds.size(), 1u);
  EXPECT_EQ(holds[0].start_index, first);
  EXPECT_EQ(holds[0].end_index, last);
  EXPECT_EQ(holds[0].end, HoldEnd::Release);
  EXPECT_EQ(holds[0].token, 5);
  EXPECT_EQ(holds[0].end_ns - holds[0].start_ns, 5'000'000);
  EXPECT_EQ(lane(t, "c1").acquire_waits.size(), 2u);
}

TEST(Timeline, HoldsEndAtLostAtClientCrashOrAtTheEnd) {
  HistoryBuilder h;
  h.add(1, "c1", "ok", "acquire", {{"lock", "L"}});
  h.add(2, "c2", "ok", "acquire", {{"lock", "L"}});
  h.add(3, "c3", "ok", "acquire", {{"lock", "L"}});
  int64_t lost = h.add(4, "c1", "info", "lost", {{"lock", "L"}});
  int64_t crash = h.nemesis(5, "crash-client", "start", {"c2"});
  h.add(9, "c3", "ok", "write", {{"lock", "L"}, {"token", 1}});
  Timeline t = read(h);
  EXPECT_EQ(lane(t, "c1").holds.at(0).end, HoldEnd::Lost);
  EXPECT_EQ(lane(t, "c1").holds.at(0).end_index, lost);
  EXPECT_EQ(lane(t, "c2").holds.at(0).end, HoldEnd::Crash);
  EXPECT_EQ(lane(t, "c2").holds.at(0).end_index, crash);
  EXPECT_EQ(lane(t, "c2").crashed_ns, 5'000'000);
  EXPECT_EQ(lane(t, "c3").holds.at(0).end, HoldEnd::EndOfHistory);
  EXPECT_EQ(lane(t, "c3").holds.at(0).end_ns, 9'000'000);
  ASSERT_EQ(t.faults.size(), 1u);
  EXPECT_TRUE(t.faults[0].instant);  // a crash is a moment, not an interval
}

// FORMAT.md: after a crash-client event naming p, p's later events never
// start holds, though a killed client may still record the completion of the
// acquire it was in.
TEST(Timeline, ACrashedClientsLateAcquireStartsNoHold) {
  HistoryBuilder h;
  h.add(0, "c1", "invoke", "acquire", {{"lock", "L"}});
  h.add(1, "c2", "invoke", "acquire", {{"lock", "L"}});
  int64_t crash = h.nemesis(2, "crash-client", "start", {"c1"});
  h.add(3, "c1", "ok", "acquire", {{"lock", "L"}, {"token", 7}});  // late: c1 is dead
  int64_t c2_acquired = h.add(4, "c2", "ok", "acquire", {{"lock", "L"}, {"token", 8}});
  h.add(6, "c2", "invoke", "release", {{"lock", "L"}});
  h.add(7, "c2", "ok", "release", {{"lock", "L"}});
  Timeline t = read(h);
  EXPECT_TRUE(lane(t, "c1").holds.empty()) << "c1 was killed before its acquire completed";
  EXPECT_EQ(lane(t, "c1").crashed_ns, 2'000'000);
  EXPECT_EQ(lane(t, "c1").acquire_waits.size(), 1u) << "its wait is still drawn";
  ASSERT_EQ(lane(t, "c2").holds.size(), 1u);
  EXPECT_EQ(lane(t, "c2").holds[0].start_index, c2_acquired);
  EXPECT_EQ(lane(t, "c2").holds[0].token, 8);
  EXPECT_EQ(lane(t, "c2").holds[0].end, HoldEnd::Release);
  ASSERT_EQ(t.faults.size(), 1u);
  EXPECT_EQ(t.faults[0].start_index, crash);
}

// The holds drawn are the checkers' own: a lost or a release without a lock
// ends nothing (FORMAT.md: events without a lock are ignored), and a
// completion keeps the lock of its invoke.
TEST(Timeline, HoldsFollowTheCheckersRules) {
  HistoryBuilder h;
  h.add(0, "c1", "invoke", "acquire", {{"lock", "L"}});
  int64_t acquired = h.add(1, "c1", "ok", "acquire", {{"token", 3}});  // no lock: its invoke's
  h.add(2, "c1", "info", "lost");                                      // no lock: ends nothing
  int64_t released = h.add(3, "c1", "invoke", "release", {{"lock", "L"}});
  h.add(4, "c1", "ok", "release", {{"lock", "L"}});
  Timeline t = read(h);
  ASSERT_EQ(lane(t, "c1").holds.size(), 1u);
  const Hold& hold = lane(t, "c1").holds[0];
  EXPECT_EQ(hold.lock, "L");
  EXPECT_EQ(hold.start_index, acquired);
  EXPECT_EQ(hold.end_index, released);
  EXPECT_EQ(hold.end, HoldEnd::Release);
  EXPECT_EQ(hold.token, 3);
}

TEST(Timeline, OperationsThatFailedOrStayedUnknownBecomeMarks) {
  HistoryBuilder h;
  h.add(0, "c1", "invoke", "acquire", {{"lock", "L"}});
  h.add(1, "c1", "fail", "acquire", {{"lock", "L"}});
  h.add(2, "c1", "invoke", "acquire", {{"lock", "L"}});
  h.add(3, "c1", "info", "acquire", {{"lock", "L"}, {"error", "timeout"}});
  h.add(4, "c1", "ok", "acquire", {{"lock", "L"}, {"token", 2}});
  h.add(5, "c1", "ok", "write",
        {{"lock", "L"}, {"token", 2}, {"value", {{"read", 3}, {"write", 4}}}});
  h.add(6, "c1", "fail", "write", {{"lock", "L"}, {"token", 1}, {"error", "token 1 < 2"}});
  h.add(7, "c1", "fail", "extend", {{"lock", "L"}});
  h.add(8, "c1", "fail", "release", {{"lock", "L"}});
  Timeline t = read(h);
  std::vector<MarkKind> kinds;
  for (const auto& m : lane(t, "c1").marks) kinds.push_back(m.kind);
  EXPECT_EQ(kinds, (std::vector<MarkKind>{MarkKind::AcquireFailed, MarkKind::Unknown,
                                          MarkKind::WriteAccepted, MarkKind::WriteRejected,
                                          MarkKind::Refused, MarkKind::Refused}));
  EXPECT_EQ(lane(t, "c1").marks[2].detail, "read 3, wrote 4");
  EXPECT_EQ(lane(t, "c1").marks[3].token, 1);
  EXPECT_EQ(lane(t, "c1").marks[3].detail, "token 1 < 2");
}

TEST(Timeline, FaultsPairStartWithEndByKindAndTargets) {
  HistoryBuilder h;
  int64_t a = h.nemesis(1, "partition", "start", {"n1"});
  int64_t b = h.nemesis(2, "partition", "start", {"n2"});
  int64_t b_end = h.nemesis(3, "partition", "end", {"n2"}, {{"healed", true}});
  int64_t a_end = h.nemesis(4, "partition", "end", {"n1"});
  h.nemesis(5, "delay", "start", {"n1"}, {{"ms", 200}});
  h.nemesis(6, "heal", "end", {});
  h.add(10, "c1", "ok", "acquire", {{"lock", "L"}});
  Timeline t = read(h);
  ASSERT_EQ(t.faults.size(), 4u);
  EXPECT_EQ(t.faults[0].start_index, a);
  EXPECT_EQ(t.faults[0].end_index, a_end);
  EXPECT_EQ(t.faults[1].start_index, b);
  EXPECT_EQ(t.faults[1].end_index, b_end);
  EXPECT_TRUE(t.faults[1].ended);
  // No end recorded: the delay lasts to the end of the history.
  EXPECT_FALSE(t.faults[2].ended);
  EXPECT_EQ(t.faults[2].end_ns, 10'000'000);
  EXPECT_EQ(t.faults[2].parameters, "ms=200");
  // An end without a start is a moment.
  EXPECT_TRUE(t.faults[3].instant);
}

TEST(Timeline, AnEndWithoutTargetsClosesTheFaultWhoseParametersItRepeats) {
  HistoryBuilder h;
  int64_t short_pause = h.nemesis(0, "pause", "start", {"c2", "c3"}, {{"duration_ms", 300}});
  int64_t long_pause = h.nemesis(9, "pause", "start", {"c1"}, {{"duration_ms", 2500}});
  int64_t short_end =
      h.add(300, "nemesis", "info", "pause", {{"value", {{"phase", "end"}, {"duration_ms", 300}}}});
  int64_t long_end = h.add(2509, "nemesis", "info", "pause",
                           {{"value", {{"phase", "end"}, {"duration_ms", 2500}}}});
  Timeline t = read(h);
  ASSERT_EQ(t.faults.size(), 2u);
  EXPECT_EQ(t.faults[0].start_index, short_pause);
  EXPECT_EQ(t.faults[0].end_index, short_end);
  EXPECT_EQ(t.faults[1].start_index, long_pause);
  EXPECT_EQ(t.faults[1].end_index, long_end);
}

TEST(Timeline, LanesInNaturalOrderAndAskedEventsKeptVerbatim) {
  HistoryBuilder h;
  h.add(0, "c10", "ok", "acquire", {{"lock", "L"}, {"custom", {{"x", 1}}}});
  h.add(1, "c2", "ok", "acquire", {{"lock", "L"}});
  h.add(2, "c1", "ok", "acquire", {{"lock", "M"}});
  Timeline t = read(h, {0}, {0, 2});
  std::vector<std::string> names;
  for (const auto& lane : t.lanes) names.push_back(lane.process);
  EXPECT_EQ(names, (std::vector<std::string>{"c1", "c2", "c10"}));
  ASSERT_EQ(t.kept_events.size(), 1u);
  EXPECT_EQ(
      t.kept_events.at(0).dump(),
      R"({"index":0,"time_ns":0,"process":"c10","type":"ok","f":"acquire","lock":"L","custom":{"x":1}})");
  EXPECT_EQ(t.places.size(), 2u);
  EXPECT_EQ(t.places.at(2).process, "c1");
  EXPECT_EQ(t.places.at(2).time_ns, 2'000'000);
  EXPECT_EQ(t.event_count, 3);
}

}  // namespace
}  // namespace locklab::reports
