// explore.json, typed: the document `locklab explore` writes (and `locklab
// merge` writes for the shards of one exploration). FORMAT.md beside this
// file specifies every field. Documents are written with to_json() and read
// with from_json(), which is tolerant: fields it does not know are ignored
// (newer files), missing ones stay absent or default (older files), and a
// field of the wrong type is a one-line error naming the file and the field.
// Only "explore", "options" and "runs" must be there: without them a file is
// not an exploration.
//
// Written, the same document gives the same bytes explore.json always had:
// every object is a nlohmann::json object (keys sorted), every count an
// integer, every time and rate a floating-point number.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fault.h"
#include "violation_kind.h"

namespace locklab::explore {

// An explore.json that cannot be read: what() is one line naming the file
// and, where it applies, the field.
class ExploreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A fault as runs[].faults and found[].faults list it: its kind, its trigger
// for people, the kind's parameters as Fault::describe() gives them (at_ms or
// when, duration_ms, delta_ms, how, …), and in runs[] whether it fired. In
// JSON the parameters sit beside kind and trigger, in one object.
struct ExploredFault {
  std::string kind;     // the fault kind's name ("pause", …)
  std::string trigger;  // "at 1200 ms" or "c1 at step acquired (1st time)"
  // Fault::describe(): every key but kind, trigger and fired.
  nlohmann::json parameters = nlohmann::json::object();
  std::optional<bool> fired;  // runs[] only: it took effect during the run

  // `fault` as found[] lists it (no fired).
  static ExploredFault of(const Fault& fault);

  nlohmann::json to_json() const;
  // `field` (its path in the document, "runs[2].faults[0]") only names it in errors.
  static ExploredFault from_json(const nlohmann::json& fault, const std::filesystem::path& file,
                                 const std::string& field);

  bool operator==(const ExploredFault&) const = default;
};

// One generated run: an entry of "runs".
struct ExploredRun {
  uint64_t index = 0;  // the generated scenario's index in the sequence
  uint64_t seed = 0;   // the run's (and the scenario's) seed
  Verdict verdict = Verdict::Unknown;
  std::vector<std::string> kinds;  // every violation kind found, sought or not
  double seconds = 0;              // how long the run took
  bool exercised = true;           // every fault fired
  std::vector<ExploredFault> faults;
  std::optional<std::string> error;  // why the run could not be completed
  std::optional<std::string> dir;    // runs/run-<i>, kept when it broke the lock

  nlohmann::json to_json() const;
  static ExploredRun from_json(const nlohmann::json& run, const std::filesystem::path& file,
                               const std::string& field);

  bool operator==(const ExploredRun&) const = default;
};

// A drawn field of a fault kind: the range it was drawn from and the range
// of the values that fired. An entry of coverage.fault_kinds[].ranges.
struct CoverageRange {
  std::string param;                               // "duration_ms", "rate", …
  std::string unit;                                // "× ttl" (per lease) or "×"
  std::pair<double, double> drawn{0, 0};           // [low, high]
  std::optional<std::pair<double, double>> fired;  // [min, max] of what fired; absent: none did

  nlohmann::json to_json() const;
  static CoverageRange from_json(const nlohmann::json& range, const std::filesystem::path& file,
                                 const std::string& field);

  bool operator==(const CoverageRange&) const = default;
};

// What was explored of one fault kind: an entry of coverage.fault_kinds.
struct KindCoverage {
  std::string kind;
  int64_t runs = 0;       // runs that had a fault of the kind
  int64_t generated = 0;  // its faults generated
  int64_t fired = 0;      // of which fired
  std::vector<CoverageRange> ranges;

  nlohmann::json to_json() const;
  static KindCoverage from_json(const nlohmann::json& kind, const std::filesystem::path& file,
                                const std::string& field);

  bool operator==(const KindCoverage&) const = default;
};

// Faults triggered at one step: an entry of coverage.steps.
struct StepCoverage {
  std::string step;
  int64_t generated = 0;  // faults triggered there
  int64_t fired = 0;      // of which fired

  nlohmann::json to_json() const;
  static StepCoverage from_json(const nlohmann::json& step, const std::filesystem::path& file,
                                const std::string& field);

  bool operator==(const StepCoverage&) const = default;
};

// "coverage": what was tried, and what never fired.
struct CoverageSummary {
  std::vector<KindCoverage> fault_kinds;  // per allowed kind
  std::vector<StepCoverage> steps;        // per trigger step
  std::vector<std::string> kinds_never_fired;
  std::vector<std::string> steps_never_fired;

  nlohmann::json to_json() const;
  static CoverageSummary from_json(const nlohmann::json& coverage,
                                   const std::filesystem::path& file, const std::string& field);

