#include "server_faults.h"

#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>

#include "hiredis_connection.h"

namespace locklab {

void debug_sleep(const Endpoint& server, std::chrono::milliseconds duration,
                 const ConnectionOptions& auth) {
  using std::chrono::milliseconds;
  ConnectionOptions options = auth;
  options.connect_timeout = milliseconds(1000);
  // The reply comes only after the sleep: the command timeout must outlast it.
  options.command_timeout = duration + milliseconds(5000);
  HiredisConnection connection(server, options);
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.3f", double(duration.count()) / 1000.0);
  Reply reply = connection.command({"DEBUG", "SLEEP", seconds});
  if (!reply.is_ok())
    throw std::runtime_error("DEBUG SLEEP " + std::string(seconds) + " on " + server.str() +
                             " refused: " + reply.describe());
}

void wait_until_loaded(const Endpoint& server, std::chrono::milliseconds timeout) {
  using std::chrono::milliseconds;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last;
  for (;;) {
    try {
      HiredisConnection connection(server, {milliseconds(200), milliseconds(500)});
      Reply info = connection.command({"INFO", "persistence"});
      if (info.str.find("\nloading:0\r") != std::string::npos) return;
      last =
          info.str.find("\nloading:1\r") != std::string::npos ? "still loading" : info.describe();
    } catch (const RedisError& e) {
      last = e.what();
    }
    if (std::chrono::steady_clock::now() >= deadline)
      throw std::runtime_error(server.str() + " did not finish loading within " +
                               std::to_string(timeout.count()) + " ms: " + last);
    std::this_thread::sleep_for(milliseconds(10));
  }
}

}  // namespace locklab
