#include "runner.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <semaphore>
#include <shared_mutex>
#include <thread>

#include "adapter_lock.h"
#include "atomic_file.h"
#include "checkers.h"
#include "client.h"
#include "cluster.h"
#include "fibers.h"
#include "hiredis_connection.h"
#include "locks_under_test.h"
#include "nemesis.h"
#include "process.h"  // CleanupOnSignal
#include "recorder.h"
#include "server_clock.h"
#include "version.h"
#include "virtual_time.h"

namespace locklab {

namespace {

// Runs on one target share it, except a run that fails it over or flushes
// it: that one has it to itself, since it would move every other run's
// master or wipe its keys.
// (Within this lab only: labs elsewhere must not fail over a target they share.)
std::shared_mutex& access_to(const Target& target) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<std::shared_mutex>> access;
  // Known by its first server, however many files name it.
  std::lock_guard l(mu);
  auto& slot = access[target.masters.front().str()];
  if (!slot) slot = std::make_unique<std::shared_mutex>();
  return *slot;
}

// A Redis glob pattern matching exactly the keys that start with `prefix`.
std::string glob_for_prefix(const std::string& prefix) {
  std::string out;
  for (char c : prefix) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out + "*";
}

// Removes every key under `prefix` from `servers`: SCAN MATCH + UNLINK on
// each; replicas refuse the UNLINK and get the deletion from their master.
void remove_keys(const std::vector<Endpoint>& servers, const ConnectionOptions& options,
                 const std::string& prefix) {
  for (const Endpoint& server : servers) {
    try {
      HiredisConnection connection(server, options);
      std::string cursor = "0";
      // Bounded: SCAN ends when the cursor comes back to 0.
      for (int rounds = 0; rounds < 100000; ++rounds) {
        const Reply r =
            connection.command({"SCAN", cursor, "MATCH", glob_for_prefix(prefix), "COUNT", "1000"});
        if (r.type != Reply::Type::Array || r.elements.size() != 2) break;
        cursor = r.elements[0].str;
        std::vector<std::string> unlink{"UNLINK"};
        for (const auto& key : r.elements[1].elements) unlink.push_back(key.str);
        if (unlink.size() > 1 && connection.command(unlink).is_error()) break;  // a replica
        if (cursor == "0") break;
      }
    } catch (const std::exception&) {
      // A server unreachable at the end of the run keeps that run's keys, all
      // under its prefix; nothing else of the target's is at stake.
    }
  }
}

// Removes every key of one run (its prefix) from the target when the run
// ends, however it ends (a signal included): a shared Redis keeps only what
// it had. Every server is asked, since a failover may have moved the master.
class RunKeys {
 public:
  RunKeys(const Target& target, std::string prefix)
      : servers_(target.servers()),
        options_(target.connection_options()),
        prefix_(std::move(prefix)),
        on_signal_([servers = servers_, options = options_, prefix = prefix_] {
          remove_keys(servers, options, prefix);
        }) {}
  ~RunKeys() { remove_keys(servers_, options_, prefix_); }
  RunKeys(const RunKeys&) = delete;
  RunKeys& operator=(const RunKeys&) = delete;
  const std::string& prefix() const { return prefix_; }

 private:
  std::vector<Endpoint> servers_;
  ConnectionOptions options_;
  std::string prefix_;
  CleanupOnSignal on_signal_;
};

// A number no other run (of this process or another lab on the same target)
// draws: it makes a run's key prefix its own.
uint64_t unique_number() {
  static std::atomic<uint64_t> counter{0};
  return uint64_t(monotonic_ns()) ^ (uint64_t(::getpid()) << 32) ^ (counter++ << 16);
}

// What a run does to its servers around itself, on a target: it shares the
// target with the other runs or has it to itself (plan.owns_target), starts
// it empty when the file allows a flush, and removes the run's keys when it
// ends, however it ends. Nothing on the lab's own servers.
class ServersInUse {
 public:
  ServersInUse(const Servers& servers, const RunPlan& plan) {
    if (!servers.target) return;
    const Target& target = *servers.target;
    if (plan.owns_target)
      owned_ = std::unique_lock(access_to(target));
    else
      shared_ = std::shared_lock(access_to(target));
    keys_.emplace(target, plan.key_prefix);
    if (plan.flush_first) flush_target(target);
  }

