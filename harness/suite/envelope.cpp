#include "envelope.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <list>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "atomic_file.h"
#include "boundary_search.h"
#include "fault_kind.h"
#include "lock.h"
#include "matrix.h"
#include "results.h"
#include "reuse.h"
#include "version.h"
#include "violation_kind.h"

namespace locklab::suite {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int64_t kHeadStartMs = 100;  // c2 starts this late, and not before c1 holds the lock

int64_t lease_ms(double leases) {
  return std::llround(leases * double(kEnvelopeLeaseMs));
}

// Sizes on a grid fine enough for the precision and coarse enough to be a
// whole number of milliseconds (lease axes) or a short rate.
double on_grid(const EnvelopeAxisInfo& axis, double size) {
  const double grid = axis.unit == EnvelopeUnit::Lease ? 1.0 / double(kEnvelopeLeaseMs) : 0.001;
  return std::round(size / grid) * grid;
}

std::string size_text(const EnvelopeAxisInfo& axis, double size) {
  char text[32];
  std::snprintf(text, sizeof text, axis.unit == EnvelopeUnit::Lease ? "%.3f" : "%.3g", size);
  return text;
}

}  // namespace

Scenario envelope_scenario(EnvelopeAxis axis, double size) {
  const EnvelopeAxisInfo& row = info(axis);
  const bool baseline = std::abs(size - row.gentle) < 1e-9;
  const int64_t lease = kEnvelopeLeaseMs;
  const int64_t fault_ms = row.unit == EnvelopeUnit::Lease ? lease_ms(size) : 0;
  int64_t head_start = kHeadStartMs;
  int64_t work = lease_ms(kEnvelopeWork);
  int64_t wait = 3 * lease;
  json fault = json::object();
  switch (axis) {
    case EnvelopeAxis::Pause:
      fault = {{"kind", std::string(locklab::name(FaultKind::Pause))},
               {"when", {{"client", "c1"}, {"step", "before-write"}}},
               {"duration_ms", fault_ms}};
      wait += fault_ms;
      break;
    case EnvelopeAxis::ClientClockFast:
      // c2's wait runs on its fast clock: it must still be waiting when
      // the lease ends in real time.
      wait = std::llround(3 * double(lease) * std::max(1.0, size));
      fault = {{"kind", std::string(locklab::name(FaultKind::ClockRate))},
               {"at_ms", 0},
               {"clients", {"c2"}},
               {"rate", size}};
      break;
    case EnvelopeAxis::ClientClockSlow:
      wait += std::llround(double(work) / std::max(size, 0.01));
      fault = {{"kind", std::string(locklab::name(FaultKind::ClockRate))},
               {"at_ms", 0},
               {"clients", {"c1"}},
               {"rate", size}};
      break;
    case EnvelopeAxis::ServerClockJump:
      fault = {{"kind", std::string(locklab::name(FaultKind::ServerClockJump))},
               {"when", {{"client", "c1"}, {"step", "acquired"}}},
               {"nodes", {0}},
               {"delta_ms", fault_ms}};
      break;
    case EnvelopeAxis::Delay:
      // c2 must not reach the server before c1's first request does.
      head_start += 3 * fault_ms / 2;
      wait += 4 * fault_ms;
      fault = {{"kind", std::string(locklab::name(FaultKind::Delay))},
               {"at_ms", 0},
               {"clients", {"c1"}},
               {"delay_ms", fault_ms}};
      break;
    case EnvelopeAxis::Partition:
      work = lease_ms(kEnvelopePartitionWork);
      wait += work + fault_ms + 1000;  // a release lost in the dark waits a command timeout
      fault = {{"kind", std::string(locklab::name(FaultKind::Partition))},
               {"when", {{"client", "c1"}, {"step", "acquired"}}},
               {"clients", {"c1"}},
               {"duration_ms", fault_ms}};
      break;
  }
  const int64_t duration = head_start + wait + 2000;
  if (fault.contains("at_ms") && !fault.contains("duration_ms"))
    fault["duration_ms"] = duration - 1;
  json faults = json::array({{{"kind", std::string(locklab::name(FaultKind::Pause))},
                              {"at_ms", 0},
                              {"clients", {"c2"}},
                              {"duration_ms", head_start},
                              {"until", {{"client", "c1"}, {"step", "acquired"}}},
                              {"why", "c1 takes the lock first, however slow its first acquire"}}});
  if (!baseline) faults.push_back(fault);
  json document = {{"name", "envelope-" + std::string(row.name)},
                   {"description",
                    "Safety envelope, " + std::string(row.name) + " at " + size_text(row, size) +
                        (row.unit == EnvelopeUnit::Lease ? " leases: " : "×: ") +
                        std::string(row.fault) + (baseline ? " (here: none, the baseline)" : "") +
                        ". c1 holds the lock first, c2 waits for it (lock_impls/envelope_axis.h)."},
                   {"clients", 2},
                   {"workload",
                    {{"locks", {"L"}},
                     {"ttl_ms", lease},
                     {"wait_ms", wait},
                     {"work_ms", work},
                     {"think_ms", 0},
                     {"ops_per_client", 1},
                     {"fencing", true}}},
                   {"duration_ms", duration},
                   {"seed", 1},
                   {"algorithms", {"all"}},
                   {"faults", faults}};
  return parse_scenario(document, "envelope-" + std::string(row.name) + ".json");
}

