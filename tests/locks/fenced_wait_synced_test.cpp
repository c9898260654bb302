// fenced (tokens) and wait-synced (replica acknowledgement).
#include <gtest/gtest.h>

#include <mutex>
#include <thread>

#include "lock_test_support.h"

namespace locklab::testing {
namespace {

TEST(Fenced, TokensStrictlyIncreaseAcrossHolders) {
  RedisServer server;
  constexpr int kClients = 4, kIterations = 10;
  std::vector<std::unique_ptr<TestClient>> clients;
  for (int i = 0; i < kClients; ++i)
    clients.push_back(std::make_unique<TestClient>("fenced", "c" + std::to_string(i),
                                                   std::vector{server.endpoint()}));
  std::mutex mu;
  std::vector<int64_t> tokens_in_hold_order;  // appended inside the critical section
  std::vector<std::thread> threads;
  for (auto& client : clients) {
    threads.emplace_back([&, lock = &client->lock()] {
      for (int i = 0; i < kIterations; ++i) {
        AcquireResult acquired = lock->acquire("L", 5000ms, 10'000ms);
        if (acquired.outcome != Outcome::Done || !acquired.lease->token) continue;
        {
          std::lock_guard guard(mu);
          tokens_in_hold_order.push_back(*acquired.lease->token);
        }
        std::this_thread::sleep_for(1ms);
        lock->release("L", *acquired.lease);
      }
    });
  }
  for (auto& thread : threads) thread.join();

  ASSERT_EQ(tokens_in_hold_order.size(), size_t(kClients * kIterations));
  for (size_t i = 1; i < tokens_in_hold_order.size(); ++i)
    EXPECT_LT(tokens_in_hold_order[i - 1], tokens_in_hold_order[i])
        << "holds " << i - 1 << " and " << i;
  EXPECT_EQ(redis_command(server, {"GET", "L:fence"}).str, std::to_string(kClients * kIterations));
}

class WaitSynced : public ::testing::Test {
 protected:
  RedisServer master;
  RedisServer replica{RedisServerOptions{.replica_of = master.endpoint(), .name = "replica"}};
  void SetUp() override { wait_for_replica(master); }
};

TEST_F(WaitSynced, AcquiresWhenTheReplicaIsInSync) {
  TestClient c1("wait-synced", "c1", {master.endpoint()});
  AcquireResult acquired = c1.lock().acquire("L", 5000ms, 2000ms);
  ASSERT_EQ(acquired.outcome, Outcome::Done) << acquired.error;
  EXPECT_EQ(redis_command(replica, {"GET", "L"}).str, acquired.lease->owner)
      << "acknowledged means the replica has the key";
}

TEST_F(WaitSynced, RefusesAndLeavesNoKeyWhenTheReplicaIsUnreachable) {
  TestClient c1("wait-synced", "c1", {master.endpoint()});
  replica.pause();
  AcquireResult acquired = c1.lock().acquire("L", 5000ms, 300ms);
  replica.resume();
  EXPECT_EQ(acquired.outcome, Outcome::Refused);
  EXPECT_NE(acquired.error.find("0 of 1 replicas"), std::string::npos) << acquired.error;
  EXPECT_EQ(redis_command(master, {"EXISTS", "L"}).integer, 0)
      << "the unacknowledged key was deleted";
}

TEST_F(WaitSynced, AsksForAsManyReplicasAsConfigured) {
  TestClient c1("wait-synced", "c1", {master.endpoint()},
                ClientOptions{.params = {{"replicas", 2}}});
  AcquireResult acquired = c1.lock().acquire("L", 5000ms, 0ms);
  EXPECT_EQ(acquired.outcome, Outcome::Refused);
  EXPECT_NE(acquired.error.find(" of 2 replicas"), std::string::npos) << acquired.error;
  EXPECT_EQ(redis_command(master, {"EXISTS", "L"}).integer, 0);
}

}  // namespace
}  // namespace locklab::testing
