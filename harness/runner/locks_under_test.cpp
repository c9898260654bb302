#include "locks_under_test.h"

#include <algorithm>
#include <stdexcept>

#include "libraries.h"
#include "process.h"

namespace locklab {

LockUnderTest adapter_lock(const std::string& command, const std::string& like) {
  std::optional<std::string> stands_in_for;
  if (!like.empty()) stands_in_for = like;
  return LockUnderTest::from_adapter({.command = command}, stands_in_for);
}

std::optional<LockUnderTest> adapter_lock_if_given(const std::string& command,
                                                   const std::string& like) {
  if (command.empty()) return std::nullopt;
  return adapter_lock(command, like);
}

std::vector<LockUnderTest> built_ins_and_libraries(const std::string& libraries_file,
                                                   const std::vector<std::string>& wanted) {
  std::vector<LockUnderTest> locks = built_in_locks();
  if (!libraries_file.empty())
    for (LockUnderTest& library : load_libraries(libraries_file, wanted).locks)
      locks.push_back(std::move(library));
  return locks;
}

std::vector<LockUnderTest> with_adapters_kept(std::vector<LockUnderTest> locks,
                                              const std::shared_ptr<AdapterPool>& pool) {
  auto clocks = pool ? std::make_shared<AdapterClocks>() : nullptr;
  for (LockUnderTest& lock : locks) {
    if (!lock.adapter) continue;
    lock.adapter->pool = pool;
    lock.adapter_clocks = clocks;
  }
  return locks;
}

const LockUnderTest* find_lock(const std::vector<LockUnderTest>& locks, const std::string& name) {
  auto it = std::find_if(locks.begin(), locks.end(),
                         [&](const LockUnderTest& lock) { return lock.name == name; });
  return it == locks.end() ? nullptr : &*it;
}

std::shared_ptr<const Target> load_checked_target(const std::string& file) {
  if (file.empty()) return nullptr;
  auto target = std::make_shared<Target>(load_target(file));
  check_target_reachable(*target);
  return target;
}

void require_redis_server(const Servers& servers) {
  if (!servers.target && !program_available("redis-server"))
    throw std::runtime_error("redis-server is not installed (apt-get install redis-server)");
}

Servers checked_servers(const std::string& target_file, const std::string& time) {
  Servers servers{load_checked_target(target_file)};
  servers.time = time_mode_named(time);
  require_redis_server(servers);
  return servers;
}

}  // namespace locklab
