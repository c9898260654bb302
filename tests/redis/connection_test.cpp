#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "both_drivers.h"
#include "hiredis_connection.h"
#include "redis_server.h"

namespace locklab {
namespace {

using namespace std::chrono;

// Every test of a connection runs on a thread and as a fiber: the waits
// differ (poll(2) there, the fibers' thread's epoll here), the behaviour may not.

TEST(Connection, CommandAgainstAPausedServerTimesOutInTimeAndRecoversAfterResume) {
  RedisServer server;
  on_a_thread_and_on_a_fiber([&] {
    HiredisConnection redis(server.endpoint(), {milliseconds(300), milliseconds(200)});
    ASSERT_EQ(redis.command({"PING"}).str, "PONG");
    server.pause();
    auto start = steady_clock::now();
    try {
      redis.command({"SET", "k", "v"});
      ADD_FAILURE() << "a command to a stopped server returned";
    } catch (const RedisError& e) {
      EXPECT_TRUE(e.maybe_executed());
      std::string what = e.what();
      EXPECT_NE(what.find(server.endpoint().str()), std::string::npos) << what;
      EXPECT_NE(what.find("SET"), std::string::npos) << what;
    }
    auto took = duration_cast<milliseconds>(steady_clock::now() - start);
    EXPECT_LT(took.count(), 200 + 300) << "timeout + slack";
    server.resume();
    EXPECT_EQ(redis.command({"PING"}).str, "PONG") << "did not reconnect after the timeout";
  });
}

TEST(Connection, ReceiveWithinWaitsItsOwnTimeoutNotTheCommandTimeout) {
  RedisServer server;
  on_a_thread_and_on_a_fiber([&] {
    HiredisConnection redis(server.endpoint(), {milliseconds(300), milliseconds(2000)});
    ASSERT_EQ(redis.command({"PING"}).str, "PONG");
    server.pause();
    redis.send({"SET", "k", "v"});
    auto start = steady_clock::now();
    try {
      redis.receive_within(milliseconds(100));
      ADD_FAILURE() << "a reply came from a stopped server";
    } catch (const RedisError& e) {
      EXPECT_TRUE(e.maybe_executed()) << e.what();
      EXPECT_NE(std::string(e.what()).find("timed out after 100 ms"), std::string::npos)
          << e.what();
    }
    auto took = duration_cast<milliseconds>(steady_clock::now() - start);
    EXPECT_GE(took.count(), 100);
    EXPECT_LT(took.count(), 100 + 300) << "timeout + slack, far below the 2 s command timeout";
    server.resume();
    EXPECT_EQ(redis.command({"PING"}).str, "PONG") << "did not reconnect after the timeout";
  });
}

TEST(Connection, ReceiveWithinZeroTakesOnlyRepliesThatAlreadyArrived) {
  RedisServer server;
  on_a_thread_and_on_a_fiber([&] {
    HiredisConnection redis(server.endpoint(), {milliseconds(300), milliseconds(2000)});
    redis.send({"PING"});
    redis.send({"ECHO", "second"});
    // Both replies are in by now. The thread's own sleep: a fiber's thread
    // has not even heard of them, and they must be taken all the same.
    std::this_thread::sleep_for(milliseconds(100));
    EXPECT_EQ(redis.receive_within(milliseconds(0)).str, "PONG");
    EXPECT_EQ(redis.receive_within(milliseconds(0)).str, "second");

    server.pause();
    redis.send({"PING"});
    auto start = steady_clock::now();
    EXPECT_THROW(redis.receive_within(milliseconds(0)), RedisError);
    EXPECT_LT(duration_cast<milliseconds>(steady_clock::now() - start).count(), 100)
        << "nothing had arrived: it must not wait";
    server.resume();
  });
}

TEST(Connection, ACommandAfterTheServerClosedAnIdleConnectionGoesOnANewOne) {
  RedisServer server;
  auto admin = server.connect();
  on_a_thread_and_on_a_fiber([&] {
    admin->command({"DEL", "counter"});
    HiredisConnection redis(server.endpoint(), {milliseconds(300), milliseconds(500)});
    const long long id = redis.command({"CLIENT", "ID"}).integer;
    ASSERT_EQ(admin->command({"CLIENT", "KILL", "ID", std::to_string(id)}).integer, 1);
    // The server's FIN reaches our socket at once on loopback; wait for it all the same.
    for (int i = 0;
         i < 100 && admin->command({"CLIENT", "LIST", "ID", std::to_string(id)}).str != ""; ++i)
      std::this_thread::sleep_for(milliseconds(5));
    std::this_thread::sleep_for(milliseconds(20));
    EXPECT_EQ(redis.command({"INCR", "counter"}).integer, 1) << "not lost, and sent once";
    EXPECT_NE(redis.command({"CLIENT", "ID"}).integer, id) << "a new connection";
  });
}

TEST(Connection, RefusedConnectionIsANeverExecutedErrorNamingTheEndpoint) {
  on_a_thread_and_on_a_fiber([] {
    Endpoint nowhere{"127.0.0.1", free_loopback_port()};
    HiredisConnection redis(nowhere, {milliseconds(200), milliseconds(200)});
    try {
      redis.command({"PING"});
      ADD_FAILURE() << "a command reached a server where there is none";
    } catch (const RedisError& e) {
      EXPECT_FALSE(e.maybe_executed());
      EXPECT_NE(std::string(e.what()).find(nowhere.str()), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("cannot connect"), std::string::npos) << e.what();
    }
  });
}

TEST(Connection, AuthenticatesEveryNewConnectionAndSaysWhenRefused) {
  RedisServerOptions options;
  options.extra_args = {"--requirepass", "secret"};
  options.password = "secret";
  RedisServer server(options);
  on_a_thread_and_on_a_fiber([&] {
    HiredisConnection with(server.endpoint(), {.password = "secret"});
    EXPECT_EQ(with.command({"PING"}).str, "PONG");
    HiredisConnection without(server.endpoint());
    EXPECT_TRUE(without.command({"PING"}).is_error()) << "NOAUTH";
    HiredisConnection wrong(server.endpoint(), {.password = "guess"});
    try {
      wrong.command({"PING"});
      ADD_FAILURE() << "a wrong password was taken";
    } catch (const RedisError& e) {
      EXPECT_FALSE(e.maybe_executed()) << "the PING was never sent";
      EXPECT_NE(std::string(e.what()).find("AUTH refused"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("guess"), std::string::npos) << e.what();
    }
    // An AUTH that gets no answer: the message names it, not the password.
    server.pause();
    HiredisConnection stalled(server.endpoint(),
                              {.command_timeout = milliseconds(100), .password = "secret"});
    try {
      stalled.command({"PING"});
      ADD_FAILURE() << "a stopped server answered";
    } catch (const RedisError& e) {
      EXPECT_FALSE(e.maybe_executed()) << "the PING was never sent";
      EXPECT_NE(std::string(e.what()).find("AUTH"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("secret"), std::string::npos) << e.what();
    }
    server.resume();
  });
}

TEST(Connection, ErrorRepliesAreRepliesNotExceptions) {
  RedisServer server;
  on_a_thread_and_on_a_fiber([&] {
    auto redis = server.connect();
    Reply reply = redis->command({"NOSUCHCOMMAND"});
    EXPECT_TRUE(reply.is_error());
    EXPECT_EQ(redis->command({"PING"}).str, "PONG");
  });
}

TEST(Connection, PipelinedRepliesComeBackInOrder) {
  RedisServer server;
  on_a_thread_and_on_a_fiber([&] {
    auto redis = server.connect();
    redis->send({"SET", "a", "1"});
    redis->send({"INCR", "a"});
    redis->send({"GET", "a"});
    EXPECT_TRUE(redis->receive().is_ok());
    EXPECT_EQ(redis->receive().integer, 2);
    EXPECT_EQ(redis->receive().str, "2");
  });
}

TEST(Connection, AReplyLargerThanOneReadIsWhole) {
  RedisServer server;
  on_a_thread_and_on_a_fiber([&] {
    auto redis = server.connect();
    const std::string big(200 * 1024, 'x');  // many reads of the 16 KiB buffer
    EXPECT_TRUE(redis->command({"SET", "big", big}).is_ok());
    EXPECT_EQ(redis->command({"GET", "big"}).str, big);
    EXPECT_EQ(redis->command({"PING"}).str, "PONG") << "nothing of it left behind";
  });
}

TEST(Endpoint, ParsesAndRejects) {
  EXPECT_EQ(Endpoint::parse("127.0.0.1:6379").port, 6379);
  EXPECT_EQ(Endpoint::parse("[::1]:7000").host, "::1");
  EXPECT_THROW(Endpoint::parse("localhost"), std::invalid_argument);
  EXPECT_THROW(Endpoint::parse("h:99999"), std::invalid_argument);
  EXPECT_THROW(Endpoint::parse("h:12x"), std::invalid_argument);
}

}  // namespace
}  // namespace locklab
