// Shrinking a scenario that breaks a lock to the smallest one that still
// does. Runs against real Redis are not deterministic, so "still breaks"
// means reproduced in `needed` of `reruns` runs (2 of 3 by default).
//
// The search is greedy: from the current scenario, try the simpler ones
// (simpler_scenarios) in order and move to the first that still breaks;
// stop when none does, or the budget is spent. Every scenario tried has been
// through the scenario loader, so the result is valid input to `locklab run`.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "scenario.h"

namespace locklab::explore {

// The scenarios one step simpler than `s`, most promising first: fewer
// faults, a shorter run, fewer clients, locks and servers, smaller fault
// durations and distances (halved toward zero, or toward a clock rate of 1),
// triggers earlier, less work per hold. Each is valid (loaded back) and
// strictly smaller than `s` (scenario_size).
std::vector<Scenario> simpler_scenarios(const Scenario& s);

// How big a scenario is, for "smaller": compared in this order.
struct ScenarioSize {
  size_t faults = 0;
  int clients = 0;
  size_t locks = 0;
  int servers = 0;
  int64_t duration_ms = 0;
  double fault_magnitude = 0;  // durations, distances, delays, |rate - 1|, trigger times and nths
  int64_t workload_ms = 0;     // work and think time, and re-entry levels
  auto operator<=>(const ScenarioSize&) const = default;
};
ScenarioSize scenario_size(const Scenario& s);

// Whether one run of a scenario broke the lock (the violation kinds sought).
using RunOnce = std::function<bool(const Scenario&, int attempt)>;

struct Reproduction {
  int runs = 0;   // runs made (it stops as soon as the answer is known)
  int broke = 0;  // of which broke the lock
  bool reproduced = false;
};

// Runs `s` up to `reruns` times, stopping once `needed` runs broke or can no
// longer. `parallel` runs at once (each call of run_once starts its own
// servers); `attempt` counts from 0.
Reproduction reproduce(const Scenario& s, int reruns, int needed, int parallel,
                       const RunOnce& run_once);

struct ShrinkOptions {
  int reruns = 3;
  int needed = 2;
  int parallel = 1;
  int max_candidates = 60;  // scenarios tried at most
  std::chrono::seconds max_time{600};
  const std::atomic<bool>* stop = nullptr;  // set (e.g. by Ctrl-C): keep what was found so far
};

struct ShrinkResult {
  Scenario minimal;
  int candidates_tried = 0;
  int runs = 0;           // runs made by the whole search
  int steps_taken = 0;    // times a simpler scenario still broke
  bool complete = false;  // no simpler scenario broke (not cut short by the budget or a stop)
};

// Shrinks `failing` (which broke the lock) as described above.
ShrinkResult shrink(const Scenario& failing, const RunOnce& run_once, const ShrinkOptions& options);

}  // namespace locklab::explore
