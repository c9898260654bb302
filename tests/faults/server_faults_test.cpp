// Faults done to a real server: a stop-the-world pause (SIGSTOP), DEBUG
// SLEEP, and crashes with and without persistence.
#include "server_faults.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "elapsed_since.h"
#include "hiredis_connection.h"
#include "leak_check.h"
#include "redis_server.h"

namespace locklab {
namespace {

using namespace std::chrono;
using testing::elapsed_since;
using testing::LeakCheck;

class ServerFaultsTest : public ::testing::Test {
 protected:
  void TearDown() override { leaks.check(); }
  void watch(const RedisServer& server) {
    leaks.pid(server.pid());
    leaks.path(server.dir());
  }
  LeakCheck leaks;
};

TEST_F(ServerFaultsTest, StoppedServerMakesClientsTimeOutUntilResumed) {
  RedisServer server;
  watch(server);
  const milliseconds timeout{300};
  HiredisConnection redis(server.endpoint(), {milliseconds(300), timeout});
  ASSERT_EQ(redis.command({"PING"}).str, "PONG");

  server.pause();
  auto start = steady_clock::now();
  try {
    redis.command({"SET", "lease", "c1", "NX", "PX", "1000"});
    FAIL() << "a stopped server answered";
  } catch (const RedisError& e) {
    EXPECT_TRUE(e.maybe_executed()) << "the request was sent: its fate is unknown";
  }
  EXPECT_GE(elapsed_since(start), timeout - milliseconds(20));
  EXPECT_LT(elapsed_since(start), timeout + milliseconds(500));

  server.resume();
  EXPECT_EQ(redis.command({"PING"}).str, "PONG");
  // The kernel buffered the request while the server was stopped: it ran on resume.
  EXPECT_EQ(redis.command({"GET", "lease"}).str, "c1");
}

TEST_F(ServerFaultsTest, DebugSleepBlocksEveryClientForItsDuration) {
  RedisServer server;
  watch(server);
  HiredisConnection patient(server.endpoint(), {milliseconds(300), milliseconds(3000)});
  HiredisConnection hasty(server.endpoint(), {milliseconds(300), milliseconds(200)});
  ASSERT_EQ(patient.command({"PING"}).str, "PONG");
  ASSERT_EQ(hasty.command({"PING"}).str, "PONG");

  const milliseconds sleep{800};
  auto start = steady_clock::now();
  auto sleeper = std::async(std::launch::async, [&] { debug_sleep(server.endpoint(), sleep); });
  std::this_thread::sleep_for(milliseconds(150));  // let DEBUG SLEEP reach the server first
  EXPECT_THROW(hasty.command({"PING"}), RedisError) << "a 200 ms client must time out";
  EXPECT_EQ(patient.command({"PING"}).str, "PONG");
  EXPECT_GE(elapsed_since(start), sleep - milliseconds(20)) << "PING answered during the sleep";
  sleeper.get();
  EXPECT_GE(elapsed_since(start), sleep - milliseconds(20));
  EXPECT_LT(elapsed_since(start), sleep + milliseconds(1000));
}

TEST_F(ServerFaultsTest, DebugSleepOnAServerWithoutDebugCommandsIsAClearError) {
  RedisServerOptions options;
  options.debug_commands = false;
  RedisServer server(options);
  watch(server);
  try {
    debug_sleep(server.endpoint(), milliseconds(10));
    FAIL() << "DEBUG SLEEP accepted without --enable-debug-command";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(server.endpoint().str()), std::string::npos) << e.what();
  }
}

TEST_F(ServerFaultsTest, CrashWithoutPersistenceLosesTheLockKey) {
  RedisServer server;
  watch(server);
  int port = server.port();
  ASSERT_TRUE(server.connect()->command({"SET", "lease", "c1", "NX", "PX", "60000"}).is_ok());
  ASSERT_TRUE(server.connect()->command({"SET", "lease", "c2", "NX", "PX", "60000"}).is_nil());

  pid_t crashed = server.pid();
  server.kill();
  server.restart();
  watch(server);
  EXPECT_FALSE(testing::pid_alive(crashed));
  EXPECT_NE(server.pid(), crashed);
  EXPECT_EQ(server.port(), port);
  EXPECT_TRUE(server.connect()->command({"SET", "lease", "c2", "NX", "PX", "60000"}).is_ok())
      << "the restarted empty node must grant the lock again";
}

TEST_F(ServerFaultsTest, CrashWithAppendFsyncAlwaysKeepsTheLockKey) {
  RedisServerOptions options;
  options.persistence = true;
  RedisServer server(options);
  watch(server);
  ASSERT_TRUE(server.connect()->command({"SET", "lease", "c1", "NX", "PX", "60000"}).is_ok());

  server.kill();
  server.restart();
  watch(server);
  // RedisServer answers before the AOF is replayed; commands meanwhile fail with LOADING.
  wait_until_loaded(server.endpoint(), seconds(5));
  auto redis = server.connect();
  EXPECT_TRUE(redis->command({"SET", "lease", "c2", "NX", "PX", "60000"}).is_nil())
      << "the lock key did not survive the crash";
  EXPECT_EQ(redis->command({"GET", "lease"}).str, "c1");
  EXPECT_GT(redis->command({"PTTL", "lease"}).integer, 0) << "the TTL must survive too";
}

}  // namespace
}  // namespace locklab
