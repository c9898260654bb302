// Overlaps told as broken leases or overruns, the harm a run did, and its
// closest calls, over hand-written histories whose figures are worked out
// by hand: each test fails when a class, a count or a margin is computed wrong.
#include <gtest/gtest.h>

#include "check_helpers.h"
#include "history_builder.h"

namespace locklab::testing {
namespace {

using checkers::Overlap;
using history::Type;
using json = nlohmann::json;

constexpr int64_t kNanosPerMs = 1'000'000;

// A copy: callers pass the results of check() as a temporary.
Overlap only_overlap(const checkers::Results& results) {
  EXPECT_EQ(results.violations.size(), 1u) << results.to_json().dump(2);
  if (results.violations.empty() || !results.violations[0].overlap) return {};
  return *results.violations[0].overlap;
}

// An acquire of `lock` by `p` invoked at `invoke_ms` and granted at `ok_ms`,
// with ttl_ms 1000 and the ok's value `ok_value`; returns the ok's index.
int64_t acquire_at(HistoryBuilder& h, const std::string& p, int64_t invoke_ms, int64_t ok_ms,
                   json ok_value = nullptr, json invoke_value = {{"ttl_ms", 1000}}) {
  h.at(invoke_ms * kNanosPerMs).invoke(p, "acquire", "L", std::move(invoke_value));
  return h.at(ok_ms * kNanosPerMs).ok(p, "acquire", "L", std::move(ok_value));
}

int64_t release_at(HistoryBuilder& h, const std::string& p, int64_t ms) {
  return h.at(ms * kNanosPerMs).release(p, "L");
}

int64_t write_at(HistoryBuilder& h, const std::string& p, int64_t ms, int64_t read, Type outcome) {
  h.at(ms * kNanosPerMs);
  return h.write(p, "L", read, outcome);
}

TEST(OverlapClass, AGrantInsideTheEarlierLeaseIsABrokenLease) {
  HistoryBuilder h;
  acquire_at(h, "c1", 0, 1);
  acquire_at(h, "c2", 100, 200);  // c1's lease runs to 1000 ms
  release_at(h, "c1", 300);
  release_at(h, "c2", 400);
  const auto results = check(h.events());
  const Overlap& o = only_overlap(results);
  EXPECT_EQ(o.overlap_class, "broken-lease");
  EXPECT_EQ(o.lease_source, "ttl");
  EXPECT_NE(o.explanation.find("(its ttl_ms: the lock reported no validity of its own)"),
            std::string::npos)
      << o.explanation;
  EXPECT_DOUBLE_EQ(o.lease_ms, 1000);
  ASSERT_TRUE(o.inside_lease_ms);
  EXPECT_DOUBLE_EQ(*o.inside_lease_ms, 800);
  EXPECT_FALSE(o.past_lease_ms);
  const json v = results.to_json()["violations"][0];
  EXPECT_EQ(v["class"], "broken-lease");
  EXPECT_DOUBLE_EQ(v["overlap"]["inside_leases"].get<double>(), 0.8);
  EXPECT_EQ(results.harm.overlaps.at("broken-lease"), 1);
  EXPECT_EQ(results.harm.overlaps.at("overrun"), 0);
  EXPECT_FALSE(results.harm.harmful());
}

// A holder whose acquire began before the other's answered and answered
// after it (paused between its grant and its answer, say) may have been
// granted first: no lease is proven broken by it.
TEST(OverlapClass, AGrantThatMayHaveComeFirstBreaksNoLease) {
  HistoryBuilder h;
  h.at(0).invoke("c1", "acquire", "L", {{"ttl_ms", 1000}});
  h.at(10 * kNanosPerMs).invoke("c2", "acquire", "L", {{"ttl_ms", 1000}});
  h.at(20 * kNanosPerMs).ok("c2", "acquire", "L");
  h.at(500 * kNanosPerMs).ok("c1", "acquire", "L");  // inside c2's lease, but begun before it
  release_at(h, "c2", 600);
  release_at(h, "c1", 700);
  const auto results = check(h.events());
  const Overlap& o = only_overlap(results);
  EXPECT_EQ(o.overlap_class, "unclassified");
  EXPECT_EQ(o.unclassified_because, "grant-order");
  EXPECT_NE(o.explanation.find("c1's attempt began at 0.0 ms, before c2's acquire answered"),
            std::string::npos)
      << o.explanation;
}

TEST(OverlapClass, TheShorterOfTtlAndValidityIsTheLease) {
  HistoryBuilder h;
  acquire_at(h, "c1", 0, 1, json{{"validity_ms", 600}});
  acquire_at(h, "c2", 100, 700);  // after the validity, inside the ttl: only an attempt after 600
  release_at(h, "c1", 800);       // proves the overrun; this grant window straddles it
  const Overlap& o = only_overlap(check(h.events()));
  EXPECT_EQ(o.overlap_class, "unclassified");
  EXPECT_EQ(o.lease_source, "validity");
  EXPECT_DOUBLE_EQ(o.lease_ms, 600);

  HistoryBuilder late;
  acquire_at(late, "c1", 0, 1, json{{"validity_ms", 600}});
  acquire_at(late, "c2", 100, 700, json{{"attempt_ns", 650 * kNanosPerMs}});
  release_at(late, "c1", 800);
  const Overlap& overrun = only_overlap(check(late.events()));
  EXPECT_EQ(overrun.overlap_class, "overrun");
  EXPECT_EQ(overrun.explanation.find("its ttl_ms"), std::string::npos) << overrun.explanation;
  ASSERT_TRUE(overrun.past_lease_ms);
  EXPECT_DOUBLE_EQ(*overrun.past_lease_ms, 200);  // c1's release at 800, its lease ended at 600
}

TEST(OverlapClass, AGrantAfterTheLeaseIsAnOverrunStoppedByFencing) {
  HistoryBuilder h;
  acquire_at(h, "c1", 0, 1);
  acquire_at(h, "c2", 1500, 1510);
  write_at(h, "c2", 1600, 0, Type::Ok);
  const int64_t late = write_at(h, "c1", 2000, 0, Type::Fail);  // fencing rejects it
  release_at(h, "c1", 2100);
  release_at(h, "c2", 2200);
  const auto results = check(h.events());
  const Overlap& o = only_overlap(results);
  EXPECT_EQ(o.overlap_class, "overrun");
  ASSERT_TRUE(o.past_lease_ms);
  EXPECT_DOUBLE_EQ(*o.past_lease_ms, 1100);  // the release at 2100 was its last act
  EXPECT_EQ(o.late_writes_accepted, 0);
  EXPECT_EQ(o.late_writes_rejected, 1);
  EXPECT_TRUE(o.stopped_by_fencing());
  EXPECT_FALSE(o.clock_misjudged);
  EXPECT_NE(o.explanation.find("stopped by fencing"), std::string::npos) << o.explanation;
  EXPECT_GT(late, 0);
  EXPECT_FALSE(results.harm.harmful());
  EXPECT_EQ(results.harm.rejected_by_fencing, 1);
  EXPECT_EQ(results.harm.overlaps.at("overrun"), 1);
  EXPECT_EQ(results.harm.overlaps.at("stopped-by-fencing"), 1);
  EXPECT_EQ(results.to_json()["harm"]["harmful"], false);
}

TEST(OverlapClass, AnAcceptedLateWriteIsHarmAndItsClockCanMisjudgeTheLease) {
  HistoryBuilder h;
  acquire_at(h, "c1", 0, 1);
  h.event(0).client_time_ns = 0;
  acquire_at(h, "c2", 1500, 1510);
  write_at(h, "c2", 1600, 0, Type::Ok);
  const int64_t late = write_at(h, "c1", 2000, 0, Type::Ok);
  h.event(late - 1).client_time_ns =
      900 * kNanosPerMs;  // c1's slow clock: 900 ms into a 1000 ms lease
  h.event(late).client_time_ns = 901 * kNanosPerMs;
  h.at(2100 * kNanosPerMs).invoke("c1", "release", "L");
  h.event(late + 1).client_time_ns = 999 * kNanosPerMs;
  h.ok("c1", "release", "L");
  const auto results = check(h.events());
  ASSERT_EQ(results.counts.at("stale-write"), 1);
  const Overlap& o = [&]() -> const Overlap& {
    for (const auto& v : results.violations)
      if (v.overlap) return *v.overlap;
    static const Overlap none;
    return none;
  }();
  EXPECT_EQ(o.overlap_class, "overrun");
  EXPECT_TRUE(o.clock_misjudged);
  EXPECT_EQ(o.late_writes_accepted, 1);
  EXPECT_FALSE(o.stopped_by_fencing());
  EXPECT_NE(o.explanation.find("its clock misjudged the lease"), std::string::npos);
  EXPECT_TRUE(results.harm.harmful());
  EXPECT_EQ(results.harm.stale_writes, 1);
  EXPECT_EQ(results.harm.overlaps.at("stopped-by-fencing"), 0);
}

TEST(OverlapClass, AWriteInFlightAtTheGrantIsNotLate) {
  HistoryBuilder h;
  acquire_at(h, "c1", 0, 1);
  h.at(1400 * kNanosPerMs).invoke("c1", "write", "L", json{{"read", 0}, {"write", 1}});
  acquire_at(h, "c2", 1500, 1510);
  h.at(1520 * kNanosPerMs).ok("c1", "write", "L", json{{"read", 0}, {"write", 1}});
  release_at(h, "c1", 1600);
  const Overlap& o = only_overlap(check(h.events()));
  EXPECT_EQ(o.overlap_class, "overrun");
  EXPECT_EQ(o.late_writes_accepted, 0);
  EXPECT_EQ(o.late_writes_rejected, 0);
}

TEST(OverlapClass, AGrantWindowAcrossTheLeaseEndIsUnclassified) {
  HistoryBuilder h;
  acquire_at(h, "c1", 0, 1);
  acquire_at(h, "c2", 500, 1500);  // granted somewhere in 500..1500; the lease ended at 1000
  release_at(h, "c1", 1600);
  const Overlap& o = only_overlap(check(h.events()));
  EXPECT_EQ(o.overlap_class, "unclassified");
  EXPECT_EQ(o.unclassified_because, "grant-window");
  EXPECT_NE(o.explanation.find("in between"), std::string::npos) << o.explanation;
  // A grant window is where a request's transit happened to fall: a complete
  // history of a correct lock can show it, and results.json says so.
  const json v = check(h.events()).to_json()["violations"][0];
  EXPECT_EQ(v["overlap"]["unclassified_because"], "grant-window");
  EXPECT_EQ(v["overlap"]["timing_only"], true);
}

TEST(OverlapClass, AHistoryWithoutTtlIsUnclassifiedNeverAWrongClass) {
  HistoryBuilder h;
  acquire_at(h, "c1", 0, 1, nullptr, nullptr);
  acquire_at(h, "c2", 5000, 5010, nullptr, nullptr);
  release_at(h, "c1", 6000);
  const auto results = check(h.events());
  const Overlap& o = only_overlap(results);
  EXPECT_EQ(o.overlap_class, "unclassified");
  EXPECT_EQ(o.unclassified_because, "no-lease");
  EXPECT_EQ(o.lease_source, "");
  EXPECT_EQ(results.harm.overlaps.at("unclassified"), 1);
  // A lease the history lacks is no matter of timing.
  const json v = results.to_json()["violations"][0];
  EXPECT_EQ(v["overlap"]["timing_only"], false);
}

TEST(OverlapClass, ExtendsMoveTheLeaseEnd) {
  HistoryBuilder h;
  acquire_at(h, "c1", 0, 1);
  h.at(800 * kNanosPerMs).invoke("c1", "extend", "L", json{{"ttl_ms", 1000}});
  h.at(810 * kNanosPerMs).ok("c1", "extend", "L");  // the lease now ends at 1800
  acquire_at(h, "c2", 1500, 1510);
  release_at(h, "c1", 1600);
  const Overlap& o = only_overlap(check(h.events()));
  EXPECT_EQ(o.overlap_class, "broken-lease");
  ASSERT_TRUE(o.inside_lease_ms);
  EXPECT_DOUBLE_EQ(*o.inside_lease_ms, 290);

  // An extend whose outcome is unknown may have moved it: no overrun is proved.
  HistoryBuilder unknown;
  acquire_at(unknown, "c1", 0, 1);
  unknown.at(800 * kNanosPerMs).invoke("c1", "extend", "L", json{{"ttl_ms", 1000}});
  unknown.at(810 * kNanosPerMs).info("c1", "extend", "L");
  acquire_at(unknown, "c2", 1500, 1510, json{{"attempt_ns", 1505 * kNanosPerMs}});
  release_at(unknown, "c1", 1600);
  EXPECT_EQ(only_overlap(check(unknown.events())).overlap_class, "unclassified");
}

TEST(OverlapClass, RenewalsCountOnlyWhenRecorded) {
  // The lock renews in the background and the history does not say when:
  // a grant long after the ttl proves no overrun.
  HistoryBuilder unseen;
  acquire_at(unseen, "c1", 0, 1, json{{"renews", true}});
  acquire_at(unseen, "c2", 5000, 5010);
  release_at(unseen, "c1", 6000);
  const Overlap& o = only_overlap(check(unseen.events()));
  EXPECT_EQ(o.overlap_class, "unclassified");
  EXPECT_EQ(o.unclassified_because, "unrecorded-renewals");
  EXPECT_NE(o.explanation.find("does not record"), std::string::npos) << o.explanation;

  // Recorded renewals: the last, sent at 600 ms and answered by 610, ended
  // the lease between 1600 and 1610.
  HistoryBuilder seen;
  acquire_at(seen, "c1", 0, 1, json{{"renews", true}, {"renewals_recorded", true}});
  seen.at(320 * kNanosPerMs)
      .ok("c1", "renewed", "L", json{{"ttl_ms", 1000}, {"sent_ns", 300 * kNanosPerMs}});
  seen.at(610 * kNanosPerMs)
      .ok("c1", "renewed", "L", json{{"ttl_ms", 1000}, {"sent_ns", 600 * kNanosPerMs}});
  acquire_at(seen, "c2", 1700, 1710);
  release_at(seen, "c1", 2000);
  const Overlap& renewed = only_overlap(check(seen.events()));
  EXPECT_EQ(renewed.overlap_class, "overrun");
  ASSERT_TRUE(renewed.past_lease_ms);
  EXPECT_DOUBLE_EQ(*renewed.past_lease_ms, 390);  // surely past: the release at 2000 - 1610
  EXPECT_FALSE(renewed.clock_misjudged);          // a watchdog's holder has no deadline of its own

  // A grant between the renewal's sure end (sent + ttl) and its latest
  // (answered + ttl) proves neither class.
  HistoryBuilder between;
  acquire_at(between, "c1", 0, 1, json{{"renews", true}, {"renewals_recorded", true}});
  between.at(610 * kNanosPerMs)
      .ok("c1", "renewed", "L", json{{"ttl_ms", 1000}, {"sent_ns", 600 * kNanosPerMs}});
  acquire_at(between, "c2", 1605, 1606);
  release_at(between, "c1", 2000);
  EXPECT_EQ(only_overlap(check(between.events())).overlap_class, "unclassified");
  EXPECT_EQ(only_overlap(check(between.events())).unclassified_because, "grant-window");

  // Inside the renewed lease: broken.
  HistoryBuilder inside;
  acquire_at(inside, "c1", 0, 1, json{{"renews", true}, {"renewals_recorded", true}});
  inside.at(610 * kNanosPerMs)
      .ok("c1", "renewed", "L", json{{"ttl_ms", 1000}, {"sent_ns", 600 * kNanosPerMs}});
  acquire_at(inside, "c2", 1100, 1200);
  release_at(inside, "c1", 2000);
  const Overlap& broken = only_overlap(check(inside.events()));
  EXPECT_EQ(broken.overlap_class, "broken-lease");
  EXPECT_DOUBLE_EQ(*broken.inside_lease_ms, 400);
}

// A renewal is recorded when its answer came, but may have been applied as
// early as it was sent: one sent before a later grant and answered after it
// may have carried the lease past that grant, so no overrun is proven.
TEST(OverlapClass, ARenewalInFlightAtTheGrantProvesNoOverrun) {
  auto history = [](int64_t renewal_sent_ms, const char* renewal_type) {
    HistoryBuilder h;
    acquire_at(h, "c1", 0, 1, json{{"renews", true}, {"renewals_recorded", true}});
    acquire_at(h, "c2", 1100, 1200,
               json{{"attempt_ns", 1150 * kNanosPerMs}});  // after c1's 1000 ms lease
    h.at(1500 * kNanosPerMs);
    const json renewal{{"ttl_ms", 1000}, {"sent_ns", renewal_sent_ms * kNanosPerMs}};
    if (std::string(renewal_type) == "ok") h.ok("c1", "renewed", "L", renewal);
    if (std::string(renewal_type) == "info") h.info("c1", "renewed", "L", renewal);
    if (std::string(renewal_type) == "fail") h.fail("c1", "renewed", "L", renewal);
    release_at(h, "c1", 1600);
    release_at(h, "c2", 1700);
    return check(h.events());
  };
  for (const char* type : {"ok", "info"}) {
    const auto results = history(900, type);
    const Overlap& o = only_overlap(results);
    EXPECT_EQ(o.overlap_class, "unclassified") << type;
    EXPECT_EQ(o.unclassified_because, "renewal-in-flight") << type;
    EXPECT_NE(o.explanation.find("a renewal of c1's lease sent at 900.0 ms, before c2's acquire "
                                 "answered at 1200.0 ms, was answered only at 1500.0 ms"),
              std::string::npos)
        << o.explanation;
    EXPECT_FALSE(o.past_lease_ms);
    EXPECT_EQ(results.harm.overlaps.at("overrun"), 0);
    EXPECT_EQ(results.harm.overlaps.at("unclassified"), 1);
  }
  // Refused, or sent after the grant was answered: the overrun stands.
  for (const auto& [sent_ms, type] : {std::pair{900, "fail"}, std::pair{1300, "ok"}}) {
    const auto results = history(sent_ms, type);
    EXPECT_EQ(only_overlap(results).overlap_class, "overrun") << sent_ms << " " << type;
    EXPECT_EQ(results.harm.overlaps.at("overrun"), 1);
    EXPECT_EQ(results.harm.overlaps.at("unclassified"), 0);
  }
}

TEST(OverlapClass, EveryPairIsCountedByClassBeyondTheListingCap) {
  HistoryBuilder h;
  acquire_at(h, "c1", 0, 1);
  acquire_at(h, "c2", 10, 20);      // inside c1's lease
  acquire_at(h, "c3", 1500, 1510);  // after both leases ended? c2's runs to 1010: overrun twice
  release_at(h, "c1", 1600);
  release_at(h, "c2", 1700);
  release_at(h, "c3", 1800);
  checkers::Options options;
  options.max_listed_per_kind = 1;
  const auto results = check(h.events(), options);
  EXPECT_EQ(results.counts.at("mutual-exclusion"), 3);
  EXPECT_EQ(results.violations.size(), 1u);
  EXPECT_EQ(results.harm.overlaps.at("broken-lease"), 1);
  EXPECT_EQ(results.harm.overlaps.at("overrun"), 2);
}

TEST(ClosestCall, AGrantAfterAnExpiryAndAWriteBeforeTheLeaseEnd) {
  HistoryBuilder h;
  const int64_t c1_ok = acquire_at(h, "c1", 0, 1);
  const int64_t write = write_at(h, "c1", 900, 0, Type::Ok);  // invoked 100 ms before its end
  const int64_t crash = h.at(950 * kNanosPerMs).crash({"c1"});
  const int64_t c2_ok = acquire_at(h, "c2", 1020, 1030);  // 30 ms after c1's lease ended
  write_at(h, "c2", 1040, 1, Type::Ok);                   // 980 ms before its own end
  release_at(h, "c2", 1100);
  // A release that completed ok hands the lock over: the lease's end is no call.
  acquire_at(h, "c3", 1101, 1102);
  release_at(h, "c3", 1200);
  const auto results = check(h.events());
  EXPECT_FALSE(results.violated());
  const auto& grant = results.closest_call.grant_after_lease;
  ASSERT_TRUE(grant);
  EXPECT_DOUBLE_EQ(grant->ms, 30);
  EXPECT_DOUBLE_EQ(grant->leases, 0.03);
  EXPECT_EQ(grant->processes, (std::vector<std::string>{"c1", "c2"}));
  EXPECT_EQ(grant->events, (std::vector<int64_t>{c1_ok, crash, c2_ok}));
  const auto& wrote = results.closest_call.write_before_lease_end;
  ASSERT_TRUE(wrote);
  EXPECT_DOUBLE_EQ(wrote->ms, 100);
  EXPECT_EQ(wrote->events.back(), write);
  const json j = results.to_json()["closest_call"];
  EXPECT_DOUBLE_EQ(j["grant_after_lease"]["ms"].get<double>(), 30);
}

TEST(ClosestCall, AFailedReleaseMeansTheLeaseExpired) {
  HistoryBuilder h;
  acquire_at(h, "c1", 0, 1);
  h.at(1005 * kNanosPerMs).invoke("c1", "release", "L");
  acquire_at(h, "c2", 1008, 1010);
  h.at(1012 * kNanosPerMs).fail("c1", "release", "L", json{{"result", "not-owner"}});
  release_at(h, "c2", 1100);
  // Known only once c1's release failed, at 1012: granted 10 ms after c1's lease.
  const auto results = check(h.events());
  ASSERT_TRUE(results.closest_call.grant_after_lease);
  EXPECT_DOUBLE_EQ(results.closest_call.grant_after_lease->ms, 10);

  HistoryBuilder released;
  acquire_at(released, "c1", 0, 1);
  released.at(1005 * kNanosPerMs).invoke("c1", "release", "L");
  acquire_at(released, "c2", 1008, 1010);
  released.at(1012 * kNanosPerMs).ok("c1", "release", "L");
  EXPECT_FALSE(check(released.events()).closest_call.grant_after_lease);
}

}  // namespace
}  // namespace locklab::testing
