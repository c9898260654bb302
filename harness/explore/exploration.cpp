#include "exploration.h"

#include <fstream>
#include <sstream>

#include "atomic_file.h"
#include "json_fields.h"

namespace locklab::explore {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

using Fields = JsonFields<ExploreError>;

// The array at `key`, each element read by Item::from_json with its path.
template <typename Item>
std::vector<Item> items(Fields& f, const std::string& key) {
  std::vector<Item> out;
  const json* value = f.find(key);
  if (!value) return out;
  if (!value->is_array()) f.fail(f.path(key), "must be an array");
  for (size_t i = 0; i < value->size(); ++i)
    out.push_back(
        Item::from_json((*value)[i], f.file(), f.path(key) + "[" + std::to_string(i) + "]"));
  return out;
}

// The object at `key` read by Item::from_json; a default Item when absent.
template <typename Item>
Item object(Fields& f, const std::string& key) {
  const json* value = f.find(key);
  return value ? Item::from_json(*value, f.file(), f.path(key)) : Item{};
}

template <typename Item>
json array_of(const std::vector<Item>& items) {
  json out = json::array();
  for (const auto& item : items) out.push_back(item.to_json());
  return out;
}

// [low, high] at `key`.
std::optional<std::pair<double, double>> range_at(Fields& f, const std::string& key) {
  const json* value = f.find(key);
  if (!value) return std::nullopt;
  if (!value->is_array() || value->size() != 2 || !(*value)[0].is_number() ||
      !(*value)[1].is_number())
    f.fail(f.path(key), "must be [low, high], two numbers");
  return std::pair((*value)[0].get<double>(), (*value)[1].get<double>());
}

// The verdict at `key`; a word this reader does not know (a newer file) is Unknown.
std::optional<Verdict> verdict_at(Fields& f, const std::string& key) {
  std::optional<std::string> text = f.text(key);
  if (!text) return std::nullopt;
  return verdict_named(*text).value_or(Verdict::Unknown);
}

std::vector<std::string> texts(Fields& f, const std::string& key) {
  return f.texts(key).value_or(std::vector<std::string>{});
}

json optional_json(const std::optional<std::string>& text) {
  return text ? json(*text) : json(nullptr);
}

}  // namespace

ExploredFault ExploredFault::of(const Fault& fault) {
  return {.kind = std::string(fault.name()),
          .trigger = fault.trigger_text(),
          .parameters = fault.describe()};
}

json ExploredFault::to_json() const {
  json out = {{"kind", kind}, {"trigger", trigger}};
  out.update(parameters);
  if (fired) out["fired"] = *fired;
  return out;
}

ExploredFault ExploredFault::from_json(const json& fault, const fs::path& file,
                                       const std::string& field) {
  Fields f(fault, file, field);
  ExploredFault out;
  out.kind = f.text("kind").value_or("");
  out.trigger = f.text("trigger").value_or("");
  out.fired = f.boolean("fired");
  for (auto it = fault.begin(); it != fault.end(); ++it)
    if (it.key() != "kind" && it.key() != "trigger" && it.key() != "fired")
      out.parameters[it.key()] = it.value();
  return out;
}

json ExploredRun::to_json() const {
  json out = {
      {"index", index},     {"seed", seed},           {"verdict", verdict},        {"kinds", kinds},
      {"seconds", seconds}, {"exercised", exercised}, {"faults", array_of(faults)}};
  if (error) out["error"] = *error;
  if (dir) out["dir"] = *dir;
  return out;
}

ExploredRun ExploredRun::from_json(const json& run, const fs::path& file,
                                   const std::string& field) {
  Fields f(run, file, field);
  ExploredRun out;
  out.index = f.unsigned_integer("index").value_or(0);
  out.seed = f.unsigned_integer("seed").value_or(0);
  out.verdict = verdict_at(f, "verdict").value_or(Verdict::Unknown);
  out.kinds = texts(f, "kinds");
  out.seconds = f.number("seconds").value_or(0);
  out.exercised = f.boolean("exercised").value_or(true);
  out.faults = items<ExploredFault>(f, "faults");
  out.error = f.text("error");
  out.dir = f.text("dir");
  return out;
}

json CoverageRange::to_json() const {
  json out = {{"param", param}, {"unit", unit}, {"drawn", {drawn.first, drawn.second}}};
  if (fired) out["fired"] = {fired->first, fired->second};
  return out;
}

CoverageRange CoverageRange::from_json(const json& range, const fs::path& file,
                                       const std::string& field) {
  Fields f(range, file, field);
  CoverageRange out;
  out.param = f.text("param").value_or("");
  out.unit = f.text("unit").value_or("");
  out.drawn = range_at(f, "drawn").value_or(out.drawn);
  out.fired = range_at(f, "fired");
  return out;
}

