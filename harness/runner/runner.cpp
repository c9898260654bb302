#include "runner.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <thread>

#include "adapter_lock.h"
#include "atomic_file.h"
#include "checkers.h"
#include "client.h"
#include "cluster.h"
#include "hiredis_connection.h"
#include "nemesis.h"
#include "process.h"  // CleanupOnSignal
#include "recorder.h"
#include "server_clock.h"
#include "version.h"

namespace locklab {

namespace {

// Why `external` cannot be held to `scenario`'s story, or nullopt when it
// can: a fault of the story fires at a step the lock never announces (a step
// inside the built-in algorithm it stands in for, or a nesting step of a lock
// that does not nest), or none of the story's faults is meant for it.
std::optional<std::string> not_applicable_reason(const Scenario& scenario, const Schedule& schedule,
                                                 const ExternalLock& external) {
  if (!scenario.faults.empty()) {
    bool any = false;
    for (size_t i = 0; i < scenario.faults.size(); ++i) any = any || schedule.applies(i);
    if (!any)
      return std::string(
                 "none of the scenario's faults is meant for it (each names the built-in "
                 "algorithms it is for") +
             (external.like ? "" : "; say which one the lock stands in for with --like") + ")";
  }
  std::optional<AdapterInfo> hello;
  for (size_t i = 0; i < scenario.faults.size(); ++i) {
    const Fault& f = scenario.faults[i];
    if (!schedule.applies(i) || !f.when) continue;
    const auto& own = workload_steps();
    const std::string& step = f.when->step;
    const std::string which =
        "fault " + std::to_string(i) + " (" + std::string(f.name()) + ", " + f.trigger_text() + ")";
    if (std::find(own.begin(), own.end(), step) != own.end()) {
      if (is_nesting_step(step)) {
        if (!hello) hello = probe_adapter(external.adapter);
        if (!hello->reentrant)
          return which +
                 " fires when a client re-enters the lock, and the adapter says it does "
                 "not nest (hello: reentrant false)";
      }
      continue;
    }
    if (!hello) hello = probe_adapter(external.adapter);
    if (std::find(hello->steps.begin(), hello->steps.end(), step) == hello->steps.end())
      return which + " fires at step \"" + step + "\", which exists only inside the built-in " +
             external.like.value_or("algorithm") +
             "; the adapter does not announce it (hello \"steps\")";
  }
  return std::nullopt;
}

// Why `scenario` cannot run `algorithm` on `target`, or
// nullopt: a fault that needs control of the servers, or servers the target
// does not have.
std::optional<std::string> unavailable_reason(const Scenario& scenario, const Schedule& schedule,
                                              const std::string& algorithm, bool adapter,
                                              const Target& target) {
  for (size_t i = 0; i < scenario.faults.size(); ++i) {
    if (!schedule.applies(i)) continue;
    if (auto why = unavailable_on(scenario.faults[i], target))
      return "fault " + std::to_string(i) + ": " + *why;
  }
  if (adapter) return std::nullopt;
  for (const auto& a : algorithms()) {
    if (a.id != algorithm) continue;
    if (a.multi_node && target.masters.size() < 3)
      return algorithm + " needs at least 3 independent masters; " + target.describe() + " names " +
             std::to_string(target.masters.size());
    if (a.needs_replica && target.replicas.empty())
      return algorithm + " needs a replica of the master; " + target.describe() + " names none";
  }
  return std::nullopt;
}

// The shape of a run on `target`: as many of its servers as the algorithm
// uses, none started, nothing under the clock shim; `sentinels` > 0 when the
// run wants Sentinel and the target has it.
ClusterShape shape_on(const Target& target, ClusterShape wanted, bool multi_node) {
  ClusterShape shape = wanted;
  shape.masters = multi_node ? int(target.masters.size()) : 1;
  shape.replicas = std::min(wanted.replicas, int(target.replicas.size()));
  shape.sentinels = target.sentinels.empty() ? 0 : wanted.sentinels;
  shape.server_clocks = false;
  return shape;
}

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

// A prefix no other run (of this process or another lab on the same target) uses.
std::string run_prefix(const Target& target, const std::string& algorithm, uint64_t seed) {
  static std::atomic<uint64_t> counter{0};
  const uint64_t salt = uint64_t(monotonic_ns()) ^ (uint64_t(::getpid()) << 32) ^ (counter++ << 16);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(salt ^ seed));
  return target.key_prefix + algorithm + ":" + hex + ":";
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
    out.push_back(std::move(firing));
  }
  return out;
}

}  // namespace

const Expectation& expectation_of(const Scenario& scenario, const std::string& algorithm,
                                  const ExternalLock* external) {
  if (!external) return scenario.expectation_for(algorithm);
  return external->like ? scenario.expectation_for(*external->like) : scenario.default_expectation;
}

