// redlock on five independent masters: majority, cleanup, validity, and the
// per-instance timeout (one deadline for all replies of a round).
#include <gtest/gtest.h>

#include <thread>

#include "fault_proxy.h"
#include "lock_test_support.h"

namespace locklab::testing {
namespace {

class Redlock : public ::testing::Test {
 protected:
  std::vector<std::unique_ptr<RedisServer>> masters = start_servers(5);
  std::vector<Endpoint> endpoints = endpoints_of(masters);
  // Long enough for a reply delayed by DEBUG SLEEP to arrive, both for the
  // connection and for Redlock's per-instance timeout.
  ClientOptions patient{
      .timeouts = {std::chrono::milliseconds(300), std::chrono::milliseconds(1500)},
      .params = {{"instance_timeout_ms", 1000}}};

  Reply on(size_t master, const std::vector<std::string>& argv) {
    return redis_command(*masters[master], argv);
  }
};

TEST_F(Redlock, AcquiresWithTwoOfFiveMastersDown) {
  masters[3]->kill();
  masters[4]->kill();
  TestClient c1("redlock", "c1", endpoints);
  AcquireResult acquired = c1.lock().acquire("L", 2000ms, 0ms);
  ASSERT_EQ(acquired.outcome, Outcome::Done) << acquired.error;
  EXPECT_GT(acquired.lease->validity->count(), 0);
  EXPECT_LE(acquired.lease->validity->count(), 2000 - 20) << "drift = 1% of the TTL + 2 ms";
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(on(i, {"GET", "L"}).str, acquired.lease->owner) << "master " << i;
  EXPECT_EQ(c1.lock().release("L", *acquired.lease).outcome, Outcome::Done);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(on(i, {"EXISTS", "L"}).integer, 0) << "master " << i;
}

TEST_F(Redlock, FailsWithThreeOfFiveDownAndLeavesNoKeyBehind) {
  for (size_t i = 2; i < 5; ++i) masters[i]->kill();
  TestClient c1("redlock", "c1", endpoints);
  std::vector<Reply> seen_while_in_flight;
  c1.on_step = [&](std::string_view step) {
    if (step != "after-send") return;
    std::this_thread::sleep_for(50ms);  // let the live masters run the SET
    for (size_t i = 0; i < 2; ++i) seen_while_in_flight.push_back(on(i, {"GET", "L"}));
  };
  AcquireResult acquired = c1.lock().acquire("L", 2000ms, 0ms);
  EXPECT_EQ(acquired.outcome, Outcome::Refused) << acquired.error;
  ASSERT_EQ(seen_while_in_flight.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(seen_while_in_flight[i].type, Reply::Type::String)
        << "master " << i << " took the SET";
    EXPECT_EQ(on(i, {"EXISTS", "L"}).integer, 0)
        << "master " << i << " still holds a minority lock";
  }
}

TEST_F(Redlock, SlowMinorityShrinksTheValidity) {
  TestClient c1("redlock", "c1", endpoints, patient);
  AcquireResult fast = c1.lock().acquire("fast", 3000ms, 0ms);
  ASSERT_EQ(fast.outcome, Outcome::Done) << fast.error;

  // Masters 0 and 1 sleep 400 ms: their replies arrive late but in time.
  std::vector<std::unique_ptr<Connection>> sleepers;
  for (size_t i = 0; i < 2; ++i) {
    sleepers.push_back(masters[i]->connect());
    sleepers.back()->send({"DEBUG", "SLEEP", "0.4"});
  }
  std::this_thread::sleep_for(20ms);
  AcquireResult slow = c1.lock().acquire("slow", 3000ms, 0ms);
  for (auto& sleeper : sleepers) sleeper->receive();
  ASSERT_EQ(slow.outcome, Outcome::Done) << slow.error;
  EXPECT_EQ(on(0, {"EXISTS", "slow"}).integer, 1) << "the slow masters answered OK";
  const long long lost = fast.lease->validity->count() - slow.lease->validity->count();
  EXPECT_GE(lost, 250) << "fast " << fast.lease->validity->count() << " ms, slow "
                       << slow.lease->validity->count() << " ms";
  EXPECT_GT(slow.lease->validity->count(), 0);
}

// docs/FAILURE-STORIES.md, story 7: a pause while the replies wait in buffers outlasts the
// TTL; the elapsed-time check keeps the client from claiming the lock.
TEST_F(Redlock, PauseBetweenSendAndRepliesLongerThanTheTtlClaimsNothing) {
  TestClient c1("redlock", "c1", endpoints);
  c1.on_step = [](std::string_view step) {
    if (step == "after-send") std::this_thread::sleep_for(400ms);
  };
  AcquireResult acquired = c1.lock().acquire("L", 300ms, 0ms);
  EXPECT_EQ(acquired.outcome, Outcome::Refused) << acquired.error;
  EXPECT_NE(acquired.error.find("locked 5 of 5"), std::string::npos)
      << "every master said OK, yet the validity was gone: " << acquired.error;
}

// Five masters, each behind its own fault proxy, so any of them can be
// blackholed: requests vanish and nothing comes back, not even a close.
class RedlockPartitioned : public ::testing::Test {
 protected:
  static constexpr milliseconds kTimeout{100};  // the clients' instance_timeout_ms
  // A correctness bound, not a benchmark: one timeout plus room for a loaded
  // machine, and still below two timeouts plus that room.
  static constexpr milliseconds kSlack{150};

