#include "sweep.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>

#include "atomic_file.h"
#include "boundary_search.h"
#include "checkers.h"
#include "joined.h"
#include "matrix.h"
#include "results.h"
#include "version.h"

namespace locklab::suite {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool is_integer(const std::string& param) {
  for (const auto& row : fault_kinds())
    for (const auto& p : row.params)
      if (p.name == param) return p.type == ParamType::Integer;
  return true;  // at_ms, duration_ms
}

// Whether a fault of `kind` has `param` for a sweep to vary (at_ms aside).
bool sweepable(FaultKind kind, const std::string& param) {
  if (param == "duration_ms") return info(kind).duration != DurationRule::None;
  const FaultParam* p = find_param(kind, param);
  return p && p->sweepable;
}

// The kinds of fault a parameter belongs to, for error messages.
std::string kinds_for(const std::string& param) {
  if (param == "at_ms") return "faults triggered at a time (\"at_ms\", not \"when\")";
  std::vector<std::string> kinds;
  for (const auto& row : fault_kinds())
    if (sweepable(row.kind, param)) kinds.push_back(std::string(row.name));
  return joined(kinds);
}

}  // namespace

const std::vector<std::string>& sweep_params() {
  static const std::vector<std::string> params = [] {
    std::vector<std::string> out = {"at_ms", "duration_ms"};
    for (const auto& row : fault_kinds())
      for (const auto& p : row.params)
        if (p.sweepable && std::find(out.begin(), out.end(), p.name) == out.end())
          out.push_back(std::string(p.name));
    return out;
  }();
  return params;
}

void check_sweep_param(const Fault& fault, const std::string& param) {
  const auto& params = sweep_params();
  if (std::find(params.begin(), params.end(), param) == params.end())
    throw std::invalid_argument("--param: \"" + param + "\" is not a numeric fault field (one of " +
                                joined(params) + ")");
  const bool applies = param == "at_ms" ? fault.at_ms.has_value() : sweepable(fault.kind, param);
  if (!applies)
    throw std::invalid_argument("--param: a " + std::string(fault.name()) + " fault has no " +
                                param + " (it applies to " + kinds_for(param) + ")");
}

void set_fault_param(Fault& fault, const std::string& param, double value) {
  try {
    fault.set_number(param, value);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("--param: ") + e.what());
  }
}

