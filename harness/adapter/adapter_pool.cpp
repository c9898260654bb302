#include "adapter_pool.h"

#include <algorithm>

namespace locklab {

AdapterPool::AdapterPool(size_t max_idle_per_command, size_t max_idle)
    : max_idle_per_command_(std::max<size_t>(max_idle_per_command, 1)),
      max_idle_(std::max<size_t>(max_idle, 1)),
      logs_("locklab-adapters") {}

AdapterPool::~AdapterPool() {
  // Stopped before logs_ goes: each waits up to a second for its adapter.
  idle_.clear();
}

std::unique_ptr<AdapterProcess> AdapterPool::take(const AdapterConfig& config) {
  std::lock_guard lock(mu_);
  for (auto it = idle_.begin(); it != idle_.end(); ++it) {
    if (it->command != config.command || it->cwd != config.cwd || it->env != config.env) continue;
    std::unique_ptr<AdapterProcess> adapter = std::move(it->adapter);
    idle_.erase(it);
    ++counts_.reused;
    return adapter;
  }
  return nullptr;
}

std::unique_ptr<AdapterProcess> AdapterPool::start(const AdapterConfig& config,
                                                   const std::vector<Endpoint>& redis) {
  AdapterConfig own = config;
  own.log_dir = logs_.path();
  std::string log_name;
  {
    std::lock_guard lock(mu_);
    log_name = "adapter-" + std::to_string(++logs_named_) + ".stderr";
  }
  auto adapter = std::make_unique<AdapterProcess>(own, redis, log_name);
  std::lock_guard lock(mu_);
  ++counts_.started;
  return adapter;
}

void AdapterPool::keep(const AdapterConfig& config, std::unique_ptr<AdapterProcess> adapter) {
  std::unique_ptr<AdapterProcess> stopped;  // stopped outside the lock: it may take a second
  std::lock_guard lock(mu_);
  const auto same = [&](const Idle& idle) {
    return idle.command == config.command && idle.cwd == config.cwd && idle.env == config.env;
  };
  std::vector<Idle>::iterator oldest = idle_.end();
  if (size_t(std::count_if(idle_.begin(), idle_.end(), same)) >= max_idle_per_command_)
    oldest = std::find_if(idle_.begin(), idle_.end(), same);
  else if (idle_.size() >= max_idle_)
    oldest = idle_.begin();
  if (oldest != idle_.end()) {
    stopped = std::move(oldest->adapter);
    idle_.erase(oldest);
  }
  idle_.push_back({config.command, config.cwd, config.env, std::move(adapter)});
}

void AdapterPool::forget(const std::string& command) {
  std::vector<std::unique_ptr<AdapterProcess>> stopped;  // stopped outside the lock
  std::lock_guard lock(mu_);
  for (auto it = idle_.begin(); it != idle_.end();) {
    if (it->command != command) {
      ++it;
      continue;
    }
    stopped.push_back(std::move(it->adapter));
    it = idle_.erase(it);
  }
}

AdapterPool::Counts AdapterPool::counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

}  // namespace locklab
