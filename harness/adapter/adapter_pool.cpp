#include "adapter_pool.h"

namespace locklab {

AdapterPool::AdapterPool() : logs_("locklab-adapters") {}

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
    log_name = "adapter-" + std::to_string(++counts_.started) + ".stderr";
  }
  return std::make_unique<AdapterProcess>(own, redis, log_name);
}

void AdapterPool::keep(const AdapterConfig& config, std::unique_ptr<AdapterProcess> adapter) {
  std::unique_ptr<AdapterProcess> stopped;  // stopped outside the lock: it may take a second
  std::lock_guard lock(mu_);
  idle_.push_back({config.command, config.cwd, config.env, std::move(adapter)});
  if (idle_.size() > kMaxIdle) {
    stopped = std::move(idle_.front().adapter);
    idle_.erase(idle_.begin());
  }
}

AdapterPool::Counts AdapterPool::counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

}  // namespace locklab
