#include "adapter_process.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <thread>

#include "redis_server.h"  // last_log_line

namespace locklab {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

namespace {

// A response line longer than this is garbage, not a response.
constexpr size_t kMaxLine = 1 << 20;
// How often a waiting request looks at the clock and the pause state again.
constexpr milliseconds kPollSlice{100};

// `text` as one single-quoted shell word.
std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The start of a line the adapter wrote, quoted and printable.
std::string excerpt(const std::string& line, size_t length = 80) {
  std::string out;
  for (char c : line.substr(0, length)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return "\"" + out + (line.size() > length ? "...\"" : "\"");
}

// "request 2 (acquire)", for messages.
std::string describe(const json& request) {
  return "request " + request.value("id", json(0)).dump() + " (" +
         request.value("op", std::string("?")) + ")";
}

void set_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
    throw std::runtime_error(std::string("fcntl(O_NONBLOCK) failed: ") + std::strerror(errno));
}

// write(2) to a pipe whose reader may be gone: that must fail with EPIPE,
// not end the lab with SIGPIPE. The signal is blocked for this thread during
// the write, and the one the write raised is discarded.
ssize_t write_without_sigpipe(int fd, const char* data, size_t size) {
  sigset_t sigpipe, previous;
  sigemptyset(&sigpipe);
  sigaddset(&sigpipe, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &sigpipe, &previous);
  ssize_t n = ::write(fd, data, size);
  int saved_errno = errno;
  if (n < 0 && saved_errno == EPIPE) {
    timespec no_wait{0, 0};
    ::sigtimedwait(&sigpipe, nullptr, &no_wait);
  }
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  errno = saved_errno;
  return n;
}

}  // namespace

AdapterProcess::AdapterProcess(const AdapterConfig& config, const std::vector<Endpoint>& redis,
                               const std::string& log_name)
    : command_(config.command),
      reply_timeout_(config.reply_timeout),
      start_timeout_(config.start_timeout) {
  if (command_.find_first_not_of(" \t") == std::string::npos)
    throw AdapterError("adapter command is empty");
  std::filesystem::path dir = config.log_dir;
  if (dir.empty()) {
    temp_dir_.emplace("locklab-adapter");
    dir = temp_dir_->path();
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  stderr_log_ = dir / log_name;
  if (!std::ofstream(stderr_log_, std::ios::trunc))
    throw AdapterError("adapter '" + command_ + "': cannot create its log " + stderr_log_.string());

  std::string endpoints;
  for (const Endpoint& e : redis) endpoints += (endpoints.empty() ? "" : ",") + e.str();
  ProcessSpec spec;
  // exec: the shell becomes the adapter, so pid() is the adapter's own pid.
  spec.argv = {"/bin/sh", "-c", "exec " + command_ + " --redis " + shell_quote(endpoints)};
  spec.env = config.env;
  spec.cwd = config.cwd;
  spec.output = stderr_log_;
  spec.pipe_stdio = true;
  try {
    process_ = std::make_unique<ChildProcess>(std::move(spec));
    set_nonblocking(process_->stdin_fd());
    set_nonblocking(process_->stdout_fd());
  } catch (const std::exception& e) {
    throw AdapterError("adapter '" + command_ + "' could not start: " + e.what());
  }
}

AdapterProcess::~AdapterProcess() {
  resume();
  process_->close_stdin();
  const auto deadline = steady_clock::now() + milliseconds(1000);
  for (;;) {
    std::lock_guard lock(process_mu_);
    if (process_->poll()) return;  // exited by itself; ChildProcess closes the pipes
    if (steady_clock::now() >= deadline) {
      // Still unreaped, so the group (the adapter and whatever it started) exists.
      ::kill(-process_->pid(), SIGKILL);
      process_->kill();
      return;
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
}

json AdapterProcess::request(json request,
                             const std::function<void(const std::string& step)>& on_step) {
  std::lock_guard lock(request_mu_);
  if (!failure_.empty()) throw AdapterError(failure_);
  const int64_t id = next_id_++;
  request["id"] = id;
  milliseconds timeout = reply_timeout_ + milliseconds(request.value("wait_ms", int64_t{0}));
  if (id == 1) timeout = std::max(timeout, start_timeout_);
  Deadline deadline{steady_clock::now(), paused_so_far(), timeout};

  write_line(request, deadline);
  for (;;) {
    const std::string line = read_line(request, deadline);
    json response;
    try {
      response = json::parse(line);
    } catch (const json::parse_error&) {
      fail("printed a line that is not JSON in reply to " + describe(request) + ": " +
           excerpt(line));
    }
    if (!response.is_object())
      fail("answered " + describe(request) + " with JSON that is not an object: " + excerpt(line));
    auto answered_id = response.find("id");
    if (answered_id == response.end() || !answered_id->is_number_integer())
      fail("answered " + describe(request) + " without an integer \"id\": " + excerpt(line));
    if (answered_id->get<int64_t>() != id)
      fail("answered id " + answered_id->dump() + " to " + describe(request) + ": " +
           excerpt(line));
    if (auto step = response.find("step"); step != response.end() && !response.contains("ok")) {
      if (!step->is_string() || step->get<std::string>().empty())
        fail("announced a step that is not a name during " + describe(request) + ": " +
             excerpt(line));
      if (!on_step)
        fail("announced step " + step->dump() + " during " + describe(request) +
             ", which takes no steps: " + excerpt(line));
      on_step(step->get<std::string>());
      // The time the lab held the adapter at the step is not the adapter's.
      deadline.start = steady_clock::now();
      deadline.paused_at_start = paused_so_far();
      write_line({{"id", id}, {"op", "continue"}}, deadline);
      continue;
    }
    auto ok = response.find("ok");
    if (ok == response.end() || !ok->is_boolean())
      fail("answered " + describe(request) + " without a boolean \"ok\": " + excerpt(line));
    return response;
  }
}

void AdapterProcess::pause() {
  std::lock_guard lock(process_mu_);
  if (paused_since_) return;
  if (!process_->poll()) ::kill(-process_->pid(), SIGSTOP);
  paused_since_ = steady_clock::now();
}

void AdapterProcess::resume() {
  std::lock_guard lock(process_mu_);
  if (!paused_since_) return;
  if (!process_->poll()) ::kill(-process_->pid(), SIGCONT);
  paused_total_ += std::chrono::duration_cast<milliseconds>(steady_clock::now() - *paused_since_);
  paused_since_.reset();
}

bool AdapterProcess::can_serve_again() {
  {
    std::lock_guard lock(request_mu_);
    if (!failure_.empty()) return false;
  }
  std::lock_guard lock(process_mu_);
  return !paused_since_ && !process_->poll();
}

milliseconds AdapterProcess::paused_so_far() {
  std::lock_guard lock(process_mu_);
  milliseconds total = paused_total_;
  if (paused_since_)
    total += std::chrono::duration_cast<milliseconds>(steady_clock::now() - *paused_since_);
  return total;
}

milliseconds AdapterProcess::remaining(const Deadline& deadline) {
  const auto paused = paused_so_far() - deadline.paused_at_start;
  const auto elapsed =
      std::chrono::duration_cast<milliseconds>(steady_clock::now() - deadline.start) - paused;
  return deadline.timeout - elapsed;
}

void AdapterProcess::write_line(const json& request, const Deadline& deadline) {
  const std::string data = request.dump() + "\n";
  size_t written = 0;
  while (written < data.size()) {
    const milliseconds left = remaining(deadline);
    if (left <= milliseconds(0))
      fail("did not read " + describe(request) + " within " +
           std::to_string(deadline.timeout.count()) + " ms");
    pollfd ready{process_->stdin_fd(), POLLOUT, 0};
    int n = ::poll(&ready, 1, int(std::min(left, kPollSlice).count()));
    if (n < 0 && errno != EINTR) fail(std::string("poll failed: ") + std::strerror(errno));
    if (n <= 0) continue;
    ssize_t w =
        write_without_sigpipe(process_->stdin_fd(), data.data() + written, data.size() - written);
    if (w > 0) {
      written += size_t(w);
    } else if (errno == EPIPE) {
      fail(exit_description("before reading " + describe(request)));
    } else if (errno != EAGAIN && errno != EINTR) {
      fail("could not be written to: " + std::string(std::strerror(errno)));
    }
  }
}

std::string AdapterProcess::read_line(const json& request, const Deadline& deadline) {
  for (;;) {
    const size_t newline = buffered_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffered_.substr(0, newline);
      buffered_.erase(0, newline + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      return line;
    }
    if (buffered_.size() > kMaxLine)
      fail("printed more than " + std::to_string(kMaxLine) +
           " bytes without a newline: " + excerpt(buffered_));
    const milliseconds left = remaining(deadline);
    if (left <= milliseconds(0))
      fail("did not answer " + describe(request) + " within " +
           std::to_string(deadline.timeout.count()) + " ms");
    pollfd ready{process_->stdout_fd(), POLLIN, 0};
    int n = ::poll(&ready, 1, int(std::min(left, kPollSlice).count()));
    if (n < 0 && errno != EINTR) fail(std::string("poll failed: ") + std::strerror(errno));
    if (n <= 0) continue;
    char chunk[4096];
    ssize_t r = ::read(process_->stdout_fd(), chunk, sizeof chunk);
    if (r > 0) {
      buffered_.append(chunk, size_t(r));
    } else if (r == 0) {
      fail(exit_description("before answering " + describe(request)));
    } else if (errno != EAGAIN && errno != EINTR) {
      fail("could not be read from: " + std::string(std::strerror(errno)));
    }
  }
}

std::string AdapterProcess::exit_description(const std::string& when) {
  // The adapter closed its end of a pipe: usually it is exiting; give it a moment.
  std::optional<int> status;
  const auto deadline = steady_clock::now() + milliseconds(1000);
  for (;;) {
    {
      std::lock_guard lock(process_mu_);
      status = process_->poll();
    }
    if (status || steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(milliseconds(10));
  }
  std::string what;
  if (status && WIFEXITED(*status) && WEXITSTATUS(*status) == 127) {
    what = "could not start: command not found (exit status 127)";
  } else if (status && WIFEXITED(*status) && WEXITSTATUS(*status) == 126) {
    what = "could not start: not executable (exit status 126)";
  } else {
    if (!status)
      what = "closed its stdout";
    else if (WIFEXITED(*status))
      what = "exited with status " + std::to_string(WEXITSTATUS(*status));
    else if (WIFSIGNALED(*status))
      what = "was killed by signal " + std::to_string(WTERMSIG(*status)) + " (" +
             ::strsignal(WTERMSIG(*status)) + ")";
    else
      what = "ended with wait status " + std::to_string(*status);
    what += " " + when;
  }
  const std::string last = last_log_line(stderr_log_);
  if (!last.empty()) what += " (last stderr line: " + excerpt(last, 200) + ")";
  return what;
}

void AdapterProcess::fail(const std::string& what) {
  failure_ = "adapter '" + command_ + "' " + what;
  throw AdapterError(failure_);
}

}  // namespace locklab
