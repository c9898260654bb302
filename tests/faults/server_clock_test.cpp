// Server clocks: the clock shim preloaded into real processes, moved by a
// ServerClock, proven by what those processes report and how Redis expires.
#include "server_clock.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <sstream>
#include <thread>

#include "leak_check.h"
#include "process.h"
#include "redis_server.h"

namespace locklab {
namespace {

using namespace std::chrono;
using testing::LeakCheck;

int64_t wall_ns() {
  return duration_cast<nanoseconds>(system_clock::now().time_since_epoch()).count();
}

int64_t monotonic_clock_ns() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Runs a short-lived child and returns its stdout (bounded: 5 s).
std::string run_and_capture(std::vector<std::string> argv, std::map<std::string, std::string> env) {
  ChildProcess child(
      ProcessSpec{.argv = std::move(argv), .env = std::move(env), .pipe_stdio = true});
  child.close_stdin();
  std::string out;
  auto deadline = steady_clock::now() + seconds(5);
  for (;;) {
    auto left = duration_cast<milliseconds>(deadline - steady_clock::now()).count();
    if (left <= 0) {
      ADD_FAILURE() << child.spec().argv[0] << " did not finish within 5 s";
      break;
    }
    pollfd readable{child.stdout_fd(), POLLIN, 0};
    if (::poll(&readable, 1, int(left)) <= 0) continue;
    char buffer[512];
    ssize_t n = ::read(child.stdout_fd(), buffer, sizeof buffer);
    if (n <= 0) break;
    out.append(buffer, size_t(n));
  }
  return out;
}

// The clock_probe helper's "<name> <ns>" lines.
std::map<std::string, int64_t> probe_clocks(const std::map<std::string, std::string>& env) {
  std::istringstream lines(run_and_capture({CLOCK_PROBE_PATH}, env));
  std::map<std::string, int64_t> clocks;
  std::string name;
  int64_t ns;
  while (lines >> name >> ns) clocks[name] = ns;
  EXPECT_EQ(clocks.size(), 5u) << "unexpected clock_probe output";
  return clocks;
}

// How far the server's TIME is ahead of this process's wall clock, in seconds.
double server_skew_seconds(Connection& redis) {
  Reply time = redis.command({"TIME"});
  EXPECT_EQ(time.elements.size(), 2u) << time.describe();
  if (time.elements.size() != 2) return 0;
  int64_t server_ns =
      std::stoll(time.elements[0].str) * 1'000'000'000 + std::stoll(time.elements[1].str) * 1000;
  return double(server_ns - wall_ns()) / 1e9;
}

int64_t server_time_ms(Connection& redis) {
  Reply time = redis.command({"TIME"});
  return std::stoll(time.elements.at(0).str) * 1000 + std::stoll(time.elements.at(1).str) / 1000;
}

class ServerClockTest : public ::testing::Test {
 protected:
  void TearDown() override { leaks.check(); }

  void watch(const ServerClock& clock) {
    leaks.path(clock.file());
    leaks.path(clock.file().parent_path());
  }
  void watch(const RedisServer& server) {
    leaks.pid(server.pid());
    leaks.path(server.dir());
  }
  RedisServerOptions on(const ServerClock& clock) {
    RedisServerOptions options;
    options.env = clock.env();
    return options;
  }

