// The nemesis's schedule: which of a run's faults fire at which time, or at
// which client step. Pure bookkeeping — no clocks, servers or threads — so it
// is tested in milliseconds, and generated schedules are made of the same
// values.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fault.h"

namespace locklab {

class Schedule {
 public:
  // The schedule of `faults` for a run of `algorithm` (see
  // Fault::applies_to): faults that do not apply never fire. Fault indices
  // below are positions in `faults`.
  Schedule(std::vector<Fault> faults, std::string_view algorithm);

  const std::vector<Fault>& faults() const { return faults_; }
  const Fault& fault(size_t index) const { return faults_.at(index); }

  // Whether fault `index` belongs to this run.
  bool applies(size_t index) const { return applies_.at(index); }

  // The applicable faults triggered by time, as (at_ms, index), earliest
  // first (ties in scenario order). Those at 0 are in force before any
  // client takes its first step.
  std::vector<std::pair<int64_t, size_t>> timed() const;

  // Counts one arrival of `client` at `step` and returns the applicable
  // faults this very arrival fires (their `when` names the client, the step
  // and this count as `nth`), in scenario order.
  std::vector<size_t> on_step(const std::string& client, std::string_view step);

  // The applicable faults whose `until` is the arrival on_step() has just
  // counted (the client, the step and this count as `nth`), in scenario order.
  std::vector<size_t> until_reached(const std::string& client, std::string_view step) const;

  // Whether fault `index` has an `until` that has been reached already.
  bool until_passed(size_t index) const;

  // The applicable faults that wait for fault `index` to end
  // (`until_fault_ends`), in scenario order.
  std::vector<size_t> waiting_for_end_of(size_t index) const;

  // How often `client` has reached `step` so far.
  int step_count(const std::string& client, std::string_view step) const;

  // Whether an applicable fault is triggered, or waits to end, at `client`
  // reaching `step`.
  // Arrivals anywhere else can never fire one, so a caller may skip them;
  // reads only what the constructor set, so any thread may ask at any time.
  bool watches(std::string_view client, std::string_view step) const;

 private:
  // The applicable faults whose `trigger` (when or until) is `client`'s
  // `count`th arrival at `step`, in scenario order.
  std::vector<size_t> named_by(std::optional<StepTrigger> Fault::*trigger,
                               const std::string& client, std::string_view step, int count) const;

  std::vector<Fault> faults_;
  std::vector<bool> applies_;
  std::vector<std::pair<std::string, std::string>> watched_;  // (client, step)
  std::map<std::pair<std::string, std::string>, int, std::less<>> step_counts_;
};

}  // namespace locklab
