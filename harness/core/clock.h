// Time as a lock client sees it. Lock code reads time only through a Clock, so
// the harness can skew, jump, drift or freeze it per client.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>

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

// Time since the harness started, monotonic; what the history's time_ns is.
// Real time, or on a thread bound to a run's virtual time (virtual_time.h),
// that run's virtual time on the same scale.
int64_t monotonic_ns();

// Real time since the harness started, whatever clock the thread is on.
int64_t real_monotonic_ns();

// This machine's CLOCK_MONOTONIC in ns, the reading any process on it gets
// (an adapter dates what it reports by it).
int64_t machine_monotonic_ns();

// The monotonic_ns() of the moment CLOCK_MONOTONIC read `machine_ns`.
int64_t monotonic_ns_at(int64_t machine_ns);

// A client's clock: wall time (the run's virtual wall time on a thread bound
// to one when it was made) plus an offset, advancing at a rate, both
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

  // The harness monotonic time (monotonic_ns()) at which this clock gave
  // `reading`, if it was one of its latest readings: a lock that notes when
  // it began an attempt by this clock lets the history say when that was in
  // the lab's own time. nullopt when no recent reading was `reading`.
  std::optional<int64_t> real_time_of(int64_t reading);

 private:
  int64_t reading_locked(int64_t real_mono) const;

  // The latest readings and when they were taken, oldest overwritten first.
  static constexpr size_t kRemembered = 64;
  struct Remembered {
    int64_t reading = 0;
    int64_t real_mono = -1;  // -1: empty
  };
  std::array<Remembered, kRemembered> remembered_{};
  size_t next_remembered_ = 0;

  PauseGate* gate_;
  std::mutex mu_;
  int64_t anchor_real_mono_;  // real monotonic ns at the last rate change
  int64_t anchor_reading_;    // this clock's reading at that moment
  double rate_ = 1.0;
};

}  // namespace locklab
