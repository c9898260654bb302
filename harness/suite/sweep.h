// `locklab sweep`: the smallest value of one numeric fault parameter that
// breaks each algorithm, found by binary search on the assumption that a
// larger value never breaks less (a longer pause, a bigger clock jump).
//
// Output layout (OUT = SweepOptions::out_dir):
//   OUT/sweep.json                                            the search and its answer
//   OUT/<algorithm>/<param>-<value>/run-<k>/<algorithm>/history.jsonl   every probed run
#pragma once

#include <filesystem>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "boundary_search.h"
#include "scenario.h"
#include "suite.h"

namespace locklab::suite {

// The fault fields a sweep can vary.
const std::vector<std::string>& sweep_params();

// Throws std::invalid_argument unless `param` is one of sweep_params() and
// means something for `fault` (e.g. delta_ms only for clock jumps, at_ms
// only for a fault triggered at a time).
void check_sweep_param(const Fault& fault, const std::string& param);

// Sets `param` of `fault` to `value`, rounded for integer fields.
void set_fault_param(Fault& fault, const std::string& param, double value);

// `value` as the field holds it: "980" for integer fields, "1.25" for rate.
std::string param_text(const std::string& param, double value);

struct SweepSpec {
  size_t fault = 0;  // index into the scenario's faults (0 = the first)
  std::string param;
  double from = 0, to = 0;
  double precision = 0;             // search until the answer is this narrow; 0: (to - from) / 20
  int runs = 1;                     // runs per probed value; the value breaks when one of them does
  std::optional<std::string> kind;  // breaks = this kind found (default: any violation)
  std::optional<uint64_t> seed;     // base seed (default: the scenario's); run k uses seed + k - 1
};

// Throws std::invalid_argument with a message naming the option when the
// spec cannot apply to `scenario`: fault index out of range, parameter
// unknown or meaningless for that fault kind, from >= to, a value the field
// cannot take, precision < 0, runs < 1, an unknown kind.
void validate_sweep(const Scenario& scenario, const SweepSpec& spec);

// The precision the search stops at: the spec's, or (to - from) / 20; at
// least 1 for integer fields.
double effective_precision(const SweepSpec& spec);

// What the runs at one value measured.
struct Probe {
  double value = 0;
  int runs = 0;
  int broken = 0;                  // runs in which the algorithm broke
  std::vector<std::string> kinds;  // violation kinds found in any run, sorted
  std::string error;               // the first run's error, if a run failed
  nlohmann::json details =
      nlohmann::json::array();  // per run: seed, verdict, kinds, history, error
  bool breaks() const { return broken > 0; }
};

using Evaluate = std::function<Probe(double value)>;

struct SearchResult {
  // kBreaks (at `from` too), kNeverBreaks, or kStopped at a probe whose runs failed.
  SearchOutcome outcome = SearchOutcome::kError;
  std::optional<double> breaking;   // the smallest probed value that broke
  std::optional<double> last_safe;  // the largest probed value below it that did not
  std::vector<Probe> probes;        // in the order they were made
  std::string error;
};

// Probes `to` (nothing breaks there: kNeverBreaks), then `from` (breaks
// there: kBreaks at from), then halves the interval between the last safe
// and the first breaking value until it is no wider than the precision
// (boundary_search.h, with no vote). Stops (kStopped) at the first probe
// whose runs failed.
SearchResult search_breaking_point(const SweepSpec& spec, const Evaluate& evaluate);

struct SweepOptions {
  SweepSpec spec;
  std::vector<std::string> algorithms;  // empty: the scenario's own list
  std::filesystem::path out_dir;
  nlohmann::json invocation = nlohmann::json::object();  // recorded as given
  std::ostream* progress = &std::cerr;                   // one line per probe
};

// Searches each algorithm, writes OUT/sweep.json atomically and returns it:
// {scenario, scenario_file, ttl_ms, fault{index, kind, fault}, param, from,
// to, precision, runs, breaks_when ("any violation" or the --kind), seeds,
// locklab_version, invocation,
// algorithms[{algorithm, outcome ("breaks" | "never-breaks" | "error"),
// breaking_value, last_safe_value, kinds_at_break, error, probes[...]}],
// exit_status (2 when some search hit an error, else 0)}.
nlohmann::json run_sweep(const Scenario& scenario, const SweepOptions& options,
                         const CellRunner& run_cell);

// The answer for people, one line per algorithm, e.g.
//   set-nx-px (ttl 1000 ms): breaks at duration_ms ≥ 980 (safe at 930) with mutual-exclusion,
//   stale-write
std::string sweep_table(const nlohmann::json& sweep);

}  // namespace locklab::suite
