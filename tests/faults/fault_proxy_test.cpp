// The fault proxy between a hiredis client and a real redis-server: each
// fault is proven by what the client measures.
#include "fault_proxy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
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

// The fastest of a few PING round trips: the added latency shows in the
// minimum, while a busy machine only ever adds to it.
milliseconds ping_round_trip(Connection& redis, int samples = 3) {
  milliseconds fastest = milliseconds::max();
  for (int i = 0; i < samples; ++i) {
    auto start = steady_clock::now();
    EXPECT_EQ(redis.command({"PING"}).str, "PONG");
    fastest = std::min(fastest, elapsed_since(start));
  }
  return fastest;
}

class FaultProxyTest : public ::testing::Test {
 protected:
  // Everything a test starts lives in its body and is gone by now.
  void TearDown() override { leaks.check(); }

  void watch(const RedisServer& server) {
    leaks.pid(server.pid());
    leaks.path(server.dir());
  }

  LeakCheck leaks;
};

TEST_F(FaultProxyTest, ForwardsAndCountsConnectionsAndBytes) {
  RedisServer server;
  watch(server);
  FaultProxy proxy(server.endpoint());
  EXPECT_NE(proxy.endpoint().port, server.port());
  HiredisConnection redis(proxy.endpoint());
  EXPECT_TRUE(redis.command({"SET", "k", "v"}).is_ok());
  EXPECT_EQ(server.connect()->command({"GET", "k"}).str, "v") << "the SET did not reach the server";
  // The client may read the reply a moment before the proxy counts it.
  auto deadline = steady_clock::now() + seconds(1);
  while (proxy.stats().bytes_to_client == 0 && steady_clock::now() < deadline)
    std::this_thread::sleep_for(milliseconds(1));
  ProxyStats stats = proxy.stats();
  EXPECT_EQ(stats.connections_accepted, 1u);
  EXPECT_EQ(stats.open_connections, 1u);
  EXPECT_EQ(stats.bytes_to_server, std::string("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n").size());
  EXPECT_EQ(stats.bytes_to_client, std::string("+OK\r\n").size());
  EXPECT_EQ(stats.bytes_dropped, 0u);
}

TEST_F(FaultProxyTest, BlackholedCommandTimesOutAndTheConnectionRecoversAfterPass) {
  RedisServer server;
  watch(server);
  FaultProxy proxy(server.endpoint());
  const milliseconds timeout{300};
  HiredisConnection redis(proxy.endpoint(), {milliseconds(300), timeout});
  ASSERT_EQ(redis.command({"PING"}).str, "PONG");

  proxy.blackhole();
  auto start = steady_clock::now();
  try {
    redis.command({"SET", "k", "v"});
    FAIL() << "a blackholed command returned";
  } catch (const RedisError& e) {
    EXPECT_TRUE(e.maybe_executed()) << e.what();
  }
  milliseconds took = elapsed_since(start);
  EXPECT_GE(took, timeout - milliseconds(20)) << "failed before the client's own timeout";
  EXPECT_LT(took, timeout + milliseconds(500));
  EXPECT_GT(proxy.stats().bytes_dropped, 0u);
  EXPECT_TRUE(server.connect()->command({"GET", "k"}).is_nil()) << "the SET crossed the partition";
  // A connection opened during the partition is accepted but hangs as well.
  EXPECT_THROW(redis.command({"PING"}), RedisError);

  proxy.pass();
  EXPECT_EQ(redis.command({"PING"}).str, "PONG");
  EXPECT_TRUE(redis.command({"SET", "k", "v"}).is_ok());
  EXPECT_EQ(server.connect()->command({"GET", "k"}).str, "v");
  EXPECT_EQ(proxy.stats().open_connections, 1u) << "the connections that lost bytes were not reset";
}

