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

void Nemesis::start() {
  start_ns_ = monotonic_ns();
  // Faults at time 0 are in force before any client takes its first step.
  for (const auto& [at_ms, index] : schedule_.timed())
    if (at_ms == 0) apply(index, "");
  for (const auto& [at_ms, index] : schedule_.timed())
    if (at_ms > 0) schedule_at(start_ns_ + at_ms * 1'000'000, [this, i = index] { apply(i, ""); });
  timer_ = std::thread([this] { timer_loop(); });
}

void Nemesis::schedule_at(int64_t at_ns, Action action) {
  {
    std::lock_guard l(mu_);
    if (stopping_) return;
    timeline_.emplace(at_ns, std::move(action));
  }
  wake_.notify_all();
}

void Nemesis::timer_loop() {
  std::unique_lock l(mu_);
  while (!stopping_) {
    if (timeline_.empty()) {
      wake_.wait(l);
      continue;
    }
    int64_t next = timeline_.begin()->first;
    int64_t now = monotonic_ns();
    if (now < next) {
      wake_.wait_for(l, std::chrono::nanoseconds(next - now));
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

void Nemesis::apply(size_t index, const std::string& trigger_client) {
  const Fault& f = schedule_.fault(index);
  const std::vector<size_t> clients = clients_of(f, trigger_client);
  const std::vector<size_t> servers = servers_of(f);
  json client_ids = json::array();
  for (size_t c : clients) client_ids.push_back(clients_[c].id);
  json targets = json::object();
  switch (info(f.kind).target) {
    case FaultTarget::Client:
      targets["targets"] = client_ids;
      break;
    case FaultTarget::Server:
      targets["nodes"] = servers;
      break;
    case FaultTarget::Link:
      targets["targets"] = client_ids;
      targets["nodes"] = servers;
      break;
    case FaultTarget::Replication:
    case FaultTarget::Cluster:
      targets["nodes"] = {0};
      targets["replicas"] = replicas_of(f);
      break;
  }
  {
    std::lock_guard l(mu_);
    if (stopping_) return;
    outcomes_[index].fired = true;
    outcomes_[index].fired_at_ns = monotonic_ns() - start_ns_;
  }
  // Recorded before it takes effect: nothing the fault causes precedes it in the history.
  record(index, "start", targets);
  Action undo;

  switch (f.kind) {
    case FaultKind::Pause:
      for (size_t c : clients) clients_[c].gate->close();
      undo = [this, clients] {
        for (size_t c : clients) clients_[c].gate->open();
      };
      break;
    case FaultKind::CrashClient:
      for (size_t c : clients) clients_[c].crash();
      break;
    case FaultKind::ClockJump:
    case FaultKind::ClockRate: {
      if (f.kind == FaultKind::ClockJump) {
        auto jump = [this, clients](milliseconds delta) {
          for (size_t c : clients) {
            clients_[c].clock->jump(delta);
            if (clients_[c].process_clock) clients_[c].process_clock->jump(delta);
          }
        };
        jump(milliseconds(f.delta_ms));
        if (f.duration_ms) undo = [jump, delta = f.delta_ms] { jump(-milliseconds(delta)); };
      } else {
        auto set_rate = [this, clients](double rate) {
          for (size_t c : clients) {
            clients_[c].clock->set_rate(rate);
            if (clients_[c].process_clock) clients_[c].process_clock->set_rate(rate);
          }
        };
        set_rate(f.rate);
        undo = [set_rate] { set_rate(1.0); };
      }
      break;
    }
    case FaultKind::ServerClockJump:
      for (size_t s : servers) targets_.server_clock(s)->jump(milliseconds(f.delta_ms));
      if (f.duration_ms)
        undo = [this, servers, delta = f.delta_ms] {
          for (size_t s : servers) targets_.server_clock(s)->jump(-milliseconds(delta));
        };
      break;
    case FaultKind::ServerClockRate:
      for (size_t s : servers) targets_.server_clock(s)->set_rate(f.rate);
      undo = [this, servers] {
        for (size_t s : servers) targets_.server_clock(s)->set_rate(1.0);
      };
      break;
    case FaultKind::SigstopNode:
      for (size_t s : servers) targets_.server(s).pause();
      undo = [this, servers] {
        for (size_t s : servers) targets_.server(s).resume();
      };
      break;
    case FaultKind::DebugSleep:
      for (size_t s : servers) {
        Endpoint server = targets_.server_endpoint(s);
        std::lock_guard l(mu_);
        workers_.emplace_back([this, server, index, s, sleep = milliseconds(*f.duration_ms),
                               auth = targets_.server_auth()] {
          try {
            debug_sleep(server, sleep, auth);
          } catch (const std::exception&) {
            // The server died or was stopped meanwhile: the sleep is over either way.
          }
          mark_ended(index);
          record(index, "end", {{"nodes", json::array({s})}});
        });
      }
      break;
    case FaultKind::CrashNode:
      for (size_t s : servers) targets_.server(s).kill();
      if (f.restart_after_ms)
        schedule_at(monotonic_ns() + *f.restart_after_ms * 1'000'000, [this, servers, index] {
          for (size_t s : servers) targets_.server(s).restart();
          mark_ended(index);
          record(index, "end", {{"nodes", servers}, {"restarted", true}});
        });
      break;
    case FaultKind::Partition:
    case FaultKind::Delay:
    case FaultKind::Cut: {
      std::vector<NetworkLink*> links;
      for (size_t c : clients)
        for (size_t s : servers) links.push_back(&targets_.link(c, s));
      for (NetworkLink* link : links) {
        if (f.kind == FaultKind::Cut)
          link->cut();
        else if (f.kind == FaultKind::Delay)
          link->delay(Direction::Both, milliseconds(f.delay_ms), milliseconds(f.jitter_ms));
        else if (f.how == "reject")
          link->reject();
        else
          link->blackhole();
      }
      if (f.kind != FaultKind::Cut)
        undo = [links, delay = f.kind == FaultKind::Delay] {
          for (NetworkLink* link : links) {
            if (delay)
              link->delay(Direction::Both, milliseconds(0), milliseconds(0));
            else
              link->pass();
          }
        };
      break;
    }
    case FaultKind::CutReplication: {
      const std::vector<size_t> replicas = replicas_of(f);
      for (size_t r : replicas) targets_.replication_link(r).blackhole();
      undo = [this, replicas] {
        for (size_t r : replicas) targets_.replication_link(r).pass();
      };
      break;
    }
    case FaultKind::Failover: {
      const size_t replica = servers.front();  // the replica promoted (manual mode)
      if (f.mode == "manual") {
        targets_.promote(replica);
        targets_.redirect_node0(replica);
        // Clients still connected to the old master follow at their next command.
        for (size_t c = 0; c < clients_.size(); ++c) targets_.link(c, 0).cut();
        // Done as soon as the replica answers as master, as Sentinel's is once it names it.
        mark_ended(index);
        record(index, "end",
               {{"old_master", targets_.server_endpoint(0).str()},
                {"new_master", targets_.server_endpoint(replica).str()}});
      } else {
        std::lock_guard l(mu_);
        workers_.emplace_back([this, index] {
          json result;
          try {
            const Endpoint old_master = targets_.start_sentinel_failover();
            size_t now = targets_.await_sentinel_failover(old_master, std::chrono::seconds(30));
            result = {{"old_master", old_master.str()},
                      {"new_master", targets_.server_endpoint(now).str()}};
          } catch (const std::exception& e) {
            result = {{"error", e.what()}};
          }
          mark_ended(index);
          record(index, "end", result);
        });
      }
      break;
    }
  }

  if (!undo) return;
  std::lock_guard l(mu_);
  active_.emplace(index, undo);
  if (f.duration_ms) {
    timeline_.emplace(monotonic_ns() + *f.duration_ms * 1'000'000, [this, index] {
      Action undo_now;
      {
        std::lock_guard l2(mu_);
        auto it = active_.find(index);
        if (it == active_.end()) return;
        undo_now = std::move(it->second);
        active_.erase(it);
      }
      undo_now();
      mark_ended(index);
      record(index, "end");
    });
    wake_.notify_all();
  }
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
  std::vector<size_t> fired;
  {
    std::lock_guard l(mu_);
    if (stopping_) return;
    fired = schedule_.on_step(client, step);
  }
  bool pause_self = false, crash_self = false;
  for (size_t index : fired) {
    apply(index, client);
    const Fault& f = schedule_.fault(index);
    bool targets_self = f.clients.empty() ||
                        std::find(f.clients.begin(), f.clients.end(), client) != f.clients.end();
    if (f.kind == FaultKind::Pause && targets_self) pause_self = true;
    if (f.kind == FaultKind::CrashClient && targets_self) crash_self = true;
  }
  if (crash_self) throw ClientCrashed{std::string(step)};
  if (pause_self) clients_[client_index(client)].gate->pass();
}

void Nemesis::stop() {
  std::map<size_t, Action> still_active;
  {
    std::lock_guard l(mu_);
    stopping_ = true;
    still_active.swap(active_);
    timeline_.clear();
  }
  wake_.notify_all();
  if (timer_.joinable()) timer_.join();
  for (auto& [index, undo] : still_active) {
    undo();
    mark_ended(index);
    record(index, "end", {{"healed", "end of run"}});
  }
  std::vector<std::thread> workers;
  {
    std::lock_guard l(mu_);
    workers.swap(workers_);
  }
  for (auto& w : workers) w.join();
}

}  // namespace locklab
