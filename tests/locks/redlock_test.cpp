// redlock on five independent masters: majority, cleanup, and validity.
#include <gtest/gtest.h>

#include <thread>

#include "lock_test_support.h"

namespace locklab::testing {
namespace {

class Redlock : public ::testing::Test {
 protected:
  std::vector<std::unique_ptr<RedisServer>> masters = start_servers(5);
  std::vector<Endpoint> endpoints = endpoints_of(masters);
  // Long enough for a reply delayed by DEBUG SLEEP to arrive.
  ClientOptions patient{
      .timeouts = {std::chrono::milliseconds(300), std::chrono::milliseconds(1500)}};

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

// FAILURE-STORIES 7: a pause while the replies wait in buffers outlasts the
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

TEST(RedlockSetup, NeedsAtLeastThreeMasters) {
  RedisServer a, b;
  EXPECT_THROW(TestClient("redlock", "c1", {a.endpoint(), b.endpoint()}), std::invalid_argument);
}

}  // namespace
}  // namespace locklab::testing
