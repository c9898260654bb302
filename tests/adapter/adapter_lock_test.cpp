// The example adapter (redis-py's Lock) driven through AdapterLock against a
// real redis-server: mutual exclusion under contention, ownership, unknown
// outcomes, and stop-the-world pauses of the adapter process.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "adapter_test_support.h"
#include "contention.h"
#include "redis_server.h"

namespace locklab::testing {
namespace {

Reply redis_command(const RedisServer& server, const std::vector<std::string>& argv) {
  return server.connect()->command(argv);
}

// Polls until process `pid` is in (or, with `in` false, out of) state `state`.
bool wait_for_state(pid_t pid, char state, bool in, std::chrono::milliseconds limit = 3s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if ((process_state(pid) == state) == in) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

TEST(ExampleAdapter, ProbeSaysItsName) {
  AdapterInfo info = probe_adapter(example_adapter());
  EXPECT_EQ(info.name, "redis-py-lock");
  EXPECT_FALSE(info.reentrant);
  EXPECT_FALSE(info.fencing);
}

TEST(ExampleAdapter, ContendingAdaptersNeverOverlapAndLoseNoUpdate) {
  constexpr int kClients = 4;
  constexpr int kIterations = 6;
  RedisServer server;
  std::vector<std::unique_ptr<AdapterClient>> clients;
  for (int i = 0; i < kClients; ++i)
    clients.push_back(std::make_unique<AdapterClient>(example_adapter(), "c" + std::to_string(i),
                                                      std::vector{server.endpoint()}));

  std::vector<Lock*> locks;
  for (auto& client : clients) locks.push_back(client->lock.get());
  const Contention run = contend(locks, kIterations, 5ms, 0ms);
  expect_exclusive(run);
  EXPECT_GT(acquires_that_waited(run), 0)
      << "no acquire ever had to wait: the test did not contend";
  EXPECT_EQ(redis_command(server, {"EXISTS", "L"}).integer, 0) << "the last release left the key";
}

TEST(ExampleAdapter, AStaleOwnerCannotReleaseOrExtend) {
  RedisServer server;
  AdapterClient a(example_adapter(), "a", {server.endpoint()});
  AdapterClient b(example_adapter(), "b", {server.endpoint()});

  AcquireResult first = a.lock->acquire("L", 300ms, 0ms);
  ASSERT_EQ(first.outcome, Outcome::Done) << first.error;
  EXPECT_EQ(redis_command(server, {"GET", "L"}).str, first.lease->owner);
  EXPECT_EQ(first.lease->validity, 300ms);
  AcquireResult blocked = b.lock->acquire("L", 5000ms, 0ms);
  EXPECT_EQ(blocked.outcome, Outcome::Refused);
  EXPECT_FALSE(blocked.error.empty());

  // a's lease expires; b takes the lock; a's release and extend must not touch it.
  AcquireResult second = b.lock->acquire("L", 10000ms, 3000ms);
  ASSERT_EQ(second.outcome, Outcome::Done) << second.error;
  ASSERT_NE(second.lease->owner, first.lease->owner);
  ChangeResult stale_release = a.lock->release("L", *first.lease);
  EXPECT_EQ(stale_release.outcome, Outcome::Refused);
  EXPECT_EQ(stale_release.error, "not held");
  Lease stale = *first.lease;
  EXPECT_EQ(a.lock->extend("L", stale, 60000ms).outcome, Outcome::Refused);
  EXPECT_EQ(redis_command(server, {"GET", "L"}).str, second.lease->owner);
  EXPECT_LE(redis_command(server, {"PTTL", "L"}).integer, 10000);

  // The holder extends and releases.
  Lease lease = *second.lease;
  EXPECT_EQ(b.lock->extend("L", lease, 60000ms).outcome, Outcome::Done);
  EXPECT_GT(redis_command(server, {"PTTL", "L"}).integer, 10000);
  EXPECT_EQ(lease.validity, 60000ms);
  EXPECT_EQ(b.lock->release("L", lease).outcome, Outcome::Done);
  EXPECT_EQ(redis_command(server, {"EXISTS", "L"}).integer, 0);
}

TEST(ExampleAdapter, AServerThatDoesNotAnswerGivesUnknown) {
  RedisServer server;
  AdapterClient client(example_adapter(), "c1", {server.endpoint()});
  server.pause();  // SIGSTOP: connections are accepted by the kernel, never answered
  const auto start = std::chrono::steady_clock::now();
  AcquireResult acquired = client.lock->acquire("L", 5000ms, 0ms);
  const auto took = std::chrono::steady_clock::now() - start;
  server.resume();
  EXPECT_EQ(acquired.outcome, Outcome::Unknown) << acquired.error;
  EXPECT_NE(acquired.error.find("imeout"), std::string::npos) << acquired.error;
  EXPECT_LT(took, 5s) << "the adapter's own socket timeout should answer, not the lab's";
}

TEST(AdapterPause, GateStopsAndResumesTheAdapterProcess) {
  RedisServer server;
  AdapterClient client(example_adapter(), "c1", {server.endpoint()});
  const pid_t pid = client.lock->pid();
  ASSERT_TRUE(wait_for_state(pid, 'T', false));
  client.gate.close();
  EXPECT_TRUE(wait_for_state(pid, 'T', true)) << "state " << process_state(pid);
  client.gate.open();
  EXPECT_TRUE(wait_for_state(pid, 'T', false)) << "state " << process_state(pid);
  // Still usable after the pause.
  AcquireResult acquired = client.lock->acquire("L", 1000ms, 0ms);
  EXPECT_EQ(acquired.outcome, Outcome::Done) << acquired.error;
}

TEST(AdapterPause, PausedTimeDoesNotCountAgainstTheReplyTimeout) {
  RedisServer server;
  AdapterConfig config = example_adapter();
  config.reply_timeout = 300ms;
  AdapterClient holder(config, "holder", {server.endpoint()});
  AdapterClient waiter(config, "waiter", {server.endpoint()});
  ASSERT_EQ(holder.lock->acquire("L", 20000ms, 0ms).outcome, Outcome::Done);

  // The waiter's acquire is in flight (its adapter retrying) when its client
  // is paused for longer than wait_ms + reply_timeout.
  std::optional<AcquireResult> result;
  std::string error;
  std::thread worker([&] {
    try {
      result = waiter.lock->acquire("L", 5000ms, 1000ms);
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  std::this_thread::sleep_for(300ms);
  waiter.gate.close();
  EXPECT_TRUE(wait_for_state(waiter.lock->pid(), 'T', true));
  std::this_thread::sleep_for(2000ms);
  waiter.gate.open();
  worker.join();
  EXPECT_EQ(error, "");
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->outcome, Outcome::Refused) << result->error;  // the holder still holds it
}

}  // namespace
}  // namespace locklab::testing
