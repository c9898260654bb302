// Checkers: read a history (../history/FORMAT.md) once, in order, and report
// every violation of the properties below, each naming the exact events that
// prove it. Every rule is sound: it reports only what the events prove, so an
// outcome the history leaves unknown (an `info`) never produces a report.
//
// Time order means time_ns order; "before" is strict: two events with the
// same time_ns are never assumed to be ordered. Holds are exactly FORMAT.md's
// "Holds". Events without a `lock` field are ignored by every rule.
//
// mutual-exclusion: two holds of one lock by different processes overlap:
//   the later one started (acquire ok) while the earlier was still open, and
//   both were still open after that instant. Holds that only touch (one ends
//   at the time_ns the other starts) do not overlap. One violation per pair
//   of holds. Events: both acquire oks and the end of the earlier hold
//   (release invoke, lost, crash-client), if it ended.
//
// lost-update: an accepted write (`write` ok) on a lock's counter read
//   (value.read of the ok event) a value that an earlier accepted write on
//   the same lock had already read: one of the two increments was lost. One
//   violation per such write. Events: the most recent earlier write ok that
//   read the value, and this write ok.
//
// stale-write: an accepted write by p whose hold was overtaken: another
//   process q acquired the lock after p's latest acquire (acquire ok, before
//   p's write was invoked) and an accepted write of q under that newer hold
//   completed before p's write was invoked. One violation per such write.
//   Events: p's acquire ok, q's acquire ok, q's write ok, p's write invoke and ok.
//   A write the store rejected (`write` fail) is counted as "fencing-saved",
//   never as a violation.
//
// token-order: fencing tokens must strictly increase across holders: an
//   acquire ok with token t by q is a violation when some other process had
//   obtained a token >= t on that lock from an acquire that completed before
//   q's acquire was invoked. Events: that earlier acquire ok, q's acquire
//   invoke and ok.
//
// ownership: a release that deleted a key it did not own. The only evidence
//   a history carries is a `release` ok with value.deleted >= 1 (an
//   unconditional DEL removed a key). It is reported when another process q
//   completed an acquire of that lock before p's release was invoked, and
//   q's acquire was invoked after p last could have written the key (the
//   completion of p's latest acquire or extend on the lock that did not
//   fail): q's SET replaced p's key, so the key p deleted was not p's.
//   Events: p's last write, q's acquire invoke and ok, p's release invoke and ok.
//
// liveness: a lock stayed unavailable for longer than liveness_factor times
//   its TTL (the largest value.ttl_ms of its acquire invokes) while no live
//   process held it and no fault was in force: every acquire attempt on it
//   failed (`fail`) over a span longer than that, while no hold was open, no
//   release or extend of a live process was in flight, no live process could
//   hold it unknowingly (an `info` acquire, until that process crashes,
//   acquires it or releases it), and no other attempt could have taken it
//   (the span ends before the invoke of any attempt that did not fail; a
//   failure at the very instant of such an invoke is no evidence). The
//   span runs from the later of the first failed attempt's invoke and the
//   event that last freed the lock (a release or extend completing, lost,
//   crash-client; none at the start of the history) to the last failed
//   attempt's completion.
//   Faults: a nemesis fault is in force from its `start` event to the `end`
//   event of the same fault (value.fault; without it, the earliest open start
//   of the same f), or to the end of the history when no end comes (a server
//   killed for good, a clock moved for good). A start marked "moment" (a cut)
//   and a crash-client are over at once and are never in force. Only the
//   parts of the span with no fault in force count: the span is a violation
//   when one such part is longer than the limit. A span longer than the
//   limit whose every fault-free part is shorter is availability lost under
//   a fault: counted ("availability-lost") and listed in Results::unavailable
//   with the faults in force, never a violation — a lock must refuse while
//   it cannot be sure (Redlock without a majority, a partitioned master).
//   One violation per such span. Events: the freeing event, the first failed
//   invoke, the last failure, and the end (or start) of the fault that bounds
//   the fault-free part, when one does.

