// The nemesis: applies a run's schedule of faults — at a time, or right
// after a client step — undoes each when its duration ends, heals everything
// when the run ends, records every start and end as a `nemesis` event, and
// remembers which faults fired, so that a run that did not tell its story
// can say so.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "fault_targets.h"
#include "fibers.h"
#include "recorder.h"
#include "schedule.h"

namespace locklab {

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

// What became of one fault of the schedule (times in ns since start()).
struct FaultOutcome {
  bool fired = false;
  int64_t fired_at_ns = 0;
  std::optional<int64_t> ended_at_ns;  // undone, healed, restarted or failed over
};

class Nemesis {
 public:
  // Validates every applicable fault's targets against `targets` and
  // `clients` (throws std::runtime_error naming the fault) but applies
  // nothing yet.
  Nemesis(Schedule schedule, FaultTargets& targets, std::vector<ClientHandle> clients,
          history::ProcessLog& log);
  // Heals and stops (same as stop()).
  ~Nemesis();

  // Applies the faults at time 0, then starts the clock for the other timed
  // ones: a thread of its own runs them, or, with `own_thread` false, the
  // caller's run_timeline() (a fiber of a run on virtual time, whose clock
  // then waits for the nemesis too).
  void start(bool own_thread = true);

  // Applies the timed faults as their times come, on the calling thread or
  // fiber, until end_timeline() or stop().
  void run_timeline();

  // At `at_ns` (monotonic_ns() scale: the run's end), every fault still
  // waiting for its `until` step stops waiting (the step never came) and is
  // undone unless its duration still holds it: a client paused until
  // another's step then sees that the run is over, where it would otherwise
  // wait at its gate for ever. A pause that fires after that (a client's
  // step in the run's overtime, finishing its last operation) ends at once:
  // it can tell nothing more, and would only keep the run from ending.
  void end_waits_at(int64_t at_ns);

  // Makes run_timeline() return; the faults in force stay until stop().
  void end_timeline();

  // Called by client `client` at each step. Applies the faults this step
  // triggers; a pause of this very client blocks here for its duration, and a
  // crash of it throws ClientCrashed. Cheap when nothing matches.
  void on_step(const std::string& client, std::string_view step);

  // Undoes every fault still active, stops the timer thread. Idempotent.
  void stop();

  // One entry per fault of the schedule, in its order (after stop(): final).
  std::vector<FaultOutcome> outcomes() const;

 private:
  using Action = std::function<void()>;
  void schedule_at(int64_t at_ns, Action action);
  // One firing of a fault: the fault and whom it acts on (nemesis.cpp).
  struct Firing;

  // Fires fault `index` (`trigger_client` took the step that triggered it,
  // "" for a timed fault): records its start, starts it, and keeps its undo
  // until its duration ends or the run does. Nothing once stopping.
  void apply(size_t index, const std::string& trigger_client);
  // The "targets", "nodes" and "replicas" of the firing's start event.
  nlohmann::json targets_of(const Firing& firing) const;
  // Starts the fault of `firing` and returns what undoes it, or an empty
  // action for a fault that is over at once or ends on its own.
  Action start_fault(const Firing& firing);
  // Keeps `undo` of fault `index` until `duration_ms` has passed and its
  // `until` step has been reached (and its after_ms has passed since), those
  // of the two it has (neither: until stop() heals it).
  void keep_in_force(size_t index, Action undo, std::optional<int64_t> duration_ms);
  // What a fault in force still waits for before it is undone.
  struct Ending {
    bool duration = false;  // its duration_ms to pass
    bool until = false;     // its `until` step to be reached, and its after_ms to pass
  };
  // Fault `index`'s `until` step has just been reached: its wait for it is
  // over now, or after_ms from now (whether or not it is in force yet).
  void until_step_reached(size_t index);
  // One of fault `index`'s waits is over (`wait` names it); undoes the fault
  // once it waits for nothing more.
  void end_wait_over(size_t index, bool Ending::*wait);
  // Undoes fault `index` and records its end (with `extra`), unless stop()
  // healed it already.
  void undo_now(size_t index, nlohmann::json extra = nullptr);
  // Runs `undo` of fault `index` and `record`, which records its end: a
  // pause's end first, so that no event of a client it stopped comes before
  // that end in the history; any other fault's once it is undone.
  void undo_then_record(size_t index, const Action& undo, const std::function<void()>& record);
  // Fault `index` has ended: notes when, records its `end` event (with
  // `extra`), then ends the waits of the faults that wait for it.
  void record_end(size_t index, nlohmann::json extra = nullptr);

  // One start per kind of fault; each returns its undo (start_fault's contract).
  Action start_pause(const Firing& firing);
  Action start_client_crash(const Firing& firing);
  Action start_clock_jump(const Firing& firing);
  Action start_clock_rate(const Firing& firing);
  Action start_server_clock_jump(const Firing& firing);
  Action start_server_clock_rate(const Firing& firing);
  Action start_sigstop(const Firing& firing);
  Action start_debug_sleep(const Firing& firing);
  Action start_node_crash(const Firing& firing);
  Action start_partition(const Firing& firing);
  Action start_delay(const Firing& firing);
  Action start_cut(const Firing& firing);
  Action start_replication_cut(const Firing& firing);
  Action start_manual_failover(const Firing& firing);
  Action start_sentinel_failover(const Firing& firing);

  // Moves the clocks of `clients` (and of their lock processes) by `delta`.
  void jump_client_clocks(const std::vector<size_t>& clients, std::chrono::milliseconds delta);
  // Sets the rate of the clocks of `clients` (and of their lock processes).
  void set_client_clock_rates(const std::vector<size_t>& clients, double rate);
  // The client × server links `firing` acts on.
  std::vector<NetworkLink*> links_of(const Firing& firing);

  // What on_step does once `step` is one the schedule watches.
  void apply_step(const std::string& client, std::string_view step);
  // Records fault `index`'s start or end: the fault as the scenario gave it,
  // its index, and `extra` (targets, nodes, what became of it).
  void record(size_t index, const char* phase, nlohmann::json extra = {});
  void mark_ended(size_t index);
  // Whether `fault` names node 0's replicas (0 = the first) rather than servers.
  static bool acts_on_replicas(const Fault& fault);
  // The replicas a replication or failover fault acts on: those it names,
  // else every one (a cut) or the first (a failover).
  std::vector<size_t> replicas_of(const Fault& fault) const;
  // The servers a fault acts on, by server index (masters first).
  std::vector<size_t> servers_of(const Fault& fault) const;
  std::vector<size_t> clients_of(const Fault& fault, const std::string& trigger_client) const;
  size_t client_index(const std::string& id) const;

  Schedule schedule_;
  FaultTargets& targets_;
  std::vector<ClientHandle> clients_;
  history::ProcessLog& log_;

  mutable std::mutex mu_;  // guards everything below, the schedule's step counts and the log
  FiberCondition wake_;
  std::multimap<int64_t, Action> timeline_;     // monotonic ns → action
  std::map<size_t, Action> active_;             // fault index → undo of a fault in force
  std::map<size_t, Ending> endings_;            // fault index → what it waits for to be undone
  std::map<size_t, int64_t> until_reached_ns_;  // fault index → when its `until` step came
  std::vector<FaultOutcome> outcomes_;
  bool stopping_ = false;
  bool run_over_ = false;  // the time end_waits_at() named has come
  bool timeline_ended_ = false;
  std::thread timer_;
  std::vector<std::thread> workers_;  // faults that block (DEBUG SLEEP, Sentinel failover)
  int64_t start_ns_ = 0;
};

}  // namespace locklab
