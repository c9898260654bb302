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

TEST(AdapterPool, BeyondItsIdleLimitsTheLongestIdleIsStoppedAndTheRestAtItsEnd) {
  std::vector<pid_t> same, others;
  {
    AdapterPool pool(/*max_idle_per_command=*/2, /*max_idle=*/4);
    // Three of one command: the first is stopped when the third is kept.
    for (int i = 0; i < 3; ++i) {
      auto adapter = pool.start(waiting(), {{"127.0.0.1", 1}});
      same.push_back(adapter->pid());
      pool.keep(waiting(), std::move(adapter));
    }
    EXPECT_FALSE(alive(same[0]));
    EXPECT_TRUE(alive(same[1]));
    EXPECT_TRUE(alive(same[2]));
    // Three of other commands: at four in all, the longest idle of any goes.
    for (int i = 0; i < 3; ++i) {
      const AdapterConfig other = waiting({{"TZ", "zone-" + std::to_string(i)}});
      auto adapter = pool.start(other, {{"127.0.0.1", 1}});
      others.push_back(adapter->pid());
      pool.keep(other, std::move(adapter));
    }
    EXPECT_FALSE(alive(same[1]));
    EXPECT_TRUE(alive(same[2]));
    for (pid_t pid : others) EXPECT_TRUE(alive(pid));
    EXPECT_EQ(pool.counts().started, 6);
  }
  for (pid_t pid : same) EXPECT_FALSE(alive(pid));
  for (pid_t pid : others) EXPECT_FALSE(alive(pid));
}

TEST(AdapterPool, ForgetStopsEveryIdleAdapterOfItsCommandAndNoOther) {
  AdapterPool pool;
  const AdapterConfig other{.command = "/bin/sh -c 'exec cat' other"};
  std::vector<pid_t> forgotten;
  for (const auto& env : {std::map<std::string, std::string>{}, {{"TZ", "UTC"}}}) {
    auto adapter = pool.start(waiting(env), {{"127.0.0.1", 1}});
    forgotten.push_back(adapter->pid());
    pool.keep(waiting(env), std::move(adapter));
  }
  auto kept = pool.start(other, {{"127.0.0.1", 1}});
  const pid_t other_pid = kept->pid();
  pool.keep(other, std::move(kept));
  pool.forget(waiting().command);
  for (pid_t pid : forgotten) EXPECT_FALSE(alive(pid)) << "in any directory or environment";
  EXPECT_EQ(pool.take(waiting()), nullptr);
  EXPECT_TRUE(alive(other_pid));
  EXPECT_NE(pool.take(other), nullptr);
}

TEST(AdapterPool, AnAdapterThatCannotStartIsNotCountedAsStarted) {
  AdapterPool pool;
  EXPECT_THROW(pool.start({.command = ""}, {{"127.0.0.1", 1}}), AdapterError);
  EXPECT_EQ(pool.counts().started, 0);
}

}  // namespace
}  // namespace locklab