json KindCoverage::to_json() const {
  return {{"kind", kind},
          {"runs", runs},
          {"generated", generated},
          {"fired", fired},
          {"ranges", array_of(ranges)}};
}

KindCoverage KindCoverage::from_json(const json& kind, const fs::path& file,
                                     const std::string& field) {
  Fields f(kind, file, field);
  KindCoverage out;
  out.kind = f.text("kind").value_or("");
  out.runs = f.integer("runs").value_or(0);
  out.generated = f.integer("generated").value_or(0);
  out.fired = f.integer("fired").value_or(0);
  out.ranges = items<CoverageRange>(f, "ranges");
  return out;
}

json StepCoverage::to_json() const {
  return {{"step", step}, {"generated", generated}, {"fired", fired}};
}

StepCoverage StepCoverage::from_json(const json& step, const fs::path& file,
                                     const std::string& field) {
  Fields f(step, file, field);
  StepCoverage out;
  out.step = f.text("step").value_or("");
  out.generated = f.integer("generated").value_or(0);
  out.fired = f.integer("fired").value_or(0);
  return out;
}

json CoverageSummary::to_json() const {
  return {{"fault_kinds", array_of(fault_kinds)},
          {"steps", array_of(steps)},
          {"kinds_never_fired", kinds_never_fired},
          {"steps_never_fired", steps_never_fired}};
}

CoverageSummary CoverageSummary::from_json(const json& coverage, const fs::path& file,
                                           const std::string& field) {
  Fields f(coverage, file, field);
  CoverageSummary out;
  out.fault_kinds = items<KindCoverage>(f, "fault_kinds");
  out.steps = items<StepCoverage>(f, "steps");
  out.kinds_never_fired = texts(f, "kinds_never_fired");
  out.steps_never_fired = texts(f, "steps_never_fired");
  return out;
}

json FoundScenario::to_json() const {
  return {{"name", name},
          {"file", file},
          {"report", optional_json(report)},
          {"kinds", kinds},
          {"sought", sought},
          {"fault_kinds", fault_kinds},
          {"faults", array_of(faults)},
          {"clients", clients},
          {"duration_ms", duration_ms},
          {"ttl_ms", ttl_ms},
          {"from_run", from_run},
          {"original_faults", original_faults},
          {"same_cause_runs", same_cause_runs},
          {"reproduced", {{"runs", reproduced.runs}, {"broke", reproduced.broke}}},
          {"shrink",
           {{"candidates_tried", shrink.candidates_tried},
            {"runs", shrink.runs},
            {"steps_taken", shrink.steps_taken},
            {"complete", shrink.complete}}}};
}

FoundScenario FoundScenario::from_json(const json& found, const fs::path& file,
                                       const std::string& field) {
  Fields f(found, file, field);
  FoundScenario out;
  out.name = f.text("name").value_or("");
  out.file = f.text("file").value_or("");
  out.report = f.text("report");
  out.kinds = texts(f, "kinds");
  out.sought = texts(f, "sought");
  out.fault_kinds = texts(f, "fault_kinds");
  out.faults = items<ExploredFault>(f, "faults");
  out.clients = int(f.integer("clients").value_or(0));
  out.duration_ms = f.integer("duration_ms").value_or(0);
  out.ttl_ms = f.integer("ttl_ms").value_or(0);
  out.from_run = f.unsigned_integer("from_run").value_or(0);
  out.original_faults = f.integer("original_faults").value_or(0);
  for (int64_t run : f.integers("same_cause_runs")) {
    if (run < 0) f.fail(f.path("same_cause_runs"), "must be an array of run indices (>= 0)");
    out.same_cause_runs.push_back(uint64_t(run));
  }
  if (f.find("reproduced")) {
    Fields r = f.child("reproduced");
    out.reproduced.runs = int(r.integer("runs").value_or(0));
    out.reproduced.broke = int(r.integer("broke").value_or(0));
  }
  if (f.find("shrink")) {
    Fields s = f.child("shrink");
    out.shrink.candidates_tried = int(s.integer("candidates_tried").value_or(0));
    out.shrink.runs = int(s.integer("runs").value_or(0));
    out.shrink.steps_taken = int(s.integer("steps_taken").value_or(0));
    out.shrink.complete = s.boolean("complete").value_or(false);
  }
  return out;
}

json NotShrunk::to_json() const {
  return {
      {"run", run}, {"runs", runs}, {"kinds", kinds}, {"fault_kinds", fault_kinds}, {"why", why}};
}

NotShrunk NotShrunk::from_json(const json& not_shrunk, const fs::path& file,
                               const std::string& field) {
  Fields f(not_shrunk, file, field);
  NotShrunk out;
  out.run = f.unsigned_integer("run").value_or(0);
  out.runs = f.integer("runs").value_or(0);
  out.kinds = texts(f, "kinds");
  out.fault_kinds = texts(f, "fault_kinds");
  out.why = f.text("why").value_or("");
  return out;
}

