// Adapters kept between runs (PROTOCOL.md, "Kept between runs"). A search
// that plays one lock many times over, or a comparison that plays every
// story against it, would otherwise start every client's runtime anew for
// every run, and a JVM takes most of a second of CPU to start: on two cores
// that start-up, not the stories' timers, was what the safety envelopes
// waited on. With a pool, a client that ended normally asks its adapter to
// reset (forget the run, close every connection) and leaves it here; a
// later client of the same command, directory and environment takes it and
// says hello with its own endpoints.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "adapter_process.h"
#include "temp_dir.h"

namespace locklab {

class AdapterPool {
 public:
  // A process of the pool keeps its stderr in a file of the pool's temp
  // dir; each client copies its own part of it where its run keeps logs.
  // It keeps at most `max_idle_per_command` idle adapters of one command
  // (with its directory and environment), and `max_idle` in all.
  explicit AdapterPool(size_t max_idle_per_command = kMaxIdlePerCommand,
                       size_t max_idle = kMaxIdle);
  // Stops every idle adapter (AdapterProcess's destructor).
  ~AdapterPool();
  AdapterPool(const AdapterPool&) = delete;
  AdapterPool& operator=(const AdapterPool&) = delete;

  // An idle adapter started from `config`'s command, directory and
  // environment, reset by its last client; nullptr when there is none.
  std::unique_ptr<AdapterProcess> take(const AdapterConfig& config);

  // Starts a new adapter of `config` on `redis`, its stderr in the pool's
  // dir. Throws AdapterError as AdapterProcess does.
  std::unique_ptr<AdapterProcess> start(const AdapterConfig& config,
                                        const std::vector<Endpoint>& redis);

  // Keeps `adapter`, started from `config` and reset, for a later take().
  // Beyond the limits, the adapter idle the longest among those of its
  // command (or, at the limit in all, among all) is stopped.
  void keep(const AdapterConfig& config, std::unique_ptr<AdapterProcess> adapter);

  // Stops every idle adapter of `command`, whatever its directory and
  // environment: no later run will take one (a search of that lock is done).
  void forget(const std::string& command);

  // How many adapters the pool started, and how many times a client took
  // one that an earlier client had reset.
  struct Counts {
    int started = 0;
    int reused = 0;
  };
  Counts counts() const;

  // As many as a story has clients: a comparison plays each lock's cells
  // one story after another, every lock in turn, so each lock's adapters
  // wait out a round of the others'.
  static constexpr size_t kMaxIdlePerCommand = 4;
  static constexpr size_t kMaxIdle = 128;

 private:
  struct Idle {
    std::string command;
    std::filesystem::path cwd;
    std::map<std::string, std::string> env;
    std::unique_ptr<AdapterProcess> adapter;
  };

  const size_t max_idle_per_command_, max_idle_;
  mutable std::mutex mu_;
  TempDir logs_;
  std::vector<Idle> idle_;  // the longest idle first
  Counts counts_;
  int logs_named_ = 0;
};

}  // namespace locklab
