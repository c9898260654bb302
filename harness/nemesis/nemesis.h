// The nemesis: applies a scenario's faults to a run — at a time, or right
// after a client step — undoes each when its duration ends, heals everything
// when the run ends, and records every start and end as a `nemesis` event.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fault.h"
#include "recorder.h"

namespace locklab {

class Cluster;
class PauseGate;
class ServerClock;
class SkewableClock;

// What the nemesis may do to one client.
struct ClientHandle {
  std::string id;
  PauseGate* gate;
  SkewableClock* clock;
  std::function<void()> crash;  // the client dies at its next step
  // The wall clock of the client's lock process, when the lock runs outside
  // the lab (an adapter): client clock faults move it with `clock`.
  ServerClock* process_clock = nullptr;
};

class Nemesis {
 public:
  // Validates every fault's targets against this run (throws
  // std::runtime_error naming the fault) but applies nothing yet.
  Nemesis(std::vector<Fault> faults, Cluster& cluster, std::vector<ClientHandle> clients,
          history::ProcessLog& log);
  // Heals and stops (same as stop()).
  ~Nemesis();

  // Applies the faults at time 0, then starts the clock for the other timed ones.
  void start();

  // Called by client `client` at each step. Applies the faults this step
  // triggers; a pause of this very client blocks here for its duration, and a
  // crash of it throws ClientCrashed. Cheap when nothing matches.
  void on_step(const std::string& client, std::string_view step);

  // Undoes every fault still active, stops the timer thread. Idempotent.
  void stop();

 private:
  using Action = std::function<void()>;
  void schedule(int64_t at_ns, Action action);
  void timer_loop();
  void apply(const Fault& fault, const std::string& trigger_client);
  void record(const Fault& fault, const char* phase, nlohmann::json extra = {});
  std::vector<size_t> servers_of(const Fault& fault) const;
  std::vector<size_t> clients_of(const Fault& fault, const std::string& trigger_client) const;
  size_t client_index(const std::string& id) const;

  std::vector<Fault> faults_;
  Cluster& cluster_;
  std::vector<ClientHandle> clients_;
  history::ProcessLog& log_;

  std::mutex mu_;  // guards everything below and the log
  std::condition_variable wake_;
  std::multimap<int64_t, Action> timeline_;  // monotonic ns → action
  std::map<std::pair<std::string, std::string>, int> step_counts_;
  std::map<int, std::pair<const Fault*, Action>> active_;  // undo of each fault in force
  int next_id_ = 0;
  bool stopping_ = false;
  std::thread timer_;
  std::vector<std::thread> workers_;  // faults that block (DEBUG SLEEP, delayed restarts)
  int64_t start_ns_ = 0;
};

}  // namespace locklab