// reentrancy: re-entrant locks report their depth (acquire ok value.reentry,
//   release ok value.remaining). Per process and lock the checker keeps the
//   depth the history implies: 0 at the start, +1 per acquire ok and -1 per
//   release ok, replaced by the depth the lock reports when it reports one;
//   unknown after an info acquire or release, a failed release, or lost,
//   until the lock reports a depth again. Violations: a reported depth that
//   differs from the implied one (except an acquire reporting depth 1, which
//   a lease that expired meanwhile explains), and a release ok by a process
//   whose implied depth is 0 (it did not hold the lock). Events: the event
//   that set the implied depth and the one that contradicts it (with the
//   release invoke).
//
// Overlap classes (violation_kind.h, OverlapClass): every mutual-exclusion
//   violation, earlier hold A by p and later hold B by q, is told as a
//   broken lease or an overrun from A's lease, in the history's time:
//   - A's lease starts at the start of the attempt that won it (acquire ok
//     value.attempt_ns), else at its acquire invoke, and lasts the shorter of
//     the invoke's ttl_ms and the ok's validity_ms (lease_source "validity"
//     when the lock reported one, "ttl" when it hid its lease, which the
//     explanation of a broken lease or an overrun then says). A re-entrant
//     acquire ok, an extend ok and a watchdog's `renewed` ok move its end to
//     their start (a renewal's sent_ns) plus their ttl (when later); a
//     renewal may also have moved it as far as its record's time plus its
//     ttl (`hi`). Its end as A's own clock saw
//     it: the acquire invoke's client_time_ns plus the lease (extends alike).
//   - The lease end is known between two bounds: `lo` counts what surely
//     happened, `hi` also what may have (an extend or renewal in flight or
//     of unknown outcome); a lock that renews its lease in the background
//     without recording the renewals (acquire ok value.renews without
//     renewals_recorded) has no `hi`.
//   - q's grant happened between B's attempt start (value.attempt_ns, else
//     B's acquire invoke) and B's acquire ok. broken-lease when B's ok came
//     before lo and B's attempt started no earlier than A's acquire ok (so
//     A was surely granted first): inside_lease_ms = lo - B's ok (at least
//     that far inside).
//     overrun when B's attempt started at or after hi: past_lease_ms = A's
//     last act as holder (its last write invoke, or the release invoke or
//     lost event that ended the hold) - hi, when that act came after hi; the
//     overrun is clock_misjudged when A's clock at that act still showed
//     lease left. unclassified otherwise (no ttl_ms, unrecorded renewals, a
//     grant window that straddles the lease's end, or a B whose attempt
//     began before A's acquire answered, so that either may have been
//     granted first), with the reason (Overlap::unclassified_because, an
//     Uncertainty of violation_kind.h).
//   - late writes: A's writes invoked after B's acquire ok, counted by what
//     the store did: accepted, rejected by fencing. An overlap with late
//     writes all rejected is "stopped by fencing".
//   Lease bounds are taken as they stood at B's acquire ok, but for a
//   renewal recorded later that was sent before it (its answer came after
//   B's grant, so Redis may have applied it before): an overrun it may have
//   covered is unclassified instead.
//
// Harm: what the protected store accepted that it should not have (lost
//   updates, stale writes) beside what fencing rejected; a run is harmful
//   when the store accepted such a write, whatever the overlaps.
//
// Closest call: the smallest margins a history shows, a safe run's distance
//   from a violation. grant_after_lease: over holds B whose lock was handed
//   over by expiry (the previous hold A, by another process, ended without a
//   release that completed ok: a crash, lost, a failed or unknown release),
//   B's acquire ok - A's lease end lo: the grant came at most this long after
//   the lease ended (negative: inside it). write_before_lease_end: over
//   accepted writes under a hold with a known lease, the lease end hi - the
//   write's invoke: the write came at most this close to the lease's end
//   (negative: after it).
//
// A process named by a crash-client event holds nothing from that event on;
// what it still records afterwards (it dies at its next step) counts only
// as facts about Redis and the store: tokens, accepted writes, deletions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <istream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "event.h"
#include "reader.h"
#include "violation_kind.h"

namespace locklab::checkers {

// What the earlier holder's lease shows of a mutual-exclusion violation
// (above, "overlap classes"). Durations in ms of the history's time.
struct Overlap {
  std::string overlap_class;              // an OverlapClass's name
  std::string lease_source;               // "validity", "ttl"; empty when no lease is known
  double lease_ms = 0;                    // the earlier lease's length; 0 when unknown
  std::optional<double> inside_lease_ms;  // broken-lease: granted at least this long before its end
  std::optional<double> past_lease_ms;    // overrun: the holder's last act this long after its end
  bool clock_misjudged = false;           // overrun: the holder's clock still showed lease left
  int64_t late_writes_accepted = 0;       // the earlier holder's writes after the later grant
  int64_t late_writes_rejected = 0;
  std::string explanation;           // one sentence: the class and its figures, or why unclassified
  std::string unclassified_because;  // unclassified: an Uncertainty's name (violation_kind.h)

  bool stopped_by_fencing() const { return late_writes_accepted == 0 && late_writes_rejected > 0; }
  bool operator==(const Overlap&) const = default;
};

struct Violation {
  std::string kind;  // a ViolationKind's name (violation_kind.h)
  std::string lock;
  std::vector<std::string> processes;
  std::vector<int64_t> events;     // history indices of the events that prove it, ascending
  std::vector<int64_t> times_ns;   // time_ns of those events, same order
  std::string explanation;         // one sentence in plain words
  std::optional<Overlap> overlap;  // mutual-exclusion only

