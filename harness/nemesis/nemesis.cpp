#include "nemesis.h"

#include <algorithm>

#include "clock.h"
#include "fault_proxy.h"
#include "fibers.h"
#include "lock.h"  // ClientCrashed
#include "pause_gate.h"
#include "redis_server.h"
#include "server_clock.h"
#include "server_faults.h"

namespace locklab {

using nlohmann::json;
using std::chrono::milliseconds;

Nemesis::Nemesis(Schedule schedule, FaultTargets& targets, std::vector<ClientHandle> clients,
                 history::ProcessLog& log)
    : schedule_(std::move(schedule)),
      targets_(targets),
      clients_(std::move(clients)),
      log_(log),
      outcomes_(schedule_.faults().size()) {
  for (size_t i = 0; i < schedule_.faults().size(); ++i) {
    if (!schedule_.applies(i)) continue;
    const Fault& f = schedule_.fault(i);
    const std::string where = "faults[" + std::to_string(i) + "] (" + std::string(f.name()) + ")";
    const size_t replicas = targets_.server_count() - targets_.master_count();
    for (int n : f.nodes) {
      if (acts_on_replicas(f) && size_t(n) >= replicas)
        throw std::runtime_error(where + ": replica " + std::to_string(n) +
                                 " does not exist; node 0 has " + std::to_string(replicas));
      if (!acts_on_replicas(f) && size_t(n) >= targets_.server_count())
        throw std::runtime_error(where + ": server " + std::to_string(n) +
                                 " does not exist; this run has " +
                                 std::to_string(targets_.server_count()) + " servers");
    }
    for (const auto& c : f.clients) client_index(c);
    if (f.when) client_index(f.when->client);
    if (f.until) client_index(f.until->client);
    const Needs needs = f.needs();
    if (needs.has(Need::ServerClock) && !targets_.server_clock(0))
      throw std::runtime_error(where + ": servers were not started under the clock shim");
    if (needs.has(Need::Replica) && targets_.server_count() <= targets_.master_count())
      throw std::runtime_error(where + ": this run has no replica");
    if (needs.has(Need::Sentinels) && !targets_.has_sentinels())
      throw std::runtime_error(where + ": this run has no sentinels");
  }
}

Nemesis::~Nemesis() {
  stop();
}

void Nemesis::start(bool own_thread) {
  start_ns_ = monotonic_ns();
  // Faults at time 0 are in force before any client takes its first step.
  for (const auto& [at_ms, index] : schedule_.timed())
    if (at_ms == 0) apply(index, "");
  for (const auto& [at_ms, index] : schedule_.timed())
    if (at_ms > 0) schedule_at(start_ns_ + at_ms * 1'000'000, [this, i = index] { apply(i, ""); });
  if (own_thread) timer_ = std::thread([this] { run_timeline(); });
}

void Nemesis::schedule_at(int64_t at_ns, Action action) {
  {
    std::lock_guard l(mu_);
    if (stopping_) return;
    timeline_.emplace(at_ns, std::move(action));
  }
  wake_.notify_all();
}

void Nemesis::end_waits_at(int64_t at_ns) {
  schedule_at(at_ns, [this] {
    std::vector<size_t> waiting;
    {
      std::lock_guard l(mu_);
      run_over_ = true;
      for (const auto& [index, ending] : endings_)
        if (ending.until) waiting.push_back(index);
    }
    for (size_t index : waiting) end_wait_over(index, &Ending::until);
  });
}

void Nemesis::end_timeline() {
  {
    std::lock_guard l(mu_);
    timeline_ended_ = true;
  }
  wake_.notify_all();
}

void Nemesis::run_timeline() {
  std::unique_lock l(mu_);
  while (!stopping_ && !timeline_ended_) {
    if (timeline_.empty()) {
      wake_.wait(l);
      continue;
    }
    int64_t next = timeline_.begin()->first;
    if (monotonic_ns() < next) {
      wake_.wait_until(l, next);
      continue;
    }
    Action action = std::move(timeline_.begin()->second);
    timeline_.erase(timeline_.begin());
    l.unlock();
    action();
    l.lock();
  }
}

void Nemesis::record(size_t index, const char* phase, json extra) {
  const Fault& fault = schedule_.fault(index);
  history::Event e;
  e.type = history::Type::Info;
  e.f = std::string(fault.name());
  json value = fault.describe();
  value["phase"] = phase;
  value["fault"] = index;
  if (info(fault.kind).moment && std::string_view(phase) == "start") value["moment"] = true;
  if (extra.is_object())
    for (auto it = extra.begin(); it != extra.end(); ++it) value[it.key()] = it.value();
  e.value = value;
  std::lock_guard l(mu_);
  log_.append(std::move(e));
}

void Nemesis::mark_ended(size_t index) {
  std::lock_guard l(mu_);
  outcomes_[index].ended_at_ns = monotonic_ns() - start_ns_;
}

std::vector<FaultOutcome> Nemesis::outcomes() const {
  std::lock_guard l(mu_);
  return outcomes_;
}

size_t Nemesis::client_index(const std::string& id) const {
  for (size_t i = 0; i < clients_.size(); ++i)
    if (clients_[i].id == id) return i;
  throw std::runtime_error("the nemesis has no client " + id);
}

std::vector<size_t> Nemesis::clients_of(const Fault& f, const std::string& trigger_client) const {
  std::vector<size_t> out;
  if (!f.clients.empty()) {
    for (const auto& c : f.clients) out.push_back(client_index(c));
  } else if ((f.kind == FaultKind::Pause || f.kind == FaultKind::CrashClient) &&
             !trigger_client.empty()) {
    out.push_back(client_index(trigger_client));
  } else {
    for (size_t i = 0; i < clients_.size(); ++i) out.push_back(i);
  }
  return out;
}

bool Nemesis::acts_on_replicas(const Fault& f) {
  const FaultTarget target = info(f.kind).target;
  return target == FaultTarget::Replication || target == FaultTarget::Cluster;
}

std::vector<size_t> Nemesis::replicas_of(const Fault& f) const {
  std::vector<size_t> out;
  for (int n : f.nodes) out.push_back(size_t(n));
  if (out.empty() && info(f.kind).target == FaultTarget::Cluster) out.push_back(0);
  if (out.empty())
    for (size_t r = 0; r < targets_.server_count() - targets_.master_count(); ++r) out.push_back(r);
  return out;
}

std::vector<size_t> Nemesis::servers_of(const Fault& f) const {
  std::vector<size_t> out;
  if (acts_on_replicas(f)) {
    for (size_t r : replicas_of(f)) out.push_back(targets_.master_count() + r);
  } else if (!f.nodes.empty()) {
    for (int n : f.nodes) out.push_back(size_t(n));
  } else {
    for (size_t i = 0; i < targets_.master_count(); ++i) out.push_back(i);
  }
  return out;
}

// One firing of a fault: the fault and whom it acts on this time.
struct Nemesis::Firing {
  size_t index;  // in the schedule
  const Fault& fault;
  std::vector<size_t> clients;  // by client index
  std::vector<size_t> servers;  // by server index (masters first)
};

json Nemesis::targets_of(const Firing& firing) const {
  json client_ids = json::array();
  for (size_t c : firing.clients) client_ids.push_back(clients_[c].id);
  json targets = json::object();
  switch (info(firing.fault.kind).target) {
    case FaultTarget::Client:
      targets["targets"] = client_ids;
      break;
    case FaultTarget::Server:
      targets["nodes"] = firing.servers;
      break;
    case FaultTarget::Link:
      targets["targets"] = client_ids;
      targets["nodes"] = firing.servers;
      break;
    case FaultTarget::Replication:
    case FaultTarget::Cluster:
      targets["nodes"] = {0};
      targets["replicas"] = replicas_of(firing.fault);
      break;
  }
  return targets;
}

void Nemesis::apply(size_t index, const std::string& trigger_client) {
  const Fault& f = schedule_.fault(index);
  const Firing firing{index, f, clients_of(f, trigger_client), servers_of(f)};
  const json targets = targets_of(firing);
  {
    std::lock_guard l(mu_);
    if (stopping_) return;
    outcomes_[index].fired = true;
    outcomes_[index].fired_at_ns = monotonic_ns() - start_ns_;
  }
  // Recorded before it takes effect: nothing the fault causes precedes it in the history.
  record(index, "start", targets);
  if (Action undo = start_fault(firing)) keep_in_force(index, std::move(undo), f.duration_ms);
}

Nemesis::Action Nemesis::start_fault(const Firing& firing) {
  switch (firing.fault.kind) {
    case FaultKind::Pause:
      return start_pause(firing);
    case FaultKind::CrashClient:
      return start_client_crash(firing);
    case FaultKind::ClockJump:
      return start_clock_jump(firing);
    case FaultKind::ClockRate:
      return start_clock_rate(firing);
    case FaultKind::ServerClockJump:
      return start_server_clock_jump(firing);
    case FaultKind::ServerClockRate:
      return start_server_clock_rate(firing);
    case FaultKind::SigstopNode:
      return start_sigstop(firing);
    case FaultKind::DebugSleep:
      return start_debug_sleep(firing);
    case FaultKind::CrashNode:
      return start_node_crash(firing);
    case FaultKind::Partition:
      return start_partition(firing);
    case FaultKind::Delay:
      return start_delay(firing);
    case FaultKind::Cut:
      return start_cut(firing);
    case FaultKind::CutReplication:
      return start_replication_cut(firing);
    case FaultKind::Failover:
      return firing.fault.mode == FailoverMode::Manual ? start_manual_failover(firing)
                                                       : start_sentinel_failover(firing);
  }
  return {};
}

void Nemesis::keep_in_force(size_t index, Action undo, std::optional<int64_t> duration_ms) {
  const Fault& fault = schedule_.fault(index);
  bool undo_at_once = false, overtime = false;
  {
    std::lock_guard l(mu_);
    active_.emplace(index, std::move(undo));
    bool still_waits = false;
    if (fault.until_fault_ends)
      still_waits = !outcomes_.at(*fault.until_fault_ends).ended_at_ns;
    else if (fault.until && !schedule_.until_passed(index))
      still_waits = true;
    else if (fault.until)  // reached before the fault fired: its after_ms may still run
      still_waits =
          monotonic_ns() < until_reached_ns_.at(index) + fault.until->after_ms * 1'000'000;
    const Ending ending{duration_ms.has_value(), still_waits};
    overtime = run_over_ && fault.kind == FaultKind::Pause;  // see end_waits_at
    if (overtime)
      undo_at_once = true;
    else if (ending.duration || ending.until)
      endings_[index] = ending;
    else
      undo_at_once = fault.waits();  // what it waits for came before it fired
    if (duration_ms && !undo_at_once)
      timeline_.emplace(monotonic_ns() + *duration_ms * 1'000'000,
                        [this, index] { end_wait_over(index, &Ending::duration); });
  }
  wake_.notify_all();
  if (undo_at_once) undo_now(index, overtime ? json{{"healed", "end of run"}} : json());
}

void Nemesis::end_wait_over(size_t index, bool Ending::*wait) {
  {
    std::lock_guard l(mu_);
    auto it = endings_.find(index);
    if (it == endings_.end()) return;  // not in force, or healed by stop()
    it->second.*wait = false;
    if (it->second.duration || it->second.until) return;
    endings_.erase(it);
  }
  undo_now(index);
}

void Nemesis::until_step_reached(size_t index) {
  const int64_t after_ms = schedule_.fault(index).until->after_ms;
  if (after_ms == 0) return end_wait_over(index, &Ending::until);
  // A fault that fires meanwhile is ended by this; one that fires later finds
  // its wait over (keep_in_force).
  schedule_at(monotonic_ns() + after_ms * 1'000'000,
              [this, index] { end_wait_over(index, &Ending::until); });
}

void Nemesis::undo_now(size_t index, json extra) {
  Action undo;
  {
    std::lock_guard l(mu_);
    auto it = active_.find(index);
    if (it == active_.end()) return;  // healed by stop() meanwhile
    undo = std::move(it->second);
    active_.erase(it);
  }
  undo_then_record(index, undo, [&] { record_end(index, std::move(extra)); });
}

void Nemesis::undo_then_record(size_t index, const Action& undo,
                               const std::function<void()>& record) {
  const bool pause = schedule_.fault(index).kind == FaultKind::Pause;
  if (!pause) undo();
  record();
  if (pause) undo();
}

void Nemesis::record_end(size_t index, json extra) {
  mark_ended(index);
  record(index, "end", std::move(extra));
  for (size_t waiting : schedule_.waiting_for_end_of(index)) end_wait_over(waiting, &Ending::until);
}

Nemesis::Action Nemesis::start_pause(const Firing& firing) {
  for (size_t c : firing.clients) clients_[c].gate->close();
  return [this, clients = firing.clients] {
    for (size_t c : clients) clients_[c].gate->open();
  };
}

Nemesis::Action Nemesis::start_client_crash(const Firing& firing) {
  for (size_t c : firing.clients) clients_[c].crash();
  return {};
}

void Nemesis::jump_client_clocks(const std::vector<size_t>& clients, milliseconds delta) {
  for (size_t c : clients) {
    clients_[c].clock->jump(delta);
    if (clients_[c].process_clock) clients_[c].process_clock->jump(delta);
  }
}

void Nemesis::set_client_clock_rates(const std::vector<size_t>& clients, double rate) {
  for (size_t c : clients) {
    clients_[c].clock->set_rate(rate);
    if (clients_[c].process_clock) clients_[c].process_clock->set_rate(rate);
  }
}

Nemesis::Action Nemesis::start_clock_jump(const Firing& firing) {
  const milliseconds delta(firing.fault.delta_ms);
  jump_client_clocks(firing.clients, delta);
  // A jump without a duration or an `until` stays: the clock is simply wrong
  // from then on.
  if (!firing.fault.duration_ms && !firing.fault.waits()) return {};
  return [this, clients = firing.clients, delta] { jump_client_clocks(clients, -delta); };
}

Nemesis::Action Nemesis::start_clock_rate(const Firing& firing) {
  set_client_clock_rates(firing.clients, firing.fault.rate);
  return [this, clients = firing.clients] { set_client_clock_rates(clients, 1.0); };
}

Nemesis::Action Nemesis::start_server_clock_jump(const Firing& firing) {
  const milliseconds delta(firing.fault.delta_ms);
  for (size_t s : firing.servers) targets_.server_clock(s)->jump(delta);
  if (!firing.fault.duration_ms && !firing.fault.waits()) return {};
  return [this, servers = firing.servers, delta] {
    for (size_t s : servers) targets_.server_clock(s)->jump(-delta);
  };
}

Nemesis::Action Nemesis::start_server_clock_rate(const Firing& firing) {
  for (size_t s : firing.servers) targets_.server_clock(s)->set_rate(firing.fault.rate);
  return [this, servers = firing.servers] {
    for (size_t s : servers) targets_.server_clock(s)->set_rate(1.0);
  };
}

Nemesis::Action Nemesis::start_sigstop(const Firing& firing) {
  // On virtual time the clients' links hold what reaches the server instead.
  for (size_t s : firing.servers)
    if (!targets_.hold_server(s)) targets_.server(s).pause();
  return [this, servers = firing.servers] {
    for (size_t s : servers)
      if (!targets_.release_server(s)) targets_.server(s).resume();
  };
}

Nemesis::Action Nemesis::start_debug_sleep(const Firing& firing) {
  const milliseconds sleep(*firing.fault.duration_ms);
  // On virtual time the clients' links hold what reaches the server for the
  // sleep, which ends on the nemesis's schedule.
  bool on_links = false;
  for (size_t s : firing.servers) on_links = targets_.hold_server(s);
  if (on_links) {
    schedule_at(monotonic_ns() + std::chrono::nanoseconds(sleep).count(),
                [this, servers = firing.servers, index = firing.index] {
                  for (size_t s : servers) targets_.release_server(s);
                  for (size_t s : servers) record_end(index, {{"nodes", json::array({s})}});
                });
    return {};
  }
  // DEBUG SLEEP blocks whoever sends it for its whole duration, so each
  // server's is sent from a worker of its own, which records its end.
  for (size_t s : firing.servers) {
    Endpoint server = targets_.server_endpoint(s);
    std::lock_guard l(mu_);
    workers_.emplace_back(
        [this, server, index = firing.index, s, sleep, auth = targets_.server_auth()] {
          try {
            debug_sleep(server, sleep, auth);
          } catch (const std::exception&) {
            // The server died or was stopped meanwhile: the sleep is over either way.
          }
          record_end(index, {{"nodes", json::array({s})}});
        });
  }
  return {};
}

Nemesis::Action Nemesis::start_node_crash(const Firing& firing) {
  for (size_t s : firing.servers) targets_.server(s).kill();
  if (firing.fault.restart_after_ms)
    schedule_at(monotonic_ns() + *firing.fault.restart_after_ms * 1'000'000,
                [this, servers = firing.servers, index = firing.index] {
                  for (size_t s : servers) targets_.server(s).restart();
                  record_end(index, {{"nodes", servers}, {"restarted", true}});
                });
  return {};
}

std::vector<NetworkLink*> Nemesis::links_of(const Firing& firing) {
  std::vector<NetworkLink*> links;
  for (size_t c : firing.clients)
    for (size_t s : firing.servers) links.push_back(&targets_.link(c, s));
  return links;
}

Nemesis::Action Nemesis::start_partition(const Firing& firing) {
  const std::vector<NetworkLink*> links = links_of(firing);
  for (NetworkLink* link : links) {
    if (firing.fault.how == PartitionHow::Reject)
      link->reject();
    else
      link->blackhole();
  }
  return [links] {
    for (NetworkLink* link : links) link->pass();
  };
}

Nemesis::Action Nemesis::start_delay(const Firing& firing) {
  const std::vector<NetworkLink*> links = links_of(firing);
  for (NetworkLink* link : links)
    link->delay(Direction::Both, milliseconds(firing.fault.delay_ms),
                milliseconds(firing.fault.jitter_ms));
  return [links] {
    for (NetworkLink* link : links) link->delay(Direction::Both, milliseconds(0), milliseconds(0));
  };
}

Nemesis::Action Nemesis::start_cut(const Firing& firing) {
  // Closes the connections once; the clients reconnect at will, so nothing to undo.
  for (NetworkLink* link : links_of(firing)) link->cut();
  return {};
}

Nemesis::Action Nemesis::start_replication_cut(const Firing& firing) {
  const std::vector<size_t> replicas = replicas_of(firing.fault);
  for (size_t r : replicas) targets_.replication_link(r).blackhole();
  return [this, replicas] {
    for (size_t r : replicas) targets_.replication_link(r).pass();
  };
}

Nemesis::Action Nemesis::start_manual_failover(const Firing& firing) {
  const size_t replica = firing.servers.front();  // the replica promoted
  targets_.promote(replica);
  targets_.redirect_node0(replica);
  // Clients still connected to the old master follow at their next command.
  for (size_t c = 0; c < clients_.size(); ++c) targets_.link(c, 0).cut();
  // Done as soon as the replica answers as master, as Sentinel's is once it names it.
  record_end(firing.index, {{"old_master", targets_.server_endpoint(0).str()},
                            {"new_master", targets_.server_endpoint(replica).str()}});
  return {};
}

Nemesis::Action Nemesis::start_sentinel_failover(const Firing& firing) {
  // Sentinel takes seconds to elect and promote: a worker waits for it.
  std::lock_guard l(mu_);
  workers_.emplace_back([this, index = firing.index] {
    json result;
    try {
      const Endpoint old_master = targets_.start_sentinel_failover();
      size_t now = targets_.await_sentinel_failover(old_master, std::chrono::seconds(30));
      result = {{"old_master", old_master.str()},
                {"new_master", targets_.server_endpoint(now).str()}};
    } catch (const std::exception& e) {
      result = {{"error", e.what()}};
    }
    record_end(index, result);
  });
  return {};
}

void Nemesis::on_step(const std::string& client, std::string_view step) {
  // Every client calls this at every step: the common case, a step no fault
  // waits for, must not queue all of them on one mutex.
  if (!schedule_.watches(client, step)) return;
  // Applying a fault may block for a while (a program to run, a server to
  // stop, the pause of this very client): on a fiber, only this client waits.
  run_blocking([&] { apply_step(client, step); });
}

void Nemesis::apply_step(const std::string& client, std::string_view step) {
  std::vector<size_t> fired, reached;
  {
    std::lock_guard l(mu_);
    if (stopping_) return;
    fired = schedule_.on_step(client, step);
    reached = schedule_.until_reached(client, step);
    for (size_t index : reached) until_reached_ns_[index] = monotonic_ns();
  }
  bool pause_self = false, crash_self = false;
  for (size_t index : fired) {
    const Fault& f = schedule_.fault(index);
    if (const int64_t after_ms = f.when->after_ms) {
      // Fires later, from the timeline, as a timed fault does: a pause of
      // this client then stops it at its next step.
      schedule_at(monotonic_ns() + after_ms * 1'000'000,
                  [this, index, client] { apply(index, client); });
      continue;
    }
    apply(index, client);
    bool targets_self = f.clients.empty() ||
                        std::find(f.clients.begin(), f.clients.end(), client) != f.clients.end();
    if (f.kind == FaultKind::Pause && targets_self) pause_self = true;
    if (f.kind == FaultKind::CrashClient && targets_self) crash_self = true;
  }
  // After the faults this step fires: one that starts here and one that
  // waited for it, on the same client, hand it over without a gap.
  for (size_t index : reached) until_step_reached(index);
  if (crash_self) throw ClientCrashed{std::string(step)};
  if (pause_self) clients_[client_index(client)].gate->pass();
}

void Nemesis::stop() {
  std::map<size_t, Action> still_active;
  {
    std::lock_guard l(mu_);
    stopping_ = true;
    still_active.swap(active_);
    endings_.clear();
    timeline_.clear();
  }
  wake_.notify_all();
  if (timer_.joinable()) timer_.join();
  for (auto& [index, undo] : still_active)
    undo_then_record(index, undo, [&, index = index] {
      mark_ended(index);
      record(index, "end", {{"healed", "end of run"}});
    });
  std::vector<std::thread> workers;
  {
    std::lock_guard l(mu_);
    workers.swap(workers_);
  }
  for (auto& w : workers) w.join();
}

}  // namespace locklab