namespace {

// One repeat of the search, for an overlap or for harm; appends its probes
// to `search`.
class Repeat {
 public:
  Repeat(const EnvelopeSearchSpec& spec, const PlayEnvelope& play, EnvelopeSearch& search,
         int repeat, int& run_counter, bool harm)
      : spec_(spec),
        axis_(spec.axis),
        play_(play),
        search_(search),
        repeat_(repeat),
        runs_(run_counter),
        harm_(harm) {}

  // The kinds found at `size` where it broke; empty when it did not.
  std::vector<std::string> kinds_at(double size) const {
    auto it = kinds_at_.find(size);
    return it == kinds_at_.end() ? std::vector<std::string>{} : it->second;
  }

  // Whether the last probe of `size` harmed the store by the k-of-n rule
  // (by the majority of its runs).
  bool harmed_at(double size) const {
    auto it = harmed_at_.find(size);
    return it != harmed_at_.end() && it->second;
  }

  EnvelopeRepeat run(double start) {
    SearchRange range{
        .gentle = axis_.gentle,
        .harsh = axis_.harsh,
        .precision = axis_.precision,
        .first_step = 4 * axis_.precision,
        .near_zone = 4 * axis_.precision,
        .confirm = true,
        .near_is_voted = spec_.confirm_runs > 1,
        .snap = [this](double size) { return on_grid(axis_, size); },
        .middle = [this](double safe,
                         double broken) { return on_grid(axis_, (broken + safe) / 2); }};
    Boundary found =
        find_boundary(range, start, [this](double size, bool near) { return probe(size, near); });
    // A stopped search says why it stopped.
    if (found.outcome == SearchOutcome::kError) return {stop_, {}, {}};
    return {found.outcome, found.breaking, found.last_safe};
  }

 private:
  // Whether `size` breaks the lock (an overlap, or harm): by k of n runs
  // `near` the boundary, by one run elsewhere. nullopt when a run could not
  // tell, which stops the search.
  std::optional<bool> probe(double size, bool near) {
    Majority vote(near ? spec_.confirm_runs : 1);
    EnvelopeProbe probe{.size = size, .repeat = repeat_, .harm = harm_};
    std::set<std::string> kinds;
    while (vote.open()) {
      EnvelopeRun run = play_(size, ++runs_);
      vote.add(harm_ ? run.harmed : run.broken);
      probe.runs = vote.runs();
      probe.runs_detail.push_back(run.detail);
      if (!run.not_applicable.empty() || !run.not_exercised.empty() || !run.error.empty()) {
        stop_ = !run.error.empty()            ? SearchOutcome::kError
                : !run.not_applicable.empty() ? SearchOutcome::kNotApplicable
                                              : SearchOutcome::kNotExercised;
        if (search_.error.empty())
          search_.error = !run.error.empty()            ? run.error
                          : !run.not_applicable.empty() ? run.not_applicable
                                                        : run.not_exercised;
        search_.probes.push_back(std::move(probe));
        return std::nullopt;
      }
      probe.broken += run.broken;
      probe.harmed += run.harmed;
      if (harm_ ? run.harmed : run.broken) kinds.insert(run.kinds.begin(), run.kinds.end());
    }
    probe.breaks = vote.breaks();
    if (probe.breaks) kinds_at_[size] = {kinds.begin(), kinds.end()};
    harmed_at_[size] = 2 * probe.harmed > probe.runs;
    search_.probes.push_back(std::move(probe));
    return search_.probes.back().breaks;
  }

