// An adapter: a program outside the lab that wraps a lock library and speaks
// the adapter protocol (PROTOCOL.md) — JSON lines on its stdin and stdout, one
// request per line, one response per line, matched by "id". AdapterProcess
// owns one running adapter and talks to it one request at a time.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "connection.h"
#include "process.h"
#include "temp_dir.h"

namespace locklab {

class AdapterPool;

// Anything that went wrong with the adapter itself rather than with the lock:
// it could not start, exited, printed something that is not a valid response,
// or did not answer in time. The message is one line that names the adapter
// command. An AdapterProcess that threw one repeats it on every later request.
class AdapterError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct AdapterConfig {
  // A program and its arguments as shell words, e.g.
  // "/usr/bin/python3 examples/adapters/redis_py_lock.py". The lab runs
  // `/bin/sh -c 'exec COMMAND --redis host:port[,host:port...]'`.
  std::string command;
  // How long the adapter may take to answer, on top of the request's own
  // wait_ms. Time the adapter spends paused (SIGSTOP) does not count.
  std::chrono::milliseconds reply_timeout{10000};
  // How long the adapter may take to answer its first request (hello): that
  // includes starting up, which some runtimes take seconds to do.
  std::chrono::milliseconds start_timeout{30000};
  // Added to the adapter's environment, e.g. ServerClock::env() to run it on
  // a skewed wall clock.
  std::map<std::string, std::string> env;
  // Where the adapter's stderr is kept (`adapter-<client>.stderr`); empty = a
  // temp dir removed when the adapter stops.
  std::filesystem::path log_dir;
  // The directory the command runs in; empty = the lab's (a libraries file's
  // commands run in the file's directory).
  std::filesystem::path cwd;
  // Where an adapter that says hello with "reusable" goes at its client's
  // normal end, reset, for a later client to take (adapter_pool.h); null:
  // every client starts its own adapter and stops it at its end.
  std::shared_ptr<AdapterPool> pool;
};

class AdapterProcess {
 public:
  // Starts `config.command --redis <redis endpoints, comma-separated>` with
  // stderr going to `log_name` in config.log_dir (or a temp dir). Throws
  // AdapterError if it cannot be started at all; a command the shell cannot
  // find shows as an AdapterError from the first request().
  AdapterProcess(const AdapterConfig& config, const std::vector<Endpoint>& redis,
                 const std::string& log_name = "adapter.stderr");
  // Resumes the adapter if paused, closes its stdin (the protocol's "stop"),
  // waits up to one second for it to exit, then kills it and its process group.
  ~AdapterProcess();
  AdapterProcess(const AdapterProcess&) = delete;
  AdapterProcess& operator=(const AdapterProcess&) = delete;

  // Sends `request` (an object with "op" and the op's fields; the "id" is
  // added here) and returns the response: an object whose "id" matches and
  // whose "ok" is a boolean. Waits at most reply_timeout plus the request's
  // "wait_ms" (the first request: start_timeout, if longer), not counting
  // paused time. Throws AdapterError on anything else (exit, non-JSON line,
  // wrong or missing id, missing ok, no answer in time).
  // Thread-safe: concurrent calls are served one after the other.
  //
  // While it waits, the adapter may announce steps ({"id": ID, "step":
  // NAME}): each is passed to `on_step` (which may block, e.g. for a pause,
  // or throw, e.g. ClientCrashed, abandoning the request), then answered
  // with {"id": ID, "op": "continue"}. Without `on_step`, an announcement is
  // a protocol error.
  nlohmann::json request(nlohmann::json request,
                         const std::function<void(const std::string& step)>& on_step = {});

  // Stop-the-world pause of the adapter: SIGSTOP / SIGCONT of its process
  // group. Safe to call from any thread, also while request() waits.
  void pause();
  void resume();

  // Whether it may serve another run: running, not paused, and no request
  // of it has failed.
  bool can_serve_again();

  pid_t pid() const { return process_->pid(); }
  const std::string& command() const { return command_; }
  const std::filesystem::path& stderr_log() const { return stderr_log_; }

 private:
  // A request's time limit: `timeout` from `start`, not counting paused time.
  struct Deadline {
    std::chrono::steady_clock::time_point start;
    std::chrono::milliseconds paused_at_start;  // paused_so_far() at `start`
    std::chrono::milliseconds timeout;
  };
  std::chrono::milliseconds remaining(const Deadline& deadline);
  std::chrono::milliseconds paused_so_far();

  // Both throw AdapterError when the adapter exits, closes its pipe or does
  // not keep up before the deadline.
  void write_line(const nlohmann::json& request, const Deadline& deadline);
  std::string read_line(const nlohmann::json& request, const Deadline& deadline);

  // "exited with status 3 <when> (last stderr line: ...)", after giving the
  // adapter a moment to finish exiting.
  std::string exit_description(const std::string& when);
  [[noreturn]] void fail(const std::string& what);

  std::string command_;
  std::chrono::milliseconds reply_timeout_;
  std::chrono::milliseconds start_timeout_;
  std::optional<TempDir> temp_dir_;
  std::filesystem::path stderr_log_;
  std::unique_ptr<ChildProcess> process_;

  std::mutex request_mu_;  // one request in flight
  int64_t next_id_ = 1;
  std::string buffered_;  // bytes read after the last complete line
  std::string failure_;   // set by the first AdapterError; every later request repeats it

  std::mutex process_mu_;  // guards process_'s state (reaping) and the pause state
  std::optional<std::chrono::steady_clock::time_point> paused_since_;
  std::chrono::milliseconds paused_total_{0};
};

}  // namespace locklab
