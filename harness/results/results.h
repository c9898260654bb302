// results.json, typed: the document `locklab run` writes for one scenario
// (one entry per run of an algorithm), which is also what each scenario
// directory of a suite holds. FORMAT.md beside this file specifies every
// field. Documents are written with to_json() and read with from_json(),
// which is tolerant: only runs[].algorithm is required, fields it does not
// know are ignored (newer files), missing ones stay absent (older files), and
// a field of the wrong type is an error naming the file and the field.
//
// The outcome of a run (met, unmet, not-exercised, not-applicable,
// safer-than, error) is decided here, once, by decide_outcome().
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "checkers.h"
#include "expectation.h"
#include "incident_kind.h"
#include "outcome.h"

namespace locklab {

// What became of one of the scenario's faults in one run.
struct FaultFiring {
  size_t index = 0;                   // position in the scenario's "faults"
  std::string kind;                   // the fault kind's name ("pause", ...)
  std::string trigger;                // "at 1200 ms" or "c1 at step acquired (1st time)"
  bool fired = false;                 // it took effect during the run
  std::optional<double> fired_at_ms;  // ms since the run started
  std::optional<double>
      ended_at_ms;     // when it was undone or healed; absent: instant, or never ended
  std::string one_of;  // the scenario's name for its alternatives ("" = it must fire)

  bool operator==(const FaultFiring&) const = default;
};

// Where a run's wall time went, in seconds: starting its servers (and
// proxies), starting its clients (adapter processes: start-up, hello,
// connect), the story itself, writing and checking the history, and
// stopping everything.
struct RunTiming {
  double servers = 0, clients = 0, story = 0, check = 0, teardown = 0;

  // Adds `other`'s phases to these: a cell's or a search's runs, summed.
  void add(const RunTiming& other);
  bool operator==(const RunTiming&) const = default;
};

// {"servers", "clients", "story", "check", "teardown"}: a run's timing, or
// its sum over a cell's or an envelope search's runs.
nlohmann::json timing_json(const RunTiming& timing);

// What a library left behind in one run that its caller never saw
// (vocabulary/incident_kind.h): not a violation, but what an application on
// its runtime's defaults would have crashed on or never noticed.
struct Incident {
  std::string client;  // "c1"
  IncidentKind kind = IncidentKind::kUnhandledRejection;
  std::string message;  // the library's own words, one line
  double at_ms = 0;     // when it happened, ms since the run started (the adapter's estimate)

  bool operator==(const Incident&) const = default;
};

// "c1: unhandled-rejection at 2.41 s (Connection is closed.); an application
// on Node's defaults … would have crashed here"
std::string incident_text(const Incident& incident);

// Whether a run with `outcome` passes: met, safer-than and not-applicable
// do; unmet, not-exercised and error fail.
bool passes(RunOutcome outcome);

// The outcome of a cell (the runs of one scenario × algorithm) from its
// runs' outcomes: error if some run is one, else unmet if some run is, else
// not-exercised if some run is, else not-applicable if every run is, else
// safer-than if every run that was run is, else met. nullopt for no runs.
std::optional<RunOutcome> cell_outcome(const std::vector<RunOutcome>& runs);

// What the checkers measured in a run's history (harness/checkers/checkers.h).
struct Check {
  Verdict verdict = Verdict::Safe;  // Safe or Violated
  // Every violation kind (0 when none), "fencing-saved", "events", "holds", "writes-accepted".
  std::map<std::string, int64_t> counts;
  std::map<std::string, std::map<std::string, int64_t>> per_lock;  // lock -> the same counts
  std::vector<checkers::Violation> violations;  // listed (capped per kind), by first event
  // Stretches in which the lock could not be taken while a fault was in force
  // (checkers.h, liveness): what the faults cost, not violations.
  std::vector<checkers::Unavailability> unavailable;
  // What the store suffered, and the overlaps by class (checkers.h, "harm").
  // Absent in files from before it.
  std::optional<checkers::Harm> harm;
  checkers::ClosestCall closest_call;  // the smallest margins (checkers.h)