  const EnvelopeSearchSpec& spec_;
  const EnvelopeAxisInfo& axis_;
  const PlayEnvelope& play_;
  EnvelopeSearch& search_;
  int repeat_;
  int& runs_;
  bool harm_;
  SearchOutcome stop_ = SearchOutcome::kError;
  std::map<double, std::vector<std::string>> kinds_at_;  // by size, where it broke
  std::map<double, bool> harmed_at_;                     // by size, its last probe's majority
};

bool stopped(SearchOutcome outcome) {
  return outcome == SearchOutcome::kError || outcome == SearchOutcome::kNotApplicable ||
         outcome == SearchOutcome::kNotExercised;
}

// One repeat's bounds: where the holds first overlapped, then where the
// store was first harmed (envelope.h: the same bound when the runs that
// decided the overlap harmed it too, else a search for harm from there).
EnvelopeRepeat repeat_both(const EnvelopeSearchSpec& spec, const PlayEnvelope& play,
                           EnvelopeSearch& search, int r, int& runs, std::set<std::string>& kinds) {
  // Later repeats start where the first found the bound: their runs go to
  // the boundary, not to the way there.
  double start = spec.start.value_or(spec.axis.harsh);
  if (r > 1 && search.repeats.front().breaking) start = *search.repeats.front().breaking;
  Repeat overlap(spec, play, search, r, runs, false);
  EnvelopeRepeat answer = overlap.run(start);
  if (answer.breaking)
    for (const auto& kind : overlap.kinds_at(*answer.breaking)) kinds.insert(kind);
  if (stopped(answer.outcome)) {
    answer.harm_outcome = answer.outcome;
    return answer;
  }
  if (answer.outcome == SearchOutcome::kNeverBreaks ||
      (answer.breaking && overlap.harmed_at(*answer.breaking))) {
    answer.harm_outcome = answer.outcome;
    answer.harm_breaking = answer.breaking;
    answer.harm_last_safe = answer.last_safe;
    return answer;
  }
  // Later repeats start where the first found harm, as for the overlap: at
  // its bound, or at the harsh end when it found none (one run says never).
  double harm_start = answer.breaking.value_or(spec.axis.gentle);
  if (r > 1 && search.repeats.front().harm_breaking)
    harm_start = spec.axis.harsh > spec.axis.gentle
                     ? std::max(harm_start, *search.repeats.front().harm_breaking)
                     : std::min(harm_start, *search.repeats.front().harm_breaking);
  if (r > 1 && search.repeats.front().harm_outcome == SearchOutcome::kNeverBreaks)
    harm_start = spec.axis.harsh;
  Repeat harm(spec, play, search, r, runs, true);
  const EnvelopeRepeat harmed = harm.run(harm_start);
  answer.harm_outcome = harmed.outcome;
  answer.harm_breaking = harmed.breaking;
  answer.harm_last_safe = harmed.last_safe;
  // A search for harm that stopped (a run failed) stops the whole search.
  if (stopped(harmed.outcome)) answer.outcome = harmed.outcome;
  return answer;
}

// The repeats' answer: never when most never broke, without the fault when
// most broke there, else the median of their bounds (a repeat that never
// broke standing for the harsh end) with the least and largest.
void summarize(const EnvelopeAxisInfo& axis,
               const std::vector<std::pair<SearchOutcome, std::optional<double>>>& repeats,
               SearchOutcome& outcome, std::optional<double>& median, std::optional<double>& min,
               std::optional<double>& max) {
  std::vector<double> bounds;
  int never = 0, without_fault = 0;
  for (const auto& [repeat_outcome, breaking] : repeats) {
    if (repeat_outcome == SearchOutcome::kNeverBreaks) ++never;
    if (repeat_outcome == SearchOutcome::kBreaksWithoutFault) ++without_fault;
    if (breaking) bounds.push_back(*breaking);
  }
  const int count = int(repeats.size());
  if (never * 2 > count) {
    outcome = SearchOutcome::kNeverBreaks;
    return;
  }
  outcome = without_fault * 2 > count ? SearchOutcome::kBreaksWithoutFault : SearchOutcome::kBreaks;
  for (int i = 0; i < never; ++i) bounds.push_back(axis.harsh);
  std::sort(bounds.begin(), bounds.end());
  if (bounds.empty()) return;
  median = bounds[bounds.size() / 2];
  if (bounds.size() % 2 == 0) median = on_grid(axis, (bounds[bounds.size() / 2 - 1] + *median) / 2);
  min = bounds.front();
  max = bounds.back();
}

}  // namespace

EnvelopeSearch search_envelope(const EnvelopeSearchSpec& spec, const PlayEnvelope& play) {
  EnvelopeSearch search;
  int runs = 0;
  std::set<std::string> kinds;
  {
    // The baseline: the story as told with no fault at all.
    EnvelopeRun run = play(spec.axis.gentle, ++runs);
    EnvelopeProbe probe{.size = spec.axis.gentle,
                        .repeat = 0,
                        .runs = 1,
                        .broken = run.broken,
                        .harmed = run.harmed};
    probe.breaks = run.broken;
    probe.runs_detail.push_back(run.detail);
    search.probes.push_back(std::move(probe));
    std::optional<SearchOutcome> stop;
    if (!run.error.empty()) {
      stop = SearchOutcome::kError;
      search.error = run.error;
    } else if (!run.not_applicable.empty()) {
      stop = SearchOutcome::kNotApplicable;
      search.error = run.not_applicable;
    } else if (!run.not_exercised.empty()) {
      stop = SearchOutcome::kNotExercised;
      search.error = run.not_exercised;
    } else if (!run.broken && run.holds >= 0 && run.holds < 2) {
      stop = SearchOutcome::kNotExercised;
      search.error = "with no fault the lock was held " + std::to_string(run.holds) +
                     " time(s), but the story needs c1 and then c2 to hold it";
    }
    if (stop) {
      search.outcome = search.harm_outcome = *stop;
      search.runs = runs;
      return search;
    }
  }
  for (int r = 1; r <= std::max(1, spec.repeats); ++r) {
    search.repeats.push_back(repeat_both(spec, play, search, r, runs, kinds));
    if (stopped(search.repeats.back().outcome)) {
      search.outcome = search.harm_outcome = search.repeats.back().outcome;
      search.runs = runs;
      return search;
    }
  }
  search.runs = runs;
  search.kinds_at_break.assign(kinds.begin(), kinds.end());
  std::vector<std::pair<SearchOutcome, std::optional<double>>> overlaps, harms;
  for (const auto& repeat : search.repeats) {
    overlaps.emplace_back(repeat.outcome, repeat.breaking);
    harms.emplace_back(repeat.harm_outcome, repeat.harm_breaking);
  }
  summarize(spec.axis, overlaps, search.outcome, search.median, search.min, search.max);
  summarize(spec.axis, harms, search.harm_outcome, search.harm_median, search.harm_min,
            search.harm_max);
  return search;
}