 private:
  std::shared_lock<std::shared_mutex> shared_;
  std::unique_lock<std::shared_mutex> owned_;
  std::optional<RunKeys> keys_;
};

// Carries the clients' steps to the nemesis. Clients exist before it (it
// needs their gates and clocks), so their steps reach it once it is there.
class StepRelay {
 public:
  StepListener listener() {
    return [this](const std::string& client, std::string_view step) {
      if (Nemesis* n = nemesis_.load()) n->on_step(client, step);
    };
  }
  void connect(Nemesis* nemesis) { nemesis_ = nemesis; }

 private:
  std::atomic<Nemesis*> nemesis_{nullptr};
};

// The clients of one run, with the clocks of their lock processes.
struct RunClients {
  RunClients() = default;
  RunClients(RunClients&&) = default;
  // The clients go first (a kept adapter is reset and back in its pool),
  // then the clocks borrowed from `clock_home` go back to it.
  ~RunClients() {
    clients.clear();
    if (clock_home)
      for (auto& clock : process_clocks) clock_home->give_back(clock_command, std::move(clock));
  }

  // A lock in a process of its own runs on a clock of its own per client,
  // which client clock faults move through the clock shim.
  std::vector<std::unique_ptr<ServerClock>> process_clocks;  // empty for built-in locks
  std::shared_ptr<AdapterClocks> clock_home;  // where they came from (null: made for this run)
  std::string clock_command;                  // the adapters' command, their key there
  std::vector<std::unique_ptr<Client>> clients;

