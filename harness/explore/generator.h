// Generated scenarios for `locklab explore`: weighted, seeded draws over the
// fault vocabulary (fault_kind.h), the steps the lock declares, the topology
// it needs and the workload. Times and distances are drawn relative to the
// lease (TTL): a pause from 0.1× to 5× the TTL matters to every algorithm, a
// pause of an hour to none.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fault_kind.h"
#include "scenario.h"

namespace locklab::explore {

// What may be generated: the lock under test and the faults to try.
struct Space {
  // The built-in algorithm the scenarios run (an adapter's --like, or
  // set-nx-px for an adapter that stands in for none): it decides the
  // cluster's shape and which steps the scenario loader accepts.
  std::string algorithm;
  // The steps the lock under test declares (Lock::steps(), or an adapter's
  // hello), of which only those the loader accepts for `algorithm` are used.
  std::vector<std::string> lock_steps;
  std::vector<FaultKind> fault_kinds;  // kinds to draw from; empty: every kind
  int max_faults = 3;                  // faults per scenario: 1 … max_faults
  std::string network;                 // every scenario's topology.network; empty: the default
  bool sentinel_failovers = true;      // a failover may be Sentinel's (else always manual)
};

// The default space of a built-in algorithm: its own steps, every fault kind.
Space space_for(const std::string& algorithm);

// The scenario number `index` of the sequence `seed` names: the same seed and
// index always give the same scenario, and every scenario is valid input to
// parse_scenario() (it has been through it). Its name is "explore-<seed>-<index>".
Scenario generate(const Space& space, uint64_t seed, uint64_t index);

// The seed of scenario `index` in sequence `seed` (also the run's seed).
uint64_t scenario_seed(uint64_t seed, uint64_t index);

// The steps a generated fault may trigger at: the workload's (the nesting
// ones only with `nesting`), plus the lock's own that the scenario loader
// accepts for space.algorithm.
std::vector<std::string> trigger_steps(const Space& space, bool nesting);

// Every step some scenario of `space` may trigger at: trigger_steps(), with
// the nesting ones when the algorithm re-enters its lock.
std::vector<std::string> coverable_steps(const Space& space);

// The fault kinds scenarios of `space` draw from (space.fault_kinds, or every kind).
std::vector<FaultKind> drawn_kinds(const Space& space);

// The fields `generate` draws for `kind` (the summary shows them): its
// row's explore_ranges (fault_kind.h).
std::span<const DrawnRange> drawn_ranges(FaultKind kind);

}  // namespace locklab::explore