double envelope_tolerance(const EnvelopeAxisInfo& axis, std::optional<double> bound,
                          std::optional<int64_t> retry_ms) {
  // How late c2 may take a lock that came free: its retry interval, plus
  // some scheduling.
  const double late = double(std::max<int64_t>(retry_ms.value_or(25), 25) + 5);
  const double lease = double(kEnvelopeLeaseMs), work = kEnvelopeWork * lease;
  switch (axis.axis) {
    case EnvelopeAxis::ClientClockSlow: {
      // c1's work (real: work / rate) must outlast the lease it has (real:
      // work / bound) and c2's lateness.
      if (!bound || *bound <= 0) return 0;
      return *bound - work / (work / *bound + late);
    }
    case EnvelopeAxis::ClientClockFast: {
      // c2 takes over lease·bound/rate after the acquire (plus its
      // lateness) and must come before c1's work ends.
      if (!bound || late >= work) return std::abs(axis.harsh - axis.gentle);
      return *bound * work / (work - late) - *bound;
    }
    case EnvelopeAxis::Pause:
    case EnvelopeAxis::ServerClockJump:
    case EnvelopeAxis::Delay:
    case EnvelopeAxis::Partition:
      break;
  }
  return late / lease;
}

bool agrees(const EnvelopeAxisInfo& axis, const EnvelopePrediction& prediction,
            const EnvelopeSearch& search, double tolerance) {
  if (!prediction.bound) return search.outcome == SearchOutcome::kNeverBreaks;
  if (*prediction.bound == axis.gentle && search.outcome == SearchOutcome::kBreaksWithoutFault)
    return true;
  // A lock predicted to break without the fault may also break in some
  // repeats only at a small fault (a retry that came too late without it):
  // held to the same spread and tolerance as any other bound.
  if (search.outcome != SearchOutcome::kBreaks || !search.min || !search.max) return false;
  // The search knows the bound only to its precision.
  tolerance += axis.precision + 1e-9;
  return *prediction.bound >= *search.min - tolerance &&
         *prediction.bound <= *search.max + tolerance;
}

EnvelopePredictions predictions_for(const LockUnderTest& lock) {
  const std::string algorithm = lock.story_algorithm();
  if (algorithm.empty()) return {};
  const AlgorithmInfo* info = find_algorithm(algorithm);
  return info ? info->envelope : EnvelopePredictions{};
}

