#include "scenario.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "incident_kind.h"
#include "joined.h"
#include "json_fields.h"
#include "lock.h"
#include "shape.h"
#include "violation_kind.h"

namespace locklab {
namespace {

using nlohmann::json;

using Fields = JsonFields<ScenarioError>;

// A scenario is written by people: a null is a mistake, not an absent field.
Fields fields_of(const json& object, const std::filesystem::path& file, const std::string& path) {
  return Fields(object, file, path, Nulls::Refused);
}

constexpr int64_t kMaxMs = 3'600'000;

Expectation parse_expectation(const json& value, const std::string& path,
                              const std::filesystem::path& file) {
  Fields f = fields_of(value, file, path);
  Expectation e;
  const std::string verdict = f.text("verdict").value_or(std::string(verdict_name(Verdict::Safe)));
  const std::optional<Verdict> named = verdict_named(verdict);
  if (named != Verdict::Safe && named != Verdict::Violated)
    f.fail(f.path("verdict"), "must be \"" + std::string(verdict_name(Verdict::Safe)) + "\" or \"" +
                                  std::string(verdict_name(Verdict::Violated)) + "\", got \"" +
                                  verdict + "\"");
  e.verdict = *named;
  e.kinds = f.texts("kinds").value_or(std::vector<std::string>{});
  e.absent = f.texts("absent").value_or(std::vector<std::string>{});
  for (const auto* list : {&e.kinds, &e.absent})
    for (const auto& k : *list)
      if (!violation_kind_named(k))
        f.fail(f.path(list == &e.kinds ? "kinds" : "absent"),
               "has an unknown violation kind \"" + k + "\"");
  if (e.verdict == Verdict::Safe && !e.kinds.empty())
    f.fail(f.path("kinds"), "lists kinds that must be found, but the verdict is \"safe\"");
  e.classes = f.texts("classes").value_or(std::vector<std::string>{});
  for (const auto& c : e.classes)
    if (!overlap_class_named(c))
      f.fail(f.path("classes"),
             "has an unknown overlap class \"" + c + "\" (known: " + overlap_class_list() + ")");
  if (e.verdict == Verdict::Safe && !e.classes.empty())
    f.fail(f.path("classes"),
           "lists overlap classes that must be found, but the verdict is \"safe\"");
  e.incidents = f.texts("incidents").value_or(std::vector<std::string>{});
  for (const auto& kind : e.incidents)
    if (!incident_named(kind))
      f.fail(f.path("incidents"), "has an unknown incident kind \"" + kind +
                                      "\" (known: " + kIncidentKinds.list() + ")");
  e.why = f.text("why").value_or("");
  f.done();
  return e;
}

// expect.<algorithm> of a story that cannot be told to that algorithm at
// all: {"not_applicable": "why, in one sentence"}.
std::optional<std::string> not_applicable_reason(const json& value, const std::string& path,
                                                 const std::filesystem::path& file) {
  if (!value.is_object() || !value.contains("not_applicable")) return std::nullopt;
  Fields f = fields_of(value, file, path);
  const std::string why = f.text("not_applicable").value_or("");
  if (why.empty())
    f.fail(f.path("not_applicable"), "must say in one sentence why the story cannot be told");
  f.done();  // a verdict beside it would contradict it
  return why;
}

void check_algorithm(const std::string& id, const std::string& field, const Fields& f) {
  if (!find_algorithm(id))
    f.fail(field, "names unknown algorithm \"" + id + "\" (known: " + algorithm_ids() + ")");
}

// The field of `fault` that brings in `need` ("kind", or the choice that adds
// it), and the fault as that field says it ("failover", "failover with mode sentinel").
std::pair<std::string, std::string> needing(const Fault& fault, Need need) {
  const std::string kind(fault.name());
  if (info(fault.kind).needs.has(need)) return {"kind", kind};
  for (const FaultParam& p : info(fault.kind).params)
    for (const Needs& added : p.choice_needs)
      if (added.has(need)) {
        const std::string param(p.name);
        return {param, kind + " with " + param + " " + fault.choice(param)};
      }
  return {"kind", kind};
}

std::string client_name_error(const std::string& name, int clients) {
  if (name.size() > 1 && name[0] == 'c') {
    try {
      size_t used = 0;
      int n = std::stoi(name.substr(1), &used);
      if (used == name.size() - 1 && n >= 1 && n <= clients) return "";
    } catch (const std::exception&) {
    }
  }
  return "names client \"" + name + "\", but the clients are c1…c" + std::to_string(clients);
}

// Every parameter name any kind has: a fault object may carry only its own kind's.
std::set<std::string> all_param_names() {
  std::set<std::string> names;
  for (const auto& row : fault_kinds())
    for (const auto& p : row.params) names.insert(std::string(p.name));
  return names;
}

void parse_param(Fields& f, Fault& fault, const FaultParam& p) {
  const std::string key(p.name);
  const json* v = f.find(key);
  if (!v) return;
  switch (p.type) {
    case ParamType::Choice: {
      std::string allowed;
      for (auto c : p.choices)
        allowed += (allowed.empty() ? "\"" : " or \"") + std::string(c) + "\"";
      if (!v->is_string() ||
          std::find(p.choices.begin(), p.choices.end(), v->get<std::string>()) == p.choices.end())
        f.fail(f.path(key), "must be " + allowed);
      fault.set_choice(key, v->get<std::string>());
      return;
    }
    case ParamType::Number:
      if (!v->is_number() || v->get<double>() <= p.min || v->get<double>() > p.max)
        f.fail(f.path(key), "must be a number in (" + std::to_string(int64_t(p.min)) + ", " +
                                std::to_string(int64_t(p.max)) + "]");
      fault.set_number(key, v->get<double>());
      return;
    case ParamType::Integer:
      fault.set_number(key, double(f.integer(key, int64_t(p.min), int64_t(p.max)).value_or(0)));
      return;
  }
}

// The fault's "kind", which must name a row of the fault table.
FaultKind parse_fault_kind(Fields& f) {
  const std::string kind = f.text("kind").value_or("");
  const std::optional<FaultKind> parsed = fault_kind_named(kind);
  if (!parsed)
    f.fail(f.path("kind"),
           "must be one of " + fault_kind_names() + (kind.empty() ? "" : ", got \"" + kind + "\""));
  return *parsed;
}

// A client step, as "when" and "until" name it: {client, step, nth}, and
// "after_ms", a time counted from that step (a "when" fires that long after
// it, an "until" is not over before then).
StepTrigger parse_step_trigger(Fields w, const Scenario& s) {
  StepTrigger trigger;
  trigger.client = w.text("client").value_or("");
  trigger.step = w.text("step").value_or("");
  trigger.nth = int(w.integer("nth", 1, 1'000'000).value_or(1));
  trigger.after_ms = w.integer("after_ms", 0, kMaxMs).value_or(0);
  w.done();
  if (auto e = client_name_error(trigger.client, s.clients); !e.empty())
    w.fail(w.path("client"), e);
  if (trigger.step.empty()) w.fail(w.path("step"), "must name a client step (e.g. \"acquired\")");
  return trigger;
}

// When the fault fires: exactly one of "at_ms" (a time within the run) or
// "when" (a client step).
void parse_fault_trigger(Fields& f, const std::string& path, const Scenario& s,
                         const std::filesystem::path& file, Fault& fault) {
  if (f.find("at_ms")) fault.at_ms = f.integer("at_ms", 0, kMaxMs).value_or(0);
  if (const json* when = f.find("when"))
    fault.when = parse_step_trigger(fields_of(*when, file, f.path("when")), s);
  if (fault.at_ms.has_value() == fault.when.has_value())
    f.fail(path, "needs exactly one of \"at_ms\" (a time) or \"when\" (a client step)");
  if (fault.at_ms && *fault.at_ms >= s.duration_ms)
    f.fail(f.path("at_ms"), "is " + std::to_string(*fault.at_ms) +
                                " ms, at or past the end of the run (duration_ms " +
                                std::to_string(s.duration_ms) + "): the fault would never fire");
}

// "until": a client step, or the end of another fault ({"fault": index}),
// before which the fault is not undone. Only a fault the nemesis undoes can
// wait. The step, as "when"'s, must be reached by every algorithm the fault
// is told to (check_fault_against_algorithms), and the fault an index names
// is checked once every fault is read (check_fault_waits).
void parse_fault_until(Fields& f, const FaultKindInfo& row, const Scenario& s,
                       const std::filesystem::path& file, Fault& fault) {
  const json* until = f.find("until");
  if (!until) return;
  if (!row.undoable)
    f.fail(f.path("until"),
           "does not apply to " + std::string(row.name) + ", which the nemesis does not undo");
  if (until->is_object() && until->contains("fault")) {
    Fields w = fields_of(*until, file, f.path("until"));
    fault.until_fault_ends = size_t(w.integer("fault", 0, 1000).value_or(0));
    w.done();
    return;
  }
  fault.until = parse_step_trigger(fields_of(*until, file, f.path("until")), s);
}

// "duration_ms", as the fault's kind allows or requires it (a fault that
// lasts until a client step needs none).
void parse_fault_duration(Fields& f, const FaultKindInfo& row, Fault& fault) {
  if (f.find("duration_ms")) {
    if (row.duration == DurationRule::None)
      f.fail(f.path("duration_ms"),
             "does not apply to " + std::string(row.name) + ", which is not undone after a time");
    fault.duration_ms = f.integer("duration_ms", 0, kMaxMs).value_or(0);
  }
  if (row.duration == DurationRule::Required && !fault.duration_ms && !fault.waits())
    f.fail(f.path("duration_ms"), "is required for " + std::string(row.name) +
                                      " (or \"until\", a client step or a fault's end)");
}

// Whether pause `pause` stops `client`: the clients it names, else the one
// whose step fires it, else every client.
bool pause_stops(const Fault& pause, const std::string& client) {
  if (pause.clients.empty()) return !pause.when || pause.when->client == client;
  return std::find(pause.clients.begin(), pause.clients.end(), client) != pause.clients.end();
}

// A pause that waits for a step of a client it stops would wait forever.
void check_fault_until(Fields& f, const Fault& fault) {
  if (!fault.until || fault.kind != FaultKind::Pause) return;
  const std::string& waited = fault.until->client;
  if (pause_stops(fault, waited))
    f.fail(f.path("until.client"),
           "is " + waited + ", which this pause stops: it would never reach the step");
}

// "clients", for a fault that acts on clients or their links.
void parse_fault_clients(Fields& f, const FaultKindInfo& row, const Scenario& s, Fault& fault) {
  const bool on_clients = row.target == FaultTarget::Client || row.target == FaultTarget::Link;
  if (!f.find("clients")) return;
  if (!on_clients)
    f.fail(f.path("clients"), "does not apply to " + std::string(row.name) + ", which acts on " +
                                  std::string(target_name(row.target)) + "s, not clients");
  fault.clients = f.texts("clients").value_or(std::vector<std::string>{});
  for (const auto& c : fault.clients)
    if (auto e = client_name_error(c, s.clients); !e.empty()) f.fail(f.path("clients"), e);
}

// "nodes": servers (masters first, then node 0's replicas), or, for a fault
// on node 0's replication or master group, which of its replicas (0 = the
// first).
void parse_fault_nodes(Fields& f, const FaultKindInfo& row, const Scenario& s, Fault& fault) {
  const bool on_nodes = row.target == FaultTarget::Server || row.target == FaultTarget::Link;
  const bool on_replicas =
      row.target == FaultTarget::Replication || row.target == FaultTarget::Cluster;
  const json* nodes = f.find("nodes");
  if (!nodes) return;
  if (!on_nodes && !on_replicas)
    f.fail(f.path("nodes"),
           "does not apply to " + std::string(row.name) + ", which acts on clients, not servers");
  const std::string what = on_replicas ? "an array of replica numbers (0 = node 0's first replica)"
                                       : "an array of server indices (0 = the first master)";
  if (!nodes->is_array()) f.fail(f.path("nodes"), "must be " + what);
  for (const auto& n : *nodes) {
    if (!n.is_number_integer() || n.get<int>() < 0 || n.get<int>() > 16)
      f.fail(f.path("nodes"), "must be " + what);
    fault.nodes.push_back(n.get<int>());
  }
  if (on_replicas)
    for (int replica : fault.nodes)
      if (replica >= s.topology.replicas)
        f.fail(f.path("nodes"), "names replica " + std::to_string(replica) + ", but node 0 has " +
                                    std::to_string(s.topology.replicas) + " (topology.replicas)");
  if (row.target == FaultTarget::Cluster && fault.nodes.size() != 1)
    f.fail(f.path("nodes"), "names the one replica that becomes the master");
}

// "algorithms": which of the scenario's algorithms the fault is for.
void parse_fault_algorithms(Fields& f, const Scenario& s, Fault& fault) {
  fault.algorithms = f.texts("algorithms").value_or(std::vector<std::string>{});
  for (const auto& a : fault.algorithms)
    if (std::find(s.algorithms.begin(), s.algorithms.end(), a) == s.algorithms.end())
      f.fail(f.path("algorithms"),
             "names \"" + a +
                 "\", which the scenario does not run (it runs: " + joined(s.algorithms) + ")");
}

// The parameters of the fault's kind; a parameter of another kind is an error.
void parse_fault_params(Fields& f, const FaultKindInfo& row, Fault& fault) {
  for (const auto& p : row.params) parse_param(f, fault, p);
  for (const auto& other : all_param_names())
    if (!find_param(fault.kind, other) && f.find(other)) {
      std::string own;
      for (const auto& p : row.params) own += (own.empty() ? "" : ", ") + std::string(p.name);
      f.fail(f.path(other), "does not apply to " + std::string(row.name) +
                                " (its parameters: " + (own.empty() ? "none" : own) + ")");
    }
}

// What the topology itself must have for the fault (the rest is the run's plan's).
void check_fault_topology(Fields& f, const FaultKindInfo& row, const Scenario& s,
                          const Fault& fault) {
  if (row.target == FaultTarget::Cluster && !fault.nodes.empty() &&
      fault.needs().has(Need::Sentinels))
    f.fail(f.path("nodes"),
           "chooses the replica to promote, which only a manual failover can "
           "(Sentinel elects its own)");
  const Needs needs = fault.needs();
  if (needs.has(Need::Replica) && s.topology.replicas == 0) {
    const auto [field, what] = needing(fault, Need::Replica);
    f.fail(f.path(field), what + " needs topology.replicas >= 1");
  }
  if (needs.has(Need::Sentinels) && s.topology.sentinels == 0) {
    const auto [field, what] = needing(fault, Need::Sentinels);
    f.fail(f.path(field), what + " needs topology.sentinels = 3");
  }
}

Fault parse_fault(const json& value, const std::string& path, const Scenario& s,
                  const std::filesystem::path& file) {
  Fields f = fields_of(value, file, path);
  Fault fault;
  fault.kind = parse_fault_kind(f);
  const FaultKindInfo& row = info(fault.kind);
  parse_fault_trigger(f, path, s, file, fault);
  parse_fault_until(f, row, s, file, fault);
  parse_fault_duration(f, row, fault);
  parse_fault_clients(f, row, s, fault);
  parse_fault_nodes(f, row, s, fault);
  parse_fault_algorithms(f, s, fault);
  parse_fault_params(f, row, fault);
  fault.one_of = f.text("one_of").value_or("");
  f.text("why").value_or("");
  f.done();
  check_fault_topology(f, row, s, fault);
  check_fault_until(f, fault);
  return fault;
}

// A step of "when" or "until" (`field`): one of the workload, or one every
// algorithm of `runs` declares; a nesting step needs nesting. `fail(field,
// what)` throws; `path` is the fault's.
template <typename Fail>
void check_step_against_algorithms(const std::string& step, const std::string& field,
                                   const std::vector<std::string>& runs, const Scenario& s,
                                   const std::string& path, const Fail& fail) {
  const auto& own = workload_steps();
  const bool workload_step = std::find(own.begin(), own.end(), step) != own.end();
  std::vector<std::string> offering, lacking;
  for (const auto& a : runs) {
    const auto& steps = algorithm_info(a).steps;
    (std::find(steps.begin(), steps.end(), step) != steps.end() ? offering : lacking).push_back(a);
  }
  if (!workload_step && offering.empty()) {
    std::vector<std::string> valid = own;
    for (const auto& a : runs)
      for (const auto& st : algorithm_info(a).steps)
        if (std::find(valid.begin(), valid.end(), st) == valid.end()) valid.push_back(st);
    fail(field, "is \"" + step + "\", which is not a step of " + joined(runs) +
                    " (valid: " + joined(valid) + ")");
  }
  if (!workload_step && !lacking.empty())
    fail(field, "is \"" + step + "\", a step of " + joined(offering) + " only, but " +
                    joined(lacking) + " would never reach it: list the algorithms it is for in " +
                    path + ".algorithms");
  if (is_nesting_step(step)) {
    if (s.workload.reentry < 2)
      fail(field, "is \"" + step + "\", reached only when workload.reentry > 1");
    for (const auto& a : runs)
      if (!algorithm_info(a).reentrant)
        fail(field, "is \"" + step + "\", reached only by re-entrant locks, but " + a +
                        " does not nest: list the algorithms it is for in " + path + ".algorithms");
  }
}

// What a fault's step and nodes mean for the algorithms it applies to: a
// step no such algorithm reaches, or a server none has, is an error now,
// not a run that silently tells no story.
void check_fault_against_algorithms(const Fault& fault, size_t i, const Scenario& s) {
  const std::string path = "faults[" + std::to_string(i) + "]";
  auto fail = [&s, &path](const std::string& field, const std::string& what) {
    throw ScenarioError(s.file.string() + ": field '" + path + "." + field + "' " + what);
  };
  // The algorithms the fault is told to: those it names, else every one the
  // story can be told to.
  std::vector<std::string> runs;
  for (const auto& a : fault.algorithms.empty() ? s.algorithms : fault.algorithms)
    if (!s.not_applicable.count(a)) runs.push_back(a);
  if (fault.when) check_step_against_algorithms(fault.when->step, "when.step", runs, s, path, fail);
  if (fault.until)
    check_step_against_algorithms(fault.until->step, "until.step", runs, s, path, fail);
  for (int node : fault.nodes)
    for (const auto& a : runs) {
      const ClusterShape shape = shape_for(algorithm_info(a), s.topology);
      const int servers = shape.masters + shape.replicas;
      if (node >= servers)
        fail("nodes", "names server " + std::to_string(node) + ", but " + a + " runs on " +
                          std::to_string(servers) + " server" + (servers == 1 ? "" : "s") + " (0…" +
                          std::to_string(servers - 1) + ", masters first)");
    }
}

// A fault that waits for another's end (`until: {"fault": N}`) names a
// fault of the scenario other than itself, one that records an end, and
// not one that waits for it in turn; a pause must not stop the client whose
// step fires the fault it waits for, or that fault would never fire.
void check_fault_waits(const Scenario& s, size_t i) {
  const Fault& fault = s.faults[i];
  if (!fault.until_fault_ends) return;
  const size_t n = *fault.until_fault_ends;
  const std::string field = "faults[" + std::to_string(i) + "].until.fault";
  auto fail = [&](const std::string& what) {
    throw ScenarioError(s.file.string() + ": field '" + field + "' " + what);
  };
  if (n >= s.faults.size())
    fail("is " + std::to_string(n) + ", but the scenario has " + std::to_string(s.faults.size()) +
         " faults (0…" + std::to_string(s.faults.size() - 1) + ")");
  if (n == i) fail("names this fault itself: it would wait for its own end");
  const Fault& awaited = s.faults[n];
  if (!awaited.ends())
    fail("names faults[" + std::to_string(n) + "] (" + std::string(awaited.name()) +
         "), which records no end: give it a duration_ms (or a restart_after_ms)");
  if (awaited.until_fault_ends == i)
    fail("names faults[" + std::to_string(n) + "], which waits for this one's end");
  if (fault.kind == FaultKind::Pause && awaited.when) {
    const std::string& firing = awaited.when->client;
    if (pause_stops(fault, firing))
      fail("names faults[" + std::to_string(n) + "], which " + firing +
           "'s step fires, and this pause stops " + firing + ": it would never fire");
  }
}

// A "one_of" name is shared: a fault alone under its name would be allowed
// never to fire with nothing to stand in for it.
void check_fault_alternatives(const Scenario& s, size_t i) {
  const std::string& name = s.faults[i].one_of;
  if (name.empty()) return;
  const auto sharing = std::count_if(s.faults.begin(), s.faults.end(),
                                     [&name](const Fault& f) { return f.one_of == name; });
  if (sharing < 2)
    throw ScenarioError(s.file.string() + ": field 'faults[" + std::to_string(i) +
                        "].one_of' is \"" + name +
                        "\", which no other fault shares: a fault with no alternative must fire "
                        "(leave one_of out)");
}

}  // namespace

const std::vector<std::string>& workload_steps() {
  static const std::vector<std::string> steps = {
      "before-acquire",       "acquired",       "before-reacquire", "reacquired",
      "before-inner-release", "inner-released", "before-write",     "after-write",
      "before-release",       "released"};
  return steps;
}

bool is_nesting_step(std::string_view step) {
  return step == "before-reacquire" || step == "reacquired" || step == "before-inner-release" ||
         step == "inner-released";
}

const Expectation& Scenario::expectation_for(const std::string& algorithm) const {
  auto it = expectations.find(algorithm);
  return it == expectations.end() ? default_expectation : it->second;
}

std::string line_and_column(const std::string& text, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < text.size() && i + 1 < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

namespace {

// "topology": the servers the scenario runs on.
Topology parse_topology(const json& value, const std::filesystem::path& file) {
  Fields f = fields_of(value, file, "topology");
  Topology t;
  t.nodes = int(f.integer("nodes", 1, 9).value_or(1));
  t.replicas = int(f.integer("replicas", 0, 4).value_or(0));
  t.sentinels = int(f.integer("sentinels", 0, 5).value_or(0));
  t.persistence = f.boolean("persistence").value_or(false);
  t.network = f.text("network").value_or("proxy");
  f.done();
  if (t.network != "proxy" && t.network != "netns")
    f.fail("topology.network", "must be \"proxy\" or \"netns\"");
  if (t.sentinels != 0 && t.sentinels != 3) f.fail("topology.sentinels", "must be 0 or 3");
  if (t.sentinels && !t.replicas)
    f.fail("topology.sentinels", "needs at least one replica to fail over to");
  return t;
}

// "workload": what each client does, over the defaults of `wl`.
Workload parse_workload(const json& value, const std::filesystem::path& file, Workload wl) {
  Fields f = fields_of(value, file, "workload");
  wl.locks = f.texts("locks").value_or(wl.locks);
  if (wl.locks.empty()) f.fail("workload.locks", "must name at least one lock");
  wl.ttl_ms = f.integer("ttl_ms", 1, kMaxMs).value_or(wl.ttl_ms);
  wl.wait_ms = f.integer("wait_ms", 0, kMaxMs).value_or(wl.wait_ms);
  wl.work_ms = f.integer("work_ms", 0, kMaxMs).value_or(wl.work_ms);
  wl.think_ms = f.integer("think_ms", 0, kMaxMs).value_or(wl.think_ms);
  wl.ops_per_client = f.integer("ops_per_client", 1, 10'000'000).value_or(wl.ops_per_client);
  wl.holds_per_client = f.integer("holds_per_client", 1, 10'000'000).value_or(wl.holds_per_client);
  wl.fencing = f.boolean("fencing").value_or(wl.fencing);
  wl.stop_on_renewal_failure =
      f.boolean("stop_on_renewal_failure").value_or(wl.stop_on_renewal_failure);
  wl.retry_unknown_release = f.boolean("retry_unknown_release").value_or(wl.retry_unknown_release);
  wl.checks_validity = f.boolean("checks_validity").value_or(wl.checks_validity);
  wl.reentry = f.integer("reentry", 1, 100).value_or(wl.reentry);
  wl.lock_per_client = f.boolean("lock_per_client").value_or(wl.lock_per_client);
  if (const json* p = f.find("params")) {
    Fields pf = fields_of(*p, file, "workload.params");
    for (auto it = p->begin(); it != p->end(); ++it)
      wl.params[it.key()] = pf.integer(it.key(), INT64_MIN, INT64_MAX).value_or(0);
    pf.done();
  }
  f.done();
  return wl;
}

// "algorithms": built-in ids, or ["all"] for every built-in in the registry's order.
std::vector<std::string> parse_algorithms(Fields& top) {
  std::vector<std::string> ids = top.texts("algorithms").value_or(std::vector<std::string>{});
  if (ids.empty()) top.fail("algorithms", "must name at least one algorithm");
  if (ids.size() == 1 && ids[0] == "all") {
    ids.clear();
    for (const auto& a : algorithms()) ids.push_back(a.id);
  }
  for (const auto& id : ids) check_algorithm(id, "algorithms", top);
  return ids;
}

// "expect": the default expectation and each algorithm's, or why the story
// cannot be told to it.
void parse_expectations(const json& value, const std::filesystem::path& file, Scenario& s) {
  Fields f = fields_of(value, file, "expect");
  for (auto it = value.begin(); it != value.end(); ++it) {
    f.find(it.key());
    const std::string path = "expect." + it.key();
    if (it.key() != "default") {
      check_algorithm(it.key(), path, f);
      if (std::find(s.algorithms.begin(), s.algorithms.end(), it.key()) == s.algorithms.end())
        f.fail(path, "is about " + it.key() + ", which the scenario does not run");
      if (auto why = not_applicable_reason(it.value(), path, file)) {
        s.not_applicable[it.key()] = *why;
        continue;
      }
    }
    Expectation parsed = parse_expectation(it.value(), path, file);
    if (it.key() == "default")
      s.default_expectation = parsed;
    else
      s.expectations[it.key()] = parsed;
  }
}

// "libraries": what is expected of each library by name, or why the story
// cannot be told to it.
void parse_library_expectations(const json& value, const std::filesystem::path& file, Scenario& s) {
  Fields f = fields_of(value, file, "libraries");
  for (auto it = value.begin(); it != value.end(); ++it) {
    f.find(it.key());
    const std::string path = "libraries." + it.key();
    if (find_algorithm(it.key()))
      f.fail(path,
             "names the built-in " + it.key() + ": say what it expects under expect." + it.key());
    if (auto why = not_applicable_reason(it.value(), path, file))
      s.library_not_applicable[it.key()] = *why;
    else
      s.library_expectations[it.key()] = parse_expectation(it.value(), path, file);
  }
}

}  // namespace

Scenario parse_scenario(const json& document, const std::filesystem::path& file) {
  Fields top = fields_of(document, file, "");
  Scenario s;
  s.file = file;
  s.name = top.text("name").value_or(file.stem().string());
  s.description = top.text("description").value_or("");
  top.text("$schema").value_or("");
  if (const json* t = top.find("topology")) s.topology = parse_topology(*t, file);
  s.clients = int(top.integer("clients", 1, 64).value_or(4));
  if (const json* w = top.find("workload")) s.workload = parse_workload(*w, file, s.workload);
  s.duration_ms = top.integer("duration_ms", 1, kMaxMs).value_or(s.duration_ms);
  s.seed = uint64_t(top.integer("seed", 0, INT64_MAX).value_or(1));
  if (auto factor = top.number("liveness_factor")) {
    if (!(*factor > 0) || *factor > 100)
      top.fail("liveness_factor", "must be a number of TTLs in (0, 100]");
    s.liveness_factor = *factor;
  }
  s.algorithms = parse_algorithms(top);
  if (const json* e = top.find("expect")) parse_expectations(*e, file, s);
  if (const json* l = top.find("libraries")) parse_library_expectations(*l, file, s);
  if (const json* faults = top.find("faults")) {
    if (!faults->is_array()) top.fail("faults", "must be an array");
    for (size_t i = 0; i < faults->size(); ++i)
      s.faults.push_back(parse_fault((*faults)[i], "faults[" + std::to_string(i) + "]", s, file));
  }
  top.done();
  for (size_t i = 0; i < s.faults.size(); ++i) {
    check_fault_against_algorithms(s.faults[i], i, s);
    check_fault_waits(s, i);
    check_fault_alternatives(s, i);
  }
  return s;
}

json scenario_to_json(const Scenario& s) {
  json doc = json::object();
  doc["name"] = s.name;
  if (!s.description.empty()) doc["description"] = s.description;
  const Topology& t = s.topology;
  doc["topology"] = {{"nodes", t.nodes},
                     {"replicas", t.replicas},
                     {"sentinels", t.sentinels},
                     {"persistence", t.persistence}};
  if (t.network != "proxy") doc["topology"]["network"] = t.network;
  doc["clients"] = s.clients;
  const Workload& w = s.workload;
  doc["workload"] = {{"locks", w.locks},
                     {"ttl_ms", w.ttl_ms},
                     {"wait_ms", w.wait_ms},
                     {"work_ms", w.work_ms},
                     {"think_ms", w.think_ms},
                     {"ops_per_client", w.ops_per_client},
                     {"fencing", w.fencing},
                     {"stop_on_renewal_failure", w.stop_on_renewal_failure},
                     {"retry_unknown_release", w.retry_unknown_release},
                     {"checks_validity", w.checks_validity},
                     {"reentry", w.reentry},
                     {"lock_per_client", w.lock_per_client}};
  if (w.holds_per_client > 0) doc["workload"]["holds_per_client"] = w.holds_per_client;
  if (!w.params.empty()) doc["workload"]["params"] = w.params;
  doc["duration_ms"] = s.duration_ms;
  doc["seed"] = s.seed;
  if (s.liveness_factor != 3.0) doc["liveness_factor"] = s.liveness_factor;
  doc["algorithms"] = s.algorithms;
  json faults = json::array();
  for (const Fault& f : s.faults) {
    json j = {{"kind", f.name()}};
    j.update(f.describe());
    if (f.when && f.when->nth == 1) j["when"].erase("nth");
    if (f.until && f.until->nth == 1) j["until"].erase("nth");
    if (!f.clients.empty()) j["clients"] = f.clients;
    if (!f.nodes.empty()) j["nodes"] = f.nodes;
    if (!f.algorithms.empty()) j["algorithms"] = f.algorithms;
    if (!f.one_of.empty()) j["one_of"] = f.one_of;
    faults.push_back(std::move(j));
  }
  doc["faults"] = std::move(faults);
  json expect = {{"default", expectation_json(s.default_expectation)}};
  for (const auto& [algorithm, e] : s.expectations) expect[algorithm] = expectation_json(e);
  for (const auto& [algorithm, why] : s.not_applicable)
    expect[algorithm] = {{"not_applicable", why}};
  doc["expect"] = std::move(expect);
  if (!s.library_expectations.empty() || !s.library_not_applicable.empty()) {
    json libraries = json::object();
    for (const auto& [name, e] : s.library_expectations) libraries[name] = expectation_json(e);
    for (const auto& [name, why] : s.library_not_applicable)
      libraries[name] = {{"not_applicable", why}};
    doc["libraries"] = std::move(libraries);
  }
  return doc;
}

Scenario load_scenario(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw ScenarioError(file.string() + ": cannot open the scenario file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  json document;
  try {
    document = json::parse(text);
  } catch (const json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 3, column 5: <reason>".
    std::string what = e.what();
    std::string reason = what.substr(what.rfind(": ") + 2);
    throw ScenarioError(file.string() + ": malformed JSON at " + line_and_column(text, e.byte) +
                        ": " + reason);
  }
  return parse_scenario(document, file);
}

}  // namespace locklab
