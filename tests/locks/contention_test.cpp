// Negative control for every registered algorithm: with no faults, contending
// clients never hold the lock at the same time and lose no update.
#include "contention.h"

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

  std::vector<Lock*> locks;
  for (auto& client : clients) locks.push_back(&client->lock());
  const Contention run = contend(locks, kIterations, 1ms, 5ms);
  expect_exclusive(run);
  EXPECT_GE(acquires_that_waited(run), kClients)
      << "acquires rarely had to wait: the test did not contend";
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
