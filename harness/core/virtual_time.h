// Virtual time: one run's clock, which stands still while anything of the run
// can make progress and jumps, in one step, to the earliest deadline when
// nothing can. A run on it spends no wall time waiting on leases, work, think
// times, pauses or retries, and repeats its history byte for byte.
//
// Who reads it: a thread bound to a VirtualTime (VirtualTimeBinding) gets its
// time from monotonic_ns() and its clients' wall clocks (clock.h); its fibers
// (fibers.h) sleep on it; every redis-server of the run reads its wall clock
// from it through the clock shim (one shared word, env()). Who moves it: the
// fiber scheduler of the run, and only when no fiber can run and no request
// waits for its answer (fibers.cpp). Whatever the run does between two
// moves — a command served, a fault applied, a server restarted — happens at
// one instant of it.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>

#include "listeners.h"
#include "temp_dir.h"
#include "word_table.h"

namespace locklab {

// How a run keeps time: the machine's clocks, a virtual clock, or virtual
// wherever the cell allows it and real elsewhere.
enum class TimeMode { Real, Virtual, Auto };

inline constexpr auto kTimeModes = word_table<TimeMode>({
    {TimeMode::Real, "real", "the machine's clocks"},
    {TimeMode::Virtual, "virtual", "a clock the lab moves whenever everyone waits"},
    {TimeMode::Auto, "auto", "virtual where the cell allows it, real elsewhere"},
});

// "real", "virtual", "auto".
std::string_view time_mode_name(TimeMode mode);
// The mode named `name`; throws std::invalid_argument naming the choices.
TimeMode time_mode_named(std::string_view name);

class VirtualTime {
 public:
  // The wall time every virtual clock starts at (ns since the Unix epoch,
  // 2027-01-15): fixed, so that a run's wall clock readings repeat too.
  static constexpr int64_t kStartWallNs = 1'800'000'000'000'000'000;

  // Starts at the real monotonic_ns() of now and at kStartWallNs, and
  // creates the shared word the clock shim reads. Throws std::runtime_error
  // if the word's file cannot be made.
  VirtualTime();
  ~VirtualTime();
  VirtualTime(const VirtualTime&) = delete;
  VirtualTime& operator=(const VirtualTime&) = delete;

  // Now, on the scale of monotonic_ns().
  int64_t now_ns() const;
  // Now as a wall clock reading (ns since the Unix epoch).
  int64_t wall_ns() const;

  // What a process under the clock shim needs in its environment to read
  // its wall clock from this one: LOCKLAB_VIRTUAL_CLOCK_FILE (ServerClock
  // adds the shim itself).
  std::map<std::string, std::string> env() const;

  // Moves the clock to `at_ns` (monotonic_ns() scale; never back: an
  // earlier `at_ns` leaves it), publishes it to the shared word, then calls
  // every advance listener. The fiber scheduler calls it when nothing can
  // make progress; nothing else should.
  void advance_to(int64_t at_ns);

  // `listener` is called after every advance, on the advancing thread (a
  // server clock running fast or slow republishes its offset). Returns an
  // id for remove_listener().
  int on_advance(std::function<void()> listener);
  void remove_listener(int id);

 private:
  TempDir dir_;
  std::filesystem::path file_;
  int64_t* shared_wall_ = nullptr;  // the mapped word of file_
  int64_t start_mono_ns_;
  std::atomic<int64_t> now_ns_;
  Listeners listeners_;
};

// The VirtualTime the calling thread is bound to, or nullptr: real time.
VirtualTime* bound_virtual_time();

// Binds the calling thread to `time` (nullptr: real time) for its lifetime,
// and restores the previous binding after.
class VirtualTimeBinding {
 public:
  explicit VirtualTimeBinding(VirtualTime* time);
  ~VirtualTimeBinding();
  VirtualTimeBinding(const VirtualTimeBinding&) = delete;
  VirtualTimeBinding& operator=(const VirtualTimeBinding&) = delete;

 private:
  VirtualTime* previous_;
};

}  // namespace locklab
