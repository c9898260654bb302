// The violation vocabulary: every kind of violation the checkers report, one
// table row each, and the verdict a check reaches. The checkers, the scenario
// and results loaders, explore, sweep and the reports read this table;
// nothing else lists the kinds or spells their names.
//
// Adding a kind: one enumerator, one row in kViolationKinds
// (violation_kind.cpp, in enum order, which the table checks at compile
// time), and its checker; every switch over ViolationKind fails to compile
// (-Werror=switch) until it handles the new kind.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "word_table.h"

namespace locklab {

// In the order reports list them: the overlap a reader counts first.
enum class ViolationKind {
  MutualExclusion,  // two processes held the lock at once
  LostUpdate,       // an accepted write was based on a stale read
  StaleWrite,       // a write under an overtaken hold was accepted
  TokenOrder,       // a fencing token did not increase
  Ownership,        // a release deleted a key its process did not own
  Liveness,         // nobody could take a free lock for too long
  Reentrancy,       // a nested lock reported a depth the history contradicts
};
inline constexpr size_t kViolationKindCount = 7;

// What a violation's events are about, which decides how reports group and draw it.
enum class ViolationSubject {
  Holds,       // two holds that overlap: drawn where they overlap, grouped by the earlier hold
  Operations,  // operations under a hold (writes, releases, tokens): a line through its events,
               // grouped by the earlier hold they touch
  Lock,        // the lock itself over a stretch of time (availability, nesting): grouped by
               // the fault window it falls in, never by a hold
};

struct ViolationKindInfo {
  ViolationKind kind;
  std::string_view name;  // as histories, results.json, scenario files and --kinds spell it
  ViolationSubject subject;
  std::string_view label;    // a table's words for the kind: "overlap", "lost update"
  std::string_view one;      // a story's words for one of them: "overlapping acquisition"
  std::string_view many;     // and for several: "overlapping acquisitions"
  std::string_view colour;   // the reports' colour for it
  std::string_view meaning;  // one line for people
};

// Every kind, in enum order (the order reports list them in).
std::span<const ViolationKindInfo> violation_kinds();

// The row of `kind`.
const ViolationKindInfo& info(ViolationKind kind);

// The name of `kind` ("mutual-exclusion").
std::string_view name(ViolationKind kind);

// The kind named `name`, or nullopt (a name from another tool's file).
std::optional<ViolationKind> violation_kind_named(std::string_view name);

// Every name, in table order.
const std::vector<std::string>& violation_kind_names();

// "mutual-exclusion, lost-update, …": every name, for messages.
std::string violation_kind_list();

// Whose fault an overlap (a mutual-exclusion violation) was, judged from the
// earlier holder's lease (checkers.h, "overlap classes"). Every document,
// report and message spells a class as its row in overlap_classes() does.
enum class OverlapClass {
  BrokenLease,   // the lock granted the later holder while the earlier lease was in force
  Overrun,       // granted after the earlier lease ended, and its holder went on acting
  Unclassified,  // the history cannot tell which
};
inline constexpr size_t kOverlapClassCount = 3;

struct OverlapClassInfo {
  OverlapClass overlap_class;
  std::string_view name;     // as results.json, expectations and `locklab check` spell it
  std::string_view label;    // a table's words: "broken lease"
  std::string_view meaning;  // one line for people
};

// Every class, in enum order.
std::span<const OverlapClassInfo> overlap_classes();
const OverlapClassInfo& info(OverlapClass overlap_class);
// "broken-lease", "overrun", "unclassified".
std::string_view name(OverlapClass overlap_class);
// The class named `name`, or nullopt.
std::optional<OverlapClass> overlap_class_named(std::string_view name);
// "broken-lease, overrun, unclassified": every name, for messages.
std::string overlap_class_list();

// Why the history cannot tell an overlap's class. Some of these are limits of
// any history, however complete: a correct lock's history shows them now and
// then, as its requests' transit times fall (`timing_only`). The others say
// the history lacks what would tell (a lock that hides its lease or its
// renewals), and a complete history never shows them.
enum class Uncertainty {
  NoLease,             // the earlier acquire gave no ttl_ms or validity_ms
  UnrecordedRenewals,  // the lease was renewed by amounts the history does not record
  GrantOrder,          // the later attempt began before the earlier acquire answered
  GrantWindow,         // the later grant's window spans the earlier lease's end
  RenewalInFlight,     // a renewal answered after the later grant may have come before it
};
inline constexpr size_t kUncertaintyCount = 5;

struct UncertaintyInfo {
  Uncertainty uncertainty;
  std::string_view name;  // as results.json spells it (overlap.unclassified_because)
  bool timing_only;       // a complete history of a correct lock can show it
  std::string_view meaning;
};

const UncertaintyInfo& info(Uncertainty uncertainty);
// "grant-window".
std::string_view name(Uncertainty uncertainty);
// The uncertainty named `name`, or nullopt.
std::optional<Uncertainty> uncertainty_named(std::string_view name);

// An overlap in which the earlier holder wrote after the later grant and the
// store rejected every one of those writes: the words results and reports use.
inline constexpr std::string_view kStoppedByFencing = "stopped-by-fencing";
inline constexpr std::string_view kStoppedByFencingLabel = "stopped by fencing";

// What a check concluded, or why there is no conclusion.
enum class Verdict {
  Safe,      // the history shows no violation
  Violated,  // it shows at least one
  Unknown,   // there is no check (the run did not complete, or recorded nothing)
  Error,     // a document that predates verdicts: the run failed
};

// Every verdict's words, in enum order.
inline constexpr auto kVerdicts = word_table<Verdict>({
    {Verdict::Safe, "safe", "the history shows no violation"},
    {Verdict::Violated, "violated", "the history shows at least one violation"},
    {Verdict::Unknown, "unknown",
     "there is no check: the run did not complete, or recorded nothing"},
    {Verdict::Error, "error", "a document that predates verdicts: the run failed"},
});

// "safe", "violated", "unknown", "error".
inline std::string_view verdict_name(Verdict verdict) {
  return kVerdicts.name(verdict);
}

// The verdict named `name`, or nullopt.
inline std::optional<Verdict> verdict_named(std::string_view name) {
  return kVerdicts.named(name);
}

// In JSON, a verdict is its name, never a number.
inline void to_json(nlohmann::json& j, Verdict verdict) {
  j = verdict_name(verdict);
}

}  // namespace locklab
