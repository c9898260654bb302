// A run's plan: everything decided about one cell — a scenario told to one
// lock, on the lab's own servers or on a target — before anything starts.
// Pure, like the nemesis's schedule: no servers, processes or clocks, so
// every rule that makes a cell not applicable is a unit test.
//
//   scenario + lock + servers + seed ──plan_run──► RunPlan (run it) | not applicable (why)
//
// The runner executes a plan and decides nothing the plan could have.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adapter_clocks.h"
#include "adapter_process.h"
#include "expectation.h"
#include "lock.h"
#include "scenario.h"
#include "schedule.h"
#include "shape.h"
#include "target.h"
#include "virtual_time.h"

namespace locklab {

// A lock under test: a built-in algorithm, or an adapter program asked once
// (hello) what it is. Everything the plan needs to know about a lock is here.
struct LockUnderTest {
  std::string name;                      // the algorithm id, or the adapter's hello name
  std::string family;                    // the built-in's family (lock.h), or "library"
  std::string version;                   // an adapter's library and version, from its hello
  std::optional<AdapterConfig> adapter;  // set for a lock that is an adapter program
  // With adapter->pool: where the clocks of its kept adapters wait between
  // runs, so that a run whose adapters keep clocks of their own takes kept
  // ones too; null: such a run starts its own.
  std::shared_ptr<AdapterClocks> adapter_clocks;
  // The built-in an adapter stands in for (--like): its faults, topology and
  // expectations apply.
  std::optional<std::string> like;
  bool reentrant = false;
  bool fencing = false;
  bool multi_node = false;         // takes its lock over several independent masters
  bool needs_replica = false;      // waits for a replica (WAIT)
  std::vector<std::string> steps;  // the steps inside its operations it announces
  // A library's longest wait between two attempts at a lock it waits for,
  // from its defaults (libraries.json "retry_ms"): how late it may notice a
  // lock coming free, which the safety envelope allows for. nullopt: the
  // built-ins' 5-25 ms.
  std::optional<int64_t> retry_ms;
  // Why a library's safety envelope differs from what the built-in it
  // stands in for predicts, by axis name (libraries.json "envelope_gaps"):
  // a disagreement found, looked into and explained.
  std::map<std::string, std::string> envelope_gaps;
  // Why the safety envelope's story cannot be told to a library at all
  // (libraries.json "envelope_not_applicable"); empty: it can.
  std::string envelope_not_applicable;
  // Why some of a library's overlaps stay unclassified however its adapter
  // reports (libraries.json "unclassified_overlaps"): what of its lease or
  // its winning try the library keeps to itself. Empty: every overlap a
  // pause makes is told as the overrun it is.
  std::string unclassified_overlaps;
  // Why a library's unlock deletes the key whoever holds it by then
  // (libraries.json "unlock_deletes_any_holder"): a holder's late release
  // frees the next holder's lock, and a third takes it inside that lease, a
  // broken lease of the library's own wherever a late release lands. Empty:
  // its unlock deletes only its own key.
  std::string unlock_deletes_any_holder;

  // The built-in algorithm `id`. Throws std::invalid_argument naming the known ids.
  static LockUnderTest built_in(std::string_view id);
  // The adapter of `config`, started once and asked hello (AdapterError when
  // it cannot answer); `like`, when given, must name a built-in.
  static LockUnderTest from_adapter(AdapterConfig config, std::optional<std::string> like = {});

  // The built-in algorithm whose part of a story this lock is told: its own
  // id, the one it stands in for, or "" (an adapter like none: only the
  // faults meant for every lock).
  std::string story_algorithm() const;

