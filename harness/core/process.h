// Child processes the lab starts (redis-server, redis-sentinel, adapters).
// Each is owned by one ChildProcess: destroying it kills the child and reaps
// it. Children also die with the lab: they get PR_SET_PDEATHSIG(SIGKILL), and
// a SIGINT/SIGTERM of the lab kills every live child before the lab exits.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace locklab {

struct ProcessSpec {
  std::vector<std::string> argv;           // argv[0] is looked up in PATH
  std::map<std::string, std::string> env;  // added to (or replacing) the lab's environment
  std::filesystem::path cwd;               // empty = the lab's
  std::filesystem::path output;            // stdout+stderr go here; empty = /dev/null
  bool pipe_stdio = false;                 // give the lab pipes to the child's stdin/stdout
};

class ChildProcess {
 public:
  // Starts the child. Throws std::runtime_error naming argv[0] if it cannot
  // be started (e.g. not installed: the exec failure is reported, not hidden).
  explicit ChildProcess(ProcessSpec spec);
  ~ChildProcess();  // kill(SIGKILL) + reap, if still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  const ProcessSpec& spec() const { return spec_; }
  // Non-blocking: the exit status if the child has ended (reaps it), else nullopt.
  std::optional<int> poll();
  bool running() { return !poll().has_value(); }
  // Sends `sig` to the child if it is still ours and running.
  void signal(int sig);
  // SIGKILL and reap; idempotent.
  void kill();
  // SIGTERM, wait up to `grace`, then SIGKILL; returns the wait status.
  int stop(std::chrono::milliseconds grace = std::chrono::milliseconds(2000));

  // With pipe_stdio: the lab's ends (write to child's stdin, read its stdout); -1 otherwise.
  int stdin_fd() const { return stdin_fd_; }
  int stdout_fd() const { return stdout_fd_; }
  void close_stdin();

 private:
  ProcessSpec spec_;
  pid_t pid_ = -1;
  std::optional<int> status_;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
};

// True if `program` is found in PATH (or is an executable path).
bool program_available(const std::string& program);

// Installs the lab's signal handling: on SIGINT/SIGTERM/SIGHUP every live
// ChildProcess is killed, every live TempDir removed, and the lab exits with
// 128+signal; SIGPIPE is ignored (a write to a dead server is an error, not
// the end of the lab). Must be called before any thread is started; idempotent.
void install_termination_cleanup();

// While one lives, the first SIGINT/SIGTERM/SIGHUP only calls
// `on_first_signal` (from the signal thread), so a long command can stop
// taking new work, write what it has and let its servers stop as usual; a
// second signal ends the lab as install_termination_cleanup() says.
class GracefulStop {
 public:
  explicit GracefulStop(std::function<void()> on_first_signal);
  ~GracefulStop();
  GracefulStop(const GracefulStop&) = delete;
  GracefulStop& operator=(const GracefulStop&) = delete;
};

// Registers `undo` to run if the lab is ended by SIGINT/SIGTERM/SIGHUP (after
// its children are killed) until this object is destroyed, for what a
// destructor would have removed: the owner's destructor still does the
// normal clean-up itself.
class CleanupOnSignal {
 public:
  explicit CleanupOnSignal(std::function<void()> undo);
  ~CleanupOnSignal();
  CleanupOnSignal(const CleanupOnSignal&) = delete;
  CleanupOnSignal& operator=(const CleanupOnSignal&) = delete;

 private:
  uint64_t id_;
};

}  // namespace locklab
