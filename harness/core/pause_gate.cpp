#include "pause_gate.h"

#include <mutex>

namespace locklab {

void PauseGate::pass() {
  if (closed_ == 0) return;
  std::unique_lock lock(mu_);
  opened_.wait(lock, [&] { return closed_ == 0; });
}

void PauseGate::close() {
  std::lock_guard lock(mu_);
  if (++closed_ == 1)
    for (auto& listener : listeners_) listener(true);
}

void PauseGate::open() {
  std::lock_guard lock(mu_);
  if (closed_ > 0 && --closed_ == 0) {
    for (auto& listener : listeners_) listener(false);
    opened_.notify_all();
  }
}

void PauseGate::on_change(std::function<void(bool closed)> listener) {
  std::lock_guard lock(mu_);
  listeners_.push_back(std::move(listener));
}

bool PauseGate::is_closed() {
  std::lock_guard lock(mu_);
  return closed_ > 0;
}

}  // namespace locklab