  // A lock object for one client. An adapter keeps its stderr in `log_dir`
  // and gets `env` added to its environment (a clock shim, credentials);
  // with `own_adapter` it is started for this client alone even where
  // adapter->pool would keep it (a clock shim's file that is the run's own,
  // not one of adapter_clocks: no later run could take it).
  std::unique_ptr<Lock> make(const LockContext& context, const std::filesystem::path& log_dir,
                             const std::map<std::string, std::string>& env,
                             bool own_adapter = false) const;
};

// Every built-in algorithm as a lock under test, in the registry's order.
std::vector<LockUnderTest> built_in_locks();

// Where a run's servers come from: fresh ones the lab starts, or a target;
// and the clock the runs keep.
struct Servers {
  std::shared_ptr<const Target> target;  // nullptr: the lab starts fresh servers for each run
  // Real: every run keeps real time. Virtual: a run keeps virtual time, or
  // is not applicable when it cannot (real_time_reason). Auto: virtual
  // where it can, real elsewhere.
  TimeMode time = TimeMode::Real;

  // What faults may be done to them: everything, on servers the lab started.
  Needs provides() const;
  // Credentials for connecting to them (none on the lab's own).
  ConnectionOptions connection_options() const;
  // The target's name, for results; nullopt on the lab's own servers.
  std::optional<std::string> target_name() const;
  // The Redis version they run ("7.0.15"): the target's (INFO), or that of
  // the redis-server the lab starts; "" when it cannot be told.
  std::string redis_version() const;
};

// What the runner does for one cell.
struct RunPlan {
  // The scenario as run: on a target, every lock it names is under the run's key prefix.
  Scenario scenario;
  std::string key_prefix;  // "" on the lab's own servers
  ClusterShape shape;
  Schedule schedule{{}, ""};  // the faults of this run (those meant for the lock's story)
  // The run needs its target to itself: it fails it over or flushes it, which
  // would move every other run's master or wipe its keys.
  bool owns_target = false;
  bool flush_first = false;  // the target is flushed before the run (allow_flush)
  // Each client's adapter runs on a clock of its own (the clock shim), so
  // that client clock faults reach it.
  bool adapter_clocks = false;
  // Added to every adapter's environment: the target's credentials.
  std::map<std::string, std::string> adapter_env;
  // The run keeps virtual time (harness/core/virtual_time.h): every server
  // runs under the clock shim, the nemesis on the clients' fiber thread.
  bool virtual_time = false;
};

// Why the run of `lock` under `schedule` on `servers` must keep real time, or
// nullopt when it can keep virtual time: an adapter (its runtime keeps its
// own timers), a target (its servers keep theirs), replicas or Sentinels
// (replication keeps its own pace), network namespaces, or a fault of a kind
// that cannot act on virtual time (FaultKindInfo::real_time_only).
std::optional<std::string> real_time_reason(const Scenario& scenario, const Schedule& schedule,
                                            const LockUnderTest& lock, const Servers& servers,
                                            const ClusterShape& shape);

// A cell, planned: what it is held to, and either the plan or why it cannot be run.
struct PlannedRun {
  Expectation expected;
  std::optional<RunPlan> plan;  // absent: not applicable
  std::string not_applicable;   // why, when there is no plan
};

// The expectation `lock` is held to in `scenario`: its own (a built-in, or a
// library the scenario names under "libraries"), the one of the built-in it
// stands in for, or the scenario's default.
const Expectation& expectation_for(const Scenario& scenario, const LockUnderTest& lock);

// Plans `lock`'s run of `scenario` on `servers` with `seed`. Not applicable
// (with one sentence saying why) when: the lock is an adapter and none of
// the scenario's faults is meant for it; a fault fires at a step the lock
// never reaches (a step it does not announce, or a nesting step of a lock
// that does not nest); the servers cannot take a fault (a target the lab did
// not start); the servers lack the masters or replica the lock needs; on
// virtual time only (Servers::time), the run cannot keep it
// (real_time_reason). `unique` makes a target run's key prefix its own (the runner draws it).
PlannedRun plan_run(const Scenario& scenario, const LockUnderTest& lock, const Servers& servers,
                    uint64_t seed, uint64_t unique = 0);

}  // namespace locklab