std::string param_text(const std::string& param, double value) {
  if (is_integer(param)) return std::to_string(std::llround(value));
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

void validate_sweep(const Scenario& scenario, const SweepSpec& spec) {
  if (scenario.faults.empty())
    throw std::invalid_argument("--fault: " + scenario.file.string() + " has no faults to sweep");
  if (spec.fault >= scenario.faults.size())
    throw std::invalid_argument("--fault: " + std::to_string(spec.fault) +
                                " is out of range: " + scenario.file.string() + " has faults 0.." +
                                std::to_string(scenario.faults.size() - 1));
  check_sweep_param(scenario.faults[spec.fault], spec.param);
  if (!(spec.from < spec.to))
    throw std::invalid_argument("--from must be below --to, got " +
                                param_text(spec.param, spec.from) + " and " +
                                param_text(spec.param, spec.to));
  if (spec.param == "rate" && !(spec.from > 0 && spec.to <= 1000))
    throw std::invalid_argument("--from/--to: rate must lie in (0, 1000]");
  if (spec.param != "delta_ms" && spec.param != "rate" && spec.from < 0)
    throw std::invalid_argument("--from: " + spec.param + " cannot be negative");
  if (!(spec.precision >= 0)) throw std::invalid_argument("--precision must be positive");
  if (spec.runs < 1) throw std::invalid_argument("--runs must be at least 1");
  if (spec.kind && !violation_kind_named(*spec.kind))
    throw std::invalid_argument("--kind: unknown violation kind \"" + *spec.kind + "\" (one of " +
                                violation_kind_list() + ")");
}

double effective_precision(const SweepSpec& spec) {
  double precision = spec.precision > 0 ? spec.precision : (spec.to - spec.from) / 20;
  return is_integer(spec.param) ? std::max(1.0, std::round(precision)) : precision;
}

SearchResult search_breaking_point(const SweepSpec& spec, const Evaluate& evaluate) {
  SearchResult result;
  // Each value is decided by all its runs (broken when one breaks): there
  // is no vote near the boundary and no confirmation. The gallop's first
  // step overshoots the whole range, so the second probe is `from` itself.
  const bool integer = is_integer(spec.param);
  SearchRange range{.gentle = spec.from,
                    .harsh = spec.to,
                    .precision = effective_precision(spec),
                    .first_step = 2 * (spec.to - spec.from),
                    .snap = [integer](double value) { return integer ? std::round(value) : value; },
                    .middle =
                        [integer](double safe, double broken) {
                          const double middle = safe + (broken - safe) / 2;
                          return integer ? std::round(middle) : middle;
                        }};
  Boundary found = find_boundary(range, spec.to, [&](double value, bool) -> std::optional<bool> {
    result.probes.push_back(evaluate(value));
    if (!result.probes.back().error.empty()) return std::nullopt;
    return result.probes.back().breaks();
  });
  result.breaking = found.breaking;
  result.last_safe = found.last_safe;
  // Broken at `from` is an answer like any other here: the sweep's range
  // need not start without a fault.
  result.outcome =
      found.outcome == SearchOutcome::kBreaksWithoutFault ? SearchOutcome::kBreaks : found.outcome;
  if (found.outcome == SearchOutcome::kError) result.error = result.probes.back().error;
  return result;
}

namespace {

json probe_json(const std::string& param, const Probe& p) {
  return {{"value", p.value},    {"value_text", param_text(param, p.value)},
          {"runs", p.runs},      {"broken", p.broken},
          {"kinds", p.kinds},    {"error", p.error.empty() ? json() : json(p.error)},
          {"details", p.details}};
}

// Runs `algorithm` spec.runs times with the fault parameter at `value`.
Probe measure(const Scenario& scenario, const std::string& algorithm, double value,
              const SweepOptions& options, const CellRunner& run_cell) {
  const SweepSpec& spec = options.spec;
  Scenario changed = scenario;
  set_fault_param(changed.faults[spec.fault], spec.param, value);
  Probe probe;
  probe.value = value;
  std::set<std::string> kinds;
  const auto start = std::chrono::steady_clock::now();
  const fs::path point_dir =
      options.out_dir / algorithm / (spec.param + "-" + param_text(spec.param, value));
  for (int k = 1; k <= spec.runs; ++k) {
    const uint64_t seed = run_seed(spec.seed.value_or(scenario.seed), k);
    const fs::path run_dir = point_dir / ("run-" + std::to_string(k));
    RunResult run;
    try {
      run = run_cell(changed, algorithm, seed, run_dir);
    } catch (const std::exception& e) {
      run.algorithm = algorithm;
      run.error = e.what();
    }
    // A run whose fault never fired did not play the story at this value:
    // its "safe" says nothing, so the answer here is unknown, like an error.
    if (!run.error && !run.exercised) run.error = never_fired(run);
    const bool failed = run.error.has_value();
    const auto found = found_kinds(run);
    const bool broken =
        !failed && (spec.kind ? std::count(found.begin(), found.end(), *spec.kind) > 0
                              : run.verdict == Verdict::Violated);
    ++probe.runs;
    probe.broken += broken;
    kinds.insert(found.begin(), found.end());
    if (failed && probe.error.empty()) probe.error = *run.error;
    const std::string history = run.history.empty() ? algorithm + "/history.jsonl" : run.history;
    probe.details.push_back({{"seed", seed},
                             {"verdict", verdict_name(failed ? Verdict::Error : run.verdict)},
                             {"broken", broken},
                             {"kinds", found},
                             {"history", fs::relative(run_dir / history, options.out_dir).string()},
                             {"error", failed ? json(*run.error) : json()}});
    if (failed) break;  // the answer at this value is unknown; the search stops
  }
  probe.kinds.assign(kinds.begin(), kinds.end());
  char time[32];
  std::snprintf(time, sizeof time, "%.1fs",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  *options.progress << algorithm << " " << spec.param << "=" << param_text(spec.param, value)
                    << ": "
                    << (probe.error.empty()
                            ? (probe.breaks() ? "broken" : "safe") + std::string(" in ") +
                                  std::to_string(probe.broken) + "/" + std::to_string(probe.runs) +
                                  " runs" +
                                  (probe.kinds.empty() ? "" : " [" + joined(probe.kinds) + "]")
                            : "error: " + probe.error)
                    << " " << time << "\n"
                    << std::flush;
  return probe;
}

}  // namespace

json run_sweep(const Scenario& scenario, const SweepOptions& options, const CellRunner& run_cell) {
  const SweepSpec& spec = options.spec;
  validate_sweep(scenario, spec);
  const std::vector<std::string> algorithms =
      options.algorithms.empty() ? scenario.algorithms : options.algorithms;
  json seeds = json::array();
  for (int k = 1; k <= spec.runs; ++k)
    seeds.push_back(run_seed(spec.seed.value_or(scenario.seed), k));
  const Fault& fault = scenario.faults[spec.fault];
  json document{
      {"scenario", scenario.name},
      {"scenario_file", scenario.file.string()},
      {"ttl_ms", scenario.workload.ttl_ms},
      {"fault", {{"index", spec.fault}, {"kind", fault.name()}, {"fault", fault.describe()}}},
      {"param", spec.param},
      {"from", spec.from},
      {"to", spec.to},
      {"precision", effective_precision(spec)},
      {"runs", spec.runs},
      {"breaks_when", spec.kind.value_or("any violation")},
      {"seeds", seeds},
      {"locklab_version", kVersion},
      {"invocation", options.invocation},
      {"algorithms", json::array()}};
  int status = 0;
  for (const auto& algorithm : algorithms) {
    SearchResult result = search_breaking_point(
        spec, [&](double value) { return measure(scenario, algorithm, value, options, run_cell); });
    json entry{{"algorithm", algorithm}};
    // breaks, never-breaks or error: search_breaking_point says nothing else.
    entry["outcome"] = search_outcome_name(result.outcome);
    if (result.outcome == SearchOutcome::kError) status = 2;
    entry["breaking_value"] = result.breaking ? json(*result.breaking) : json();
    entry["last_safe_value"] = result.last_safe ? json(*result.last_safe) : json();
    entry["kinds_at_break"] = json::array();
    for (const auto& probe : result.probes)
      if (result.breaking && probe.value == *result.breaking) entry["kinds_at_break"] = probe.kinds;
    entry["error"] = result.error.empty() ? json() : json(result.error);
    entry["probes"] = json::array();
    for (const auto& probe : result.probes)
      entry["probes"].push_back(probe_json(spec.param, probe));
    document["algorithms"].push_back(std::move(entry));
  }
  document["exit_status"] = status;
  write_file_atomically(options.out_dir / "sweep.json", document.dump(2) + "\n");
  return document;
}

std::string sweep_table(const json& sweep) {
  const std::string param = sweep.value("param", "");
  auto text = [&](const json& value) { return param_text(param, value.get<double>()); };
  const json fault = sweep.value("fault", json::object());
  std::string out =
      sweep.value("scenario", "") + ": faults[" + fault.value("index", json(0)).dump() + "] (" +
      fault.value("kind", "") + ") " + param + " searched " + text(sweep["from"]) + ".." +
      text(sweep["to"]) + ", precision " + text(sweep["precision"]) + ", " + sweep["runs"].dump() +
      (sweep["runs"] == 1 ? " run" : " runs") + " per value; a value breaks when a run finds " +
      sweep.value("breaks_when", "any violation") + "\n";
  const std::string ttl = " (ttl " + sweep.value("ttl_ms", json(0)).dump() + " ms): ";
  for (const auto& entry : sweep.value("algorithms", json::array())) {
    out += "  " + entry.value("algorithm", "") + ttl;
    const std::string outcome = entry.value("outcome", "");
    const size_t probes = entry.value("probes", json::array()).size();
    if (outcome == search_outcome_name(SearchOutcome::kNeverBreaks)) {
      out += "never breaks in range (safe at " + param + " = " + text(sweep["to"]) + ")";
    } else if (outcome == search_outcome_name(SearchOutcome::kBreaks) &&
               entry["last_safe_value"].is_null()) {
      out += "breaks already at " + param + " = " + text(entry["breaking_value"]) +
             " (the lower end of the range)";
    } else if (outcome == search_outcome_name(SearchOutcome::kBreaks)) {
      out += "breaks at " + param + " ≥ " + text(entry["breaking_value"]) + " (safe at " +
             text(entry["last_safe_value"]) + ")";
    } else {
      out += "error: " + entry.value("error", std::string("unknown"));
    }
    std::vector<std::string> kinds = entry.value("kinds_at_break", std::vector<std::string>{});
    if (!kinds.empty()) out += " with " + joined(kinds);
    out += "; " + std::to_string(probes) + " values probed\n";
  }
  return out;
}

}  // namespace locklab::suite
