// What must be undone if the lab is interrupted: live child pids and temp
// dirs. Internal to harness/core.
#pragma once

#include <sys/types.h>

#include <filesystem>

namespace locklab::cleanup {

void add_pid(pid_t pid);
void remove_pid(pid_t pid);
void add_dir(const std::filesystem::path& dir);
void remove_dir(const std::filesystem::path& dir);
// Runs every registered undo: SIGKILL children, reap them, remove dirs.
void run_all();

}  // namespace locklab::cleanup
