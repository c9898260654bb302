#include "nemesis.h"

#include <algorithm>
#include <set>

#include "cluster.h"
#include "lock.h"
#include "server_clock.h"
#include "server_faults.h"

namespace locklab {

using nlohmann::json;
using std::chrono::milliseconds;

json Fault::describe() const {
  json j = json::object();
  if (at_ms) j["at_ms"] = *at_ms;
  if (when) j["when"] = {{"client", when->client}, {"step", when->step}, {"nth", when->nth}};
  if (duration_ms) j["duration_ms"] = *duration_ms;
  if (kind.find("clock-jump") != std::string::npos) j["delta_ms"] = delta_ms;
  if (kind.find("clock-rate") != std::string::npos) j["rate"] = rate;
  if (kind == "delay") j["delay_ms"] = delay_ms, j["jitter_ms"] = jitter_ms;
  if (kind == "partition") j["how"] = how;
  if (kind == "crash-node" && restart_after_ms) j["restart_after_ms"] = *restart_after_ms;
  if (kind == "failover") j["mode"] = mode;
  return j;
}

bool needs_server_clocks(const std::vector<Fault>& faults) {
  return std::any_of(faults.begin(), faults.end(),
                     [](const Fault& f) { return f.kind.rfind("server-clock", 0) == 0; });
}

Nemesis::Nemesis(std::vector<Fault> faults, Cluster& cluster, std::vector<ClientHandle> clients,
                 history::ProcessLog& log)
    : faults_(std::move(faults)), cluster_(cluster), clients_(std::move(clients)), log_(log) {
  for (size_t i = 0; i < faults_.size(); ++i) {
    const Fault& f = faults_[i];
    std::string where = "faults[" + std::to_string(i) + "] (" + f.kind + ")";
    for (int n : f.nodes)
      if (size_t(n) >= cluster_.server_count())
        throw std::runtime_error(where + ": server " + std::to_string(n) +
                                 " does not exist; this run has " +
                                 std::to_string(cluster_.server_count()) + " servers");
    if (f.kind.rfind("server-clock", 0) == 0 && !cluster_.server_clock(0))
      throw std::runtime_error(where + ": servers were not started under the clock shim");
    if (f.kind == "failover" && cluster_.server_count() <= cluster_.master_count())
      throw std::runtime_error(where + ": this run has no replica to fail over to");
    if (f.kind == "failover" && f.mode == "sentinel" && !cluster_.sentinels())
      throw std::runtime_error(where + ": this run has no sentinels");
  }
}

Nemesis::~Nemesis() {
  stop();
}

void Nemesis::start() {
  start_ns_ = monotonic_ns();
  // Faults at time 0 are in force before any client takes its first step.
  for (const Fault& f : faults_)
    if (f.at_ms && *f.at_ms == 0) apply(f, "");
  for (const Fault& f : faults_)
    if (f.at_ms && *f.at_ms > 0)
      schedule(start_ns_ + *f.at_ms * 1'000'000, [this, &f] { apply(f, ""); });
  timer_ = std::thread([this] { timer_loop(); });
}

void Nemesis::schedule(int64_t at_ns, Action action) {
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

void Nemesis::record(const Fault& fault, const char* phase, json extra) {
  history::Event e;
  e.type = history::Type::Info;
  e.f = fault.kind;
  json value = fault.describe();
  value["phase"] = phase;
  if (extra.is_object())
    for (auto it = extra.begin(); it != extra.end(); ++it) value[it.key()] = it.value();
  e.value = value;
  std::lock_guard l(mu_);
  log_.append(std::move(e));
}

size_t Nemesis::client_index(const std::string& id) const {
  for (size_t i = 0; i < clients_.size(); ++i)
    if (clients_[i].id == id) return i;
  throw std::runtime_error("no client " + id);
}

std::vector<size_t> Nemesis::clients_of(const Fault& f, const std::string& trigger_client) const {
  std::vector<size_t> out;
  if (!f.clients.empty()) {
    for (const auto& c : f.clients) out.push_back(client_index(c));
  } else if ((f.kind == "pause" || f.kind == "crash-client") && !trigger_client.empty()) {
    out.push_back(client_index(trigger_client));
  } else {
    for (size_t i = 0; i < clients_.size(); ++i) out.push_back(i);
  }
  return out;
}

std::vector<size_t> Nemesis::servers_of(const Fault& f) const {
  std::vector<size_t> out;
  if (!f.nodes.empty()) {
    for (int n : f.nodes) out.push_back(size_t(n));
  } else {
    for (size_t i = 0; i < cluster_.master_count(); ++i) out.push_back(i);
  }
  return out;
}

void Nemesis::apply(const Fault& f, const std::string& trigger_client) {
  const std::vector<size_t> clients = clients_of(f, trigger_client);
  const std::vector<size_t> servers = servers_of(f);
  json client_ids = json::array();
  for (size_t c : clients) client_ids.push_back(clients_[c].id);
  json targets = json::object();
  const bool on_clients =
      f.kind == "pause" || f.kind == "crash-client" || f.kind.rfind("clock-", 0) == 0;
  const bool on_links = f.kind == "partition" || f.kind == "delay" || f.kind == "cut";
  const bool on_servers = f.kind.rfind("server-", 0) == 0 || f.kind == "sigstop-node" ||
                          f.kind == "debug-sleep" || f.kind == "crash-node";
  if (on_clients || on_links) targets["targets"] = client_ids;
  if (on_servers || on_links) targets["nodes"] = servers;
  if (f.kind == "failover" || f.kind == "cut-replication") targets["nodes"] = {0};
  // Recorded before it takes effect: nothing the fault causes precedes it in the history.
  record(f, "start", targets);
  Action undo;

  if (f.kind == "pause") {
    for (size_t c : clients) clients_[c].gate->close();
    undo = [this, clients] {
      for (size_t c : clients) clients_[c].gate->open();
    };
  } else if (f.kind == "crash-client") {
    for (size_t c : clients) clients_[c].crash();
  } else if (f.kind == "clock-jump") {
    auto jump = [this, clients](milliseconds delta) {
      for (size_t c : clients) {
        clients_[c].clock->jump(delta);
        if (clients_[c].process_clock) clients_[c].process_clock->jump(delta);
      }
    };
    jump(milliseconds(f.delta_ms));
    if (f.duration_ms) undo = [jump, &f] { jump(-milliseconds(f.delta_ms)); };
  } else if (f.kind == "clock-rate") {
    auto set_rate = [this, clients](double rate) {
      for (size_t c : clients) {
        clients_[c].clock->set_rate(rate);
        if (clients_[c].process_clock) clients_[c].process_clock->set_rate(rate);
      }
    };
    set_rate(f.rate);
    undo = [set_rate] { set_rate(1.0); };
  } else if (f.kind == "server-clock-jump" || f.kind == "server-clock-rate") {
    bool jump = f.kind == "server-clock-jump";
    for (size_t s : servers) {
      ServerClock* clock = cluster_.server_clock(s);
      if (jump)
        clock->jump(milliseconds(f.delta_ms));
      else
        clock->set_rate(f.rate);
    }
    if (!jump || f.duration_ms)
      undo = [this, servers, jump, &f] {
        for (size_t s : servers) {
          ServerClock* clock = cluster_.server_clock(s);
          if (jump)
            clock->jump(-milliseconds(f.delta_ms));
          else
            clock->set_rate(1.0);
        }
      };
  } else if (f.kind == "sigstop-node") {
    for (size_t s : servers) cluster_.server(s).pause();
    undo = [this, servers] {
      for (size_t s : servers) cluster_.server(s).resume();
    };
  } else if (f.kind == "debug-sleep") {
    for (size_t s : servers) {
      Endpoint server = cluster_.server(s).endpoint();
      std::lock_guard l(mu_);
      workers_.emplace_back([server, &f] {
        try {
          debug_sleep(server, milliseconds(*f.duration_ms));
        } catch (const std::exception&) {
          // The server died or was stopped meanwhile: the sleep is over either way.
        }
      });
    }
  } else if (f.kind == "crash-node") {
    for (size_t s : servers) cluster_.server(s).kill();
    if (f.restart_after_ms) {
      schedule(monotonic_ns() + *f.restart_after_ms * 1'000'000, [this, servers, &f] {
        for (size_t s : servers) cluster_.server(s).restart();
        Fault restart = f;
        restart.kind = "restart-node";
        record(restart, "start", {{"nodes", servers}});
      });
    }
  } else if (f.kind == "partition" || f.kind == "delay" || f.kind == "cut") {
    std::vector<FaultProxy*> links;
    for (size_t c : clients)
      for (size_t s : servers) links.push_back(&cluster_.link(c, s));
    for (FaultProxy* link : links) {
      if (f.kind == "cut")
        link->cut();
      else if (f.kind == "delay")
        link->delay(Direction::Both, milliseconds(f.delay_ms), milliseconds(f.jitter_ms));
      else if (f.how == "reject")
        link->reject();
      else
        link->blackhole();
    }
    if (f.kind != "cut")
      undo = [links, delay = f.kind == "delay"] {
        for (FaultProxy* link : links) {
          if (delay)
            link->delay(Direction::Both, milliseconds(0), milliseconds(0));
          else
            link->pass();
        }
      };
  } else if (f.kind == "cut-replication") {
    size_t replicas = cluster_.server_count() - cluster_.master_count();
    for (size_t r = 0; r < replicas; ++r) cluster_.replication_link(r).blackhole();
    undo = [this, replicas] {
      for (size_t r = 0; r < replicas; ++r) cluster_.replication_link(r).pass();
    };
  } else if (f.kind == "failover") {
    const size_t replica = cluster_.master_count();  // the first replica of node 0
    if (f.mode == "manual") {
      promote_replica(cluster_.server(replica).endpoint());
      cluster_.redirect_node0(replica);
      // Clients still connected to the old master follow at their next command.
      for (size_t c = 0; c < clients_.size(); ++c) cluster_.link(c, 0).cut();
    } else {
      Endpoint old_master = cluster_.server(0).endpoint();
      cluster_.server(0).kill();
      std::lock_guard l(mu_);
      workers_.emplace_back([this, old_master, &f] {
        json result;
        try {
          Endpoint now =
              cluster_.sentinels()->wait_for_failover(old_master, std::chrono::seconds(30));
          cluster_.redirect_node0(cluster_.server_index(now));
          result = {{"new_master", now.str()}};
        } catch (const std::exception& e) {
          result = {{"error", e.what()}};
        }
        record(f, "end", result);
      });
    }
  }

  if (!undo) return;
  std::lock_guard l(mu_);
  const int id = next_id_++;
  active_.emplace(id, std::make_pair(&f, undo));
  if (f.duration_ms) {
    timeline_.emplace(monotonic_ns() + *f.duration_ms * 1'000'000, [this, id, &f] {
      Action undo_now;
      {
        std::lock_guard l2(mu_);
        auto it = active_.find(id);
        if (it == active_.end()) return;
        undo_now = std::move(it->second.second);
        active_.erase(it);
      }
      undo_now();
      record(f, "end");
    });
    wake_.notify_all();
  }
}

void Nemesis::on_step(const std::string& client, std::string_view step) {
  std::vector<const Fault*> fired;
  {
    std::lock_guard l(mu_);
    if (stopping_) return;
    int count = ++step_counts_[{client, std::string(step)}];
    for (const Fault& f : faults_)
      if (f.when && f.when->client == client && f.when->step == step && f.when->nth == count)
        fired.push_back(&f);
  }
  bool pause_self = false, crash_self = false;
  for (const Fault* f : fired) {
    apply(*f, client);
    bool targets_self = f->clients.empty() ||
                        std::find(f->clients.begin(), f->clients.end(), client) != f->clients.end();
    if (f->kind == "pause" && targets_self) pause_self = true;
    if (f->kind == "crash-client" && targets_self) crash_self = true;
  }
  if (crash_self) throw ClientCrashed{std::string(step)};
  if (pause_self) clients_[client_index(client)].gate->pass();
}

void Nemesis::stop() {
  std::map<int, std::pair<const Fault*, Action>> still_active;
  {
    std::lock_guard l(mu_);
    stopping_ = true;
    still_active.swap(active_);
    timeline_.clear();
  }
  wake_.notify_all();
  if (timer_.joinable()) timer_.join();
  for (auto& [id, entry] : still_active) {
    entry.second();
    record(*entry.first, "end", {{"healed", "end of run"}});
  }
  std::vector<std::thread> workers;
  {
    std::lock_guard l(mu_);
    workers.swap(workers_);
  }
  for (auto& w : workers) w.join();
}

}  // namespace locklab
