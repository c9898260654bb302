#include "redis_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <thread>

#include "hiredis_connection.h"

namespace locklab {

int free_loopback_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("cannot create a socket to find a free port");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot bind a loopback port");
  }
  int port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

std::string last_log_line(const std::filesystem::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

RedisServer::RedisServer(RedisServerOptions options)
    : options_(std::move(options)), dir_("locklab-" + options_.name) {
  if (!program_available("redis-server"))
    throw std::runtime_error("redis-server is not installed (apt-get install redis-server)");
  bool chose_port = options_.port == 0;
  for (int attempt = 0;; ++attempt) {
    port_ = chose_port ? free_loopback_port() : options_.port;
    try {
      start();
      return;
    } catch (const std::runtime_error& e) {
      bool in_use = std::string(e.what()).find("in use") != std::string::npos;
      if (!(chose_port && in_use && attempt < 5)) throw;
    }
  }
}

RedisServer::~RedisServer() {
  if (process_) process_->kill();
}

void RedisServer::start() {
  std::vector<std::string> argv = {"redis-server",
                                   "--port",
                                   std::to_string(port_),
                                   "--bind",
                                   options_.bind.empty() ? options_.host : options_.bind,
                                   "--dir",
                                   dir_.path().string(),
                                   "--save",
                                   "",
                                   "--daemonize",
                                   "no",
                                   "--logfile",
                                   "",
                                   "--protected-mode",
                                   "no",
                                   "--repl-diskless-sync",
                                   "no",
                                   "--repl-diskless-sync-delay",
                                   "0",
                                   "--loglevel",
                                   "notice"};
  if (options_.persistence) {
    argv.insert(argv.end(), {"--appendonly", "yes", "--appendfsync", "always"});
  } else {
    argv.insert(argv.end(), {"--appendonly", "no"});
  }
  if (options_.debug_commands) argv.insert(argv.end(), {"--enable-debug-command", "local"});
  if (options_.replica_of)
    argv.insert(argv.end(), {"--replicaof", options_.replica_of->host,
                             std::to_string(options_.replica_of->port)});
  if (options_.announce_self)
    argv.insert(argv.end(), {"--replica-announce-ip", options_.host, "--replica-announce-port",
                             std::to_string(port_)});
  argv.insert(argv.end(), options_.extra_args.begin(), options_.extra_args.end());
  // `ip netns exec` execs the server in place, so the pid stays the server's.
  argv.insert(argv.begin(), options_.run_prefix.begin(), options_.run_prefix.end());

  auto log = dir_.path() / "server.log";
  process_ = std::make_unique<ChildProcess>(
      ProcessSpec{.argv = argv, .env = options_.env, .cwd = {}, .output = log});

  ConnectionOptions probe_options{std::chrono::milliseconds(200), std::chrono::milliseconds(500),
                                  options_.username, options_.password};
  auto deadline = std::chrono::steady_clock::now() + options_.start_timeout;
  std::string last_error;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!process_->running()) {
      std::string why = last_log_line(log);
      process_.reset();
      if (why.find("Address already in use") != std::string::npos ||
          why.find("Failed listening on port") != std::string::npos)
        throw std::runtime_error(options_.name + ": port " + std::to_string(port_) + " is in use");
      throw std::runtime_error(options_.name +
                               " exited at start: " + (why.empty() ? "no log" : why));
    }
    try {
      // Ask for the pid too: another server already on this port would answer PING.
      HiredisConnection probe(endpoint(), probe_options);
      Reply info = probe.command({"INFO", "server"});
      if (info.type == Reply::Type::String) {
        if (info.str.find("process_id:" + std::to_string(process_->pid()) + "\r") !=
            std::string::npos) {
          // Ready means done loading the AOF too: until then commands fail with
          // LOADING. DBSIZE is refused while loading (INFO is not, and Redis 7
          // reports loading:0 between the files of a multi-part AOF).
          Reply size = probe.command({"DBSIZE"});
          if (size.type == Reply::Type::Integer) return;
          last_error = "still loading its data (" + size.describe() + ")";
        } else {
          last_error = "another process answers on port " + std::to_string(port_);
        }
      }
    } catch (const RedisError& e) {
      last_error = e.what();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  process_.reset();
  throw std::runtime_error(options_.name + " on port " + std::to_string(port_) +
                           " did not answer within " +
                           std::to_string(options_.start_timeout.count()) + " ms: " + last_error);
}

void RedisServer::kill() {
  if (process_) process_->kill();
}

void RedisServer::restart() {
  kill();
  process_.reset();
  // The old socket may linger briefly; retry on "in use" for a moment.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  for (;;) {
    try {
      start();
      return;
    } catch (const std::runtime_error& e) {
      if (std::string(e.what()).find("in use") == std::string::npos ||
          std::chrono::steady_clock::now() > deadline)
        throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

void RedisServer::pause() {
  if (process_) process_->signal(SIGSTOP);
}

void RedisServer::resume() {
  if (process_) process_->signal(SIGCONT);
}

std::unique_ptr<Connection> RedisServer::connect(ConnectionOptions options) const {
  if (options.password.empty())
    options.username = options_.username, options.password = options_.password;
  return std::make_unique<HiredisConnection>(endpoint(), options);
}

std::string installed_redis_version() {
  try {
    TempDir dir("locklab-redis-version");
    ChildProcess child({.argv = {"redis-server", "--version"}, .output = dir.path() / "out"});
    // It prints one line and exits: wait for that, a few seconds at most.
    for (int i = 0; i < 500 && child.running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    child.kill();
    std::ifstream in(dir.path() / "out");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // "Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=…"
    const size_t at = text.find("v=");
    if (at == std::string::npos) return "";
    return text.substr(at + 2, text.find(' ', at) - at - 2);
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace locklab