namespace {

std::string now_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

json optional_number(const std::optional<double>& value) {
  return value ? json(*value) : json();
}

// Plays the story for one lock on one axis, its runs under `dir`.
EnvelopeRun play(const CellRunner& run_cell, const LockUnderTest& lock,
                 const EnvelopeAxisInfo& axis, double size, int run_number, uint64_t seed,
                 const fs::path& out_dir, const fs::path& dir) {
  EnvelopeRun out;
  const fs::path run_dir = dir / size_text(axis, size) / ("run-" + std::to_string(run_number));
  RunResult run;
  try {
    run = run_cell(envelope_scenario(axis.axis, size), lock.name, seed, run_dir);
  } catch (const std::exception& e) {
    run.algorithm = lock.name;
    run.error = e.what();
  }
  if (run.not_applicable) {
    out.not_applicable = *run.not_applicable;
  } else if (run.error) {
    out.error = *run.error;
  } else if (!run.exercised) {
    out.not_exercised = never_fired(run);
  }
  out.kinds = found_kinds(run);
  if (run.stats) out.holds = int(run.stats->acquires_ok);
  out.timing = run.timing.value_or(RunTiming{});
  const bool measured =
      out.error.empty() && out.not_applicable.empty() && out.not_exercised.empty();
  out.broken = measured && std::count(out.kinds.begin(), out.kinds.end(),
                                      locklab::name(ViolationKind::MutualExclusion)) > 0;
  out.harmed = measured && run.check && run.check->harmful();
  const std::string history = run.history.empty() ? lock.name + "/history.jsonl" : run.history;
  out.detail = {{"seed", seed},
                {"broken", out.broken},
                {"harmed", out.harmed},
                {"kinds", out.kinds},
                {"history", fs::relative(run_dir / history, out_dir).string()},
                {"error", !out.error.empty()           ? json(out.error)
                          : !out.not_exercised.empty() ? json(out.not_exercised)
                                                       : json()}};
  return out;
}

// A disagreement, or a story the run could not tell, that someone looked
// into and explained (libraries.json's envelope_gaps): the cell's "gap".
void explain_gap(json& cell, const LockUnderTest& lock, const EnvelopeAxisInfo& axis) {
  cell["gap"] = json();
  if (cell["agrees"] == false ||
      cell["outcome"] == json(search_outcome_name(SearchOutcome::kNotExercised)))
    if (auto gap = lock.envelope_gaps.find(std::string(axis.name)); gap != lock.envelope_gaps.end())
      cell["gap"] = gap->second;
}

json cell_json(const LockUnderTest& lock, const EnvelopeAxisInfo& axis,
               const EnvelopeSearch& search, const EnvelopePredictions& predictions,
               uint64_t seed_base, double seconds, const RunTiming& timing) {
  json cell = {{"lock", lock.name},
               {"axis", axis.name},
               {"seed_base", seed_base},
               {"outcome", search_outcome_name(search.outcome)},
               {"median", optional_number(search.median)},
               {"min", optional_number(search.min)},
               {"max", optional_number(search.max)},
               {"harm",
                {{"outcome", search_outcome_name(search.harm_outcome)},
                 {"median", optional_number(search.harm_median)},
                 {"min", optional_number(search.harm_min)},
                 {"max", optional_number(search.harm_max)}}},
               {"kinds_at_break", search.kinds_at_break},
               {"runs", search.runs},
               {"seconds", std::round(seconds * 10) / 10},
               {"timing", timing_json(timing)},
               {"error", search.error.empty() ? json() : json(search.error)}};
  json repeats = json::array();
  for (const auto& r : search.repeats)
    repeats.push_back({{"outcome", search_outcome_name(r.outcome)},
                       {"breaking", optional_number(r.breaking)},
                       {"last_safe", optional_number(r.last_safe)},
                       {"harm_outcome", search_outcome_name(r.harm_outcome)},
                       {"harm_breaking", optional_number(r.harm_breaking)},
                       {"harm_last_safe", optional_number(r.harm_last_safe)}});
  cell["repeats"] = repeats;
  const EnvelopePrediction* prediction = find_prediction(predictions, axis.axis);
  const double tolerance =
      envelope_tolerance(axis, prediction ? prediction->bound : std::nullopt, lock.retry_ms);
  cell["tolerance"] = tolerance;
  cell["prediction"] = json();
  cell["agrees"] = json();
  cell["gap"] = json();
  if (prediction) {
    cell["prediction"] = {{"bound", optional_number(prediction->bound)},
                          {"why", prediction->why},
                          {"from", lock.adapter ? "like " + lock.story_algorithm() : lock.name}};
    if (search.outcome != SearchOutcome::kError &&
        search.outcome != SearchOutcome::kNotApplicable &&
        search.outcome != SearchOutcome::kNotExercised)
      cell["agrees"] = agrees(axis, *prediction, search, tolerance);
  }
  explain_gap(cell, lock, axis);
  json probes = json::array();
  for (const auto& p : search.probes)
    probes.push_back({{"size", p.size},
                      {"repeat", p.repeat},
                      {"search", p.harm ? "harm" : "overlap"},
                      {"runs", p.runs},
                      {"broken", p.broken},
                      {"harmed", p.harmed},
                      {"breaks", p.breaks},
                      {"details", p.runs_detail}});
  cell["probes"] = probes;
  return cell;
}

std::string describe(const json& cell, const EnvelopeAxisInfo& axis) {
  const std::string outcome = cell.value("outcome", "");
  if (outcome != search_outcome_name(SearchOutcome::kBreaks) &&
      outcome != search_outcome_name(SearchOutcome::kNeverBreaks) &&
      outcome != search_outcome_name(SearchOutcome::kBreaksWithoutFault))
    return outcome + ": " + cell.value("error", json("")).dump();
  auto text = [&](const json& v) { return v.is_number() ? size_text(axis, v.get<double>()) : "?"; };
  const std::string unit = axis.unit == EnvelopeUnit::Lease ? " leases" : "×";
  auto bound = [&](const json& b) -> std::string {
    const std::string said = b.value("outcome", "");
    if (said == search_outcome_name(SearchOutcome::kBreaks))
      return "at " + text(b["median"]) + unit + " (" + text(b["min"]) + ".." + text(b["max"]) + ")";
    if (said == search_outcome_name(SearchOutcome::kNeverBreaks))
      return "never up to " + size_text(axis, axis.harsh) + unit;
    if (said == search_outcome_name(SearchOutcome::kBreaksWithoutFault)) return "without the fault";
    return said;
  };
  if (envelope_harm_is_overlap(cell)) return "breaks " + bound(cell) + " (overlap and harm)";
  return "harms " + bound(cell["harm"]) + "; overlaps " + bound(cell);
}

// The document's "axes": each axis searched, with its scale and fault.
json axes_json(const std::vector<EnvelopeAxis>& axes) {
  json out = json::array();
  for (EnvelopeAxis a : axes) {
    const EnvelopeAxisInfo& row = info(a);
    out.push_back({{"axis", row.name},
                   {"unit", row.unit == EnvelopeUnit::Lease ? "lease" : "rate"},
                   {"gentle", row.gentle},
                   {"harsh", row.harsh},
                   {"precision", row.precision},
                   {"fault", row.fault}});
  }
  return out;
}

// The document's "locks": each lock measured, as the comparison names it.
json locks_json(const std::vector<LockUnderTest>& locks) {
  json out = json::array();
  for (const auto& lock : locks)
    out.push_back({{"name", lock.name},
                   {"family", lock.family},
                   {"like", lock.like ? json(*lock.like) : json()},
                   {"version", lock.version.empty() ? json() : json(lock.version)},
                   {"adapter", lock.adapter ? json(lock.adapter->command) : json()}});
  return out;
}

// The document's "totals": the cells counted by outcome and by agreement
// with their prediction.
json totals_of(const std::vector<json>& cells) {
  int agree = 0, disagree = 0, explained = 0, unpredicted = 0, not_applicable = 0,
      not_exercised = 0, errors = 0;
  for (const auto& cell : cells) {
    if (cell["outcome"] == json(search_outcome_name(SearchOutcome::kError))) ++errors;
    if (cell["outcome"] == json(search_outcome_name(SearchOutcome::kNotApplicable)))
      ++not_applicable;
    if (cell["outcome"] == json(search_outcome_name(SearchOutcome::kNotExercised))) ++not_exercised;
    if (cell["agrees"] == true) ++agree;
    if (cell["agrees"] == false) ++disagree;
    if (cell["gap"].is_string()) ++explained;
    if (cell["prediction"].is_null()) ++unpredicted;
  }
  return {{"cells", cells.size()},          {"agree", agree},
          {"disagree", disagree},           {"explained", explained},
          {"unpredicted", unpredicted},     {"not_applicable", not_applicable},
          {"not_exercised", not_exercised}, {"errors", errors}};
}

// 2 when a cell failed, 1 when more cells disagree (or were not exercised)
// than libraries.json explains, else 0.
int exit_status_of(const json& totals) {
  const int errors = totals["errors"], disagree = totals["disagree"],
            not_exercised = totals["not_exercised"], explained = totals["explained"];
  return errors > 0 ? 2 : disagree + not_exercised > explained ? 1 : 0;
}

// The document's "envelope": the story every search plays.
json story_json(const EnvelopeOptions& options) {
  return {{"lease_ms", kEnvelopeLeaseMs},
          {"work", kEnvelopeWork},
          {"partition_work", kEnvelopePartitionWork},
          {"repeats", options.repeats},
          {"confirm_runs", options.confirm_runs},
          {"seed", options.seed},
          {"adapters_kept", options.adapters != nullptr}};
}

// Whether an earlier document's entry exists and is `now`.
bool same_entry(const json* earlier, const json& now) {
  return earlier && *earlier == now;
}

// The searches of an earlier envelope (options.reuse) this one may carry
// over, by lock and axis: made by the same lab build against the same Redis
// version, of the same story, and not failed. Whether a search's lock, axis
// scale and seeds are the same is asked search by search (carry()).
class CarriedSearches {
 public:
  explicit CarriedSearches(const EnvelopeOptions& options) {
    if (options.reuse.empty()) return;
    from_ = options.reuse;
    const std::optional<json> earlier = earlier_document(from_ / "envelope.json");
    const std::string build = lab_build();
    if (!earlier || build.empty() || earlier->value("lab_build", "") != build ||
        earlier->value("redis_version", "") != options.redis_version ||
        earlier->value("envelope", json()) != story_json(options))
      return;
    earlier_ = *earlier;
  }