  LeakCheck leaks;
};

TEST_F(ServerClockTest, ForwardJumpExpiresKeysEarlyAndMovesServerTime) {
  ServerClock clock;
  watch(clock);
  RedisServer server(on(clock));
  watch(server);
  auto redis = server.connect();
  EXPECT_NEAR(server_skew_seconds(*redis), 0.0, 1.0);
  ASSERT_TRUE(redis->command({"SET", "lease", "c1", "PX", "10000"}).is_ok());
  ASSERT_EQ(redis->command({"EXISTS", "lease"}).integer, 1);

  clock.jump(seconds(20));
  EXPECT_NEAR(server_skew_seconds(*redis), 20.0, 1.0);
  EXPECT_EQ(redis->command({"EXISTS", "lease"}).integer, 0) << "a PX 10000 key survived +20 s";
}

TEST_F(ServerClockTest, BackwardJumpMovesServerTimeBackAndKeysOutliveTheirTtl) {
  ServerClock clock;
  watch(clock);
  RedisServer server(on(clock));
  watch(server);
  auto redis = server.connect();
  ASSERT_TRUE(redis->command({"SET", "lease", "c1", "PX", "300"}).is_ok());

  clock.jump(seconds(-20));
  EXPECT_NEAR(server_skew_seconds(*redis), -20.0, 1.0);
  std::this_thread::sleep_for(milliseconds(800));
  EXPECT_EQ(redis->command({"EXISTS", "lease"}).integer, 1)
      << "a PX 300 key expired although the server clock went back 20 s";

  clock.jump(seconds(20));
  EXPECT_NEAR(server_skew_seconds(*redis), 0.0, 1.0);
  EXPECT_EQ(redis->command({"EXISTS", "lease"}).integer, 0);
}

TEST_F(ServerClockTest, RateTenExpiresKeysAboutTenTimesSooner) {
  ServerClock clock;
  watch(clock);
  RedisServer server(on(clock));
  watch(server);
  auto redis = server.connect();

  clock.set_rate(10);
  EXPECT_EQ(testing::threads_named("locklab-clock"), 1);
  ASSERT_TRUE(redis->command({"SET", "lease", "c1", "PX", "5000"}).is_ok());
  auto start = steady_clock::now();
  while (redis->command({"EXISTS", "lease"}).integer == 1 &&
         steady_clock::now() - start < seconds(5))
    std::this_thread::sleep_for(milliseconds(10));
  auto took = duration_cast<milliseconds>(steady_clock::now() - start);
  EXPECT_GE(took, milliseconds(250)) << "expired at once, not by a fast clock";
  EXPECT_LT(took, milliseconds(1500)) << "a PX 5000 key at rate 10 should be gone after ~0.5 s";

  int64_t before = server_time_ms(*redis);
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_NEAR(double(server_time_ms(*redis) - before), 3000.0, 800.0) << "rate 10 over 300 ms";

  clock.set_rate(1);
  before = server_time_ms(*redis);
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_NEAR(double(server_time_ms(*redis) - before), 300.0, 200.0) << "rate 1 over 300 ms";
}

TEST_F(ServerClockTest, ShimSkewsAPlainChildProcess) {
  ServerClock clock;
  watch(clock);
  clock.jump(hours(1));
  std::string skewed = run_and_capture({"date", "+%s"}, clock.env());
  std::string real = run_and_capture({"date", "+%s"}, {});
  int64_t now_s = wall_ns() / 1'000'000'000;
  ASSERT_FALSE(skewed.empty());
  EXPECT_NEAR(double(std::stoll(skewed) - now_s), 3600.0, 5.0) << skewed;
  EXPECT_NEAR(double(std::stoll(real) - now_s), 0.0, 5.0) << real;
}

TEST_F(ServerClockTest, ShimMovesEveryWallClockAndNoOtherClock) {
  ServerClock clock;
  watch(clock);
  clock.jump(seconds(-1000));  // negative: exercises the borrow from seconds
  int64_t wall_before = wall_ns();
  int64_t monotonic_before = monotonic_clock_ns();
  auto clocks = probe_clocks(clock.env());
  const double skew_s = -1000.0;
  for (const char* wall : {"realtime", "realtime_coarse", "gettimeofday", "time"})
    EXPECT_NEAR(double(clocks[wall] - wall_before) / 1e9, skew_s, 2.0) << wall;
  EXPECT_NEAR(double(clocks["monotonic"] - monotonic_before) / 1e9, 0.0, 2.0)
      << "CLOCK_MONOTONIC must pass through";
}

TEST_F(ServerClockTest, ShimWithoutAClockFileLeavesTimeAlone) {
  auto clocks = probe_clocks({{"LD_PRELOAD", ServerClock::shim_path().string()},
                              {"LOCKLAB_CLOCK_FILE", "/nonexistent/locklab-clock"}});
  EXPECT_NEAR(double(clocks["realtime"] - wall_ns()) / 1e9, 0.0, 2.0);
}

TEST_F(ServerClockTest, OffsetAccumulatesJumpsAndRejectsBadRates) {
  ServerClock clock;
  watch(clock);
  clock.jump(seconds(5));
  clock.jump(seconds(-2));
  EXPECT_NEAR(double(clock.offset().count()) / 1e9, 3.0, 0.01);
  EXPECT_THROW(clock.set_rate(0), std::invalid_argument);
  EXPECT_THROW(clock.set_rate(-1), std::invalid_argument);
}

// A clock that waits for another run (AdapterClocks) is back at real time
// with no thread left moving it, and a process on it reads real time again.
TEST_F(ServerClockTest, ResetGoesBackToRealTimeAndStopsItsThread) {
  ServerClock clock;
  watch(clock);
  clock.jump(hours(1));
  clock.set_rate(4);
  EXPECT_EQ(testing::threads_named("locklab-clock"), 1);
  clock.reset();
  EXPECT_EQ(testing::threads_named("locklab-clock"), 0);
  EXPECT_NEAR(double(clock.offset().count()) / 1e9, 0.0, 0.001);
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_NEAR(double(clock.offset().count()) / 1e9, 0.0, 0.001) << "no rate left";
  const std::string date = run_and_capture({"date", "+%s"}, clock.env());
  ASSERT_FALSE(date.empty());
  EXPECT_NEAR(double(std::stoll(date) - wall_ns() / 1'000'000'000), 0.0, 5.0) << date;
  // It moves again when told.
  clock.set_rate(2);
  EXPECT_EQ(testing::threads_named("locklab-clock"), 1);
}

}  // namespace
}  // namespace locklab