  // What the nemesis may do to each client, in the clients' order.
  std::vector<ClientHandle> handles() const {
    std::vector<ClientHandle> out;
    for (size_t i = 0; i < clients.size(); ++i) {
      Client* c = clients[i].get();
      out.push_back({c->id(), &c->gate(), &c->clock(), [c] { c->crash(); },
                     process_clocks.empty() ? nullptr : process_clocks[i].get()});
    }
    return out;
  }
};

// What client `i` (0-based) of `plan`'s run builds its lock from: the
// scenario's parameters and connections to `cluster` with `credentials`,
// both of which must outlive the client.
LockContext lock_context(const RunPlan& plan, Cluster& cluster,
                         const ConnectionOptions& credentials, int i) {
  const Scenario& scenario = plan.scenario;
  LockContext context;
  context.node_count = size_t(plan.shape.masters);
  context.story_ttl = std::chrono::milliseconds(scenario.workload.ttl_ms);
  context.param = [&scenario](std::string_view name) -> std::optional<int64_t> {
    auto it = scenario.workload.params.find(std::string(name));
    if (it == scenario.workload.params.end()) return std::nullopt;
    return it->second;
  };
  context.endpoint = [&cluster, i](size_t node) {
    return cluster.stable_endpoint(size_t(i), node);
  };
  context.connect = [&cluster, &credentials, i,
                     named = plan.virtual_time](size_t node) -> std::unique_ptr<Connection> {
    ConnectionOptions options = credentials;
    options.connect_timeout = std::chrono::milliseconds(500);
    options.command_timeout = std::chrono::milliseconds(1000);
    if (named) options.name = "node " + std::to_string(node);
    options.answers_take_time = true;
    options.link = cluster.simulated_link(size_t(i), node);
    // Resolved again at every reconnect, so clients follow a failover.
    return std::make_unique<HiredisConnection>(
        [&cluster, i, node] { return cluster.client_endpoint(size_t(i), node); }, options);
  };
  return context;
}

// How many runs of this process may be starting their adapters' processes
// at once (make_clients).
constexpr std::ptrdiff_t kCellsStartingAdaptersAtOnce = 2;

// Builds the scenario's clients of `lock`, each recording to `recorder` and
// reporting its steps to `listener`; lock logs go to `log_dir`. A lock
// behind an adapter starts a process per client, which takes a runtime's
// start-up (a JVM's is most of a second), so those clients start side by
// side; their logs are asked for in the clients' order first, which fixes the
// history's order of ties whatever order they finish starting in.
RunClients make_clients(const RunPlan& plan, const LockUnderTest& lock, Cluster& cluster,
                        const ConnectionOptions& credentials, history::Recorder& recorder,
                        uint64_t seed, const std::filesystem::path& log_dir,
                        const StepListener& listener) {
  RunClients out;
  // Adapters on clocks of their own are kept too where their clocks can be.
  const bool kept_clocks =
      plan.adapter_clocks && lock.adapter && lock.adapter->pool && lock.adapter_clocks;
  if (kept_clocks) {
    out.clock_home = lock.adapter_clocks;
    out.clock_command = lock.adapter->command;
  }
  std::vector<std::function<std::unique_ptr<Client>()>> starts;
  for (int i = 0; i < plan.scenario.clients; ++i) {
    std::map<std::string, std::string> env = plan.adapter_env;
    if (plan.adapter_clocks) {
      out.process_clocks.push_back(kept_clocks ? out.clock_home->take(out.clock_command)
                                               : std::make_unique<ServerClock>());
      for (auto& [k, v] : out.process_clocks.back()->env()) env[k] = v;
    }
    const std::string id = "c" + std::to_string(i + 1);
    starts.push_back([&, id, i, env, &log = recorder.log_for(id),
                      &late_log = recorder.late_log_for(id),
                      own = plan.adapter_clocks && !kept_clocks] {
      return std::make_unique<Client>(
          id, seed * 1000 + uint64_t(i + 1), log, late_log,
          [&lock, log_dir, env, own](LockContext c) { return lock.make(c, log_dir, env, own); },
          lock_context(plan, cluster, credentials, i), listener);
    });
  }
  if (!lock.adapter) {
    for (auto& start : starts) out.clients.push_back(start());
    return out;
  }
  // A runtime's start-up is CPU, not waiting: cells that start their
  // adapters at once only slow each other down (eight Java cells at once
  // took over 8 s to connect). The story's clock starts after this.
  static std::counting_semaphore<kCellsStartingAdaptersAtOnce> starting(
      kCellsStartingAdaptersAtOnce);
  starting.acquire();
  struct Release {
    ~Release() { starting.release(); }
  } release;
  // Every start is waited for, so that a client that failed to start
  // (thrown below, the first in the clients' order) leaves no other half-made.
  std::vector<std::future<std::unique_ptr<Client>>> started;
  for (auto& start : starts) started.push_back(std::async(std::launch::async, start));
  std::exception_ptr failure;
  for (auto& client : started) {
    try {
      out.clients.push_back(client.get());
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  return out;
}

// Each client's workload: the scenario's, narrowed to one lock per client
// when the scenario says so.
std::vector<Workload> workloads_of(const Scenario& scenario, size_t clients) {
  std::vector<Workload> workloads(clients, scenario.workload);
  if (scenario.workload.lock_per_client)
    for (size_t i = 0; i < workloads.size(); ++i)
      workloads[i].locks = {scenario.workload.locks[i % scenario.workload.locks.size()]};
  return workloads;
}

// Runs every client to its end. Built-in locks run as fibers of one thread
// (fibers.h): a client waiting for Redis costs no thread wake-up of its
// own. A lock behind an adapter waits on its adapter's pipe instead, so
// each of its clients keeps a thread.
void run_clients(std::vector<std::function<void()>> runs, bool adapter) {
  if (!adapter) return run_fibers(std::move(runs));
  std::vector<std::thread> threads;
  for (auto& run : runs) threads.emplace_back(std::move(run));
  for (auto& t : threads) t.join();
}

// What became of each fault of `schedule` that belongs to the run.
std::vector<FaultFiring> fault_firings(const Schedule& schedule,
                                       const std::vector<FaultOutcome>& outcomes) {
  std::vector<FaultFiring> out;
  for (size_t i = 0; i < schedule.faults().size(); ++i) {
    if (!schedule.applies(i)) continue;
    const Fault& f = schedule.fault(i);
    const FaultOutcome& o = outcomes.at(i);
    FaultFiring firing{i, std::string(f.name()), f.trigger_text(), o.fired, {}, {}};
    if (o.fired) firing.fired_at_ms = double(o.fired_at_ns) / 1e6;
    if (o.ended_at_ns) firing.ended_at_ms = double(*o.ended_at_ns) / 1e6;
    firing.one_of = f.one_of;
    out.push_back(std::move(firing));
  }
  return out;
}

// Runs `clients` for the scenario's duration while the nemesis applies the
// plan's schedule, and returns what became of its faults. Throws the first
// error a client stopped on.
std::vector<FaultFiring> run_with_nemesis(const RunPlan& plan, RunClients& clients,
                                          Cluster& cluster, history::Recorder& recorder,
                                          StepRelay& relay, ProtectedResource& resource,
                                          bool adapter, RunProbe* probe) {
  Nemesis nemesis(plan.schedule, cluster, clients.handles(), recorder.log_for("nemesis"));
  relay.connect(&nemesis);
  // On virtual time the nemesis is one more fiber beside the clients, so
  // that the clock waits for it as for them; it ends with the last client.
  nemesis.start(!plan.virtual_time);
  if (probe && probe->started) probe->started(cluster);
  std::atomic<bool> stop{false};
  const int64_t deadline = monotonic_ns() + plan.scenario.duration_ms * 1'000'000;
  nemesis.end_waits_at(deadline);
  const std::vector<Workload> workloads = workloads_of(plan.scenario, clients.clients.size());
  std::atomic<size_t> clients_running = clients.clients.size();
  std::vector<std::function<void()>> runs;
  for (size_t i = 0; i < clients.clients.size(); ++i)
    runs.push_back([&, c = clients.clients[i].get(), &workload = workloads[i]] {
      c->run(workload, resource, deadline, stop);
      if (--clients_running == 0 && plan.virtual_time) nemesis.end_timeline();
    });
  if (plan.virtual_time) runs.push_back([&nemesis] { nemesis.run_timeline(); });
  run_clients(std::move(runs), adapter);
  if (probe) {
    for (auto& c : clients.clients) probe->commands += c->commands_sent();
    if (probe->finished) probe->finished(cluster);
  }
  nemesis.stop();
  relay.connect(nullptr);
  for (auto& c : clients.clients)
    if (!c->error().empty()) throw std::runtime_error(c->error());
  return fault_firings(plan.schedule, nemesis.outcomes());
}

// Writes the recorded history to `history_file` and checks it into `run`
// (check and verdict); returns the number of events.
int64_t write_and_check_history(history::Recorder& recorder,
                                const std::filesystem::path& history_file, const Scenario& scenario,
                                RunResult& run) {
  const int64_t events = recorder.write_history(history_file);
  // Checked from the file, streaming: memory stays flat however long the run.
  checkers::Options checks;
  checks.liveness_factor = scenario.liveness_factor;
  run.check = Check::of(checkers::check_file(history_file, checks));
  run.verdict = run.check->verdict;
  return events;
}

// The run's statistics: the clients' counts summed, and the counters of the
// protected resource.
RunStats stats_of(const RunClients& clients, ProtectedResource& resource, int64_t events) {
  RunStats stats;
  stats.events = events;
  for (auto& c : clients.clients) {
    const ClientStats& s = c->stats();
    stats.acquires_ok += s.acquires_ok, stats.acquires_failed += s.acquires_failed;
    stats.acquires_unknown += s.acquires_unknown, stats.writes_accepted += s.writes_accepted;
    stats.writes_rejected += s.writes_rejected, stats.lost += s.lost;
  }
  stats.counters = resource.counters();
  return stats;
}

// A run of `lock` with what every run says of itself, whether or not it ran.
RunResult run_of(const LockUnderTest& lock, const Expectation& expected, uint64_t seed,
                 const Servers& servers) {
  RunResult run;
  run.algorithm = lock.name;
  run.expected = expected;
  run.seed = seed;
  if (lock.adapter) run.adapter = lock.adapter->command;
  run.like = lock.like;
  run.target = servers.target_name();
  return run;
}

}  // namespace

RunResult run_plan(const RunPlan& plan, const Expectation& expected, const LockUnderTest& lock,
                   const Servers& servers, uint64_t seed, const std::filesystem::path& out_dir,
                   RunProbe* probe) {
  RunResult run = run_of(lock, expected, seed, servers);
  run.history = lock.name + "/history.jsonl";
  RunTiming timing;
  auto lap = std::chrono::steady_clock::now();
  // Seconds since the last lap, added to `phase`.
  auto time = [&lap](double& phase) {
    const auto now = std::chrono::steady_clock::now();
    phase += std::chrono::duration<double>(now - lap).count();
    lap = now;
  };
  // A run on virtual time keeps it from its servers' start to its check.
  std::optional<VirtualTime> virtual_time;
  try {
    if (plan.virtual_time) virtual_time.emplace();
    VirtualTimeBinding on_its_clock(virtual_time ? &*virtual_time : nullptr);
    run.time = plan.virtual_time ? "virtual" : "real";
    ServersInUse in_use(servers, plan);
    const std::filesystem::path lock_dir = out_dir / lock.name;
    std::filesystem::create_directories(lock_dir);
    std::unique_ptr<Cluster> cluster =
        make_cluster(servers.target.get(), plan.shape, plan.scenario.clients, seed);
    time(timing.servers);
    const ConnectionOptions credentials = servers.connection_options();
    const bool record = !probe || probe->record_history;
    // The history goes to disk as it happens, beside where it ends up.
    history::Recorder recorder(record ? lock_dir : std::filesystem::path());
    ProtectedResource resource(plan.scenario.workload.fencing);
    StepRelay relay;
    RunClients clients =
        make_clients(plan, lock, *cluster, credentials, recorder, seed, lock_dir, relay.listener());
    time(timing.clients);
    run.faults = run_with_nemesis(plan, clients, *cluster, recorder, relay, resource,
                                  lock.adapter.has_value(), probe);
    run.exercised = run.exercised && story_played(run.faults);
    time(timing.story);
    const int64_t events =
        record ? write_and_check_history(recorder, lock_dir / "history.jsonl", plan.scenario, run)
               : 0;
    run.stats = stats_of(clients, resource, events);
    time(timing.check);
    for (auto& c : clients.clients)
      for (auto& incident : c->incidents()) run.incidents.push_back(std::move(incident));
    std::stable_sort(run.incidents.begin(), run.incidents.end(),
                     [](const Incident& a, const Incident& b) { return a.at_ms < b.at_ms; });
    lap = std::chrono::steady_clock::now();  // the clients and servers stop from here
  } catch (const std::exception& e) {
    run.verdict = Verdict::Unknown;
    run.error = e.what();
  }
  time(timing.teardown);
  run.timing = timing;
  // Decided last, from everything the run recorded.
  run.outcome = decide_outcome(run);
  return run;
}

RunResult run_cell(const Scenario& scenario, const LockUnderTest& lock, const Servers& servers,
                   uint64_t seed, const std::filesystem::path& out_dir, RunProbe* probe) {
  const PlannedRun planned = plan_run(scenario, lock, servers, seed, unique_number());
  if (planned.plan)
    return run_plan(*planned.plan, planned.expected, lock, servers, seed, out_dir, probe);
  RunResult run = run_of(lock, planned.expected, seed, servers);
  run.not_applicable = planned.not_applicable;
  run.outcome = decide_outcome(run);
  return run;
}

CellRunner cell_runner(std::vector<LockUnderTest> locks, Servers servers) {
  return [locks = std::move(locks), servers = std::move(servers)](
             const Scenario& scenario, const std::string& name, uint64_t seed,
             const std::filesystem::path& out_dir) {
    if (const LockUnderTest* lock = find_lock(locks, name))
      return run_cell(scenario, *lock, servers, seed, out_dir);
    throw std::invalid_argument("no lock under test is named \"" + name + "\"");
  };
}

CellOnVirtualTime cell_on_virtual_time(std::vector<LockUnderTest> locks, Servers servers) {
  return [locks = std::move(locks), servers = std::move(servers)](const Scenario& scenario,
                                                                  const std::string& name) {
    const LockUnderTest* lock = find_lock(locks, name);
    if (servers.time == TimeMode::Real || !lock) return false;
    try {
      const PlannedRun planned = plan_run(scenario, *lock, servers, scenario.seed);
      return planned.plan && planned.plan->virtual_time;
    } catch (const std::exception&) {
      return false;  // the cell's own run says what is wrong
    }
  };
}

ScenarioResults results_of(const Scenario& scenario, uint64_t seed, std::vector<RunResult> runs) {
  ScenarioResults results;
  results.scenario = scenario.name;
  results.description = scenario.description;
  results.scenario_file = scenario.file.string();
  results.seed = seed;
  results.locklab_version = kVersion;
  results.runs = std::move(runs);
  return results;
}

ScenarioResults run_scenario(const Scenario& scenario, const RunOptions& options) {
  std::vector<LockUnderTest> locks;
  if (options.lock) {
    locks.push_back(*options.lock);
  } else {
    for (const auto& id : options.algorithms.empty() ? scenario.algorithms : options.algorithms)
      locks.push_back(LockUnderTest::built_in(id));
  }
  uint64_t seed = options.seed.value_or(scenario.seed);
  std::filesystem::create_directories(options.out_dir);
  ScenarioResults results = results_of(scenario, seed, {});
  for (const auto& lock : locks)
    results.runs.push_back(run_cell(scenario, lock, options.servers, seed, options.out_dir));
  write_file_atomically(options.out_dir / "results.json", results.to_json().dump(2) + "\n");
  return results;
}

}  // namespace locklab