  // The earlier cell of `lock` on `axis` when it was searched as this search
  // would be (the same lock entry, axis entry, seed base and tolerance: a
  // library's retry interval), with its gap explained anew (libraries.json
  // may explain it now) and its run directories copied into `out_dir`.
  std::optional<json> carry(const LockUnderTest& lock, const EnvelopeAxisInfo& axis,
                            uint64_t seed_base, const fs::path& out_dir) {
    // A lock told it cannot take the story costs no run: it is never carried.
    if (earlier_.is_null() || !lock.envelope_not_applicable.empty()) return std::nullopt;
    const EnvelopePredictions predictions = predictions_for(lock);
    const EnvelopePrediction* prediction = find_prediction(predictions, axis.axis);
    const double tolerance =
        envelope_tolerance(axis, prediction ? prediction->bound : std::nullopt, lock.retry_ms);
    json cell;
    for (const json& c : earlier_.value("cells", json::array()))
      if (c.value("lock", "") == lock.name && c.value("axis", "") == axis.name) cell = c;
    if (cell.is_null() || cell.value("seed_base", json()) != json(seed_base) ||
        cell["outcome"] == json(search_outcome_name(SearchOutcome::kError)) ||
        !same_entry(entry_named(earlier_, "locks", "name", lock.name), locks_json({lock})[0]) ||
        !same_entry(entry_named(earlier_, "axes", "axis", axis.name), axes_json({axis.axis})[0]) ||
        cell.value("tolerance", json()) != json(tolerance))
      return std::nullopt;
    explain_gap(cell, lock, axis);
    if (!cell.contains("carried_from")) cell["carried_from"] = from_.string();
    const fs::path relative = fs::path(lock.name) / std::string(axis.name);
    std::error_code same;
    if (fs::exists(from_ / relative) &&
        !fs::equivalent(from_ / relative, out_dir / relative, same)) {
      fs::create_directories(out_dir / relative);
      fs::copy(from_ / relative, out_dir / relative,
               fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    }
    ++carried_;
    return cell;
  }

  // {from, searches_carried}, or null without --reuse.
  json summary() const {
    if (from_.empty()) return json();
    return {{"from", from_.string()}, {"searches_carried", carried_.load()}};
  }

 private:
  fs::path from_;
  json earlier_;
  std::atomic<size_t> carried_{0};
};

// The program a lock's adapter command starts ("java/run", "node", …); empty
// for a built-in, which starts none.
std::string runtime_of(const LockUnderTest& lock) {
  if (!lock.adapter) return "";
  const std::string& command = lock.adapter->command;
  const size_t start = command.find_first_not_of(' ');
  if (start == std::string::npos) return "";
  return command.substr(start, command.find(' ', start) - start);
}

// Hands out the searches in their order, but never more of one runtime at
// once than `per_runtime`: a search waits its turn only while every search
// left is of a runtime at its limit. Searches of built-ins have no limit.
class SearchQueue {
 public:
  SearchQueue(std::vector<std::string> runtimes, size_t per_runtime)
      : runtimes_(std::move(runtimes)), per_runtime_(per_runtime) {
    for (size_t t = 0; t < runtimes_.size(); ++t) waiting_.push_back(t);
  }