  std::vector<std::unique_ptr<RedisServer>> masters = start_servers(5);
  std::vector<std::unique_ptr<FaultProxy>> proxies = proxies_for(masters);
  // The connection's own command timeout is long (1.5 s): any wait near it
  // means the per-instance timeout was not applied.
  ClientOptions options{
      .timeouts = {std::chrono::milliseconds(300), std::chrono::milliseconds(1500)},
      .params = {{"instance_timeout_ms", kTimeout.count()}}};

  static std::vector<std::unique_ptr<FaultProxy>> proxies_for(
      const std::vector<std::unique_ptr<RedisServer>>& servers) {
    std::vector<std::unique_ptr<FaultProxy>> out;
    for (const auto& server : servers)
      out.push_back(std::make_unique<FaultProxy>(server->endpoint()));
    return out;
  }

  std::vector<Endpoint> endpoints() const {
    std::vector<Endpoint> out;
    for (const auto& proxy : proxies) out.push_back(proxy->endpoint());
    return out;
  }

  void blackhole(std::initializer_list<size_t> which) {
    for (size_t i : which) proxies[i]->blackhole();
  }

  Reply on(size_t master, const std::vector<std::string>& argv) {
    return redis_command(*masters[master], argv);
  }

  // Runs `f` and returns how long it took.
  template <typename F>
  static milliseconds timed(F&& f) {
    const auto start = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
  }
};

TEST_F(RedlockPartitioned, TwoBlackholedInstancesCostOneTimeoutToAcquireAndOneToRelease) {
  TestClient c1("redlock", "c1", endpoints(), options);
  blackhole({3, 4});
  AcquireResult acquired;
  const milliseconds took = timed([&] { acquired = c1.lock().acquire("L", 10'000ms, 0ms); });
  ASSERT_EQ(acquired.outcome, Outcome::Done) << acquired.error;
  EXPECT_GE(took, kTimeout) << "the blackholed instances' replies were awaited until the deadline";
  EXPECT_LT(took, 2 * kTimeout + kSlack) << "the replies were awaited one after another";
  EXPECT_LE(acquired.lease->validity->count(), 10'000 - kTimeout.count() - 100)
      << "the validity counts the time spent waiting (and the drift of 102 ms)";
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(on(i, {"GET", "L"}).str, acquired.lease->owner) << "master " << i;

  ChangeResult released;
  const milliseconds release_took =
      timed([&] { released = c1.lock().release("L", *acquired.lease); });
  EXPECT_EQ(released.outcome, Outcome::Done) << released.error;
  EXPECT_GE(release_took, kTimeout);
  EXPECT_LT(release_took, 2 * kTimeout + kSlack);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(on(i, {"EXISTS", "L"}).integer, 0) << "master " << i;
}

TEST_F(RedlockPartitioned, AFailedAttemptCostsOneTimeoutAndItsUnlockAnother) {
  TestClient c1("redlock", "c1", endpoints(), options);
  blackhole({2, 3, 4});
  AcquireResult acquired;
  const milliseconds took = timed([&] { acquired = c1.lock().acquire("L", 10'000ms, 0ms); });
  EXPECT_EQ(acquired.outcome, Outcome::Unknown)
      << "the blackholed instances may have run SET and the unlock: " << acquired.error;
  EXPECT_NE(acquired.error.find("locked 2 of 5"), std::string::npos) << acquired.error;
  EXPECT_GE(took, 2 * kTimeout);
  EXPECT_LT(took, 3 * kTimeout + kSlack);
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(on(i, {"EXISTS", "L"}).integer, 0) << "master " << i;
}

TEST_F(RedlockPartitioned, TwoBlackholedInstancesCostOneTimeoutToExtend) {
  TestClient c1("redlock", "c1", endpoints(), options);
  AcquireResult acquired = c1.lock().acquire("L", 10'000ms, 0ms);
  ASSERT_EQ(acquired.outcome, Outcome::Done) << acquired.error;
  blackhole({0, 4});
  ChangeResult extended;
  const milliseconds took =
      timed([&] { extended = c1.lock().extend("L", *acquired.lease, 20'000ms); });
  EXPECT_EQ(extended.outcome, Outcome::Done) << extended.error;
  EXPECT_GE(took, kTimeout);
  EXPECT_LT(took, 2 * kTimeout + kSlack);
  EXPECT_GT(on(1, {"PTTL", "L"}).integer, 10'000) << "extended to 20 s on a reachable master";
}

// A stop-the-world pause while the replies are awaited is not the network's
// doing: replies that arrived during it count, though the deadline passed.
TEST_F(RedlockPartitioned, RepliesThatArrivedDuringAPauseCount) {
  TestClient c1("redlock", "c1", endpoints(), options);
  blackhole({3, 4});
  std::jthread opener;
  c1.on_step = [&](std::string_view step) {
    if (step != "after-send") return;
    c1.gate.close();  // the client stops at its next gate: right after the first reply
    opener = std::jthread([&] {
      std::this_thread::sleep_for(3 * kTimeout);
      c1.gate.open();
    });
  };
  AcquireResult acquired = c1.lock().acquire("L", 10'000ms, 0ms);
  ASSERT_EQ(acquired.outcome, Outcome::Done) << acquired.error;
  EXPECT_LE(acquired.lease->validity->count(), 10'000 - 3 * kTimeout.count())
      << "the pause counts against the validity";
}

TEST_F(RedlockPartitioned, InstanceTimeoutComesFromTheScenarioParams) {
  const milliseconds configured{400};
  options.params["instance_timeout_ms"] = configured.count();
  TestClient c1("redlock", "c1", endpoints(), options);
  blackhole({3, 4});
  AcquireResult acquired;
  const milliseconds took = timed([&] { acquired = c1.lock().acquire("L", 10'000ms, 0ms); });
  ASSERT_EQ(acquired.outcome, Outcome::Done) << acquired.error;
  EXPECT_GE(took, configured);
  EXPECT_LT(took, configured + kSlack);
}

TEST_F(RedlockPartitioned, DefaultInstanceTimeoutIsFiftyMillisecondsForALongTtl) {
  options.params.clear();
  TestClient c1("redlock", "c1", endpoints(), options);
  blackhole({3, 4});
  AcquireResult acquired;
  const milliseconds took = timed([&] { acquired = c1.lock().acquire("L", 10'000ms, 0ms); });
  ASSERT_EQ(acquired.outcome, Outcome::Done) << acquired.error;
  EXPECT_GE(took, 50ms);
  EXPECT_LT(took, 50ms + kSlack) << "not the connection's 1.5 s command timeout";
}

TEST(RedlockSetup, NeedsAtLeastThreeMasters) {
  RedisServer a, b;
  EXPECT_THROW(TestClient("redlock", "c1", {a.endpoint(), b.endpoint()}), std::invalid_argument);
}

}  // namespace
}  // namespace locklab::testing