  // The checkers' results as a run records them.
  static Check of(const checkers::Results& results);

  // How many violations of `kind` were found: counts[kind], or where counts
  // does not name the kind (a hand-written file), the listed violations of it.
  int64_t found(const std::string& kind) const;

  // The kinds with at least one violation found, sorted, each once.
  std::vector<std::string> found_kinds() const;

  // How many overlaps of the class named `overlap_class` were found:
  // harm.overlaps[overlap_class], or where there is no harm (a file from
  // before it), the listed violations of that class.
  int64_t found_class(const std::string& overlap_class) const;

  // The overlap classes with at least one overlap found, in the vocabulary's order.
  std::vector<OverlapClass> found_classes() const;

  // Whether the store accepted a write it should not have (checkers.h,
  // "harm"); in a file from before harm, whether a kind in kHarmKinds was found.
  bool harmful() const;

  bool operator==(const Check&) const = default;
};

// What the clients did in a run, summed over them.
struct RunStats {
  int64_t acquires_ok = 0, acquires_failed = 0, acquires_unknown = 0;
  int64_t writes_accepted = 0, writes_rejected = 0;
  int64_t lost = 0;                         // times a client concluded it no longer held the lock
  std::map<std::string, int64_t> counters;  // the protected counter of each lock at the end
  int64_t events = 0;                       // events in the history

  bool operator==(const RunStats&) const = default;
};

// One run of one algorithm (or of an adapter standing in for one): an entry
// of results.json's "runs".
struct RunResult {
  std::string algorithm;               // the algorithm id, or the adapter's name
  std::optional<std::string> adapter;  // the adapter program's command, when one ran
  std::optional<std::string> like;     // the built-in the adapter stands in for (--like)
  std::optional<std::string> target;   // the external target's name, when the run used one
  std::optional<Expectation> expected;
  std::string history;              // the history file, relative to the run directory; empty: none
  std::optional<uint64_t> seed;     // the run's seed
  std::optional<int64_t> run;       // 1, 2, ... when a suite repeats a cell (--runs)
  std::optional<double> seconds;    // how long the run took
  std::optional<RunTiming> timing;  // where that time went, for a run that was started
  // The clock the run kept: "real", or "virtual" (harness/core/virtual_time.h);
  // absent for a run not started, or in a file that predates it.
  std::optional<std::string> time;
  std::optional<std::string> error;  // why the run could not be completed
  std::optional<RunStats> stats;
  std::optional<Check> check;
  Verdict verdict = Verdict::Unknown;  // the check's verdict; Unknown when there is none
  // Decided by decide_outcome(). Absent only in files that predate it and
  // expect nothing of the run.
  std::optional<RunOutcome> outcome;
  std::vector<FaultFiring> faults;            // one per fault of the scenario, in its order
  bool exercised = true;                      // every fault fired
  std::optional<std::string> not_applicable;  // why the cell was not run
  std::vector<Incident> incidents;            // what the library left behind, in time order
  // The results directory an earlier suite measured this run in, when this
  // suite carried it over instead of running it (locklab suite --reuse).
  std::optional<std::string> carried_from;

  // The run as results.json holds it.
  nlohmann::json to_json() const;

  // Reads one entry of "runs". `file` and `field` (the entry's path in the
  // document, e.g. "runs[2]") only name it in errors. The outcome is the
  // document's; a file that predates it gets error, met or unmet from its
  // "error" and "expectation_met", else (with an expectation) decide_outcome().
  // Throws ResultsError when the entry is not an object, has no algorithm,
  // or a field has the wrong type.
  static RunResult from_json(const nlohmann::json& run, const std::filesystem::path& file,
                             const std::string& field = "");

