// The pool's own rules, with processes that never speak: which idle adapter
// a client may take, and that the pool stops what it cannot keep.
#include "adapter_pool.h"

#include <gtest/gtest.h>
#include <signal.h>

#include "adapter_test_support.h"

namespace locklab {
namespace {

// An "adapter" that only waits for its stdin to close.
AdapterConfig waiting(std::map<std::string, std::string> env = {}) {
  return {.command = "/bin/sh -c 'exec cat' waiting", .env = std::move(env)};
}

bool alive(pid_t pid) {
  return ::kill(pid, 0) == 0;
}

TEST(AdapterPool, OnlyTheSameCommandDirectoryAndEnvironmentTakeAnIdleAdapter) {
  AdapterPool pool;
  const Endpoint nowhere{"127.0.0.1", 1};
  pool.keep(waiting({{"TZ", "UTC"}}), pool.start(waiting({{"TZ", "UTC"}}), {nowhere}));
  EXPECT_EQ(pool.take(waiting()), nullptr);
  EXPECT_EQ(pool.take(waiting({{"TZ", "Europe/Paris"}})), nullptr);
  AdapterConfig elsewhere = waiting({{"TZ", "UTC"}});
  elsewhere.cwd = "/tmp";
  EXPECT_EQ(pool.take(elsewhere), nullptr);
  EXPECT_NE(pool.take(waiting({{"TZ", "UTC"}})), nullptr);
  EXPECT_EQ(pool.take(waiting({{"TZ", "UTC"}})), nullptr);  // taken once
  EXPECT_EQ(pool.counts().started, 1);
  EXPECT_EQ(pool.counts().reused, 1);
}

TEST(AdapterPool, BeyondItsIdleLimitTheLongestIdleIsStoppedAndTheRestAtItsEnd) {
  std::vector<pid_t> pids;
  {
    AdapterPool pool;
    for (size_t i = 0; i <= AdapterPool::kMaxIdle; ++i) {
      auto adapter = pool.start(waiting(), {{"127.0.0.1", 1}});
      pids.push_back(adapter->pid());
      pool.keep(waiting(), std::move(adapter));
    }
    EXPECT_FALSE(alive(pids.front()));
    for (size_t i = 1; i < pids.size(); ++i) EXPECT_TRUE(alive(pids[i])) << i;
  }
  for (pid_t pid : pids) EXPECT_FALSE(alive(pid));
}

}  // namespace
}  // namespace locklab
