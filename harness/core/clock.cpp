#include "clock.h"

#include <chrono>
#include <stdexcept>

#include "fibers.h"
#include "virtual_time.h"

namespace locklab {
namespace {

int64_t wall_ns_now() {
  if (const VirtualTime* time = bound_virtual_time()) return time->wall_ns();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const auto kProcessStart = std::chrono::steady_clock::now();

}  // namespace

int64_t monotonic_ns() {
  if (const VirtualTime* time = bound_virtual_time()) return time->now_ns();
  return real_monotonic_ns();
}

int64_t real_monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              kProcessStart)
      .count();
}

// std::chrono::steady_clock is CLOCK_MONOTONIC on Linux (libstdc++).
int64_t machine_monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t monotonic_ns_at(int64_t machine_ns) {
  return machine_ns -
         std::chrono::duration_cast<std::chrono::nanoseconds>(kProcessStart.time_since_epoch())
             .count();
}

SkewableClock::SkewableClock(PauseGate* gate)
    : gate_(gate), anchor_real_mono_(monotonic_ns()), anchor_reading_(wall_ns_now()) {}

int64_t SkewableClock::reading_locked(int64_t real_mono) const {
  return anchor_reading_ + static_cast<int64_t>(rate_ * double(real_mono - anchor_real_mono_));
}

int64_t SkewableClock::now_ns() {
  if (gate_) gate_->pass();
  std::lock_guard lock(mu_);
  const int64_t real = monotonic_ns();
  const int64_t reading = reading_locked(real);
  remembered_[next_remembered_++ % kRemembered] = {reading, real};
  return reading;
}

std::optional<int64_t> SkewableClock::real_time_of(int64_t reading) {
  std::lock_guard lock(mu_);
  for (const Remembered& r : remembered_)
    if (r.real_mono >= 0 && r.reading == reading) return r.real_mono;
  return std::nullopt;
}

void SkewableClock::sleep_for(std::chrono::nanoseconds d) {
  if (gate_) gate_->pass();
  double r = rate();
  if (d.count() > 0) locklab::sleep_for(std::chrono::nanoseconds(int64_t(double(d.count()) / r)));
  if (gate_) gate_->pass();
}

void SkewableClock::jump(std::chrono::nanoseconds delta) {
  std::lock_guard lock(mu_);
  anchor_reading_ += delta.count();
}

void SkewableClock::set_rate(double rate) {
  if (!(rate > 0)) throw std::invalid_argument("clock rate must be > 0");
  std::lock_guard lock(mu_);
  int64_t now = monotonic_ns();
  anchor_reading_ = reading_locked(now);
  anchor_real_mono_ = now;
  rate_ = rate;
}

double SkewableClock::rate() {
  std::lock_guard lock(mu_);
  return rate_;
}

}  // namespace locklab
