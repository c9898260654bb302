// A scenario file (scenarios/*.json): what to run, against what, under which
// faults, and what the lab expects to measure for each algorithm. The schema
// is scenarios/schema.json; load_scenario() enforces it with messages that
// name the file and the field.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "expectation.h"
#include "fault.h"

namespace locklab {

struct Topology {
  int nodes = 1;      // independent masters (Redlock uses them all; others use node 0)
  int replicas = 0;   // replicas of node 0
  int sentinels = 0;  // redis-sentinel processes watching node 0 (0 or 3)
  bool persistence = false;
  // How link faults are done: "proxy" (a user-space fault proxy per link) or
  // "netns" (each node in a network namespace, iptables and netem; needs
  // root, and falls back to the proxy, saying why, where it cannot run).
  std::string network = "proxy";
};

struct Workload {
  std::vector<std::string> locks = {"lock"};
  int64_t ttl_ms = 2000;
  int64_t wait_ms = 1000;
  int64_t work_ms = 5;            // time inside the critical section, between read and write
  int64_t think_ms = 2;           // pause between a release and the next acquire (max, random)
  int64_t ops_per_client = 1000;  // acquire attempts per client (upper bound)
  bool fencing = false;           // the protected store rejects writes with a lower token
  // Holds per client (acquires that succeeded), upper bound; 0: no bound. A
  // story told by each client's first hold ends when those holds do, while a
  // client whose attempts fail still tries again.
  int64_t holds_per_client = 0;
  bool stop_on_renewal_failure =
      false;  // clients give up (record `lost`) when a watchdog renewal fails
  // A client whose release had an unknown outcome (a timeout, a cancelled
  // request) releases once more, as careful callers do.
  bool retry_unknown_release = false;
  // The client writes only while the validity its lock returned lasts, by
  // its own clock (Redlock's rule). false: it writes whenever the library
  // said ok, as most of a library's users do (node-redlock's README never
  // reads a lock's expiration).
  bool checks_validity = true;
  // Levels a client takes a re-entrant lock at in one operation: it acquires
  // the lock `reentry` times, gives back the inner levels, then works at the
  // outer one. Locks that do not nest take it once.
  int64_t reentry = 1;
  // Client i (c1 is 0) always takes locks[i % locks.size()], instead of one
  // picked at random: with as many locks as clients, nobody waits for another
  // (a throughput measurement, not a contention story).
  bool lock_per_client = false;
  std::map<std::string, int64_t> params;  // algorithm parameters (e.g. "replicas")
};

// The steps of the client's own workload loop (Client::run), in the order one
// operation reaches them; a lock's own steps (Lock::steps) come on top.
// before-reacquire … inner-released are reached only by re-entrant locks
// with workload.reentry > 1; before-write and after-write only while the
// client still believes its lease valid.
const std::vector<std::string>& workload_steps();

// Whether `step` is one of the workload's nesting steps (before-reacquire …
// inner-released), which only re-entrant locks reach.
bool is_nesting_step(std::string_view step);

struct Scenario {
  std::filesystem::path file;
  std::string name;
  std::string description;
  Topology topology;
  int clients = 4;
  Workload workload;
  int64_t duration_ms = 3000;
  uint64_t seed = 1;
  std::vector<std::string> algorithms;              // ids to run, in order
  Expectation default_expectation;                  // for algorithms without their own
  std::map<std::string, Expectation> expectations;  // per algorithm id
  // Algorithms the story cannot be told to at all, and why (one sentence):
  // their cells are not applicable.
  std::map<std::string, std::string> not_applicable;
  // What the story expects of published libraries, by the name their adapter
  // answers hello with ("libraries" in the file): an entry here replaces the
  // expectation of the built-in the library stands in for. Libraries not
  // listed are held to that built-in's expectation.
  std::map<std::string, Expectation> library_expectations;
  std::map<std::string, std::string> library_not_applicable;
  std::vector<Fault> faults;  // the nemesis's schedule
  // The liveness checker's limit, in TTLs (checkers.h): a story about a key
  // that outlives its release may ask for less than the default 3.
  double liveness_factor = 3.0;

  const Expectation& expectation_for(const std::string& algorithm) const;
};

// Thrown for a scenario file that cannot be used; what() is one line that
// names the file and, where it applies, the field or line:column.
class ScenarioError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads and validates a scenario file. Unknown fields, wrong types, unknown
// algorithm ids and impossible values are errors.
Scenario load_scenario(const std::filesystem::path& file);
// The same from an already parsed document (`file` only names it in errors).
Scenario parse_scenario(const nlohmann::json& document, const std::filesystem::path& file);

// The scenario as a scenario file holds it: parse_scenario(scenario_to_json(s))
// gives back `s` (its `file` aside). Generated and shrunk scenarios are
// written with it, so every one of them is valid input to `locklab run`.
nlohmann::json scenario_to_json(const Scenario& scenario);

// "line L, column C" of byte `offset` in `text` (for JSON parse errors).
std::string line_and_column(const std::string& text, size_t offset);

}  // namespace locklab