  // The next search to make; nullopt once none is left.
  std::optional<size_t> take() {
    std::unique_lock lock(mu_);
    for (;;) {
      if (waiting_.empty()) return std::nullopt;
      for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
        const std::string& runtime = runtimes_[*it];
        if (runtime.empty() || running_[runtime] < per_runtime_) {
          const size_t t = *it;
          waiting_.erase(it);
          ++running_[runtime];
          return t;
        }
      }
      room_.wait(lock);
    }
  }

  // Search `t`, taken, is over: its runtime has room for another.
  void done(size_t t) {
    {
      std::lock_guard lock(mu_);
      --running_[runtimes_[t]];
    }
    room_.notify_all();
  }

 private:
  const std::vector<std::string> runtimes_;
  const size_t per_runtime_;
  std::mutex mu_;
  std::condition_variable room_;
  std::list<size_t> waiting_;
  std::map<std::string, size_t> running_;
};

// envelope.json but for "reuse": the searches' `cells` along `axes`, begun
// at `started_at` and `seconds` long.
json envelope_document(const EnvelopeOptions& options, const std::vector<EnvelopeAxis>& axes,
                       std::vector<json> cells, const std::string& started_at, double seconds) {
  const json totals = totals_of(cells);
  const AdapterPool::Counts adapters =
      options.adapters ? options.adapters->counts() : AdapterPool::Counts{};
  return {{"envelope", story_json(options)},
          {"locklab_version", kVersion},
          {"lab_build", lab_build()},
          {"redis_version", options.redis_version},
          {"invocation", options.invocation},
          {"started_at", started_at},
          {"seconds", seconds},
          {"axes", axes_json(axes)},
          {"locks", locks_json(options.locks)},
          {"cells", std::move(cells)},
          {"totals", totals},
          {"exit_status", exit_status_of(totals)},
          {"adapters",
           {{"kept", options.adapters != nullptr},
            {"started", adapters.started},
            {"reused", adapters.reused}}}};
}

// How many searches of each lock are left. Once a lock's last one is done,
// its idle adapters are stopped: no later search takes them, and a
// comparison's idle JVMs would otherwise hold gigabytes to its end.
class SearchesLeft {
 public:
  SearchesLeft(const EnvelopeOptions& options, std::vector<size_t> lock_of_search)
      : options_(options), lock_of_search_(std::move(lock_of_search)), left_(options.locks.size()) {
    for (size_t lock : lock_of_search_) ++left_[lock];
  }

  // Search `t` is over.
  void done(size_t t) {
    const size_t l = lock_of_search_[t];
    {
      std::lock_guard lock(mu_);
      if (--left_[l] > 0) return;
    }
    const LockUnderTest& lock = options_.locks[l];
    if (options_.adapters && lock.adapter) options_.adapters->forget(lock.adapter->command);
  }

 private:
  const EnvelopeOptions& options_;
  const std::vector<size_t> lock_of_search_;
  std::mutex mu_;
  std::vector<size_t> left_;
};

}  // namespace

