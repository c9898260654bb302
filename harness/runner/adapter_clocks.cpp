#include "adapter_clocks.h"

namespace locklab {

std::unique_ptr<ServerClock> AdapterClocks::take(const std::string& command) {
  {
    std::lock_guard lock(mu_);
    auto& idle = idle_[command];
    if (!idle.empty()) {
      std::unique_ptr<ServerClock> clock = std::move(idle.back());
      idle.pop_back();
      return clock;
    }
  }
  return std::make_unique<ServerClock>();
}

void AdapterClocks::give_back(const std::string& command, std::unique_ptr<ServerClock> clock) {
  clock->reset();
  std::lock_guard lock(mu_);
  idle_[command].push_back(std::move(clock));
}

}  // namespace locklab
