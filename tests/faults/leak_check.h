// Proof that a test left nothing behind: the processes it started are gone,
// the files it made are removed, and no thread of the lab's fault tools runs.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace locklab::testing {

// Alive and not a zombie.
inline bool pid_alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return false;
  std::string line;
  std::getline(stat, line);
  auto close = line.rfind(')');
  return close != std::string::npos && line.size() > close + 2 && line[close + 2] != 'Z';
}

// Names of this process's threads (as set by pthread_setname_np).
inline std::vector<std::string> thread_names() {
  std::vector<std::string> names;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    names.push_back(name);
  }
  return names;
}

inline int threads_named(const std::string& name) {
  int count = 0;
  for (const auto& n : thread_names()) count += n == name;
  return count;
}

// Records what a test started; check() expects all of it gone.
class LeakCheck {
 public:
  void pid(pid_t pid) { pids_.push_back(pid); }
  void path(const std::filesystem::path& path) { paths_.push_back(path); }

  void check() const {
    for (pid_t pid : pids_) {
      // Destructors reap their children, so a short grace is plenty.
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (pid_alive(pid) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      EXPECT_FALSE(pid_alive(pid)) << "process " << pid << " outlived its owner";
    }
    for (const auto& path : paths_)
      EXPECT_FALSE(std::filesystem::exists(path)) << path << " left behind";
    EXPECT_EQ(threads_named("locklab-proxy"), 0) << "a proxy thread outlived its proxy";
    EXPECT_EQ(threads_named("locklab-clock"), 0) << "a clock thread outlived its clock";
  }

 private:
  std::vector<pid_t> pids_;
  std::vector<std::filesystem::path> paths_;
};

}  // namespace locklab::testing