TEST_F(FaultProxyTest, BlackholeLetsAnIdleConnectionCarryOnAfterPass) {
  RedisServer server;
  watch(server);
  FaultProxy proxy(server.endpoint());
  HiredisConnection redis(proxy.endpoint(), {milliseconds(300), milliseconds(1000)});
  ASSERT_EQ(redis.command({"PING"}).str, "PONG");
  proxy.blackhole();
  proxy.pass();
  EXPECT_EQ(redis.command({"PING"}).str, "PONG");
  EXPECT_EQ(proxy.stats().connections_accepted, 1u) << "nothing was lost, so nothing was closed";
}

TEST_F(FaultProxyTest, DelayAddsTheConfiguredLatencyPerDirection) {
  RedisServer server;
  watch(server);
  FaultProxy proxy(server.endpoint());
  HiredisConnection redis(proxy.endpoint(), {milliseconds(500), milliseconds(3000)});
  const milliseconds slack{150};
  milliseconds baseline = ping_round_trip(redis);
  EXPECT_LT(baseline, milliseconds(50));

  proxy.delay(Direction::ToServer, milliseconds(100));
  milliseconds one_way = ping_round_trip(redis);
  EXPECT_GE(one_way, milliseconds(100));
  EXPECT_LT(one_way, milliseconds(100) + slack);

  proxy.delay(Direction::ToClient, milliseconds(150));
  milliseconds both_ways = ping_round_trip(redis);
  EXPECT_GE(both_ways, milliseconds(250));
  EXPECT_LT(both_ways, milliseconds(250) + slack);

  proxy.delay(Direction::Both, milliseconds(50), milliseconds(100));
  for (int i = 0; i < 5; ++i) {
    milliseconds jittered = ping_round_trip(redis, 1);
    EXPECT_GE(jittered, milliseconds(100));
    EXPECT_LT(jittered, milliseconds(300) + slack);
  }

  proxy.pass();
  EXPECT_LT(ping_round_trip(redis), milliseconds(50)) << "pass() did not remove the delay";
}

TEST_F(FaultProxyTest, JitteredDelayKeepsPipelinedCommandsAndRepliesInOrder) {
  RedisServer server;
  watch(server);
  FaultProxy proxy(server.endpoint(), /*seed=*/7);
  HiredisConnection redis(proxy.endpoint(), {milliseconds(500), milliseconds(3000)});
  proxy.delay(Direction::Both, milliseconds(5), milliseconds(40));
  // Spaced sends become separate chunks with independent random delays; the
  // running sums differ if either the commands or the replies are reordered.
  const int count = 60;
  for (int i = 1; i <= count; ++i) {
    redis.send({"INCRBY", "sum", std::to_string(i)});
    std::this_thread::sleep_for(milliseconds(1));
  }
  for (int i = 1; i <= count; ++i) ASSERT_EQ(redis.receive().integer, i * (i + 1) / 2) << i;
}

TEST_F(FaultProxyTest, RejectFailsCommandsFastAndRefusesNewConnections) {
  RedisServer server;
  watch(server);
  FaultProxy proxy(server.endpoint());
  const ConnectionOptions options{milliseconds(1000), milliseconds(2000)};
  HiredisConnection old_connection(proxy.endpoint(), options);
  ASSERT_EQ(old_connection.command({"PING"}).str, "PONG");

  proxy.reject();
  EXPECT_EQ(proxy.stats().open_connections, 0u);
  auto start = steady_clock::now();
  EXPECT_THROW(old_connection.command({"PING"}), RedisError);
  EXPECT_LT(elapsed_since(start), milliseconds(500)) << "reset should fail fast, not time out";

  HiredisConnection new_connection(proxy.endpoint(), options);
  start = steady_clock::now();
  try {
    new_connection.command({"SET", "k", "v"});
    FAIL() << "a new connection got through a rejecting proxy";
  } catch (const RedisError& e) {
    EXPECT_FALSE(e.maybe_executed()) << e.what();
    EXPECT_NE(std::string(e.what()).find("refused"), std::string::npos) << e.what();
  }
  EXPECT_LT(elapsed_since(start), milliseconds(500));
  EXPECT_TRUE(server.connect()->command({"GET", "k"}).is_nil());

  proxy.pass();
  EXPECT_EQ(new_connection.command({"PING"}).str, "PONG") << "same port listens again";
  EXPECT_EQ(old_connection.command({"PING"}).str, "PONG");
}

