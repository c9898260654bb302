// A client: one process id in the history ("c1"), one thread running the
// workload loop (acquire → critical section → release) with its own lock
// object, clock and pause gate. Everything the client does goes to its own
// history log; what it believes is recorded, not what Redis holds.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>

#include "clock.h"
#include "lock.h"
#include "pause_gate.h"
#include "recorder.h"
#include "resource.h"
#include "results.h"
#include "scenario.h"

namespace locklab {

struct ClientStats {
  int64_t acquires_ok = 0, acquires_failed = 0, acquires_unknown = 0;
  int64_t writes_accepted = 0, writes_rejected = 0, lost = 0;
  int64_t releases_ok = 0, releases_refused = 0, releases_unknown = 0;
  bool crashed = false;
};

// Called at every named step of a client (its own and its lock's); the
// nemesis may pause the client there (block) or crash it (throw ClientCrashed).
using StepListener = std::function<void(const std::string& client, std::string_view step)>;

class Client {
 public:
  // `make_lock` builds this client's lock object from `base_context`, whose
  // connections the client wraps so they pass its pause gate, and to which it
  // adds its id, clock, seed and step hook. The client records to `log`, and
  // what its lock learns after the fact (LockContext::renewal_learnt) to
  // `late_log` (Recorder::late_log_for).
  Client(std::string id, uint64_t seed, history::ProcessLog& log, history::ProcessLog& late_log,
         std::function<std::unique_ptr<Lock>(LockContext)> make_lock, LockContext base_context,
         StepListener listener);

  const std::string& id() const { return id_; }
  PauseGate& gate() { return gate_; }
  SkewableClock& clock() { return clock_; }

  // Runs the workload until `ops_per_client` attempts or `holds_per_client`
  // holds are done, the harness monotonic clock reaches `deadline_ns`, or
  // `stop` becomes true. Returns normally when the client crashed
  // (ClientCrashed) too, and when the lock failed in a way no history event
  // can express (see error()).
  void run(const Workload& workload, ProtectedResource& resource, int64_t deadline_ns,
           const std::atomic<bool>& stop);

  const ClientStats& stats() const { return stats_; }
  // What its lock reported the library left behind (LockContext::incident),
  // in the order reported; each is in the history too.
  std::vector<Incident> incidents() const;
  // Redis commands the client's connections have sent so far.
  int64_t commands_sent() const { return commands_sent_.load(std::memory_order_relaxed); }

  // Set when the client stopped on an error it cannot record as an outcome
  // (e.g. an external lock adapter died or printed garbage); empty otherwise.
  const std::string& error() const { return error_; }

  // The client dies at its next step: it stops for good, releasing nothing.
  void crash() { crash_requested_ = true; }

 private:
  // One acquire, and when it succeeds the critical section and the release;
  // whether the client held the lock.
  bool one_operation(const Workload& workload, ProtectedResource& resource,
                     const std::string& lock);
  // One acquire, recorded, with step `before` ahead of it and `after` once it
  // succeeded; the lease, or nullopt when it was not acquired (or unknown).
  std::optional<Lease> acquire(const Workload& workload, const std::string& lock,
                               std::string_view before, std::string_view after);
  // One release of `lease`, recorded, between steps `before` and `after`
  // (none when empty); returns what the history recorded of it.
  history::Type release(const std::string& lock, const Lease& lease, std::string_view before,
                        std::string_view after);
  history::Event event(history::Type type, std::string f, const std::string& lock);
  // Records `e` in the client's log.
  void append(history::Event e);
  // A renewal its lock's watchdog reports (LockContext::renewed).
  void renewed(const std::string& lock, milliseconds ttl, int64_t sent_ns, Outcome outcome);
  // A renewal its lock learnt of after the fact (LockContext::renewal_learnt).
  void renewal_learnt(const std::string& lock, const std::string& owner, milliseconds ttl,
                      int64_t sent_ns, int64_t answered_ns, Outcome outcome);
  // An incident its lock reports (LockContext::incident), `ago` before now.
  void incident(IncidentKind kind, const std::string& message, std::chrono::nanoseconds ago);
  // The history's time_ns at which the client's clock gave `reading`, if known.
  std::optional<int64_t> history_time_of(int64_t reading);
  void step(std::string_view name) {
    if (crash_requested_) throw ClientCrashed{std::string(name)};
    listener_(id_, name);
  }
  // A step inside the lock's operations: it must be one the lock declares.
  void lock_step(std::string_view name);

  std::string id_;
  PauseGate gate_;
  SkewableClock clock_;
  history::ProcessLog& log_;
  history::ProcessLog& late_log_;
  mutable std::mutex
      log_mu_;  // appends come from the client and its lock's watchdog; guards incidents_
  // Each lock's latest hold: its owner, and monotonic_ns() right after its
  // acquire ok was recorded. A renewal of it learnt late is placed no
  // earlier, inside the hold it renews.
  struct LatestHold {
    std::string owner;
    int64_t acquired_at = 0;
  };
  std::map<std::string, LatestHold, std::less<>> latest_hold_;
  std::mt19937_64 rng_;
  StepListener listener_;
  std::atomic<int64_t> commands_sent_{0};  // outlives lock_, whose connections count here
  std::unique_ptr<Lock> lock_;
  std::set<std::string, std::less<>> lock_steps_;  // lock_->steps()
  ClientStats stats_;
  std::vector<Incident> incidents_;
  std::atomic<bool> crash_requested_{false};
  std::string error_;
};

}  // namespace locklab
