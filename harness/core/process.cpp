#include "process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <queue>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>

#include "cleanup_registry.h"

extern char** environ;

namespace locklab {
namespace cleanup {
namespace {
std::mutex& mu() {
  static std::mutex m;
  return m;
}
std::set<pid_t>& pids() {
  static std::set<pid_t> s;
  return s;
}
std::set<std::filesystem::path>& dirs() {
  static std::set<std::filesystem::path> s;
  return s;
}
std::map<uint64_t, std::function<void()>>& actions() {
  static std::map<uint64_t, std::function<void()>> m;
  return m;
}
uint64_t next_action = 1;
}  // namespace

uint64_t add_action(std::function<void()> action) {
  std::lock_guard l(mu());
  actions().emplace(next_action, std::move(action));
  return next_action++;
}
void remove_action(uint64_t id) {
  std::lock_guard l(mu());
  actions().erase(id);
}

void add_pid(pid_t pid) {
  std::lock_guard l(mu());
  pids().insert(pid);
}
void remove_pid(pid_t pid) {
  std::lock_guard l(mu());
  pids().erase(pid);
}
void add_dir(const std::filesystem::path& dir) {
  std::lock_guard l(mu());
  dirs().insert(dir);
}
void remove_dir(const std::filesystem::path& dir) {
  std::lock_guard l(mu());
  dirs().erase(dir);
}
void run_all() {
  std::map<uint64_t, std::function<void()>> undo;
  {
    std::lock_guard l(mu());
    for (pid_t pid : pids()) ::kill(pid, SIGKILL);
    for (pid_t pid : pids()) ::waitpid(pid, nullptr, 0);
    pids().clear();
    undo = std::exchange(actions(), {});
  }
  // Outside the lock: an action may start a child of its own (ip, iptables),
  // and newest first, so what was built on something goes before it.
  for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
    try {
      it->second();
    } catch (...) {
      // The lab is ending: undo the rest regardless.
    }
  }
  std::lock_guard l(mu());
  for (const auto& dir : dirs()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  dirs().clear();
}
}  // namespace cleanup

namespace {

// Every child is forked from this one thread, which lives as long as the lab:
// PR_SET_PDEATHSIG fires when the *thread* that forked a child ends, so a
// child forked by a short-lived worker thread would be killed with it.
class Spawner {
 public:
  static Spawner& instance() {
    static Spawner spawner;
    return spawner;
  }
  pid_t run(std::function<pid_t()> fork_job) {
    std::packaged_task<pid_t()> task(std::move(fork_job));
    auto result = task.get_future();
    {
      std::lock_guard l(mu_);
      jobs_.push(std::move(task));
    }
    ready_.notify_one();
    return result.get();
  }
  ~Spawner() {
    {
      std::lock_guard l(mu_);
      stop_ = true;
    }
    ready_.notify_one();
    thread_.join();
  }

