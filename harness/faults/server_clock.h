// The wall clock of processes the lab starts (redis-server, adapters), moved
// by the lab at run time. A ServerClock owns a small shared file holding an
// offset; a process started with env() runs under the clock shim
// (clock_shim/clock_shim.c), which adds that offset to every wall-clock
// reading. One ServerClock may serve several processes: they then share one
// skewed clock.
//
// On a thread bound to a run's virtual time (virtual_time.h) when made, the
// clock is that virtual wall time plus the offset, and a rate moves the
// offset as the virtual clock advances.
//
// Redis 7.0 judges key expiry and answers TIME by the wall clock, so moving a
// server's clock expires its keys early (forward) or late (back).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "temp_dir.h"

namespace locklab {

class VirtualTime;

class ServerClock {
 public:
  // Creates the offset file (offset 0) in a fresh temp dir. Throws
  // std::runtime_error if the file cannot be created or the shim is not found.
  ServerClock();
  // Stops the rate thread and removes the file. Processes still running keep
  // their last offset (their mapping outlives the file).
  ~ServerClock();
  ServerClock(const ServerClock&) = delete;
  ServerClock& operator=(const ServerClock&) = delete;

  // The environment a process needs to run on this clock: LD_PRELOAD (the
  // absolute path of the shim) and LOCKLAB_CLOCK_FILE. Pass it as
  // RedisServerOptions::env or ProcessSpec::env.
  std::map<std::string, std::string> env() const;

  // Moves the clock by `delta` at once (negative = back in time).
  void jump(std::chrono::nanoseconds delta);

  // From now on the clock advances `rate` seconds per real second (> 0; 1 =
  // normal speed). A background thread moves the offset every few ms, so the
  // clock runs in small steps, never backwards while rate > 0.
  void set_rate(double rate);

  // How far the clock is from real wall time right now.
  std::chrono::nanoseconds offset() const;

  // Back to real wall time (offset 0, rate 1), with no thread moving it: a
  // clock that waits for another run (AdapterClocks).
  void reset();

  const std::filesystem::path& file() const { return file_; }

  // Where the clock shim library is, in this order: the environment variable
  // LOCKLAB_CLOCK_SHIM if set; the path of the built library recorded at
  // build time; liblocklab_clock_shim.so next to the running executable.
  // Throws std::runtime_error listing the places tried if none exists.
  static std::filesystem::path shim_path();

 private:
  // Now, in ns of the clock the offset is anchored to (steady or virtual).
  int64_t now_ns() const;
  int64_t offset_at_locked(int64_t mono_ns) const;
  void publish_locked(int64_t mono_ns);
  void drift_loop();

  TempDir dir_;
  std::filesystem::path file_;
  std::filesystem::path shim_;
  int64_t* shared_offset_ = nullptr;  // the mapped first word of file_

  mutable std::mutex mu_;
  std::condition_variable stop_requested_;
  bool stopping_ = false;
  int64_t anchor_mono_ns_ = 0;    // monotonic time of the last jump or rate change
  int64_t anchor_offset_ns_ = 0;  // the offset at that moment
  double rate_ = 1.0;
  std::thread drift_;            // started by the first set_rate(); joined by the destructor
  VirtualTime* time_;            // the run's virtual time, or nullptr
  std::optional<int> listener_;  // on time_, instead of drift_
};

}  // namespace locklab
