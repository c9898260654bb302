#include "violation_kind.h"

namespace locklab {
namespace {

// One row per kind, in enum order (the table checks it).
constexpr WordTable<ViolationKindInfo, &ViolationKindInfo::kind, kViolationKindCount>
    kViolationKinds({
        {ViolationKind::MutualExclusion, "mutual-exclusion", ViolationSubject::Holds, "overlap",
         "overlapping acquisition", "overlapping acquisitions", "#dc2626",
         "two processes held the lock at the same time"},
        {ViolationKind::LostUpdate, "lost-update", ViolationSubject::Operations, "lost update",
         "lost update", "lost updates", "#ea580c",
         "an accepted write read a value another accepted write had already read: one increment is "
         "lost"},
        {ViolationKind::StaleWrite, "stale-write", ViolationSubject::Operations, "stale write",
         "stale write", "stale writes", "#b45309",
         "a write under a hold another process had since taken over was accepted"},
        {ViolationKind::TokenOrder, "token-order", ViolationSubject::Operations, "token order",
         "fencing token out of order", "fencing tokens out of order", "#7c3aed",
         "a fencing token was not larger than one already handed out"},
        {ViolationKind::Ownership, "ownership", ViolationSubject::Operations, "ownership",
         "release of someone else's lock", "releases of someone else's lock", "#be185d",
         "a release deleted a key that another process had since written"},
        {ViolationKind::Liveness, "liveness", ViolationSubject::Lock, "liveness",
         "stretch without a holder", "stretches without a holder", "#0369a1",
         "nobody could take the lock for longer than the liveness threshold, though nobody held "
         "it"},
        {ViolationKind::Reentrancy, "reentrancy", ViolationSubject::Lock, "nesting",
         "wrong nesting depth", "wrong nesting depths", "#4d7c0f",
         "a re-entrant lock reported a nesting depth the history contradicts"},
    });

static_assert(kViolationKindCount == static_cast<size_t>(ViolationKind::Reentrancy) + 1,
              "kViolationKindCount must count every ViolationKind");

// One row per class, in enum order (the table checks it).
constexpr WordTable<OverlapClassInfo, &OverlapClassInfo::overlap_class, kOverlapClassCount>
    kOverlapClasses({
        {OverlapClass::BrokenLease, "broken-lease", "broken lease",
         "the lock granted the later holder while the earlier holder's lease was still in force: "
         "the lock's fault, which no care of the holder prevents"},
        {OverlapClass::Overrun, "overrun", "overrun",
         "the later holder was granted after the earlier holder's lease had ended, and the earlier "
         "holder went on acting as the holder: only fencing prevents this"},
        {OverlapClass::Unclassified, "unclassified", "unclassified",
         "the history cannot tell whether the later grant came inside the earlier lease or after "
         "it"},
    });

static_assert(kOverlapClassCount == static_cast<size_t>(OverlapClass::Unclassified) + 1,
              "kOverlapClassCount must count every OverlapClass");

// One row per uncertainty, in enum order (the table checks it).
constexpr WordTable<UncertaintyInfo, &UncertaintyInfo::uncertainty, kUncertaintyCount>
    kUncertainties({
        {Uncertainty::NoLease, "no-lease", false,
         "the earlier acquire gave no ttl_ms or validity_ms: its lease is unknown"},
        {Uncertainty::UnrecordedRenewals, "unrecorded-renewals", false,
         "the earlier lease was renewed by amounts the history does not record"},
        {Uncertainty::GrantOrder, "grant-order", true,
         "the later attempt began before the earlier acquire answered: either may have been "
         "granted first"},
        {Uncertainty::GrantWindow, "grant-window", true,
         "the later grant came between its attempt's start and its answer, and the earlier lease "
         "ended in between"},
        {Uncertainty::RenewalInFlight, "renewal-in-flight", true,
         "a renewal of the earlier lease sent before the later grant was answered after it, and "
         "may have carried the lease past it"},
    });

static_assert(kUncertaintyCount == static_cast<size_t>(Uncertainty::RenewalInFlight) + 1,
              "kUncertaintyCount must count every Uncertainty");

}  // namespace

std::span<const OverlapClassInfo> overlap_classes() {
  return kOverlapClasses.rows();
}

const OverlapClassInfo& info(OverlapClass overlap_class) {
  return kOverlapClasses[overlap_class];
}

std::string_view name(OverlapClass overlap_class) {
  return kOverlapClasses.name(overlap_class);
}

std::optional<OverlapClass> overlap_class_named(std::string_view name) {
  return kOverlapClasses.named(name);
}

std::string overlap_class_list() {
  return kOverlapClasses.list();
}

const UncertaintyInfo& info(Uncertainty uncertainty) {
  return kUncertainties[uncertainty];
}

std::string_view name(Uncertainty uncertainty) {
  return kUncertainties.name(uncertainty);
}

std::optional<Uncertainty> uncertainty_named(std::string_view name) {
  return kUncertainties.named(name);
}

std::span<const ViolationKindInfo> violation_kinds() {
  return kViolationKinds.rows();
}

const ViolationKindInfo& info(ViolationKind kind) {
  return kViolationKinds[kind];
}

std::string_view name(ViolationKind kind) {
  return kViolationKinds.name(kind);
}

std::optional<ViolationKind> violation_kind_named(std::string_view name) {
  return kViolationKinds.named(name);
}

const std::vector<std::string>& violation_kind_names() {
  static const std::vector<std::string> names = kViolationKinds.names();
  return names;
}

std::string violation_kind_list() {
  return kViolationKinds.list();
}

}  // namespace locklab