  bool operator==(const Violation&) const = default;
};

// The kinds that harm the protected store: an accepted write it should not
// have accepted (Harm::lost_updates, Harm::stale_writes below).
inline constexpr ViolationKind kHarmKinds[] = {ViolationKind::LostUpdate,
                                               ViolationKind::StaleWrite};

// What the protected store suffered in a run (above, "harm").
struct Harm {
  int64_t lost_updates = 0;         // accepted writes that lost an update
  int64_t stale_writes = 0;         // accepted writes under an overtaken hold
  int64_t rejected_by_fencing = 0;  // writes the store rejected
  // Overlaps by class: every OverlapClass's name (0 when none), and
  // kStoppedByFencing (overlaps whose late writes were all rejected).
  std::map<std::string, int64_t> overlaps;

  bool harmful() const { return lost_updates + stale_writes > 0; }
  bool operator==(const Harm&) const = default;
};

// One margin of a closest call (above).
struct Margin {
  double ms = 0;
  double leases = 0;  // ms in leases of the hold it measures
  std::string lock;
  std::vector<std::string> processes;
  std::vector<int64_t> events;    // the events it is measured between, ascending
  std::vector<int64_t> times_ns;  // their time_ns
  std::string explanation;

  bool operator==(const Margin&) const = default;
};

struct ClosestCall {
  std::optional<Margin> grant_after_lease;
  std::optional<Margin> write_before_lease_end;

  bool operator==(const ClosestCall&) const = default;
};

// A stretch in which nobody could take a lock while a fault was in force
// (see liveness above): a measured figure of what the fault cost, never a
// violation.
struct Unavailability {
  std::string lock;
  std::vector<std::string> faults;  // the kinds of the faults in force during it, each once
  int64_t from_ns = 0, to_ns = 0;   // the stretch, as liveness measures it
  std::vector<int64_t> events;    // what freed the lock, the first failed invoke, the last failure
  std::vector<int64_t> times_ns;  // time_ns of those events, same order
  std::string explanation;        // one sentence in plain words

  bool operator==(const Unavailability&) const = default;
};

// The counter of stretches of availability lost under a fault.
inline constexpr const char* kAvailabilityLost = "availability-lost";

// `stretch` as every JSON document carries it:
// {lock, faults, from_ns, to_ns, events, times_ns, explanation}.
nlohmann::json unavailability_json(const Unavailability& stretch);

// `violation` as every JSON document carries it:
// {kind, lock, processes, events, times_ns, explanation}, and for an
// overlap "class" and "overlap": {lease_ms, lease_source, inside_lease_ms,
// inside_leases, past_lease_ms, past_leases, clock_misjudged, late_writes:
// {accepted, rejected}, stopped_by_fencing, explanation}.
nlohmann::json violation_json(const Violation& violation);

// {harmful, lost_updates, stale_writes, rejected_by_fencing, overlaps: {class: n}}.
nlohmann::json harm_json(const Harm& harm);

// {grant_after_lease, write_before_lease_end}: each {ms, leases, lock,
// processes, events, times_ns, explanation} or null.
nlohmann::json closest_call_json(const ClosestCall& closest);

struct Options {
  double liveness_factor = 3.0;      // liveness: unavailable for longer than this many TTLs
  size_t max_listed_per_kind = 100;  // violations listed per kind; counts stay exact
};

struct Results {
  std::vector<Violation> violations;        // listed (capped per kind), ordered by first event
  std::vector<Unavailability> unavailable;  // availability lost under faults (capped), in order
  std::map<std::string, int64_t> counts;    // every kind (0 when none), "fencing-saved",
                                            // "events", "holds", "writes-accepted",
                                            // "availability-lost"
  std::map<std::string, std::map<std::string, int64_t>> per_lock;  // lock -> the same counts
  Harm harm;
  ClosestCall closest_call;

  bool violated() const;
  // {"verdict":"safe"|"violated","counts":{...},"per_lock":{lock:{kind:count}},
  //  "violations":[{kind,lock,processes,events,times_ns,explanation}],
  //  "unavailable":[{lock,faults,from_ns,to_ns,events,times_ns,explanation}],
  //  "harm":{...},"closest_call":{...}}
  nlohmann::json to_json() const;
};

// Checks events already in memory. Throws history::HistoryError ("event <i>: ...")
// when they break the format, e.g. a completion without its invoke.
Results check_events(const std::vector<history::Event>& events, const Options& options = {});

// Checks a history file, streaming it: memory grows with the open holds and
// the processes and locks, not with the file. Throws history::HistoryError
// ("<file>:<line>: ...").
Results check_file(const std::filesystem::path& history, const Options& options = {});

// The same for a stream read from its current position; `name` stands for
// the file in messages. The stream is read a second time (seeking back) only
// to name the earlier write of a lost-update that fell out of the checker's
// bounded memory; a stream that cannot seek names only the later write then.
Results check_stream(std::istream& in, const std::string& name, const Options& options = {});

}  // namespace locklab::checkers
