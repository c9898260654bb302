#include "simulated_link.h"

#include <stdexcept>

#include "clock.h"

namespace locklab {

void SimulatedLink::changed(std::unique_lock<std::mutex>& lock) {
  ++changes_;
  lock.unlock();
  change_.notify_all();
}

void SimulatedLink::pass() {
  std::unique_lock lock(mu_);
  if (mode_ == Mode::Blackhole) ++heals_;
  mode_ = Mode::Pass;
  changed(lock);
}

void SimulatedLink::delay(Direction, std::chrono::milliseconds fixed,
                          std::chrono::milliseconds jitter) {
  if (fixed.count() != 0 || jitter.count() != 0)
    throw std::logic_error("a link on virtual time cannot delay traffic (delays keep real time)");
}

void SimulatedLink::blackhole() {
  std::unique_lock lock(mu_);
  mode_ = Mode::Blackhole;
  changed(lock);
}

void SimulatedLink::reject() {
  std::unique_lock lock(mu_);
  mode_ = Mode::Reject;
  ++closes_;
  changed(lock);
}

void SimulatedLink::cut() {
  std::unique_lock lock(mu_);
  ++closes_;
  changed(lock);
}

bool SimulatedLink::refuses_connections() const {
  std::lock_guard lock(mu_);
  return mode_ == Mode::Reject;
}

bool SimulatedLink::drops_requests() const {
  std::lock_guard lock(mu_);
  return mode_ == Mode::Blackhole;
}

uint64_t SimulatedLink::closes() const {
  std::lock_guard lock(mu_);
  return closes_;
}

uint64_t SimulatedLink::heals() const {
  std::lock_guard lock(mu_);
  return heals_;
}

void SimulatedLink::wait_for_change(int64_t deadline_ns) {
  std::unique_lock lock(mu_);
  const uint64_t seen = changes_;
  while (changes_ == seen && monotonic_ns() < deadline_ns) change_.wait_until(lock, deadline_ns);
}

}  // namespace locklab