  bool operator==(const RunResult&) const = default;
};

// The first incident kind `expected` names that `run` did not leave, or "".
std::string missing_incident(const Expectation& expected, const RunResult& run);

// A results.json document.
struct ScenarioResults {
  std::string scenario;
  std::string description;
  std::string scenario_file;                  // as the scenario was given
  std::optional<uint64_t> seed;               // the base seed
  std::optional<int64_t> runs_per_algorithm;  // set by a suite (--runs)
  std::string locklab_version;
  std::vector<RunResult> runs;

  // The document as results.json holds it.
  nlohmann::json to_json() const;

  // Reads a document; `file` only names it in errors. Throws ResultsError
  // when it is not an object, has no "runs" array, or any field has the wrong type.
  static ScenarioResults from_json(const nlohmann::json& document,
                                   const std::filesystem::path& file);

  bool operator==(const ScenarioResults&) const = default;
};

// A results.json that cannot be read: what() is one line naming the file
// and, where it applies, the field.
class ResultsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads the results.json at `file`. Throws ResultsError naming the file when
// it cannot be read, is not JSON, or ScenarioResults::from_json refuses it.
ScenarioResults read_results_file(const std::filesystem::path& file);

// Whether `measured` is what `expected` predicts: the verdict matches, every
// kind in `kinds` was found, and no kind in `absent`.
bool expectation_met(const Expectation& expected, const Check& measured);

// The outcome of `run`, from its error, not_applicable, exercised, expected
// (the default Expectation when absent), check (its verdict alone when
// absent) and like:
//   error → error; not_applicable → not-applicable; not exercised → not-exercised;
//   without `like`: met when expectation_met(), else unmet;
//   with `like` (an adapter held to a built-in's expectation): unmet when a
//   kind in `absent` was found or the built-in is expected safe and the
//   measurement differs; met when the built-in is expected violated and the
//   run found every expected kind with a violated verdict; otherwise, when
//   it measured safe or found only some of those kinds, safer-than.
RunOutcome decide_outcome(const RunResult& run);

// The violation kinds the run's checkers found, sorted, each once (none without a check).
std::vector<std::string> found_kinds(const RunResult& run);

// "violated (mutual-exclusion, stale-write)": the verdict and the kinds an
// expectation requires.
std::string expected_text(const Expectation& expected);

// "fault 0 (pause, c1 at step acquired (1st time))".
std::string fault_label(const FaultFiring& fault);

// Whether `fault` (one of `faults`) never fired but another fault of its
// `one_of` name did, telling its moment of the story instead.
bool stood_in_for(const FaultFiring& fault, const std::vector<FaultFiring>& faults);

// Whether a run whose faults came to `faults` played its story: every fault
// fired, except that of the faults sharing a `one_of` name one is enough.
bool story_played(const std::vector<FaultFiring>& faults);

// The faults of `run` that kept its story from being played, for people:
// "fault 0 (pause, at 1200 ms) never fired", with every fault that never
// fired and had no alternative that did; "a fault never fired" when the run
// is not exercised but names none.
std::string never_fired(const RunResult& run);

// The line `locklab run` prints for `run`, e.g.
//   set-nx-px: safe — expected safe, met
//   set-nx-px: violated — expected safe, NOT met [mutual-exclusion 2]
//   redis-py-lock: safe — expected violated, safer than set-nx-px
//   set-nx-px: NOT EXERCISED — fault 0 (pause, c1 at step acquired (1st time)) never fired
//   set-nx-px: not applicable — <why>
//   set-nx-px: unknown (error: <why>)
std::string summary_line(const RunResult& run);

// The exit status of `locklab run` for `results`: 2 when some run could not
// be completed, else 1 when some run is unmet or not exercised (or has no
// outcome), else 0 (met, safer-than and not-applicable runs pass).
int exit_status(const ScenarioResults& results);

// Whether a cell of an envelope.json (harness/suite/envelope.h) was harmed
// where its holds first overlapped: its "harm" bound equals its own; true
// for a cell from before harm was searched (it has none).
bool envelope_harm_is_overlap(const nlohmann::json& cell);

}  // namespace locklab