RunResult run_algorithm(const Scenario& scenario_in, const std::string& algorithm, uint64_t seed,
                        const std::filesystem::path& out_dir, const ExternalLock* external,
                        RunProbe* probe, const Target* target) {
  std::shared_lock<std::shared_mutex> shares_target;
  std::unique_lock<std::shared_mutex> owns_target;
  if (target) {
    const bool fails_over =
        target->allow_failover &&
        std::any_of(scenario_in.faults.begin(), scenario_in.faults.end(),
                    [](const Fault& f) { return f.kind == FaultKind::Failover; });
    // A run that fails the target over or empties it first has it to itself.
    if (fails_over || target->allow_flush)
      owns_target = std::unique_lock(access_to(*target));
    else
      shares_target = std::shared_lock(access_to(*target));
  }
  // On a target, the run's locks (and every key derived from them) live
  // under a prefix of its own.
  std::optional<RunKeys> keys;
  Scenario prefixed;
  if (target) {
    prefixed = scenario_in;
    keys.emplace(*target, run_prefix(*target, algorithm, seed));
    for (auto& lock : prefixed.workload.locks) lock = keys->prefix() + lock;
  }
  const Scenario& scenario = target ? prefixed : scenario_in;
  const AdapterConfig* adapter = external ? &external->adapter : nullptr;
  RunResult run;
  run.algorithm = algorithm;
  run.expected = expectation_of(scenario, algorithm, external);
  run.history = algorithm + "/history.jsonl";
  run.seed = seed;
  if (adapter) run.adapter = adapter->command;
  if (external && external->like) run.like = *external->like;
  if (target) run.target = target->name;
  try {
    ClusterShape shape =
        adapter ? ClusterShape{scenario.topology.nodes, scenario.topology.replicas,
                               scenario.topology.sentinels, scenario.topology.persistence}
                : shape_for(algorithm, scenario.topology);
    shape.server_clocks = needs_server_clocks(scenario.faults);
    if (target) {
      bool multi_node = adapter && scenario.topology.nodes > 1;
      for (const auto& a : algorithms())
        if (!adapter && a.id == algorithm) multi_node = a.multi_node;
      shape = shape_on(*target, shape, multi_node);
    }
    // An adapter is handed stable addresses (relays in front of the links).
    shape.client_links =
        adapter || needs_client_links(scenario.faults) || (probe && probe->client_links);
    shape.netns = scenario.topology.network == "netns";
    for (const Fault& f : scenario.faults) shape.delay_faults |= f.kind == FaultKind::Delay;
    // The faults of this run: those meant for the algorithm, or for the one
    // an external lock stands in for.
    Schedule schedule(scenario.faults,
                      external ? external->like.value_or(std::string()) : algorithm);
    if (target)
      if (auto reason = unavailable_reason(scenario, schedule, algorithm, adapter, *target)) {
        run.not_applicable = *reason;
        run.history.clear();
        run.outcome = decide_outcome(run);
        return run;
      }
    if (external)
      if (auto reason = not_applicable_reason(scenario, schedule, *external)) {
        run.not_applicable = *reason;
        run.history.clear();
        run.outcome = decide_outcome(run);
        return run;
      }
    std::filesystem::create_directories(out_dir / algorithm);
    // A target the file lets the lab flush starts each run empty, as a fresh server does.
    if (target && target->allow_flush) flush_target(*target);
    std::optional<Cluster> cluster_storage;
    if (target)
      cluster_storage.emplace(*target, shape, scenario.clients, seed);
    else
      cluster_storage.emplace(shape, scenario.clients, seed);
    Cluster& cluster = *cluster_storage;
    const ConnectionOptions credentials =
        target ? target->connection_options() : ConnectionOptions{};
    const bool record = !probe || probe->record_history;
    // The history goes to disk as it happens, beside where it ends up.
    history::Recorder recorder(record ? out_dir / algorithm : std::filesystem::path());
    ProtectedResource resource(scenario.workload.fencing);
    // Clients exist before the nemesis (it needs their gates and clocks), so
    // their steps reach it through this pointer once it is there.
    std::atomic<Nemesis*> nemesis_ptr{nullptr};
    StepListener listener = [&nemesis_ptr](const std::string& client, std::string_view step) {
      if (Nemesis* n = nemesis_ptr.load()) n->on_step(client, step);
    };

    // An adapter runs in its own process: client clock faults reach it
    // through the clock shim, one clock per client.
    std::vector<std::unique_ptr<ServerClock>> adapter_clocks;
    const bool skews_clients = moves_client_clocks(scenario.faults);
    std::vector<std::unique_ptr<Client>> clients;
    for (int i = 0; i < scenario.clients; ++i) {
      if (adapter && skews_clients) adapter_clocks.push_back(std::make_unique<ServerClock>());
      std::string id = "c" + std::to_string(i + 1);
      LockContext context;
      context.node_count = shape.masters;
      context.param = [&scenario](std::string_view name) -> std::optional<int64_t> {
        auto it = scenario.workload.params.find(std::string(name));
        if (it == scenario.workload.params.end()) return std::nullopt;
        return it->second;
      };
      context.endpoint = [&cluster, i](size_t node) {
        return cluster.stable_endpoint(size_t(i), node);
      };
      context.connect = [&cluster, &credentials, i](size_t node) -> std::unique_ptr<Connection> {
        ConnectionOptions options = credentials;
        options.connect_timeout = std::chrono::milliseconds(500);
        options.command_timeout = std::chrono::milliseconds(1000);
        // Resolved again at every reconnect, so clients follow a failover.
        return std::make_unique<HiredisConnection>(
            [&cluster, i, node] { return cluster.client_endpoint(size_t(i), node); }, options);
      };
      clients.push_back(std::make_unique<Client>(
          id, seed * 1000 + uint64_t(i + 1), recorder.log_for(id),
          [&algorithm, adapter, &out_dir, &adapter_clocks, &credentials](LockContext c) {
            if (!adapter) return make_lock(algorithm, c);
            AdapterConfig config = *adapter;
            if (config.log_dir.empty()) config.log_dir = out_dir / algorithm;
            if (!adapter_clocks.empty())
              for (auto& [k, v] : adapter_clocks.back()->env()) config.env[k] = v;
            // An adapter authenticates on its own (harness/adapter/PROTOCOL.md).
            if (!credentials.password.empty())
              config.env["LOCKLAB_REDIS_PASSWORD"] = credentials.password;
            if (!credentials.username.empty())
              config.env["LOCKLAB_REDIS_USERNAME"] = credentials.username;
            return make_adapter_lock(config, c);
          },
          context, listener));
    }
    std::vector<ClientHandle> handles;
    for (size_t i = 0; i < clients.size(); ++i) {
      Client* c = clients[i].get();
      handles.push_back({c->id(), &c->gate(), &c->clock(), [c] { c->crash(); },
                         adapter_clocks.empty() ? nullptr : adapter_clocks[i].get()});
    }
    Nemesis nemesis(schedule, cluster, handles, recorder.log_for("nemesis"));
    nemesis_ptr = &nemesis;
    nemesis.start();

    if (probe && probe->started) probe->started(cluster);
    std::atomic<bool> stop{false};
    const int64_t deadline = monotonic_ns() + scenario.duration_ms * 1'000'000;
    std::vector<Workload> workloads(clients.size(), scenario.workload);
    if (scenario.workload.lock_per_client)
      for (size_t i = 0; i < workloads.size(); ++i)
        workloads[i].locks = {scenario.workload.locks[i % scenario.workload.locks.size()]};
    std::vector<std::thread> threads;
    for (size_t i = 0; i < clients.size(); ++i)
      threads.emplace_back([&, c = clients[i].get(), &workload = workloads[i]] {
        c->run(workload, resource, deadline, stop);
      });
    for (auto& t : threads) t.join();
    if (probe) {
      for (auto& c : clients) probe->commands += c->commands_sent();
      if (probe->finished) probe->finished(cluster);
    }
    nemesis.stop();
    nemesis_ptr = nullptr;
    for (auto& c : clients)
      if (!c->error().empty()) throw std::runtime_error(c->error());
    run.faults = fault_firings(schedule, nemesis.outcomes());
    for (const auto& firing : run.faults) run.exercised = run.exercised && firing.fired;

    RunStats stats;
    if (record) {
      // Checked from the file, streaming: memory stays flat however long the run.
      const auto history_file = out_dir / algorithm / "history.jsonl";
      stats.events = recorder.write_history(history_file);
      run.check = Check::of(checkers::check_file(history_file));
      run.verdict = run.check->verdict;
    }
    for (auto& c : clients) {
      const ClientStats& s = c->stats();
      stats.acquires_ok += s.acquires_ok, stats.acquires_failed += s.acquires_failed;
      stats.acquires_unknown += s.acquires_unknown, stats.writes_accepted += s.writes_accepted;
      stats.writes_rejected += s.writes_rejected, stats.lost += s.lost;
    }
    stats.counters = resource.counters();
    run.stats = stats;
  } catch (const std::exception& e) {
    run.verdict = Verdict::Unknown;
    run.error = e.what();
  }
  // Decided last, from everything the run recorded.
  run.outcome = decide_outcome(run);
  return run;
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
  std::vector<std::string> selected =
      options.algorithms.empty() ? scenario.algorithms : options.algorithms;
  if (options.external) selected = {probe_adapter(options.external->adapter).name};
  uint64_t seed = options.seed.value_or(scenario.seed);
  std::filesystem::create_directories(options.out_dir);
  ScenarioResults results = results_of(scenario, seed, {});
  for (const auto& algorithm : selected)
    results.runs.push_back(run_algorithm(scenario, algorithm, seed, options.out_dir,
                                         options.external ? &*options.external : nullptr, nullptr,
                                         options.target.get()));
  write_file_atomically(options.out_dir / "results.json", results.to_json().dump(2) + "\n");
  return results;
}

}  // namespace locklab
