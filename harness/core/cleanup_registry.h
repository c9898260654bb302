// What must be undone if the lab is interrupted: live child pids, temp
// dirs and registered actions. Internal to harness/core.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>

namespace locklab::cleanup {

void add_pid(pid_t pid);
void remove_pid(pid_t pid);
void add_dir(const std::filesystem::path& dir);
void remove_dir(const std::filesystem::path& dir);
// Something else to undo (e.g. a network namespace): run after the children
// are killed and before the dirs are removed.
uint64_t add_action(std::function<void()> action);
void remove_action(uint64_t id);
// Runs every registered undo: SIGKILL children, reap them, remove dirs.
void run_all();

}  // namespace locklab::cleanup
