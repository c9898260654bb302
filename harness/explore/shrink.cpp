#include "shrink.h"

#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <future>
#include <set>

#include "lock.h"
#include "shape.h"

namespace locklab::explore {
namespace {

// At most this many values per field and step: the boldest (the target)
// first, then values closer to the current one. A field that cannot move
// far moves again in the next step.
constexpr size_t kValuesPerField = 4;

std::vector<int64_t> toward(int64_t value, int64_t target) {
  std::vector<int64_t> out;
  auto seq = rc::shrink::towards<int64_t>(value, target);
  while (out.size() < kValuesPerField) {
    auto next = seq.next();
    if (!next) break;
    out.push_back(*next);
  }
  return out;
}

int client_number(const std::string& name) {
  return std::stoi(name.substr(1));
}

std::set<int> referenced_clients(const Scenario& s) {
  std::set<int> used;
  for (const Fault& f : s.faults) {
    if (f.when) used.insert(client_number(f.when->client));
    for (const auto& c : f.clients) used.insert(client_number(c));
  }
  return used;
}

// `s` without client `gone`: the clients after it are renumbered down.
Scenario without_client(Scenario s, int gone) {
  auto renumber = [gone](std::string& name) {
    const int n = client_number(name);
    if (n > gone) name = "c" + std::to_string(n - 1);
  };
  --s.clients;
  for (Fault& f : s.faults) {
    if (f.when) renumber(f.when->client);
    for (auto& c : f.clients) renumber(c);
  }
  return s;
}

bool needs_replicas(const Scenario& s) {
  return needs_of(s.faults).has(Need::Replica);
}

bool needs_sentinels(const Scenario& s) {
  return needs_of(s.faults).has(Need::Sentinels);
}

bool nests(const Scenario& s) {
  return std::any_of(s.faults.begin(), s.faults.end(),
                     [](const Fault& f) { return f.when && is_nesting_step(f.when->step); });
}

// The shortest run the faults still fit in: every timed fault fires before it ends.
int64_t shortest_duration(const Scenario& s) {
  int64_t shortest = std::max<int64_t>(200, s.workload.ttl_ms);
  for (const Fault& f : s.faults)
    if (f.at_ms) shortest = std::max(shortest, *f.at_ms + 1);
  return shortest;
}

void add_fault_candidates(const Scenario& s, size_t i, std::vector<Scenario>& out) {
  const Fault& f = s.faults[i];
  auto with = [&](auto change) {
    Scenario c = s;
    change(c.faults[i]);
    out.push_back(std::move(c));
  };
  // Durations and distances: halved toward nothing.
  for (const char* param :
       {"duration_ms", "delta_ms", "delay_ms", "jitter_ms", "restart_after_ms"}) {
    if (!find_param(f.kind, param) && std::string_view(param) != "duration_ms") continue;
    auto value = f.number(param);
    if (!value || *value == 0) continue;
    for (int64_t v : toward(std::llround(*value), 0))
      with([&](Fault& g) { g.set_number(param, double(v)); });
  }
  if (find_param(f.kind, "rate") && f.rate != 1.0) {
    for (int64_t v : toward(std::llround(f.rate * 1000), 1000))
      if (v > 0) with([&](Fault& g) { g.rate = double(v) / 1000.0; });
  }
  // Triggers earlier.
  if (f.at_ms && *f.at_ms > 0)
    for (int64_t v : toward(*f.at_ms, 0)) with([&](Fault& g) { g.at_ms = v; });
  if (f.when && f.when->nth > 1)
    for (int64_t v : toward(f.when->nth, 1)) with([&](Fault& g) { g.when->nth = int(v); });
  if (f.when && f.when->after_ms > 0)
    for (int64_t v : toward(f.when->after_ms, 0)) with([&](Fault& g) { g.when->after_ms = v; });
  // Fewer targets: one client instead of all, one node fewer.
  const FaultKindInfo& row = info(f.kind);
  const bool on_clients = row.target == FaultTarget::Client || row.target == FaultTarget::Link;
  if (on_clients && f.clients.empty() && !f.when && s.clients > 1)
    for (int c = 1; c <= s.clients; ++c)
      with([&](Fault& g) { g.clients = {"c" + std::to_string(c)}; });
  if (f.clients.size() > 1)
    for (size_t k = 0; k < f.clients.size(); ++k)
      with([&](Fault& g) { g.clients.erase(g.clients.begin() + long(k)); });
  if (f.nodes.size() > 1)
    for (size_t k = 0; k < f.nodes.size(); ++k)
      with([&](Fault& g) { g.nodes.erase(g.nodes.begin() + long(k)); });
  // Another choice that needs strictly less of the run (a manual failover instead of Sentinel's).
  for (const FaultParam& p : info(f.kind).params)
    if (p.type == ParamType::Choice)
      for (std::string_view choice : p.choices) {
        Fault g = f;
        g.set_choice(p.name, std::string(choice));
        if (g.needs().without(f.needs()).empty() && !f.needs().without(g.needs()).empty())
          with([&](Fault& h) { h.set_choice(p.name, std::string(choice)); });
      }
}

}  // namespace

ScenarioSize scenario_size(const Scenario& s) {
  ScenarioSize size;
  size.faults = s.faults.size();
  size.clients = s.clients;
  size.locks = s.workload.locks.size();
  const ClusterShape shape = shape_for(algorithm_info(s.algorithms.at(0)), s.topology);
  size.servers = shape.masters + shape.replicas + s.topology.sentinels;
  size.duration_ms = s.duration_ms;
  for (const Fault& f : s.faults) {
    for (const char* param :
         {"duration_ms", "delta_ms", "delay_ms", "jitter_ms", "restart_after_ms", "at_ms"})
      if (auto value = f.number(param)) size.fault_magnitude += std::abs(*value);
    if (find_param(f.kind, "rate")) size.fault_magnitude += std::abs(f.rate - 1.0) * 1000;
    if (f.when) size.fault_magnitude += (f.when->nth - 1) * 100 + f.when->after_ms;
    // An empty target list means all of them.
    size.fault_magnitude += double(f.clients.empty() ? s.clients : int(f.clients.size()));
    size.fault_magnitude += double(f.nodes.empty() ? shape.masters : int(f.nodes.size()));
    if (f.needs().has(Need::Sentinels)) size.fault_magnitude += 1;
  }
  size.workload_ms = s.workload.work_ms + s.workload.think_ms + s.workload.reentry;
  return size;
}

std::vector<Scenario> simpler_scenarios(const Scenario& s) {
  std::vector<Scenario> raw;
  // Fewer faults.
  for (size_t i = 0; i < s.faults.size(); ++i) {
    // A fault another waits for stays: without it, that wait means nothing.
    if (std::any_of(s.faults.begin(), s.faults.end(),
                    [i](const Fault& f) { return f.until_fault_ends == i; }))
      continue;
    Scenario c = s;
    c.faults.erase(c.faults.begin() + long(i));
    for (Fault& f : c.faults)  // the waits for later faults follow them
      if (f.until_fault_ends > i) --*f.until_fault_ends;
    raw.push_back(std::move(c));
  }
  // A shorter run.
  for (int64_t d : toward(s.duration_ms, shortest_duration(s))) {
    Scenario c = s;
    c.duration_ms = d;
    raw.push_back(std::move(c));
  }
  // Fewer clients (the last ones first), locks and servers.
  const std::set<int> used = referenced_clients(s);
  for (int gone = s.clients; gone >= 1 && s.clients > 1; --gone)
    if (!used.count(gone)) raw.push_back(without_client(s, gone));
  for (size_t k = 1; k < s.workload.locks.size(); ++k) {
    Scenario c = s;
    c.workload.locks.erase(c.workload.locks.begin() + long(k));
    raw.push_back(std::move(c));
  }
  if (s.topology.sentinels && !needs_sentinels(s)) {
    Scenario c = s;
    c.topology.sentinels = 0;
    raw.push_back(std::move(c));
  }
  if (s.topology.replicas && !needs_replicas(s) && !s.topology.sentinels) {
    Scenario c = s;
    c.topology.replicas = 0;
    raw.push_back(std::move(c));
  }
  // Smaller faults.
  for (size_t i = 0; i < s.faults.size(); ++i) add_fault_candidates(s, i, raw);
  // Less work per hold.
  for (int64_t v : s.workload.work_ms ? toward(s.workload.work_ms, 0) : std::vector<int64_t>{}) {
    Scenario c = s;
    c.workload.work_ms = v;
    raw.push_back(std::move(c));
  }
  if (s.workload.think_ms) {
    Scenario c = s;
    c.workload.think_ms = 0;
    raw.push_back(std::move(c));
  }
  if (s.workload.reentry > 1 && !nests(s)) {
    Scenario c = s;
    c.workload.reentry = 1;
    raw.push_back(std::move(c));
  }

  const ScenarioSize size = scenario_size(s);
  std::vector<Scenario> out;
  for (Scenario& c : raw) {
    try {
      Scenario loaded = parse_scenario(scenario_to_json(c), s.file);
      loaded.file = s.file;
      if (scenario_size(loaded) < size) out.push_back(std::move(loaded));
    } catch (const ScenarioError&) {
      // Not a scenario (e.g. a step the lock no longer reaches): not a candidate.
    }
  }
  return out;
}

Reproduction reproduce(const Scenario& s, int reruns, int needed, int parallel,
                       const RunOnce& run_once) {
  Reproduction r;
  parallel = std::max(1, parallel);
  while (r.runs < reruns && r.broke < needed && r.broke + (reruns - r.runs) >= needed) {
    // No more at once than can still change the answer.
    const int batch = std::min({parallel, reruns - r.runs, needed - r.broke});
    std::vector<std::future<bool>> runs;
    for (int k = 0; k < batch; ++k)
      runs.push_back(std::async(std::launch::async, run_once, std::cref(s), r.runs + k));
    for (auto& run : runs) r.broke += run.get() ? 1 : 0;
    r.runs += batch;
  }
  r.reproduced = r.broke >= needed;
  return r;
}

ShrinkResult shrink(const Scenario& failing, const RunOnce& run_once,
                    const ShrinkOptions& options) {
  ShrinkResult result;
  result.minimal = failing;
  const auto deadline = std::chrono::steady_clock::now() + options.max_time;
  auto out_of_budget = [&] {
    return result.candidates_tried >= options.max_candidates ||
           std::chrono::steady_clock::now() >= deadline || (options.stop && *options.stop);
  };
  for (bool moved = true; moved;) {
    moved = false;
    for (const Scenario& candidate : simpler_scenarios(result.minimal)) {
      if (out_of_budget()) return result;
      ++result.candidates_tried;
      Reproduction r =
          reproduce(candidate, options.reruns, options.needed, options.parallel, run_once);
      result.runs += r.runs;
      if (r.reproduced) {
        result.minimal = candidate;
        ++result.steps_taken;
        moved = true;
        break;
      }
    }
  }
  result.complete = true;
  return result;
}

}  // namespace locklab::explore
