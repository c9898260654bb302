// Hand-written histories for every kind of violation, and the near misses
// that must not be reported.
#include <gtest/gtest.h>

#include "check_helpers.h"
#include "history_builder.h"

namespace locklab::testing {
namespace {

using checkers::Violation;
using history::Type;
using json = nlohmann::json;
using Indices = std::vector<int64_t>;

const Violation& only_violation(const checkers::Results& results) {
  EXPECT_EQ(results.violations.size(), 1u) << results.to_json().dump(2);
  static const Violation none;
  return results.violations.empty() ? none : results.violations.front();
}

// --- mutual-exclusion ---------------------------------------------------------

TEST(MutualExclusion, OverlappingHoldsNameBothAcquiresAndTheEnd) {
  HistoryBuilder h;
  const int64_t c1_ok = h.acquire("c1", "L");
  const int64_t c2_ok = h.acquire("c2", "L");
  const int64_t c1_release = h.release("c1", "L");
  h.release("c2", "L");
  auto results = check(h.events());
  EXPECT_EQ(violation_counts(results), "mutual-exclusion=1");
  const Violation& v = only_violation(results);
  EXPECT_EQ(v.kind, "mutual-exclusion");
  EXPECT_EQ(v.lock, "L");
  EXPECT_EQ(v.processes, (std::vector<std::string>{"c1", "c2"}));
  EXPECT_EQ(v.events, (Indices{c1_ok, c2_ok, c1_release}));
  EXPECT_EQ(v.times_ns[1], h.events()[size_t(c2_ok)].time_ns);
  EXPECT_EQ(v.explanation,
            "c2 acquired L at event 3 while c1 held it since event 1 (released at event 4)");
  EXPECT_EQ(results.counts.at("holds"), 2);
  EXPECT_EQ(results.per_lock.at("L").at("mutual-exclusion"), 1);
  EXPECT_TRUE(results.violated());
}

// A lock first seen after another lock's hold ended must not lose track of
// that ended hold: a later write by its holder is judged, not read from a
// freed hold (the locks once lived in a vector that moved them).
TEST(MutualExclusion, LocksSeenLaterLeaveEndedHoldsIntact) {
  HistoryBuilder h;
  h.acquire("c1", "L");
  h.release("c1", "L");
  for (int i = 0; i < 40; ++i) {
    h.acquire("c2", "M" + std::to_string(i));
    h.release("c2", "M" + std::to_string(i));
  }
  for (int i = 0; i < 40; ++i) h.write("c1", "L", i);
  auto results = check(h.events());
  EXPECT_EQ(results.counts.at("holds"), 41);
  EXPECT_EQ(results.counts.at("mutual-exclusion"), 0);
}

TEST(MutualExclusion, TouchingHoldsAreNotReported) {
  HistoryBuilder h;
  h.acquire("c1", "L");
  h.at(100).invoke("c1", "release", "L");  // c1's hold ends at 100...
  h.at(100).invoke("c2", "acquire", "L");
  h.at(100).ok("c2", "acquire", "L");  // ...where c2's starts
  h.ok("c1", "release", "L");
  h.release("c2", "L");
  // The same instant recorded the other way round: c2's ok before c1's release invoke.
  h.acquire("c3", "L");
  h.at(500).invoke("c4", "acquire", "L");
  h.at(500).ok("c4", "acquire", "L");
  h.at(500).invoke("c3", "release", "L");
  h.ok("c3", "release", "L");
  h.release("c4", "L");
  auto results = check(h.events());
  EXPECT_EQ(violation_counts(results), "");
  EXPECT_FALSE(results.violated());
}

TEST(MutualExclusion, ZeroLengthHoldOverlapsNothing) {
  HistoryBuilder h;
  h.at(50).invoke("c1", "acquire", "L");
  h.at(100).ok("c1", "acquire", "L");
  h.at(100).invoke("c1", "release", "L");
  h.at(100).invoke("c2", "acquire", "L");
  h.at(100).ok("c2", "acquire", "L");
  h.ok("c1", "release", "L");
  EXPECT_EQ(violation_counts(check(h.events())), "");
}

TEST(MutualExclusion, ReentryBySameProcessIsOneHold) {
  HistoryBuilder h;
  h.acquire("c1", "L");
  h.acquire("c1", "L");
  h.release("c1", "L");
  h.release("c1", "L");
  h.acquire("c2", "L");
  h.release("c2", "L");
  auto results = check(h.events());
  EXPECT_EQ(violation_counts(results), "");
  EXPECT_EQ(results.counts.at("holds"), 2);
}

TEST(MutualExclusion, HoldLastsUntilTheOutermostRelease) {
  HistoryBuilder h;
  const int64_t first = h.acquire("c1", "L");
  h.acquire("c1", "L");
  h.release("c1", "L");  // depth 2 -> 1: c1 still holds L
  const int64_t c2_ok = h.acquire("c2", "L");
  const int64_t end = h.release("c1", "L");
  h.release("c2", "L");
  const auto results = check(h.events());
  EXPECT_EQ(only_violation(results).events, (Indices{first, c2_ok, end}));
}

TEST(MutualExclusion, FailedAndUnknownAcquiresStartNoHold) {
  HistoryBuilder h;
  h.acquire("c1", "L");
  h.invoke("c2", "acquire", "L");
  h.fail("c2", "acquire", "L");
  h.invoke("c3", "acquire", "L");
  h.info("c3", "acquire", "L");
  h.release("c1", "L");
  EXPECT_EQ(violation_counts(check(h.events())), "");
}

TEST(MutualExclusion, DifferentLocksDoNotConflict) {
  HistoryBuilder h;
  h.acquire("c1", "L1");
  h.acquire("c2", "L2");
  h.release("c1", "L1");
  h.release("c2", "L2");
  EXPECT_EQ(violation_counts(check(h.events())), "");
}

TEST(MutualExclusion, LostAndCrashEndHolds) {
  HistoryBuilder h;
  h.acquire("c1", "L");
  h.lost("c1", "L");
  h.acquire("c2", "L");
  h.crash({"c2"});
  h.acquire("c3", "L");
  h.release("c3", "L");
  h.release("c1", "L");  // after lost: c1 holds nothing any more
  EXPECT_EQ(violation_counts(check(h.events())), "");
}

TEST(MutualExclusion, CrashAndLostEndTheEarlierHoldInTheEvidence) {
  HistoryBuilder h;
  const int64_t c1_ok = h.acquire("c1", "L");
  const int64_t c2_ok = h.acquire("c2", "L");
  const int64_t crash = h.crash({"c1"});
  const int64_t c3_ok = h.acquire("c3", "L");
  const int64_t lost = h.lost("c2", "L");
  auto results = check(h.events());
  ASSERT_EQ(results.violations.size(), 2u);
  EXPECT_EQ(results.violations[0].events, (Indices{c1_ok, c2_ok, crash}));
  EXPECT_EQ(results.violations[1].events, (Indices{c2_ok, c3_ok, lost}));
  EXPECT_EQ(results.violations[1].explanation,
            "c3 acquired L at event 6 while c2 held it since event 3 (until c2 reported it lost at "
            "event 7)");
}

TEST(MutualExclusion, HoldsOpenAtTheEndOverlap) {
  HistoryBuilder h;
  const int64_t c1_ok = h.acquire("c1", "L");
  const int64_t c2_ok = h.acquire("c2", "L");
  const auto results = check(h.events());
  const Violation& v = only_violation(results);
  EXPECT_EQ(v.events, (Indices{c1_ok, c2_ok}));
  EXPECT_EQ(v.explanation,
            "c2 acquired L at event 3 while c1 held it since event 1 (still held at the end of the "
            "history)");
}

TEST(MutualExclusion, CountsEveryPairButListsUpToTheCap) {
  HistoryBuilder h;
  h.acquire("c1", "L");
  h.acquire("c2", "L");
  h.acquire("c3", "L");
  checkers::Options options;
  options.max_listed_per_kind = 1;
  auto results = check(h.events(), options);
  EXPECT_EQ(results.counts.at("mutual-exclusion"), 3);
  EXPECT_EQ(results.violations.size(), 1u);
}

TEST(MutualExclusion, HoldsStartingAtTheSameInstantCountOnce) {
  HistoryBuilder h;
  h.invoke("c1", "acquire", "L");
  h.invoke("c2", "acquire", "L");
  h.at(100).ok("c1", "acquire", "L");
  h.at(100).ok("c2", "acquire", "L");
  auto results = check(h.events());
  EXPECT_EQ(results.counts.at("mutual-exclusion"), 1);
  EXPECT_EQ(only_violation(results).events, (Indices{2, 3}));
}

// --- lost-update and stale-write ------------------------------------------------

TEST(LostUpdate, TwoAcceptedWritesThatReadTheSameValue) {
  HistoryBuilder h;
  h.acquire("c1", "L");
  const int64_t first = h.write("c1", "L", 0);
  h.release("c1", "L");
  h.acquire("c2", "L");
  const int64_t second = h.write("c2", "L", 0);
  h.release("c2", "L");
  auto results = check(h.events());
  EXPECT_EQ(violation_counts(results), "lost-update=1");
  const Violation& v = only_violation(results);
  EXPECT_EQ(v.events, (Indices{first, second}));
  EXPECT_EQ(v.processes, (std::vector<std::string>{"c1", "c2"}));
  EXPECT_EQ(results.counts.at("writes-accepted"), 2);
}

TEST(LostUpdate, NearMisses) {
  HistoryBuilder h;
  h.acquire("c1", "L");
  h.write("c1", "L", 0);
  h.write("c1", "L", 0, Type::Fail);  // rejected: not accepted
  h.write("c1", "L", 0, Type::Info);  // unknown: not known to be accepted
  h.write("c1", "L", 1);
  h.write("c1", "L2", 0);  // another lock's counter
  h.release("c1", "L");
  auto results = check(h.events());
  EXPECT_EQ(violation_counts(results), "");
  EXPECT_EQ(results.counts.at("fencing-saved"), 1);
}

TEST(LostUpdate, EarlierWriteOutsideTheRecentTableIsFoundAgain) {
  HistoryBuilder h;
  h.acquire("c1", "L");
  const int64_t first = h.write("c1", "L", 0);
  for (int64_t read = 1; read <= 3000; ++read) h.write("c1", "L", read);
  h.release("c1", "L");
  h.acquire("c2", "L");
  const int64_t again = h.write("c2", "L", 0);
  auto results = check(h.events());  // in memory and from the file: both replay
  const Violation& v = only_violation(results);
  EXPECT_EQ(v.events, (Indices{first, again}));
  EXPECT_EQ(v.processes, (std::vector<std::string>{"c1", "c2"}));
}

TEST(StaleWrite, WriteAcceptedAfterAnotherHolderWrote) {
  HistoryBuilder h;
  const int64_t c1_ok = h.acquire("c1", "L");
  h.lost("c1", "L");
  const int64_t c2_ok = h.acquire("c2", "L");
  const int64_t c2_write = h.write("c2", "L", 0);
  h.release("c2", "L");
  const int64_t c1_invoke = h.invoke("c1", "write", "L", json{{"read", 1}, {"write", 2}});
  const int64_t c1_write = h.ok("c1", "write", "L", json{{"read", 1}, {"write", 2}});
  auto results = check(h.events());
  EXPECT_EQ(violation_counts(results), "stale-write=1");
  const Violation& v = only_violation(results);
  EXPECT_EQ(v.events, (Indices{c1_ok, c2_ok, c2_write, c1_invoke, c1_write}));
  EXPECT_EQ(v.processes, (std::vector<std::string>{"c1", "c2"}));
}

TEST(StaleWrite, FencingRejectionIsCountedNotReported) {
  HistoryBuilder h;
  h.acquire("c1", "L", 33);
  h.lost("c1", "L");
  h.acquire("c2", "L", 34);
  h.write("c2", "L", 0, Type::Ok, 34);
  h.release("c2", "L");
  h.write("c1", "L", 1, Type::Fail, 33);
  auto results = check(h.events());
  EXPECT_EQ(violation_counts(results), "");
  EXPECT_EQ(results.counts.at("fencing-saved"), 1);
  EXPECT_EQ(results.per_lock.at("L").at("fencing-saved"), 1);
}

TEST(StaleWrite, NearMisses) {
  // The other holder's write completes at the instant this write is invoked.
  HistoryBuilder h;
  h.acquire("c1", "L");
  h.lost("c1", "L");
  h.acquire("c2", "L");
  h.invoke("c2", "write", "L", json{{"read", 0}, {"write", 1}});
  h.at(100).ok("c2", "write", "L", json{{"read", 0}, {"write", 1}});
  h.at(100).invoke("c1", "write", "L", json{{"read", 1}, {"write", 2}});
  h.ok("c1", "write", "L", json{{"read", 1}, {"write", 2}});
  EXPECT_EQ(violation_counts(check(h.events())), "");

  // The other holder acquired at the same instant as this one: not after it.
  HistoryBuilder same_instant;
  same_instant.invoke("c2", "acquire", "L");
  same_instant.invoke("c1", "acquire", "L");
  same_instant.at(100).ok("c2", "acquire", "L");
  same_instant.at(100).invoke("c2", "write", "L", json{{"read", 0}, {"write", 1}});
  same_instant.at(100).ok("c2", "write", "L", json{{"read", 0}, {"write", 1}});
  same_instant.at(100).invoke("c2", "release", "L");
  same_instant.at(100).ok("c1", "acquire", "L");
  same_instant.at(200).write("c1", "L", 1);
  EXPECT_EQ(violation_counts(check(same_instant.events())), "");

  // The other holder acquired before this one did: its hold is the older.
  HistoryBuilder older;
  older.acquire("c2", "L");
  older.write("c2", "L", 0);
  older.lost("c2", "L");
  older.acquire("c1", "L");
  older.write("c1", "L", 1);
  EXPECT_EQ(violation_counts(check(older.events())), "");
}

// --- token-order ------------------------------------------------------------------

TEST(TokenOrder, LaterHolderGotNoLargerToken) {
  HistoryBuilder h;
  const int64_t c1_ok = h.acquire("c1", "L", 7);
  h.release("c1", "L");
  const int64_t c2_invoke = h.invoke("c2", "acquire", "L", json{{"ttl_ms", 1000}});
  const int64_t c2_ok = h.ok("c2", "acquire", "L", nullptr, 7);
  auto results = check(h.events());
  EXPECT_EQ(violation_counts(results), "token-order=1");
  EXPECT_EQ(only_violation(results).events, (Indices{c1_ok, c2_invoke, c2_ok}));
}

TEST(TokenOrder, NearMisses) {
  HistoryBuilder h;
  h.acquire("c1", "L", 7);
  h.acquire("c1", "L", 7);  // re-entry keeps its token
  h.release("c1", "L");
  h.release("c1", "L");
  h.acquire("c2", "L", 8);
  h.release("c2", "L");
  // c3's acquire was invoked before c4's completed: they are concurrent.
  h.invoke("c3", "acquire", "L");
  h.acquire("c4", "L", 10);
  h.release("c4", "L");
  h.ok("c3", "acquire", "L", nullptr, 9);
  h.acquire("c1", "L2", 1);  // another lock
  EXPECT_EQ(violation_counts(check(h.events())), "");
}

// --- ownership ----------------------------------------------------------------------

TEST(Ownership, UnconditionalDeleteOfAnotherHoldersKey) {
  HistoryBuilder h;
  const int64_t c1_ok = h.acquire("c1", "L");
  h.lost("c1", "L");
  const int64_t c2_invoke = h.invoke("c2", "acquire", "L");
  const int64_t c2_ok = h.ok("c2", "acquire", "L");
  const int64_t release = h.invoke("c1", "release", "L");
  const int64_t deleted = h.ok("c1", "release", "L", json{{"result", "released"}, {"deleted", 1}});
  auto results = check(h.events());
  EXPECT_EQ(violation_counts(results), "ownership=1");
  const Violation& v = only_violation(results);
  EXPECT_EQ(v.events, (Indices{c1_ok, c2_invoke, c2_ok, release, deleted}));
  EXPECT_EQ(v.processes, (std::vector<std::string>{"c1", "c2"}));
}

TEST(Ownership, InconclusiveEvidenceIsNotReported) {
  const json deleted{{"deleted", 1}};
  // Deleted nothing.
  HistoryBuilder none;
  none.acquire("c1", "L");
  none.lost("c1", "L");
  none.acquire("c2", "L");
  none.release("c1", "L", json{{"deleted", 0}});
  EXPECT_EQ(violation_counts(check(none.events())), "");
  // c2's acquire began before c1's completed: c1's SET may have come last.
  HistoryBuilder racing;
  racing.invoke("c2", "acquire", "L");
  racing.acquire("c1", "L");
  racing.lost("c1", "L");
  racing.ok("c2", "acquire", "L");
  racing.release("c1", "L", deleted);
  EXPECT_EQ(violation_counts(check(racing.events())), "");
  // c1 extended after c2's acquire began: the extend may have rewritten the key.
  HistoryBuilder extended;
  extended.acquire("c1", "L");
  extended.invoke("c2", "acquire", "L");
  extended.invoke("c1", "extend", "L");
  extended.info("c1", "extend", "L");
  extended.ok("c2", "acquire", "L");
  extended.release("c1", "L", deleted);
  EXPECT_EQ(violation_counts(check(extended.events())), "mutual-exclusion=1");
  // c2's acquire completed at the instant c1's release was invoked.
  HistoryBuilder same_instant;
  same_instant.acquire("c1", "L");
  same_instant.lost("c1", "L");
  same_instant.invoke("c2", "acquire", "L");
  same_instant.at(100).ok("c2", "acquire", "L");
  same_instant.at(100).invoke("c1", "release", "L");
  same_instant.ok("c1", "release", "L", deleted);
  EXPECT_EQ(violation_counts(check(same_instant.events())), "");
}

// --- liveness ----------------------------------------------------------------------

constexpr int64_t kMs = 1'000'000;

// c0 crashes between SETNX and EXPIRE (its acquire never completes); the
// others then fail for `failing_ms` (TTL 10 ms).
HistoryBuilder stuck_lock(int64_t failing_ms) {
  HistoryBuilder h;
  h.at(0).invoke("c0", "acquire", "L", json{{"ttl_ms", 10}});
  h.at(1 * kMs).crash({"c0"});
  int64_t t = 2 * kMs;
  for (int i = 0; t < 2 * kMs + failing_ms * kMs; ++i) {
    const std::string p = i % 2 ? "c2" : "c1";
    h.at(t).invoke(p, "acquire", "L", json{{"ttl_ms", 10}});
    t = std::min(t + 10 * kMs, 2 * kMs + failing_ms * kMs);
    h.at(t).fail(p, "acquire", "L");
    t += kMs / 10;
  }
  return h;
}

TEST(Liveness, LockStuckAfterACrashBetweenSetnxAndExpire) {
  HistoryBuilder h = stuck_lock(38);
  auto results = check(h.events());
  EXPECT_EQ(violation_counts(results), "liveness=1");
  const Violation& v = only_violation(results);
  const int64_t last = int64_t(h.events().size()) - 1;
  EXPECT_EQ(v.events,
            (Indices{1, 2, last}));  // the crash, the first failed invoke, the last failure
  EXPECT_EQ(v.processes, (std::vector<std::string>{"c0", "c1", "c2"}));
  EXPECT_NE(v.explanation.find("after c0 crashed at event 1"), std::string::npos) << v.explanation;
}

TEST(Liveness, ShorterThanTheFactorIsNotReported) {
  EXPECT_EQ(violation_counts(check(stuck_lock(25).events())), "");
  checkers::Options options;
  options.liveness_factor = 2.0;  // 25 ms > 2 x 10 ms
  EXPECT_EQ(violation_counts(check(stuck_lock(25).events(), options)), "liveness=1");
}

TEST(Liveness, AnAttemptThatLaterSucceedsCutsTheSpan) {
  HistoryBuilder h = stuck_lock(20);
  // c3's attempt began at 22 ms and succeeds at 60 ms: the lock may have been free since 22 ms.
  h.at(22 * kMs).invoke("c3", "acquire", "L", json{{"ttl_ms", 10}});
  h.at(30 * kMs).invoke("c1", "acquire", "L", json{{"ttl_ms", 10}});
  h.at(50 * kMs).fail("c1", "acquire", "L");
  h.at(60 * kMs).ok("c3", "acquire", "L");
  EXPECT_EQ(violation_counts(check(h.events())), "");
}

// c3 invokes at 60 ms, the instant c1's attempt fails, and wins: c1's
// failure may be c3's doing, whichever of the two the history lists first,
// so it is no evidence that the lock was stuck until 60 ms.
TEST(Liveness, AFailureAtTheInstantAWinningAttemptBeganIsNoEvidence) {
  for (const bool failure_first : {false, true}) {
    HistoryBuilder h = stuck_lock(20);
    if (failure_first) {
      h.at(50 * kMs).invoke("c1", "acquire", "L", json{{"ttl_ms", 10}});
      h.at(60 * kMs).fail("c1", "acquire", "L");
      h.at(60 * kMs).invoke("c3", "acquire", "L", json{{"ttl_ms", 10}});
    } else {
      h.at(50 * kMs).invoke("c1", "acquire", "L", json{{"ttl_ms", 10}});
      h.at(60 * kMs).invoke("c3", "acquire", "L", json{{"ttl_ms", 10}});
      h.at(60 * kMs).fail("c1", "acquire", "L");
    }
    h.at(61 * kMs).ok("c3", "acquire", "L");
    EXPECT_EQ(violation_counts(check(h.events())), "") << "failure first: " << failure_first;
  }
  // A millisecond earlier, c1's failure shows the lock taken for 59 ms.
  HistoryBuilder h = stuck_lock(20);
  h.at(50 * kMs).invoke("c1", "acquire", "L", json{{"ttl_ms", 10}});
  h.at(59 * kMs).fail("c1", "acquire", "L");
  h.at(60 * kMs).invoke("c3", "acquire", "L", json{{"ttl_ms", 10}});
  h.at(61 * kMs).ok("c3", "acquire", "L");
  EXPECT_EQ(violation_counts(check(h.events())), "liveness=1");
}

TEST(Liveness, ALiveProcessThatMayHoldItExplainsTheFailures) {
  HistoryBuilder h;
  h.at(0).invoke("c0", "acquire", "L", json{{"ttl_ms", 10}});
  h.at(1 * kMs).info("c0", "acquire", "L");  // c0 is alive and may hold L
  h.at(2 * kMs).invoke("c1", "acquire", "L", json{{"ttl_ms", 10}});
  h.at(100 * kMs).fail("c1", "acquire", "L");
  EXPECT_EQ(violation_counts(check(h.events())), "");
  h.at(101 * kMs).crash({"c0"});  // from here on nobody alive may hold it
  h.at(102 * kMs).invoke("c1", "acquire", "L", json{{"ttl_ms", 10}});
  h.at(200 * kMs).fail("c1", "acquire", "L");
  EXPECT_EQ(violation_counts(check(h.events())), "liveness=1");
}

TEST(Liveness, AReleaseInFlightMayStillHoldTheKey) {
  HistoryBuilder h;
  h.at(0).invoke("c0", "acquire", "L", json{{"ttl_ms", 1}});
  h.ok("c0", "acquire", "L");
  h.at(1 * kMs).invoke("c0", "release", "L");  // its hold ends here, its key goes later
  h.at(2 * kMs).invoke("c1", "acquire", "L", json{{"ttl_ms", 1}});
  h.at(9 * kMs).fail("c1", "acquire", "L");
  h.at(10 * kMs).ok("c0", "release", "L");
  EXPECT_EQ(violation_counts(check(h.events())), "");
  h.at(11 * kMs).invoke("c1", "acquire", "L", json{{"ttl_ms", 1}});
  h.at(20 * kMs).fail("c1", "acquire", "L");  // after the release completed: stuck
  const auto results = check(h.events());
  EXPECT_EQ(only_violation(results).events, (Indices{5, 6, 7}));
  EXPECT_NE(only_violation(results).explanation.find("after c0 released it at event 5"),
            std::string::npos);
}

TEST(Liveness, FailuresWhileSomeoneHoldsItAreExpected) {
  HistoryBuilder h;
  h.at(0).acquire("c0", "L");
  h.at(2 * kMs).invoke("c1", "acquire", "L", json{{"ttl_ms", 10}});
  h.at(100 * kMs).fail("c1", "acquire", "L");
  h.at(101 * kMs).release("c0", "L");
  EXPECT_EQ(violation_counts(check(h.events())), "");
}

// c0 takes L (TTL 10 ms) at `at_ms`.
void take(HistoryBuilder& h, int64_t at_ms) {
  h.at(at_ms * kMs).invoke("c0", "acquire", "L", json{{"ttl_ms", 10}});
  h.ok("c0", "acquire", "L");
}

// Failed attempts on L (TTL 10 ms) by c1 from `from_ms` to `to_ms`, one every 10 ms.
void failing(HistoryBuilder& h, int64_t from_ms, int64_t to_ms) {
  for (int64_t t = from_ms; t < to_ms; t += 10) {
    h.at(t * kMs).invoke("c1", "acquire", "L", json{{"ttl_ms", 10}});
    h.at(std::min(t + 9, to_ms) * kMs).fail("c1", "acquire", "L");
  }
}

// Redlock after a majority of its masters crashed for good: every attempt
// fails, as it must. That is availability lost under the fault, measured,
// and no violation.
TEST(Liveness, ALockRefusingWhileItsQuorumIsDownLosesAvailabilityNotLiveness) {
  for (bool clock_jump : {false, true}) {
    HistoryBuilder h;
    take(h, 0);
    h.at(1 * kMs).release("c0", "L");
    h.at(2 * kMs).fault_start("crash-node", 0);  // no restart: no end
    if (clock_jump) h.at(3 * kMs).fault_start("clock-jump", 1);
    failing(h, 5, 200);
    const auto results = check(h.events());
    EXPECT_EQ(violation_counts(results), "") << "clock jump " << clock_jump;
    EXPECT_EQ(results.counts.at("availability-lost"), 1);
    ASSERT_EQ(results.unavailable.size(), 1u);
    const checkers::Unavailability& u = results.unavailable[0];
    EXPECT_EQ(u.lock, "L");
    EXPECT_EQ(u.faults, clock_jump ? (std::vector<std::string>{"crash-node", "clock-jump"})
                                   : std::vector<std::string>{"crash-node"});
    EXPECT_EQ(u.from_ns, 5 * kMs) << "from the first failed attempt after the release";
    EXPECT_EQ(u.to_ns, 200 * kMs);
    EXPECT_NE(u.explanation.find("while crash-node"), std::string::npos) << u.explanation;
    EXPECT_EQ(results.per_lock.at("L").at("availability-lost"), 1);
  }
}

// A key outliving its release with no fault at all stays a violation.
TEST(Liveness, AKeyThatOutlivesItsReleaseWithNoFaultIsAViolation) {
  HistoryBuilder h;
  take(h, 0);
  h.at(1 * kMs).invoke("c0", "release", "L");
  h.at(2 * kMs).fail("c0", "release", "L");  // the DEL never happened; the key stays
  failing(h, 5, 200);
  const auto results = check(h.events());
  EXPECT_EQ(violation_counts(results), "liveness=1");
  EXPECT_TRUE(results.unavailable.empty());
}

// A fault that healed excuses the stretch only while it lasted: stuck for
// longer than the limit after its end is a violation, naming that end.
TEST(Liveness, StuckAfterEveryFaultEndedIsAViolationMeasuredFromTheEnd) {
  HistoryBuilder h;
  h.at(0).fault_start("partition", 0);
  h.at(1 * kMs).fault_start("pause", 1);
  h.at(2 * kMs).fault_end("pause", 1);
  failing(h, 5, 50);
  const int64_t healed = h.at(50 * kMs).fault_end("partition", 0);
  failing(h, 51, 100);  // 50 ms after the heal: more than 3 x 10 ms
  const auto results = check(h.events());
  EXPECT_EQ(violation_counts(results), "liveness=1");
  const Violation& v = only_violation(results);
  EXPECT_TRUE(std::find(v.events.begin(), v.events.end(), healed) != v.events.end());
  EXPECT_NE(v.explanation.find("after every fault had ended (the last at event " +
                               std::to_string(healed) + ")"),
            std::string::npos)
      << v.explanation;
  // Healed later, the part after it is too short: availability lost.
  HistoryBuilder shorter;
  shorter.at(0).fault_start("partition", 0);
  failing(shorter, 5, 80);
  shorter.at(80 * kMs).fault_end("partition", 0);
  failing(shorter, 81, 100);
  const auto excused = check(shorter.events());
  EXPECT_EQ(violation_counts(excused), "");
  EXPECT_EQ(excused.counts.at("availability-lost"), 1);
}

// Stuck for longer than the limit before a fault began: nothing excuses that.
TEST(Liveness, StuckBeforeAFaultBeganIsAViolation) {
  HistoryBuilder h;
  failing(h, 0, 60);
  const int64_t began = h.at(60 * kMs).fault_start("partition", 0);
  failing(h, 61, 70);
  const auto results = check(h.events());
  const Violation& v = only_violation(results);
  EXPECT_EQ(v.kind, "liveness");
  EXPECT_TRUE(std::find(v.events.begin(), v.events.end(), began) != v.events.end());
}

// A moment (a cut, a client's crash) is over once done: it excuses nothing.
TEST(Liveness, AMomentExcusesNothingAndEndsPairByFault) {
  HistoryBuilder h;
  h.at(0).fault_start("cut", 0, true);
  failing(h, 5, 100);
  EXPECT_EQ(violation_counts(check(h.events())), "liveness=1");
  // Two faults of one kind: each end closes its own start.
  HistoryBuilder two;
  two.at(0).fault_start("pause", 0);
  two.at(1 * kMs).fault_start("pause", 1);
  two.at(2 * kMs).fault_end("pause", 1);  // fault 0 is still in force
  failing(two, 5, 100);
  EXPECT_EQ(violation_counts(check(two.events())), "") << "fault 0 never ended";
}

// --- reentrancy -----------------------------------------------------------------------

TEST(Reentrancy, ReportedDepthDisagreesWithTheHistory) {
  HistoryBuilder h;
  const int64_t first = h.acquire("c1", "L", std::nullopt, json{{"reentry", 1}});
  const int64_t second = h.acquire("c1", "L", std::nullopt, json{{"reentry", 3}});
  h.release("c1", "L", json{{"remaining", 2}});
  h.release("c1", "L", json{{"remaining", 1}});
  h.release("c1", "L", json{{"remaining", 0}});
  auto results = check(h.events());
  EXPECT_EQ(violation_counts(results), "reentrancy=1");
  EXPECT_EQ(only_violation(results).events, (Indices{first, second}));
}

TEST(Reentrancy, RemainingDepthDisagrees) {
  HistoryBuilder h;
  h.acquire("c1", "L", std::nullopt, json{{"reentry", 1}});
  const int64_t second = h.acquire("c1", "L", std::nullopt, json{{"reentry", 2}});
  h.invoke("c1", "release", "L");
  const int64_t release = h.ok("c1", "release", "L", json{{"remaining", 0}});
  const auto results = check(h.events());
  EXPECT_EQ(only_violation(results).events, (Indices{second, release}));
}

TEST(Reentrancy, ReleaseOfALockNotHeld) {
  HistoryBuilder h;
  h.acquire("c1", "L");
  const int64_t released = h.release("c1", "L");
  const int64_t again = h.release("c1", "L");
  auto results = check(h.events());
  EXPECT_EQ(violation_counts(results), "reentrancy=1");
  EXPECT_EQ(only_violation(results).events, (Indices{released + 1, again, again + 1}));
}

TEST(Reentrancy, NearMisses) {
  HistoryBuilder h;
  h.acquire("c1", "L", std::nullopt, json{{"reentry", 1}});
  h.acquire("c1", "L", std::nullopt, json{{"reentry", 2}});
  h.release("c1", "L", json{{"remaining", 1}});
  h.release("c1", "L", json{{"remaining", 0}});
  // An unknown acquire leaves the depth unknown until the lock reports one.
  h.invoke("c1", "acquire", "L");
  h.info("c1", "acquire", "L");
  h.acquire("c1", "L", std::nullopt, json{{"reentry", 5}});
  h.acquire("c1", "L", std::nullopt, json{{"reentry", 6}});
  // Depth 1 after an acquire: the lease may have expired meanwhile.
  h.acquire("c1", "L", std::nullopt, json{{"reentry", 1}});
  h.release("c1", "L", json{{"remaining", 0}});
  // A release after lost may succeed.
  h.acquire("c2", "L2");
  h.lost("c2", "L2");
  h.release("c2", "L2");
  EXPECT_EQ(violation_counts(check(h.events())), "");
}

// --- structure and results --------------------------------------------------------------

TEST(Structure, CompletionWithoutInvokeIsAnError) {
  HistoryBuilder h;
  h.acquire("c1", "L");
  h.ok("c2", "acquire", "L");
  try {
    checkers::check_events(h.events());
    FAIL() << "expected HistoryError";
  } catch (const history::HistoryError& e) {
    EXPECT_STREQ(e.what(), "event 2: c2 completed acquire without invoking it");
  }
  TempDir dir("locklab-checkers-test");
  history::write_jsonl(h.events(), dir.path() / "h.jsonl");
  try {
    checkers::check_file(dir.path() / "h.jsonl");
    FAIL() << "expected HistoryError";
  } catch (const history::HistoryError& e) {
    EXPECT_EQ(std::string(e.what()),
              (dir.path() / "h.jsonl").string() + ":3: c2 completed acquire without invoking it");
  }
}

TEST(Structure, TwoOperationsInFlightIsAnError) {
  HistoryBuilder h;
  h.invoke("c1", "acquire", "L");
  h.invoke("c1", "write", "L");
  EXPECT_THROW(checkers::check_events(h.events()), history::HistoryError);
}

TEST(Structure, ACrashedProcessMayCompleteItsLastOperation) {
  HistoryBuilder h;
  h.invoke("c1", "acquire", "L");
  h.crash({"c1"});
  h.ok("c1", "acquire", "L");  // it dies at its next step: no hold
  h.acquire("c2", "L");
  auto results = check(h.events());
  EXPECT_EQ(violation_counts(results), "");
  EXPECT_EQ(results.counts.at("holds"), 1);
}

TEST(Results, JsonShape) {
  HistoryBuilder h;
  h.acquire("c1", "L");
  h.acquire("c2", "L");
  const json j = check(h.events()).to_json();
  EXPECT_EQ(j["verdict"], "violated");
  EXPECT_EQ(j["counts"]["mutual-exclusion"], 1);
  EXPECT_EQ(j["counts"]["events"], 4);
  EXPECT_EQ(j["counts"]["fencing-saved"], 0);
  EXPECT_EQ(j["per_lock"]["L"]["mutual-exclusion"], 1);
  ASSERT_EQ(j["violations"].size(), 1u);
  EXPECT_EQ(j["violations"][0]["events"], json({1, 3}));
  EXPECT_EQ(j["violations"][0]["processes"], json({"c1", "c2"}));
  EXPECT_TRUE(j["violations"][0]["explanation"].is_string());
  HistoryBuilder safe;
  safe.acquire("c1", "L");
  EXPECT_EQ(check(safe.events()).to_json()["verdict"], "safe");
}

}  // namespace
}  // namespace locklab::testing