json RecordedOptions::to_json() const {
  return {{"seed", seed},
          {"jobs", jobs},
          {"shard", shard},
          {"max_runs", max_runs ? json(*max_runs) : json(nullptr)},
          {"max_seconds", max_seconds},
          {"kinds", kinds},
          {"fault_kinds", fault_kinds},
          {"lock_steps", lock_steps},
          {"max_faults", max_faults},
          {"network", optional_json(network)},
          {"reproduce", {{"needed", reproduce.needed}, {"reruns", reproduce.reruns}}},
          {"confirm_runs", confirm_runs}};
}

RecordedOptions RecordedOptions::from_json(const json& options, const fs::path& file,
                                           const std::string& field) {
  Fields f(options, file, field);
  RecordedOptions out;
  out.seed = f.unsigned_integer("seed").value_or(out.seed);
  out.jobs = int(f.integer("jobs").value_or(out.jobs));
  out.shard = f.text("shard").value_or(out.shard);
  out.max_runs = f.integer("max_runs");
  out.max_seconds = f.integer("max_seconds").value_or(out.max_seconds);
  out.kinds = texts(f, "kinds");
  out.fault_kinds = texts(f, "fault_kinds");
  out.lock_steps = texts(f, "lock_steps");
  out.max_faults = int(f.integer("max_faults").value_or(out.max_faults));
  out.network = f.text("network");
  if (f.find("reproduce")) {
    Fields r = f.child("reproduce");
    out.reproduce.needed = int(r.integer("needed").value_or(out.reproduce.needed));
    out.reproduce.reruns = int(r.integer("reruns").value_or(out.reproduce.reruns));
  }
  out.confirm_runs = int(f.integer("confirm_runs").value_or(out.confirm_runs));
  return out;
}

json Exploration::to_json() const {
  json out = {{"explore", explore},
              {"algorithm", algorithm},
              {"locklab_version", locklab_version},
              {"invocation", invocation},
              {"started_at", started_at},
              {"seconds", seconds},
              {"explore_seconds", explore_seconds},
              {"interrupted", interrupted},
              {"options", options.to_json()},
              {"runs_total", runs_total},
              {"runs_failed", runs_failed},
              {"runs_per_minute", runs_per_minute},
              {"shrink_runs", shrink_runs},
              {"violations_by_kind", violations_by_kind},
              {"kinds_seen", kinds_seen},
              {"coverage", coverage.to_json()},
              {"found", array_of(found)},
              {"not_shrunk", array_of(not_shrunk)},
              {"runs", array_of(runs)},
              {"exit_status", exit_status}};
  if (adapter) out["adapter"] = *adapter;
  if (error) out["error"] = *error;
  return out;
}

Exploration Exploration::from_json(const json& document, const fs::path& file) {
  Fields f(document, file);
  if (!f.find("explore") || !f.find("options") || !f.find("runs"))
    throw ExploreError(file.string() + ": not an explore.json (no explore, options or runs)");
  Exploration out;
  out.explore = f.text("explore").value_or("");
  out.algorithm = f.text("algorithm").value_or("");
  out.adapter = f.text("adapter");
  out.locklab_version = f.text("locklab_version").value_or("");
  if (const json* invocation = f.find("invocation")) out.invocation = *invocation;
  out.started_at = f.text("started_at").value_or("");
  out.seconds = f.number("seconds").value_or(0);
  out.explore_seconds = f.number("explore_seconds").value_or(0);
  out.interrupted = f.boolean("interrupted").value_or(false);
  out.options = object<RecordedOptions>(f, "options");
  out.runs_total = f.integer("runs_total").value_or(0);
  out.runs_failed = f.integer("runs_failed").value_or(0);
  out.runs_per_minute = f.number("runs_per_minute").value_or(0);
  out.shrink_runs = f.integer("shrink_runs").value_or(0);
  out.violations_by_kind = f.integer_map("violations_by_kind");
  out.kinds_seen = f.integer_map("kinds_seen");
  out.coverage = object<CoverageSummary>(f, "coverage");
  out.found = items<FoundScenario>(f, "found");
  out.not_shrunk = items<NotShrunk>(f, "not_shrunk");
  out.runs = items<ExploredRun>(f, "runs");
  out.error = f.text("error");
  out.exit_status = int(f.integer("exit_status").value_or(0));
  return out;
}

Exploration read_exploration_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ExploreError(file.string() + ": cannot be read (not an exploration?)");
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ExploreError(file.string() + ": cannot be read");
  json document;
  try {
    document = json::parse(text.str());
  } catch (const json::parse_error& e) {
    throw ExploreError(file.string() + ": not valid JSON (" + e.what() + ")");
  }
  return Exploration::from_json(document, file);
}

void write_exploration_file(const Exploration& exploration, const fs::path& file) {
  write_file_atomically(file, exploration.to_json().dump(2) + "\n");
}

}  // namespace locklab::explore
