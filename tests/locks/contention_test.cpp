// Negative control for every registered algorithm: with no faults, contending
// clients never hold the lock at the same time and lose no update.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "lock_test_support.h"

namespace locklab::testing {
namespace {

constexpr int kClients = 8;
constexpr int kIterations = 8;

const AlgorithmInfo& info_of(const std::string& id) {
  for (const auto& info : algorithms())
    if (info.id == id) return info;
  throw std::invalid_argument("no algorithm " + id);
}

class EveryAlgorithm : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryAlgorithm, ContendingClientsNeverOverlapAndLoseNoUpdate) {
  const AlgorithmInfo& info = info_of(GetParam());
  // Redlock on five masters; wait-synced on a master with one replica.
  auto servers = start_servers(info.multi_node ? 5 : 1);
  std::unique_ptr<RedisServer> replica;
  if (info.needs_replica) {
    replica = std::make_unique<RedisServer>(
        RedisServerOptions{.replica_of = servers[0]->endpoint(), .name = "replica"});
    wait_for_replica(*servers[0]);
  }
  std::vector<std::unique_ptr<TestClient>> clients;
  for (int i = 0; i < kClients; ++i)
    clients.push_back(
        std::make_unique<TestClient>(info.id, "c" + std::to_string(i), endpoints_of(servers)));

  // The protected resource: a read-modify-write that loses updates unless
  // the critical sections are mutually exclusive.
  std::atomic<int> counter{0};
  std::atomic<int> completed{0};
  struct Hold {
    size_t client;
    int64_t invoked_ns, begin_ns, end_ns;  // acquire called, returned; release called
  };
  std::mutex mu;
  std::vector<Hold> holds;
  std::vector<std::string> failures;

  std::vector<std::thread> threads;
  for (auto& client : clients) {
    threads.emplace_back([&, id = threads.size(), lock = &client->lock()] {
      for (int i = 0; i < kIterations; ++i) {
        const int64_t invoked = monotonic_ns();
        AcquireResult acquired = lock->acquire("L", 5000ms, 15000ms);
        if (acquired.outcome != Outcome::Done) {
          std::lock_guard guard(mu);
          failures.push_back("acquire: " + acquired.error);
          continue;
        }
        const int64_t begin = monotonic_ns();
        const int read = counter.load();
        std::this_thread::sleep_for(1ms);
        counter.store(read + 1);
        const int64_t end = monotonic_ns();
        ++completed;
        {
          std::lock_guard guard(mu);
          holds.push_back({id, invoked, begin, end});
        }
        ChangeResult released = lock->release("L", *acquired.lease);
        if (released.outcome != Outcome::Done) {
          std::lock_guard guard(mu);
          failures.push_back("release: " + released.error);
        }
        std::this_thread::sleep_for(5ms);  // work outside the lock: lets the others in
      }
    });
  }
  for (auto& thread : threads) thread.join();

  EXPECT_TRUE(failures.empty()) << failures.size() << " failures, first: " << failures.front();
  EXPECT_EQ(completed.load(), kClients * kIterations);
  EXPECT_EQ(counter.load(), completed.load()) << "lost updates: critical sections overlapped";
  std::sort(holds.begin(), holds.end(),
            [](const Hold& a, const Hold& b) { return a.begin_ns < b.begin_ns; });
  size_t overlaps = 0, first = 0;
  for (size_t i = 1; i < holds.size(); ++i) {
    if (holds[i].begin_ns >= holds[i - 1].end_ns) continue;
    if (overlaps++ == 0) first = i;
  }
  EXPECT_EQ(overlaps, 0u) << "holds overlap, first: clients " << holds[first - 1].client << " and "
                          << holds[first].client;
  // Contention: some acquire was in progress while another client's hold began.
  int waited = 0;
  for (const Hold& mine : holds)
    waited += std::any_of(holds.begin(), holds.end(), [&](const Hold& other) {
      return other.client != mine.client && mine.invoked_ns < other.begin_ns &&
             other.begin_ns < mine.begin_ns;
    });
  EXPECT_GE(waited, kClients) << "acquires rarely had to wait: the test did not contend";
}

std::vector<std::string> algorithm_ids() {
  std::vector<std::string> ids;
  for (const auto& info : algorithms()) ids.push_back(info.id);
  return ids;
}

INSTANTIATE_TEST_SUITE_P(Locks, EveryAlgorithm, ::testing::ValuesIn(algorithm_ids()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name = param.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace locklab::testing
