// redisson-hash: re-entry, the watchdog, pub/sub wake-up, and the paused
// client of docs/FAILURE-STORIES.md, story 10.
#include <gtest/gtest.h>

#include <thread>

#include "both_drivers.h"
#include "lock_test_support.h"

namespace locklab::testing {
namespace {

using Steady = std::chrono::steady_clock;

// Polls `condition` every 10 ms for at most `timeout`.
template <typename Condition>
bool eventually(Condition condition, std::chrono::milliseconds timeout) {
  auto deadline = Steady::now() + timeout;
  while (Steady::now() < deadline) {
    if (condition()) return true;
    sleep_for(10ms);  // on a fiber, the others (a watchdog) run meanwhile
  }
  return condition();
}

long long elapsed_ms(Steady::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Steady::now() - since).count();
}

class RedissonHash : public ::testing::Test {
 protected:
  RedisServer server;
  std::vector<Endpoint> endpoints{server.endpoint()};
  TestClient c1{"redisson-hash", "c1", endpoints};
  TestClient c2{"redisson-hash", "c2", endpoints};

  std::string count_of(const std::string& field) {
    return redis_command(server, {"HGET", "L", field}).str;
  }
  bool exists() { return redis_command(server, {"EXISTS", "L"}).integer == 1; }
};

TEST_F(RedissonHash, ReentersCountsAndReleasesOnlyAtZero) {
  std::vector<Lease> leases;
  for (int depth = 1; depth <= 3; ++depth) {
    AcquireResult acquired = c1.lock().acquire("L", 5000ms, 0ms);
    ASSERT_EQ(acquired.outcome, Outcome::Done) << acquired.error;
    EXPECT_EQ(acquired.lease->reentry, depth);
    EXPECT_FALSE(acquired.lease->validity.has_value()) << "a watchdog lease has no deadline";
    leases.push_back(*acquired.lease);
  }
  const std::string field = leases[0].owner;
  EXPECT_EQ(count_of(field), "3");
  EXPECT_EQ(c2.lock().acquire("L", 5000ms, 0ms).outcome, Outcome::Refused);

  for (int left = 2; left >= 0; --left) {
    ChangeResult released = c1.lock().release("L", leases[left]);
    EXPECT_EQ(released.outcome, Outcome::Done);
    EXPECT_EQ(released.remaining, left) << "the depth left is reported";
    if (left > 0) {
      EXPECT_EQ(count_of(field), std::to_string(left));
      EXPECT_EQ(c2.lock().acquire("L", 5000ms, 0ms).outcome, Outcome::Refused)
          << "still held at " << left;
    }
  }
  EXPECT_FALSE(exists()) << "the last release deletes the hash";
  EXPECT_EQ(c1.lock().release("L", leases[0]).outcome, Outcome::Refused) << "one release too many";
  EXPECT_EQ(c2.lock().acquire("L", 5000ms, 0ms).outcome, Outcome::Done);
}

// On a fiber the watchdog is a fiber beside its client's: it renews only
// while the client waits (here, sleeps) and lets it run.
TEST_F(RedissonHash, WatchdogKeepsTheLockPastItsTtlAndStopsAfterRelease) {
  on_a_thread_and_on_a_fiber([&] {
    TestClient holder{"redisson-hash", "c1", endpoints};
    TestClient other{"redisson-hash", "c2", endpoints};
    AcquireResult acquired = holder.lock().acquire("L", 300ms, 0ms);
    ASSERT_EQ(acquired.outcome, Outcome::Done) << acquired.error;
    sleep_for(1000ms);
    EXPECT_TRUE(exists()) << "three TTLs later the watchdog has kept it";
    EXPECT_GT(redis_command(server, {"PTTL", "L"}).integer, 0);
    EXPECT_EQ(other.lock().acquire("L", 300ms, 0ms).outcome, Outcome::Refused);
    EXPECT_FALSE(holder.lock().renewal_failed("L"));

    ASSERT_EQ(holder.lock().release("L", *acquired.lease).outcome, Outcome::Done);
    EXPECT_FALSE(exists());
    // Put our field back by hand: a watchdog still running would renew it.
    redis_command(server, {"HSET", "L", acquired.lease->owner, "1"});
    redis_command(server, {"PEXPIRE", "L", "300"});
    sleep_for(700ms);
    EXPECT_FALSE(exists()) << "the watchdog renewed a lock that was released";
  });
}

TEST_F(RedissonHash, WaiterWakesOnTheUnlockMessageNotAfterTheTtl) {
  AcquireResult held = c1.lock().acquire("L", 10'000ms, 0ms);
  ASSERT_EQ(held.outcome, Outcome::Done) << held.error;
  auto start = Steady::now();
  AcquireResult waited;
  Steady::time_point acquired_at;
  std::thread waiter([&] {
    waited = c2.lock().acquire("L", 10'000ms, 5000ms);
    acquired_at = Steady::now();
  });
  std::this_thread::sleep_for(300ms);
  auto released_at = Steady::now();
  ASSERT_EQ(c1.lock().release("L", *held.lease).outcome, Outcome::Done);
  waiter.join();
  ASSERT_EQ(waited.outcome, Outcome::Done) << waited.error;
  EXPECT_GE(std::chrono::duration_cast<std::chrono::milliseconds>(acquired_at - start).count(), 250)
      << "the waiter really waited";
  EXPECT_LT(
      std::chrono::duration_cast<std::chrono::milliseconds>(acquired_at - released_at).count(),
      1000)
      << "woken by the unlock message, not by the 10 s TTL or the 5 s wait";
}

// Story 10: the watchdog is frozen with its client; the lease expires.
TEST_F(RedissonHash, PausedClientLosesTheLockWhileBelievingItHoldsIt) {
  on_a_thread_and_on_a_fiber([&] {
    redis_command(server, {"DEL", "L"});
    TestClient paused{"redisson-hash", "c1", endpoints};
    TestClient other{"redisson-hash", "c2", endpoints};
    AcquireResult first = paused.lock().acquire("L", 400ms, 0ms);
    ASSERT_EQ(first.outcome, Outcome::Done) << first.error;
    paused.gate.close();
    auto paused_at = Steady::now();
    AcquireResult second = other.lock().acquire("L", 5000ms, 3000ms);
    const long long taken_after = elapsed_ms(paused_at);
    ASSERT_EQ(second.outcome, Outcome::Done) << second.error;
    EXPECT_GE(taken_after, 300) << "c2 waited for c1's lease to run out";
    EXPECT_TRUE(paused.gate.is_closed());
    paused.gate.open();

    // c1 was told nothing: only its watchdog, once it runs again, finds out.
    EXPECT_TRUE(eventually([&] { return paused.lock().renewal_failed("L"); }, 2000ms));
    EXPECT_EQ(paused.lock().release("L", *first.lease).outcome, Outcome::Refused);
    EXPECT_EQ(count_of(second.lease->owner), "1") << "c2 still holds it";
    ASSERT_EQ(other.lock().release("L", *second.lease).outcome, Outcome::Done);
  });
}

// Story 11's signal: a renewal that times out is reported until the next acquire.
TEST_F(RedissonHash, TimedOutRenewalIsReportedUntilTheNextAcquire) {
  TestClient c3{
      "redisson-hash", "c3", endpoints,
      ClientOptions{.timeouts = {std::chrono::milliseconds(200), std::chrono::milliseconds(150)}}};
  ASSERT_EQ(c3.lock().acquire("L", 450ms, 0ms).outcome, Outcome::Done);
  server.pause();
  std::this_thread::sleep_for(400ms);
  server.resume();
  EXPECT_TRUE(eventually([&] { return c3.lock().renewal_failed("L"); }, 1000ms));
  AcquireResult again = c3.lock().acquire("L", 450ms, 2000ms);
  ASSERT_EQ(again.outcome, Outcome::Done) << again.error;
  EXPECT_FALSE(c3.lock().renewal_failed("L"));
}

}  // namespace
}  // namespace locklab::testing