json run_envelope(const EnvelopeOptions& options, const CellRunner& run_cell) {
  std::vector<EnvelopeAxis> axes = options.axes;
  if (axes.empty())
    for (const auto& row : envelope_axes()) axes.push_back(row.axis);
  struct Task {
    size_t lock, axis;
  };
  std::vector<Task> tasks;
  for (size_t l = 0; l < options.locks.size(); ++l)
    for (size_t a = 0; a < axes.size(); ++a) tasks.push_back({l, a});

  const auto started = std::chrono::steady_clock::now();
  const std::string started_at = now_utc();
  CarriedSearches carried(options);
  std::vector<json> cells(tasks.size());
  std::vector<std::string> runtimes;
  std::vector<size_t> lock_of_search;
  for (const Task& task : tasks) {
    runtimes.push_back(runtime_of(options.locks[task.lock]));
    lock_of_search.push_back(task.lock);
  }
  SearchQueue queue(std::move(runtimes), size_t(std::max(options.jobs_per_runtime, 1)));
  SearchesLeft left(options, std::move(lock_of_search));
  std::mutex progress_mutex;
  auto worker = [&] {
    for (std::optional<size_t> taken; (taken = queue.take());) {
      const size_t t = *taken;
      struct Done {
        SearchQueue& queue;
        SearchesLeft& left;
        size_t t;
        ~Done() {
          left.done(t);
          queue.done(t);
        }
      } done{queue, left, t};
      const LockUnderTest& lock = options.locks[tasks[t].lock];
      const EnvelopeAxisInfo& axis = info(axes[tasks[t].axis]);
      const EnvelopePredictions predictions = predictions_for(lock);
      const EnvelopePrediction* prediction = find_prediction(predictions, axis.axis);
      EnvelopeSearchSpec spec{.axis = axis,
                              .start = prediction ? prediction->bound : std::nullopt,
                              .repeats = options.repeats,
                              .confirm_runs = options.confirm_runs};
      const fs::path dir = options.out_dir / lock.name / std::string(axis.name);
      // Each search draws its run seeds from the base seed, the lock and the axis.
      const uint64_t base = options.seed * 1000003u + t * 7919u;
      if (std::optional<json> cell = carried.carry(lock, axis, base, options.out_dir)) {
        cells[t] = std::move(*cell);
        std::lock_guard guard(progress_mutex);
        *options.progress << lock.name << " " << axis.name << ": " << describe(cells[t], axis)
                          << " [↻ carried from " << cells[t]["carried_from"].get<std::string>()
                          << "]\n"
                          << std::flush;
        continue;
      }
      const auto search_started = std::chrono::steady_clock::now();
      EnvelopeSearch search;
      RunTiming timing;  // its runs', summed
      if (!lock.envelope_not_applicable.empty()) {
        search.outcome = SearchOutcome::kNotApplicable;
        search.error = lock.envelope_not_applicable;
      } else {
        search = search_envelope(spec, [&](double size, int run) {
          EnvelopeRun played =
              play(run_cell, lock, axis, size, run, run_seed(base, run), options.out_dir, dir);
          timing.add(played.timing);
          return played;
        });
      }
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - search_started).count();
      cells[t] = cell_json(lock, axis, search, predictions, base, seconds, timing);
      std::lock_guard guard(progress_mutex);
      *options.progress << lock.name << " " << axis.name << ": " << describe(cells[t], axis) << " ["
                        << search.runs << " runs, " << std::lround(seconds) << " s]\n"
                        << std::flush;
    }
  };
  std::vector<std::thread> workers;
  const int jobs = std::clamp(options.jobs, 1, int(std::max<size_t>(tasks.size(), 1)));
  for (int j = 0; j < jobs; ++j) workers.emplace_back(worker);
  for (auto& w : workers) w.join();

  const double seconds =
      std::round(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  json document = envelope_document(options, axes, std::move(cells), started_at, seconds);
  if (json reuse = carried.summary(); !reuse.is_null()) document["reuse"] = reuse;
  write_file_atomically(options.out_dir / "envelope.json", document.dump(2) + "\n");
  return document;
}

std::string envelope_table(const json& envelope) {
  std::string out;
  for (const auto& cell : envelope.value("cells", json::array())) {
    const auto axis = envelope_axis_named(cell.value("axis", ""));
    if (!axis) continue;
    const EnvelopeAxisInfo& row = info(*axis);
    std::string predicted = "no prediction";
    if (cell["prediction"].is_object()) {
      const json& bound = cell["prediction"]["bound"];
      predicted =
          bound.is_null() ? "predicted never" : "predicted " + size_text(row, bound.get<double>());
    }
    const std::string verdict = cell["agrees"] == true ? "agrees"
                                : cell["agrees"] == false
                                    ? (cell["gap"].is_string() ? "differs, explained" : "DISAGREES")
                                    : "";
    out += "  " + cell.value("lock", "") + " " + std::string(row.name) + ": " +
           describe(cell, row) + "; " + predicted + (verdict.empty() ? "" : ", " + verdict) +
           (cell.contains("carried_from") ? " (↻ carried)" : "") + "\n";
  }
  const json totals = envelope.value("totals", json::object());
  out += std::to_string(totals.value("cells", 0)) +
         " searches: " + std::to_string(totals.value("agree", 0)) +
         " agree with their prediction, " + std::to_string(totals.value("disagree", 0)) +
         " disagree, " + std::to_string(totals.value("not_exercised", 0)) + " could not be told (" +
         std::to_string(totals.value("explained", 0)) + " of these explained), " +
         std::to_string(totals.value("not_applicable", 0)) + " not applicable, " +
         std::to_string(totals.value("errors", 0)) + " failed (" +
         envelope.value("seconds", json(0)).dump() + " s)\n";
  return out;
}

}  // namespace locklab::suite