  bool operator==(const CoverageSummary&) const = default;
};

// A violation shrunk to a minimal scenario: an entry of "found".
struct FoundScenario {
  struct Reproduced {
    int runs = 0;   // confirmation runs
    int broke = 0;  // of which broke the lock
    bool operator==(const Reproduced&) const = default;
  };
  struct ShrinkStats {
    int candidates_tried = 0, runs = 0, steps_taken = 0;
    bool complete = false;  // no simpler scenario broke
    bool operator==(const ShrinkStats&) const = default;
  };

  std::string name;
  std::string file;                   // found/<name>.json
  std::optional<std::string> report;  // found/<name>/report.html; absent (null): no run broke
  std::vector<std::string> kinds;     // found in its confirmation runs
  std::vector<std::string> sought;    // the kinds its shrink kept
  std::vector<std::string> fault_kinds;
  std::vector<ExploredFault> faults;  // as the minimal scenario has them (no fired)
  int clients = 0;
  int64_t duration_ms = 0;
  int64_t ttl_ms = 0;
  uint64_t from_run = 0;
  int64_t original_faults = 0;
  std::vector<uint64_t> same_cause_runs;  // generated runs folded into it
  Reproduced reproduced;
  ShrinkStats shrink;

  nlohmann::json to_json() const;
  static FoundScenario from_json(const nlohmann::json& found, const std::filesystem::path& file,
                                 const std::string& field);

  bool operator==(const FoundScenario&) const = default;
};

// A group of runs that broke the lock and was not shrunk: an entry of "not_shrunk".
struct NotShrunk {
  uint64_t run = 0;  // the group's smallest run
  int64_t runs = 0;  // runs in the group
  std::vector<std::string> kinds;
  std::vector<std::string> fault_kinds;
  std::string why;

  nlohmann::json to_json() const;
  static NotShrunk from_json(const nlohmann::json& not_shrunk, const std::filesystem::path& file,
                             const std::string& field);

  bool operator==(const NotShrunk&) const = default;
};

// "options": how the exploration was asked for.
struct RecordedOptions {
  struct Reproduce {
    int needed = 2, reruns = 3;  // "still breaks": broke in needed of reruns runs
    bool operator==(const Reproduce&) const = default;
  };

  uint64_t seed = 0;
  int jobs = 1;
  std::string shard = "1/1";  // "I/N"
  std::optional<int64_t> max_runs;
  int64_t max_seconds = 0;
  std::vector<std::string> kinds;        // violation kinds sought (empty: any)
  std::vector<std::string> fault_kinds;  // the kinds drawn from
  std::vector<std::string> lock_steps;
  int max_faults = 3;
  std::optional<std::string> network;  // "proxy", "netns"; absent (null): the default
  Reproduce reproduce;
  int confirm_runs = 10;

  nlohmann::json to_json() const;
  static RecordedOptions from_json(const nlohmann::json& options, const std::filesystem::path& file,
                                   const std::string& field);

  bool operator==(const RecordedOptions&) const = default;
};

// An explore.json document.
struct Exploration {
  std::string explore;                 // the lock explored (an adapter's name)
  std::string algorithm;               // the built-in its scenarios are written for
  std::optional<std::string> adapter;  // the adapter's command, when one ran
  std::string locklab_version;
  nlohmann::json invocation = nlohmann::json::object();  // free-form: how it was started
  std::string started_at;
  double seconds = 0;          // wall time in all
  double explore_seconds = 0;  // of the generated runs alone
  bool interrupted = false;    // Ctrl-C cut it short
  RecordedOptions options;
  int64_t runs_total = 0;   // generated runs made
  int64_t runs_failed = 0;  // of which could not be completed
  double runs_per_minute = 0;
  int64_t shrink_runs = 0;                            // runs spent shrinking and confirming
  std::map<std::string, int64_t> violations_by_kind;  // sought kinds: runs that found each
  std::map<std::string, int64_t> kinds_seen;          // every kind, sought or not
  CoverageSummary coverage;
  std::vector<FoundScenario> found;
  std::vector<NotShrunk> not_shrunk;
  std::vector<ExploredRun> runs;     // by index
  std::optional<std::string> error;  // why no run could be made
  int exit_status = 0;               // the status the command exits with

  // The document as explore.json holds it.
  nlohmann::json to_json() const;

  // Reads a document; `file` only names it in errors. Throws ExploreError
  // when it is not an object, lacks explore, options or runs, or a field has
  // the wrong type.
  static Exploration from_json(const nlohmann::json& document, const std::filesystem::path& file);

  bool operator==(const Exploration&) const = default;
};

// Reads the explore.json at `file`. Throws ExploreError naming the file when
// it cannot be read, is not JSON, or Exploration::from_json refuses it.
Exploration read_exploration_file(const std::filesystem::path& file);

// Writes `exploration` to `file` as explore.json holds it (atomically).
void write_exploration_file(const Exploration& exploration, const std::filesystem::path& file);

}  // namespace locklab::explore
