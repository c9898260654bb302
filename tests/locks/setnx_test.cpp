// The classic SETNX recipes and their published failure stories (1-4).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "lock_test_support.h"

namespace locklab::testing {
namespace {

// Lets `parties` threads meet at one point, or gives up after `timeout`.
class Rendezvous {
 public:
  explicit Rendezvous(int parties) : waiting_(parties) {}
  bool arrive_and_wait(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    if (--waiting_ == 0) all_here_.notify_all();
    return all_here_.wait_for(lock, timeout, [&] { return waiting_ <= 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable all_here_;
  int waiting_;
};

class TimestampLocks : public ::testing::TestWithParam<std::string> {
 protected:
  RedisServer server;
  std::vector<Endpoint> endpoints{server.endpoint()};
};

TEST_P(TimestampLocks, TakesOverAnExpiredDeadlineButNotALiveOne) {
  redis_command(server, {"SET", "L", std::to_string(wall_ms() - 1000)});
  TestClient c1(GetParam(), "c1", endpoints);
  AcquireResult taken = c1.lock().acquire("L", 1000ms, 0ms);
  ASSERT_EQ(taken.outcome, Outcome::Done) << taken.error;
  EXPECT_EQ(redis_command(server, {"GET", "L"}).str, taken.lease->owner);
  EXPECT_GT(std::stoll(taken.lease->owner), wall_ms()) << "the stored value is our future deadline";

  const std::string live = std::to_string(wall_ms() + 10'000);
  redis_command(server, {"SET", "L", live});
  TestClient c2(GetParam(), "c2", endpoints);
  EXPECT_EQ(c2.lock().acquire("L", 1000ms, 100ms).outcome, Outcome::Refused);
  EXPECT_EQ(redis_command(server, {"GET", "L"}).str, live);
}

// Story 3: c1 outlives its deadline, c2 takes over, c1's plain DEL frees c2's
// lock, and c3 gets it while c2 still holds it.
TEST_P(TimestampLocks, UnlockAfterTheDeadlineDeletesTheNextHoldersLockUnlessChecked) {
  TestClient c1(GetParam(), "c1", endpoints), c2(GetParam(), "c2", endpoints),
      c3(GetParam(), "c3", endpoints);
  AcquireResult first = c1.lock().acquire("L", 100ms, 0ms);
  ASSERT_EQ(first.outcome, Outcome::Done) << first.error;
  std::this_thread::sleep_for(200ms);
  AcquireResult second = c2.lock().acquire("L", 5000ms, 0ms);
  ASSERT_EQ(second.outcome, Outcome::Done)
      << "c2 should take over the expired lock: " << second.error;

  ChangeResult late = c1.lock().release("L", *first.lease);
  if (GetParam() == "setnx-getset-safe-unlock") {
    EXPECT_EQ(late.outcome, Outcome::Refused);
    EXPECT_EQ(redis_command(server, {"GET", "L"}).str, second.lease->owner)
        << "c2's lock is intact";
    EXPECT_EQ(c3.lock().acquire("L", 5000ms, 0ms).outcome, Outcome::Refused);
  } else {
    EXPECT_EQ(late.outcome, Outcome::Done);
    EXPECT_EQ(late.deleted, 1) << "the DEL removed a key: c2's";
    EXPECT_EQ(redis_command(server, {"EXISTS", "L"}).integer, 0) << "c2 holds, but its key is gone";
    EXPECT_EQ(c3.lock().acquire("L", 5000ms, 0ms).outcome, Outcome::Done)
        << "c3 now holds c2's lock";
  }
}

// Story 2: a client whose clock runs ahead judges a live lock expired.
TEST_P(TimestampLocks, ClientClockAheadTakesOverALiveLock) {
  TestClient c1(GetParam(), "c1", endpoints), c2(GetParam(), "c2", endpoints),
      c3(GetParam(), "c3", endpoints);
  AcquireResult held = c1.lock().acquire("L", 5000ms, 0ms);
  ASSERT_EQ(held.outcome, Outcome::Done) << held.error;
  EXPECT_EQ(c3.lock().acquire("L", 5000ms, 0ms).outcome, Outcome::Refused) << "control: no skew";

  c2.clock.jump(10s);
  EXPECT_EQ(c2.lock().acquire("L", 5000ms, 0ms).outcome, Outcome::Done);
  EXPECT_LT(c1.clock.now_ns(),
            held.lease->acquired_at_ns + held.lease->validity->count() * 1'000'000)
      << "c1's lease is still valid by its own clock";
}

INSTANTIATE_TEST_SUITE_P(Setnx, TimestampLocks,
                         ::testing::Values("setnx-getset", "setnx-getset-safe-unlock",
                                           "setnx-getset-lua"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name = param.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// Story 1: c1 and c2 both GET the same stale deadline; only one GETSET wins.
TEST(SetnxGetset, RacingTakeoversOfAnExpiredDeadlineHaveOneWinner) {
  RedisServer server;
  for (int round = 0; round < 5; ++round) {
    redis_command(server, {"SET", "L", std::to_string(wall_ms() - 1000)});
    Rendezvous both_saw_it_expired(2);
    std::atomic<int> met{0};
    auto meet_at_getset = [&](std::string_view step) {
      if (step == "after-get" && both_saw_it_expired.arrive_and_wait(2000ms)) ++met;
    };
    TestClient c1("setnx-getset", "c1", {server.endpoint()}),
        c2("setnx-getset", "c2", {server.endpoint()});
    c1.on_step = c2.on_step = meet_at_getset;
    AcquireResult r1, r2;
    std::thread t1([&] { r1 = c1.lock().acquire("L", 2000ms, 0ms); });
    std::thread t2([&] { r2 = c2.lock().acquire("L", 2000ms, 0ms); });
    t1.join();
    t2.join();
    ASSERT_EQ(met.load(), 2) << "both clients must have seen the stale deadline";
    EXPECT_EQ(int(r1.outcome == Outcome::Done) + int(r2.outcome == Outcome::Done), 1)
        << "round " << round;
  }
}

// The other classic recipe's deadline safety net: none. A client that crashes
// between SETNX and EXPIRE leaves a key that never expires (story 4).
TEST(SetnxExpire, CrashBetweenSetnxAndExpireLeavesAnImmortalLock) {
  RedisServer server;
  TestClient c1("setnx-expire", "c1", {server.endpoint()}),
      c2("setnx-expire", "c2", {server.endpoint()});
  c1.on_step = [](std::string_view step) {
    if (step == "after-setnx") throw ClientCrashed{std::string(step)};
  };
  EXPECT_THROW(c1.lock().acquire("L", 300ms, 0ms), ClientCrashed);
  EXPECT_EQ(redis_command(server, {"PTTL", "L"}).integer, -1) << "the key exists with no expiry";
  EXPECT_EQ(c2.lock().acquire("L", 300ms, 800ms).outcome, Outcome::Refused)
      << "long after the TTL, the lock is still held";
  EXPECT_EQ(redis_command(server, {"PTTL", "L"}).integer, -1);
}

TEST(SetnxExpire, WithoutACrashTheKeyExpiresInWholeSeconds) {
  RedisServer server;
  TestClient c1("setnx-expire", "c1", {server.endpoint()});
  ASSERT_EQ(c1.lock().acquire("L", 300ms, 0ms).outcome, Outcome::Done);
  long long pttl = redis_command(server, {"PTTL", "L"}).integer;
  EXPECT_GT(pttl, 300) << "EXPIRE rounds 300 ms up to 1 s";
  EXPECT_LE(pttl, 1000);
}

}  // namespace
}  // namespace locklab::testing
