// `locklab envelope`: how much of each fault every lock survives, measured
// beside what its design predicts (lock_impls/envelope_axis.h: the story, the
// axes and the predictions).
//
// For one lock and one axis the story is first played once with no fault
// (the baseline: both clients must hold the lock, or the story was not
// told). Then the search starts at the predicted bound (the harsh end of
// the axis when the design predicts none), gallops away from it until it
// has a size that breaks the lock and one that does not, and halves the gap
// between them down to the axis's precision. Far from the boundary a size
// is played once; once the gap is four precisions or less, each size is
// played up to n times and breaks when k = n/2 + 1 of them do (early
// stopping), and the bound found is played that way too before it is
// believed. The whole search is repeated with fresh seeds, each repeat
// starting where the first one found the bound; the bound is the median of
// the repeats, with their minimum and maximum as its spread.
//
// Two bounds are found per repeat: where the holds first overlap (what a
// design predicts, and what the search above finds) and where the protected
// store is first harmed (it accepted a lost update or a stale write). Harm
// needs an overlap, so the harm bound is never gentler: when the runs that
// decided the overlap bound harmed the store too (by the same k-of-n rule),
// it is the same bound; otherwise a second search, for harm, starts there
// and goes harsher (fencing, or a client whose own check stopped its late
// write, may keep the store whole at any size). Harm need not grow with the
// size as overlaps do: a fenced store is harmed only while the late write
// lands before the new holder's first one. The harm bound is the least
// harmful size the search found.
//
// Output layout (OUT = EnvelopeOptions::out_dir):
//   OUT/envelope.json                                    the searches and their answers
//   OUT/<lock>/<axis>/<size>/run-<k>/<lock>/history.jsonl  every probed run
#pragma once

#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "adapter_pool.h"
#include "envelope_axis.h"
#include "outcome.h"
#include "plan.h"
#include "runner.h"
#include "scenario.h"