TEST_F(FaultProxyTest, CutClosesOpenConnectionsOnceAndKeepsAccepting) {
  RedisServer server;
  watch(server);
  FaultProxy proxy(server.endpoint());
  HiredisConnection redis(proxy.endpoint(), {milliseconds(500), milliseconds(2000)});
  ASSERT_EQ(redis.command({"PING"}).str, "PONG");

  proxy.cut();
  EXPECT_EQ(proxy.stats().open_connections, 0u) << "closed by the time cut() returns";
  // The client sees the close before its next command and reconnects.
  EXPECT_EQ(redis.command({"PING"}).str, "PONG") << "the reconnect after a cut must succeed";
  EXPECT_EQ(proxy.stats().connections_accepted, 2u);
  EXPECT_EQ(proxy.stats().open_connections, 1u);
}

TEST_F(FaultProxyTest, RetargetSendsNewConnectionsElsewhereAndKeepsOpenOnes) {
  RedisServer first, second;
  watch(first);
  watch(second);
  ASSERT_TRUE(first.connect()->command({"SET", "who", "first"}).is_ok());
  ASSERT_TRUE(second.connect()->command({"SET", "who", "second"}).is_ok());
  FaultProxy proxy(first.endpoint());
  HiredisConnection open(proxy.endpoint(), {milliseconds(500), milliseconds(2000)});
  ASSERT_EQ(open.command({"GET", "who"}).str, "first");

  proxy.retarget(second.endpoint());
  EXPECT_EQ(proxy.upstream(), second.endpoint());
  EXPECT_EQ(open.command({"GET", "who"}).str, "first") << "an open connection keeps its server";
  HiredisConnection fresh(proxy.endpoint(), {milliseconds(500), milliseconds(2000)});
  EXPECT_EQ(fresh.command({"GET", "who"}).str, "second");
  proxy.cut();
  EXPECT_EQ(open.command({"GET", "who"}).str, "second") << "moved by the cut";
  EXPECT_THROW(proxy.retarget(Endpoint{"localhost", 1}), std::invalid_argument);
}

TEST_F(FaultProxyTest, ClientsOfADeadUpstreamAreResetNotHung) {
  auto server = std::make_unique<RedisServer>();
  watch(*server);
  FaultProxy proxy(server->endpoint());
  HiredisConnection redis(proxy.endpoint(), {milliseconds(500), milliseconds(2000)});
  ASSERT_EQ(redis.command({"PING"}).str, "PONG");
  server->kill();
  auto start = steady_clock::now();
  EXPECT_THROW(redis.command({"PING"}), RedisError) << "open connection";
  EXPECT_THROW(redis.command({"PING"}), RedisError) << "new connection";
  EXPECT_LT(elapsed_since(start), milliseconds(1000));
}

TEST_F(FaultProxyTest, DestructionClosesConnectionsAndThePort) {
  RedisServer server;
  watch(server);
  Endpoint proxy_endpoint;
  std::unique_ptr<HiredisConnection> through;
  {
    FaultProxy proxy(server.endpoint());
    proxy_endpoint = proxy.endpoint();
    through = std::make_unique<HiredisConnection>(
        proxy_endpoint, ConnectionOptions{milliseconds(300), milliseconds(1000)});
    proxy.delay(Direction::Both, milliseconds(10));
    ASSERT_EQ(through->command({"PING"}).str, "PONG");
    EXPECT_EQ(testing::threads_named("locklab-proxy"), 1);
  }
  auto start = steady_clock::now();
  EXPECT_THROW(through->command({"PING"}), RedisError);
  EXPECT_LT(elapsed_since(start), milliseconds(500))
      << "the old connection was closed, not left hanging";
  try {
    through->command({"PING"});
    FAIL() << "the proxy port still accepts";
  } catch (const RedisError& e) {
    EXPECT_FALSE(e.maybe_executed()) << e.what();
  }
}

}  // namespace
}  // namespace locklab