 private:
  Spawner() : thread_([this] { loop(); }) {}
  void loop() {
    for (;;) {
      std::packaged_task<pid_t()> job;
      {
        std::unique_lock l(mu_);
        ready_.wait(l, [&] { return stop_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop();
      }
      job();
    }
  }
  std::mutex mu_;
  std::condition_variable ready_;
  std::queue<std::packaged_task<pid_t()>> jobs_;
  bool stop_ = false;
  std::thread thread_;
};

std::vector<std::string> merged_environment(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> out;
  for (char** e = environ; *e; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq != std::string::npos && extra.count(entry.substr(0, eq))) continue;
    out.push_back(std::move(entry));
  }
  for (const auto& [k, v] : extra) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

bool program_available(const std::string& program) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string candidate = dirs.substr(start, end - start) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

ChildProcess::ChildProcess(ProcessSpec spec) : spec_(std::move(spec)) {
  if (spec_.argv.empty()) throw std::invalid_argument("ChildProcess: empty argv");
  const std::string& program = spec_.argv[0];
  if (!program_available(program))
    throw std::runtime_error("cannot start " + program + ": not found in PATH (is it installed?)");

  std::vector<std::string> argv_strings = spec_.argv;
  std::vector<std::string> env_strings = merged_environment(spec_.env);
  std::vector<char*> argv = c_strings(argv_strings);
  std::vector<char*> envp = c_strings(env_strings);
  std::string output = spec_.output.empty() ? "/dev/null" : spec_.output.string();
  std::string cwd = spec_.cwd.string();

  int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1}, err_pipe[2];
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  if (spec_.pipe_stdio) {
    if (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0)
      throw std::runtime_error("pipe2 failed");
  }
  pid_t parent = ::getpid();

  pid_t pid = Spawner::instance().run([&]() -> pid_t {
    pid_t child = ::fork();
    if (child != 0) return child;
    // Child: only async-signal-safe calls from here to exec.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    sigset_t all;
    sigemptyset(&all);
    ::sigprocmask(SIG_SETMASK, &all, nullptr);
    ::setpgid(0, 0);  // Ctrl-C in a terminal reaches the lab, which then stops its children
    int out = ::open(output.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (out >= 0) {
      ::dup2(out, STDERR_FILENO);
      if (!spec_.pipe_stdio) ::dup2(out, STDOUT_FILENO);
    }
    if (spec_.pipe_stdio) {
      ::dup2(in_pipe[0], STDIN_FILENO);
      ::dup2(out_pipe[1], STDOUT_FILENO);
    } else {
      int devnull = ::open("/dev/null", O_RDONLY);
      if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    }
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) {
      int e = errno;
      (void)!::write(err_pipe[1], &e, sizeof e);
      ::_exit(127);
    }
    ::execvpe(argv[0], argv.data(), envp.data());
    int e = errno;
    (void)!::write(err_pipe[1], &e, sizeof e);
    ::_exit(127);
  });
  ::close(err_pipe[1]);
  if (pid < 0) {
    ::close(err_pipe[0]);
    throw std::runtime_error("cannot start " + program + ": fork failed: " + std::strerror(errno));
  }
  cleanup::add_pid(pid);
  pid_ = pid;
  int exec_errno = 0;
  ssize_t n = ::read(err_pipe[0], &exec_errno, sizeof exec_errno);
  ::close(err_pipe[0]);
  if (spec_.pipe_stdio) {
    ::close(in_pipe[0]);
    ::close(out_pipe[1]);
    stdin_fd_ = in_pipe[1];
    stdout_fd_ = out_pipe[0];
  }
  if (n == sizeof exec_errno) {
    kill();
    throw std::runtime_error("cannot start " + program + ": " + std::strerror(exec_errno));
  }
}

ChildProcess::~ChildProcess() {
  kill();
  close_stdin();
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
}

void ChildProcess::close_stdin() {
  if (stdin_fd_ >= 0) ::close(stdin_fd_);
  stdin_fd_ = -1;
}

std::optional<int> ChildProcess::poll() {
  if (status_ || pid_ < 0) return status_;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    status_ = status;
    cleanup::remove_pid(pid_);
  }
  return status_;
}

void ChildProcess::signal(int sig) {
  if (running()) ::kill(pid_, sig);
}

void ChildProcess::kill() {
  if (pid_ < 0 || status_) return;
  ::kill(pid_, SIGKILL);
  ::kill(pid_, SIGCONT);  // a stopped child must run to die promptly
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  status_ = status;
  cleanup::remove_pid(pid_);
}

int ChildProcess::stop(std::chrono::milliseconds grace) {
  if (pid_ < 0) return 0;
  if (!status_) {
    ::kill(pid_, SIGTERM);
    ::kill(pid_, SIGCONT);
    auto deadline = std::chrono::steady_clock::now() + grace;
    while (running() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    kill();
  }
  return *status_;
}

namespace {

std::mutex graceful_mutex;
std::function<void()> graceful_stop;  // guarded by graceful_mutex

}  // namespace

GracefulStop::GracefulStop(std::function<void()> on_first_signal) {
  std::lock_guard lock(graceful_mutex);
  graceful_stop = std::move(on_first_signal);
}

GracefulStop::~GracefulStop() {
  std::lock_guard lock(graceful_mutex);
  graceful_stop = nullptr;
}

void install_termination_cleanup() {
  static std::once_flag once;
  std::call_once(once, [] {
    // A write to a server that just died must be an error, not the lab's death.
    ::signal(SIGPIPE, SIG_IGN);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::thread([set] {
      int sig = 0;
      sigwait(&set, &sig);
      std::function<void()> stop;
      {
        std::lock_guard lock(graceful_mutex);
        stop = std::exchange(graceful_stop, nullptr);
      }
      if (stop) {
        // The command ends its work itself; a second signal ends the lab at once.
        stop();
        sigwait(&set, &sig);
      }
      cleanup::run_all();
      ::_exit(128 + sig);
    }).detach();
  });
}

CleanupOnSignal::CleanupOnSignal(std::function<void()> undo)
    : id_(cleanup::add_action(std::move(undo))) {}
CleanupOnSignal::~CleanupOnSignal() {
  cleanup::remove_action(id_);
}

}  // namespace locklab
