#include "redis_server.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "hiredis_connection.h"

namespace locklab {
namespace {

bool pid_alive(pid_t pid) {
  // A zombie is not alive for our purposes: look at the process state.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return false;
  std::string line;
  std::getline(stat, line);
  auto close = line.rfind(')');
  return close != std::string::npos && line.size() > close + 2 && line[close + 2] != 'Z';
}

bool wait_until_dead(pid_t pid, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!pid_alive(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return !pid_alive(pid);
}

TEST(RedisServer, StartsOnAFreePortAnswersAndStopsOnDestruction) {
  pid_t pid;
  std::filesystem::path dir;
  {
    RedisServer server;
    pid = server.pid();
    dir = server.dir();
    ASSERT_GT(server.port(), 0);
    EXPECT_TRUE(pid_alive(pid));
    auto redis = server.connect();
    EXPECT_EQ(redis->command({"PING"}).str, "PONG");
    EXPECT_TRUE(redis->command({"SET", "k", "v"}).is_ok());
    EXPECT_EQ(redis->command({"GET", "k"}).str, "v");
  }
  EXPECT_TRUE(wait_until_dead(pid, std::chrono::milliseconds(500)));
  EXPECT_FALSE(std::filesystem::exists(dir)) << "temp dir left behind";
}

TEST(RedisServer, TwoServersGetDifferentPorts) {
  RedisServer a, b;
  EXPECT_NE(a.port(), b.port());
}

TEST(RedisServer, StopsWhenTheOwnerThrows) {
  pid_t pid = -1;
  try {
    RedisServer server;
    pid = server.pid();
    throw std::runtime_error("boom");
  } catch (const std::runtime_error&) {
  }
  EXPECT_TRUE(wait_until_dead(pid, std::chrono::milliseconds(500)));
}

TEST(RedisServer, PortInUseIsAClearError) {
  RedisServer first;
  RedisServerOptions options;
  options.port = first.port();
  try {
    RedisServer second(options);
    FAIL() << "a second server started on a port in use";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("in use"), std::string::npos) << e.what();
  }
}

TEST(RedisServer, WithoutPersistenceARestartLosesKeysWithPersistenceItKeepsThem) {
  for (bool persistence : {false, true}) {
    RedisServerOptions options;
    options.persistence = persistence;
    RedisServer server(options);
    int port = server.port();
    server.connect()->command({"SET", "k", "v"});
    server.restart();
    EXPECT_EQ(server.port(), port);
    Reply reply = server.connect()->command({"GET", "k"});
    if (persistence) {
      EXPECT_EQ(reply.str, "v");
    } else {
      EXPECT_TRUE(reply.is_nil()) << reply.describe();
    }
  }
}

TEST(RedisServer, NoServerSurvivesAKilledLab) {
  // A child "lab" starts a server and is then SIGKILLed: its destructors and
  // signal handlers never run, so only PR_SET_PDEATHSIG can stop the server.
  ChildProcess lab(ProcessSpec{.argv = {HOLD_SERVER_PATH}, .pipe_stdio = true});
  std::string line;
  char c;
  while (::read(lab.stdout_fd(), &c, 1) == 1 && c != '\n') line += c;
  pid_t redis_pid = std::stoi(line);
  ASSERT_TRUE(pid_alive(redis_pid));
  lab.signal(SIGKILL);
  EXPECT_TRUE(wait_until_dead(redis_pid, std::chrono::milliseconds(2000)))
      << "redis-server " << redis_pid << " outlived the killed lab";
}

TEST(RedisServer, NoServerSurvivesAnInterruptedLab) {
  ChildProcess lab(ProcessSpec{.argv = {HOLD_SERVER_PATH}, .pipe_stdio = true});
  std::string line;
  char c;
  while (::read(lab.stdout_fd(), &c, 1) == 1 && c != '\n') line += c;
  pid_t redis_pid = std::stoi(line);
  lab.signal(SIGINT);
  EXPECT_TRUE(wait_until_dead(redis_pid, std::chrono::milliseconds(2000)));
  int status = lab.stop(std::chrono::milliseconds(2000));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGINT) << status;
}

}  // namespace
}  // namespace locklab
