// A real redis-server (or redis-sentinel) process on loopback, owned by this
// object: started on a free port in its own temp dir, ready once it answers
// PING, and always stopped (destructor, exception, SIGINT/SIGTERM of the lab,
// and SIGKILL of the lab through PR_SET_PDEATHSIG).
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "connection.h"
#include "process.h"
#include "temp_dir.h"

namespace locklab {

struct RedisServerOptions {
  int port = 0;                        // 0 = pick a free loopback port
  bool persistence = false;            // AOF with appendfsync always; otherwise none at all
  bool debug_commands = true;          // --enable-debug-command local (DEBUG SLEEP)
  std::optional<Endpoint> replica_of;  // start as a replica of this endpoint
  // A replica reached through a proxy announces where it listens itself
  // (replica-announce-ip/port = host and the port it started on), so the
  // master's INFO and sentinels name the server, not the proxy's far end.
  bool announce_self = false;
  std::vector<std::string> extra_args;     // more "--name value" pairs
  std::map<std::string, std::string> env;  // e.g. LD_PRELOAD of the clock shim
  std::chrono::milliseconds start_timeout{5000};
  // What this object's own connections (readiness probe, connect()) AUTH
  // with, for a server given requirepass or ACL users in extra_args.
  std::string username;
  std::string password;
  std::string name = "redis";  // for messages and the temp dir
  // Where the server listens and is reached; a server started inside a
  // network namespace listens on every address of its namespace and is
  // reached at one of them.
  std::string host = "127.0.0.1";
  std::string bind;                     // empty = host
  std::vector<std::string> run_prefix;  // e.g. {"ip", "netns", "exec", NAME}
};

class RedisServer {
 public:
  // Starts the server; throws std::runtime_error with the reason (not
  // installed, port in use, the server's own last log line) on failure.
  explicit RedisServer(RedisServerOptions options = {});
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  Endpoint endpoint() const { return {options_.host, port_}; }
  int port() const { return port_; }
  pid_t pid() const { return process_ ? process_->pid() : -1; }
  bool running() const { return process_ && process_->running(); }
  const std::filesystem::path& dir() const { return dir_.path(); }
  const RedisServerOptions& options() const { return options_; }

  // SIGKILL (a crash: nothing is flushed beyond what appendfsync wrote).
  void kill();
  // Starts again on the same port and dir (data survives only with persistence).
  void restart();
  // SIGSTOP / SIGCONT of the server process.
  void pause();
  void resume();

  // A fresh direct connection to this server (not through any proxy).
  std::unique_ptr<Connection> connect(ConnectionOptions options = {}) const;

 private:
  void start();

  RedisServerOptions options_;
  TempDir dir_;
  int port_ = 0;
  std::unique_ptr<ChildProcess> process_;
};

// A free TCP port on 127.0.0.1 (bound then released; a race remains, and
// RedisServer retries on "Address already in use" when it chose the port).
int free_loopback_port();

// The last non-empty line of a log file (for error messages).
std::string last_log_line(const std::filesystem::path& log);

// The version of the redis-server on PATH ("7.0.15", from `redis-server
// --version`); "" when there is none or it cannot be told.
std::string installed_redis_version();

}  // namespace locklab
