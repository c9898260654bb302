// Time as a lock client sees it. Lock code reads time only through a Clock, so
// the harness can skew, jump, drift or freeze it per client.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

#include "pause_gate.h"

namespace locklab {

class Clock {
 public:
  virtual ~Clock() = default;

  // Wall-clock time as this client believes it to be, in ns since the Unix
  // epoch. May jump forward or back, or run fast or slow, when skewed.
  virtual int64_t now_ns() = 0;

  // Blocks for `d` as measured by this clock (a clock running at rate 2 sleeps
  // half the real time). A paused client wakes only when the pause ends.
  virtual void sleep_for(std::chrono::nanoseconds d) = 0;

  int64_t now_ms() { return now_ns() / 1'000'000; }
};

// Real time since the harness started, monotonic; what the history's time_ns is.
int64_t monotonic_ns();

// A client's clock: real wall time plus an offset, advancing at a rate, both
// changeable at any moment (a jump changes the offset, a drift the rate).
// Every reading and sleep first passes the client's pause gate, so a
// stop-the-world pause freezes whoever asks the time.
class SkewableClock final : public Clock {
 public:
  explicit SkewableClock(PauseGate* gate = nullptr);

  int64_t now_ns() override;
  void sleep_for(std::chrono::nanoseconds d) override;

  // Moves this clock by `delta` at once (positive = forward).
  void jump(std::chrono::nanoseconds delta);
  // From now on this clock advances `rate` seconds per real second (> 0).
  void set_rate(double rate);
  double rate();

 private:
  int64_t reading_locked(int64_t real_mono) const;

  PauseGate* gate_;
  std::mutex mu_;
  int64_t anchor_real_mono_;  // real monotonic ns at the last rate change
  int64_t anchor_reading_;    // this clock's reading at that moment
  double rate_ = 1.0;
};

}  // namespace locklab
