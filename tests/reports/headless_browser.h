// Headless Chromium for the report tests: one page load per call, started
// by the test, in a process group of its own that is always killed (by its
// id) when the load returns, even on a timeout or an exception.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "process.h"
#include "run_dir.h"
#include "temp_dir.h"

namespace locklab::reports::fixtures {

// The Chromium executable on PATH (Debian names it "chromium"), or nullopt.
inline std::optional<std::string> find_chromium() {
  for (const char* name : {"chromium", "chromium-browser"})
    if (program_available(name)) return std::string(name);
  return std::nullopt;
}

// A started browser: its own process group, killed and reaped on destruction.
class BrowserProcess {
 public:
  BrowserProcess(const std::vector<std::string>& argv, const std::filesystem::path& out,
                 const std::filesystem::path& err) {
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("headless browser: fork failed");
    if (pid_ == 0) {
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // the test dies: so does the browser
      int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int null_fd = ::open("/dev/null", O_RDONLY);
      if (out_fd < 0 || err_fd < 0 || null_fd < 0) ::_exit(126);
      ::dup2(null_fd, 0);
      ::dup2(out_fd, 1);
      ::dup2(err_fd, 2);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      ::_exit(127);
    }
    ::setpgid(pid_, pid_);  // also here: whichever runs first, the group exists
  }
  ~BrowserProcess() { kill(); }
  BrowserProcess(const BrowserProcess&) = delete;
  BrowserProcess& operator=(const BrowserProcess&) = delete;

  // Waits for the browser to exit; nullopt when `limit` passed first.
  std::optional<int> wait(std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_) {
        reaped_ = true;
        ::kill(-pid_, SIGKILL);  // helpers it left behind in its group
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return std::nullopt;
  }

  // SIGKILL to the browser's process group, then reap the browser.
  void kill() {
    if (pid_ <= 0 || reaped_) return;
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
  }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

struct PageLoad {
  std::string dom;                         // the DOM after the page's scripts ran
  std::vector<std::string> console_lines;  // what the page wrote to its console
  std::string log;                         // the browser's whole stderr
};

// Loads `page` (with `fragment`, without '#', if given), dumps its DOM and
// writes a screenshot to `screenshot` when not empty. Throws std::runtime_error
// when the browser fails or takes longer than `limit`.
inline PageLoad load_page(const std::string& chromium, const std::filesystem::path& page,
                          const std::string& fragment, const std::filesystem::path& screenshot,
                          std::chrono::milliseconds limit = std::chrono::seconds(60)) {
  TempDir profile("browser-profile");  // an empty --user-data-dir per load
  TempDir logs("browser-logs");
  std::vector<std::string> argv = {chromium,
                                   "--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--no-first-run",
                                   "--disable-background-networking",
                                   "--disable-component-update",
                                   "--disable-sync",
                                   "--hide-scrollbars",
                                   "--user-data-dir=" + profile.path().string(),
                                   "--enable-logging=stderr",
                                   "--v=0",
                                   "--window-size=1400,2400",
                                   "--dump-dom"};
  if (!screenshot.empty()) argv.push_back("--screenshot=" + screenshot.string());
  argv.push_back("file://" + std::filesystem::absolute(page).string() +
                 (fragment.empty() ? "" : "#" + fragment));
  const auto out = logs.path() / "dom.html", err = logs.path() / "stderr.txt";
  BrowserProcess browser(argv, out, err);
  std::optional<int> status = browser.wait(limit);
  browser.kill();
  PageLoad load;
  load.dom = read_text(out);
  load.log = read_text(err);
  if (!status)
    throw std::runtime_error("headless browser: no answer within " + std::to_string(limit.count()) +
                             " ms loading " + page.string());
  if (*status != 0 || load.dom.empty())
    throw std::runtime_error("headless browser: exit status " + std::to_string(*status) +
                             " loading " + page.string() + ":\n" + load.log);
  size_t at = 0;
  while (at < load.log.size()) {
    size_t end = load.log.find('\n', at);
    if (end == std::string::npos) end = load.log.size();
    std::string line = load.log.substr(at, end - at);
    if (line.find(":CONSOLE") != std::string::npos || line.find("Uncaught") != std::string::npos)
      load.console_lines.push_back(line);
    at = end + 1;
  }
  return load;
}

}  // namespace locklab::reports::fixtures
