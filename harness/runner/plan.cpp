#include "plan.h"

#include <algorithm>
#include <cstdio>

#include "adapter_lock.h"
#include "redis_server.h"

namespace locklab {
namespace {

bool has(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

// Why `lock` never reaches a step a fault of the story fires at or waits
// for, or nullopt.
std::optional<std::string> unreached_step(const Scenario& scenario, const Schedule& schedule,
                                          const LockUnderTest& lock) {
  for (size_t i = 0; i < scenario.faults.size(); ++i) {
    const Fault& f = scenario.faults[i];
    if (!schedule.applies(i)) continue;
    for (const auto& [trigger, does] :
         {std::pair{&f.when, "fires"}, std::pair{&f.until, "waits"}}) {
      if (!*trigger) continue;
      const std::string& step = (*trigger)->step;
      const std::string which = "fault " + std::to_string(i) + " (" + std::string(f.name()) + ", " +
                                f.trigger_text() + ") " + does;
      if (has(workload_steps(), step)) {
        if (is_nesting_step(step) && !lock.reentrant)
          return which +
                 " for a client to re-enter the lock, and the adapter says it does not nest "
                 "(hello: reentrant false)";
        continue;
      }
      if (!has(lock.steps, step))
        return which + " at step \"" + step + "\", which exists only inside the built-in " +
               lock.like.value_or("algorithm") +
               "; the adapter does not announce it (hello \"steps\")";
    }
  }
  return std::nullopt;
}

// Why `servers` cannot take the story's faults or hold the lock, or nullopt.
std::optional<std::string> unavailable(const Scenario& scenario, const Schedule& schedule,
                                       const LockUnderTest& lock, const Servers& servers) {
  if (!servers.target) return std::nullopt;  // the lab's own: it controls everything
  const Target& target = *servers.target;
  for (size_t i = 0; i < scenario.faults.size(); ++i)
    if (schedule.applies(i))
      if (auto why = unavailable_on(scenario.faults[i], target))
        return "fault " + std::to_string(i) + ": " + *why;
  if (lock.multi_node && target.masters.size() < 3)
    return lock.name + " needs at least 3 independent masters; " + target.describe() + " names " +
           std::to_string(target.masters.size());
  if (lock.needs_replica && target.replicas.empty())
    return lock.name + " needs a replica of the master; " + target.describe() + " names none";
  return std::nullopt;
}

// The shape of a run on `target`: as many of its servers as the lock uses,
// none started, nothing under the clock shim; Sentinels when the run wants
// them and the target has them.
ClusterShape shape_on(const Target& target, ClusterShape wanted, bool multi_node) {
  ClusterShape shape = wanted;
  shape.masters = multi_node ? int(target.masters.size()) : 1;
  shape.replicas = std::min(wanted.replicas, int(target.replicas.size()));
  shape.sentinels = target.sentinels.empty() ? 0 : wanted.sentinels;
  shape.server_clocks = false;
  return shape;
}

}  // namespace

LockUnderTest LockUnderTest::built_in(std::string_view id) {
  const AlgorithmInfo& a = algorithm_info(id);
  LockUnderTest lock;
  lock.name = a.id;
  lock.family = a.family;
  lock.reentrant = a.reentrant;
  lock.fencing = a.fencing;
  lock.multi_node = a.multi_node;
  lock.needs_replica = a.needs_replica;
  lock.steps = a.steps;
  return lock;
}

LockUnderTest LockUnderTest::from_adapter(AdapterConfig config, std::optional<std::string> like) {
  const AlgorithmInfo* stands_for = like ? &algorithm_info(*like) : nullptr;
  const AdapterInfo hello = probe_adapter(config);
  LockUnderTest lock;
  lock.name = hello.name;
  lock.family = "library";
  lock.version = hello.version;
  lock.adapter = std::move(config);
  lock.like = std::move(like);
  lock.reentrant = hello.reentrant;
  lock.fencing = hello.fencing;
  lock.multi_node = hello.multi_node.value_or(stands_for && stands_for->multi_node);
  lock.needs_replica = stands_for && stands_for->needs_replica;
  lock.steps = hello.steps;
  return lock;
}

std::vector<LockUnderTest> built_in_locks() {
  std::vector<LockUnderTest> locks;
  for (const auto& a : algorithms()) locks.push_back(LockUnderTest::built_in(a.id));
  return locks;
}

std::string LockUnderTest::story_algorithm() const {
  return adapter ? like.value_or("") : name;
}

std::unique_ptr<Lock> LockUnderTest::make(const LockContext& context,
                                          const std::filesystem::path& log_dir,
                                          const std::map<std::string, std::string>& env,
                                          bool own_adapter) const {
  if (!adapter) return make_lock(name, context);
  AdapterConfig config = *adapter;
  if (own_adapter) config.pool.reset();
  if (config.log_dir.empty()) config.log_dir = log_dir;
  for (const auto& [k, v] : env) config.env[k] = v;
  return make_adapter_lock(config, context);
}

Needs Servers::provides() const {
  if (target) return target->provides();
  Needs all;
  for (Need need : kNeeds) all |= need;
  return all;
}

ConnectionOptions Servers::connection_options() const {
  return target ? target->connection_options() : ConnectionOptions{};
}

std::optional<std::string> Servers::target_name() const {
  if (!target) return std::nullopt;
  return target->name;
}

std::string Servers::redis_version() const {
  return target ? target_redis_version(*target) : installed_redis_version();
}

const Expectation& expectation_for(const Scenario& scenario, const LockUnderTest& lock) {
  if (!lock.adapter) return scenario.expectation_for(lock.name);
  if (auto own = scenario.library_expectations.find(lock.name);
      own != scenario.library_expectations.end())
    return own->second;
  return lock.like ? scenario.expectation_for(*lock.like) : scenario.default_expectation;
}

std::optional<std::string> real_time_reason(const Scenario& scenario, const Schedule& schedule,
                                            const LockUnderTest& lock, const Servers& servers,
                                            const ClusterShape& shape) {
  if (lock.adapter) return "an adapter's runtime keeps its own timers, in real time";
  if (servers.target) return "a target's servers keep their own clocks";
  if (shape.sentinels > 0) return "Sentinel keeps its own pace, in real time";
  if (shape.netns) return "network namespaces delay and drop traffic in real time";
  for (size_t i = 0; i < scenario.faults.size(); ++i) {
    const Fault& f = scenario.faults[i];
    if (schedule.applies(i) && !info(f.kind).real_time_only.empty())
      return "fault " + std::to_string(i) + " (" + std::string(f.name()) +
             "): " + std::string(info(f.kind).real_time_only);
  }
  return std::nullopt;
}

PlannedRun plan_run(const Scenario& scenario, const LockUnderTest& lock, const Servers& servers,
                    uint64_t seed, uint64_t unique) {
  PlannedRun planned;
  planned.expected = expectation_for(scenario, lock);
  if (lock.adapter) {
    if (auto told = scenario.library_not_applicable.find(lock.name);
        told != scenario.library_not_applicable.end()) {
      planned.not_applicable = told->second;
      return planned;
    }
  }
  if (auto told = scenario.not_applicable.find(lock.story_algorithm());
      told != scenario.not_applicable.end() &&
      !(lock.adapter && scenario.library_expectations.count(lock.name))) {
    planned.not_applicable = told->second;
    return planned;
  }
  RunPlan plan;
  plan.schedule = Schedule(scenario.faults, lock.story_algorithm());
  const Schedule& schedule = plan.schedule;

  Needs needs;
  bool any_fault = false;
  for (size_t i = 0; i < scenario.faults.size(); ++i)
    if (schedule.applies(i)) {
      needs |= scenario.faults[i].needs();
      any_fault = true;
    }
  if (lock.adapter && !scenario.faults.empty() && !any_fault) {
    planned.not_applicable =
        std::string(
            "none of the scenario's faults is meant for it (each names the built-in "
            "algorithms it is for") +
        (lock.like ? "" : "; say which one the lock stands in for with --like") + ")";
    return planned;
  }
  std::optional<std::string> why = unavailable(scenario, schedule, lock, servers);
  if (!why) why = unreached_step(scenario, schedule, lock);
  if (why) {
    planned.not_applicable = *why;
    return planned;
  }

  plan.scenario = scenario;
  plan.shape = shape_for(lock.multi_node, lock.needs_replica, scenario.topology);
  plan.shape.server_clocks = needs.has(Need::ServerClock);
  // A lock outside the lab's process is handed its addresses once: relays
  // in front of the client links, which follow a failover.
  plan.shape.client_links = lock.adapter || needs.has(Need::ClientLinks);
  plan.shape.netns = scenario.topology.network == "netns";
  plan.shape.delay_faults = needs.has(Need::LinkLatency);
  plan.adapter_clocks = lock.adapter && needs.has(Need::ClientClock);
  if (servers.time != TimeMode::Real) {
    const auto real_only = real_time_reason(scenario, schedule, lock, servers, plan.shape);
    if (real_only && servers.time == TimeMode::Virtual) {
      planned.not_applicable = "on virtual time: " + *real_only + " (--time real or auto runs it)";
      return planned;
    }
    plan.virtual_time = !real_only;
    // Every server reads its wall clock from the run's virtual clock, and
    // the clients' connections carry their links.
    if (plan.virtual_time) {
      plan.shape.server_clocks = true;
      // A stopped or sleeping server is its clients' links holding what
      // reaches it (simulated_link.h): every run has them, at no cost.
      plan.shape.client_links = plan.shape.simulated_links = true;
    }
  }
  if (const Target* target = servers.target.get()) {
    plan.shape = shape_on(*target, plan.shape, lock.multi_node);
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(unique ^ seed));
    plan.key_prefix = target->key_prefix + lock.name + ":" + hex + ":";
    for (auto& name : plan.scenario.workload.locks) name = plan.key_prefix + name;
    plan.flush_first = target->allow_flush;
    plan.owns_target =
        target->allow_flush || (target->allow_failover && needs.has(Need::Promotion));
    // An adapter authenticates on its own (harness/adapter/PROTOCOL.md).
    if (!target->password.empty()) plan.adapter_env["LOCKLAB_REDIS_PASSWORD"] = target->password;
    if (!target->username.empty()) plan.adapter_env["LOCKLAB_REDIS_USERNAME"] = target->username;
  }
  planned.plan = std::move(plan);
  return planned;
}

}  // namespace locklab