namespace locklab::suite {

// The story of lock_impls/envelope.h on `axis` at `size` (in the axis's
// unit). At the axis's gentle end the story has no fault of the axis at all:
// the lock's baseline.
Scenario envelope_scenario(EnvelopeAxis axis, double size);

// What one run at one size measured.
struct EnvelopeRun {
  bool broken = false;             // mutual-exclusion was found: the holds overlapped
  bool harmed = false;             // the store accepted a lost update or a stale write
  std::vector<std::string> kinds;  // every violation kind found
  std::string error;               // why the run failed
  std::string not_exercised;       // why the run did not play the story (a fault never fired)
  std::string not_applicable;      // why the lock cannot be told the story
  int holds = -1;                  // acquires that succeeded (-1: not known)
  RunTiming timing;                // where the run's time went (zero: it never started)
  nlohmann::json detail = nlohmann::json::object();  // seed, verdict, kinds, history
};

// Plays the story at `size` once; `run` counts the runs of this search from 1.
using PlayEnvelope = std::function<EnvelopeRun(double size, int run)>;

struct EnvelopeProbe {
  double size = 0;
  int repeat = 0;     // 1-based; 0 for the baseline
  bool harm = false;  // a probe of the search for harm (else for an overlap)
  int runs = 0, broken = 0, harmed = 0;
  bool breaks = false;  // by the k-of-n rule (one run away from the boundary), as `harm` says
  nlohmann::json runs_detail = nlohmann::json::array();
};

struct EnvelopeRepeat {
  SearchOutcome outcome = SearchOutcome::kError;  // where the holds first overlapped
  std::optional<double> breaking, last_safe;
  SearchOutcome harm_outcome = SearchOutcome::kError;  // where the store was first harmed
  std::optional<double> harm_breaking, harm_last_safe;
};

struct EnvelopeSearch {
  SearchOutcome outcome = SearchOutcome::kError;
  std::optional<double> median, min, max;  // of the repeats' breaking sizes (overlap)
  SearchOutcome harm_outcome = SearchOutcome::kError;
  std::optional<double> harm_median, harm_min, harm_max;  // of their harm bounds
  std::vector<EnvelopeRepeat> repeats;
  std::vector<EnvelopeProbe> probes;  // in the order they were made
  std::vector<std::string> kinds_at_break;
  std::string error;  // or why it is not applicable, or not exercised
  int runs = 0;       // runs played in all
};

struct EnvelopeSearchSpec {
  EnvelopeAxisInfo axis;
  std::optional<double> start;  // where the first repeat begins (the prediction)
  int repeats = 3;
  int confirm_runs = 3;  // n of the k-of-n rule near the boundary
};

// Searches one lock on one axis as the file comment says. First the story
// is played once with no fault (the probe of repeat 0): unless it breaks
// there, both clients must have held the lock, or the story was not told
// (not-exercised) and no size is searched.
EnvelopeSearch search_envelope(const EnvelopeSearchSpec& spec, const PlayEnvelope& play);

// Whether `search` agrees with `prediction` within the axis's tolerance:
// predicted never and never broken; predicted to break without the fault
// and every repeat did; predicted a bound (that one included) and the
// bound lies within the measured spread widened by `tolerance` and the
// axis's precision on each side.
bool agrees(const EnvelopeAxisInfo& axis, const EnvelopePrediction& prediction,
            const EnvelopeSearch& search, double tolerance);

// How far from the predicted `bound` a measurement may land without
// counting as a disagreement, in the axis's unit: what it does to the bound
// that the waiting client looks again only every 5-25 ms (a library: every
// `retry_ms` at most), plus 5 ms of scheduling. On the lease axes that is
// the lateness over the lease; on the clock axes it depends on the bound.
double envelope_tolerance(const EnvelopeAxisInfo& axis, std::optional<double> bound,
                          std::optional<int64_t> retry_ms = std::nullopt);

// What a lock's design predicts on every axis: a built-in's own, a
// library's from the built-in it stands in for; empty for an adapter like
// none.
EnvelopePredictions predictions_for(const LockUnderTest& lock);

struct EnvelopeOptions {
  std::vector<LockUnderTest> locks;
  std::vector<EnvelopeAxis> axes;  // empty: every axis
  int repeats = 3;
  int confirm_runs = 3;
  int jobs = 1;  // searches at the same time
  // Of them, searches of locks whose adapters start the same program
  // (runtime_of: "java/run", "node", …); built-ins have no such limit.
  int jobs_per_runtime = 1 << 20;
  uint64_t seed = 1;
  std::filesystem::path out_dir;
  std::string redis_version;
  nlohmann::json invocation = nlohmann::json::object();
  std::ostream* progress = &std::cerr;  // one line per search
  // An earlier envelope's directory: a search it made under the same
  // conditions (the same lab build and Redis version, story, axis scale,
  // lock and run seeds, and not failed) is carried over, not made again.
  std::filesystem::path reuse;
  // Where the runs keep their adapters between runs (the cell runner's
  // locks carry it: AdapterConfig::pool); null: every run starts its own.
  // Read here for the document's "adapters", and told when a lock's
  // searches are all done (AdapterPool::forget).
  std::shared_ptr<AdapterPool> adapters;
};

// Searches every lock on every axis, writes OUT/envelope.json atomically and
// returns it: {envelope {lease_ms, work, partition_work, repeats,
// confirm_runs, seed, adapters_kept}, locklab_version, lab_build, redis_version,
// invocation, started_at, seconds, reuse {from, searches_carried} (with
// --reuse only), adapters {kept, started, reused} (how many adapter
// processes the runs started, and how many times a run took one an earlier
// run had reset), axes [{axis, unit, gentle, harsh, precision, tolerance,
// fault}], locks [{name, family, like, version, adapter}], cells [{lock,
// axis, seed_base, carried_from (a carried search only), outcome, median,
// min, max (where the holds first overlapped), harm {outcome, median, min,
// max} (where the store was first harmed), repeats [{outcome, breaking,
// last_safe, harm_outcome, harm_breaking, harm_last_safe}],
// kinds_at_break, prediction {bound, why, from} | null, tolerance, agrees
// (true, false, null without a prediction), gap (why a disagreement or a
// story not told is what it is, from libraries.json, or null), runs,
// seconds, timing {servers, clients, story, check, teardown} (its runs',
// summed), error, probes
// [{size, repeat, search ("overlap" or "harm"), runs, broken, harmed, breaks,
// details}]}], totals {cells, agree,
// disagree, explained, unpredicted, not_applicable, not_exercised, errors},
// exit_status (2 some search failed, 1 some measurement disagrees with its
// prediction or some search could not play its story, and nobody has
// explained why, else 0)}. A library whose envelope_not_applicable says why is
// not searched: its cells are not-applicable with that reason.
nlohmann::json run_envelope(const EnvelopeOptions& options, const CellRunner& run_cell);

// The answer for people: one line per lock and axis.
std::string envelope_table(const nlohmann::json& envelope);

}  // namespace locklab::suite
