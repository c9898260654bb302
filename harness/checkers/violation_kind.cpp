#include "violation_kind.h"

#include <array>

namespace locklab {
namespace {

// One row per kind, in enum order (checked below).
const std::array<ViolationKindInfo, kViolationKindCount> kViolationKinds = {{
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
     "nobody could take the lock for longer than the liveness threshold, though nobody held it"},
    {ViolationKind::Reentrancy, "reentrancy", ViolationSubject::Lock, "nesting",
     "wrong nesting depth", "wrong nesting depths", "#4d7c0f",
     "a re-entrant lock reported a nesting depth the history contradicts"},
}};

static_assert(kViolationKindCount == static_cast<size_t>(ViolationKind::Reentrancy) + 1,
              "kViolationKindCount must count every ViolationKind");

// One row per class, in enum order (checked below).
const std::array<OverlapClassInfo, kOverlapClassCount> kOverlapClasses = {{
    {OverlapClass::BrokenLease, "broken-lease", "broken lease",
     "the lock granted the later holder while the earlier holder's lease was still in force: "
     "the lock's fault, which no care of the holder prevents"},
    {OverlapClass::Overrun, "overrun", "overrun",
     "the later holder was granted after the earlier holder's lease had ended, and the earlier "
     "holder went on acting as the holder: only fencing prevents this"},
    {OverlapClass::Unclassified, "unclassified", "unclassified",
     "the history cannot tell whether the later grant came inside the earlier lease or after it"},
}};

static_assert(kOverlapClassCount == static_cast<size_t>(OverlapClass::Unclassified) + 1,
              "kOverlapClassCount must count every OverlapClass");

}  // namespace

std::span<const OverlapClassInfo> overlap_classes() {
  return kOverlapClasses;
}

const OverlapClassInfo& info(OverlapClass overlap_class) {
  return kOverlapClasses.at(static_cast<size_t>(overlap_class));
}

std::string_view name(OverlapClass overlap_class) {
  return info(overlap_class).name;
}

std::optional<OverlapClass> overlap_class_named(std::string_view name) {
  for (const auto& row : kOverlapClasses)
    if (row.name == name) return row.overlap_class;
  return std::nullopt;
}

std::string overlap_class_list() {
  std::string out;
  for (const auto& row : kOverlapClasses) out += (out.empty() ? "" : ", ") + std::string(row.name);
  return out;
}

std::span<const ViolationKindInfo> violation_kinds() {
  return kViolationKinds;
}

const ViolationKindInfo& info(ViolationKind kind) {
  return kViolationKinds.at(static_cast<size_t>(kind));
}

std::string_view name(ViolationKind kind) {
  return info(kind).name;
}

std::optional<ViolationKind> violation_kind_named(std::string_view name) {
  for (const auto& row : kViolationKinds)
    if (row.name == name) return row.kind;
  return std::nullopt;
}

const std::vector<std::string>& violation_kind_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& row : kViolationKinds) out.emplace_back(row.name);
    return out;
  }();
  return names;
}

std::string violation_kind_list() {
  std::string out;
  for (const auto& row : kViolationKinds) out += (out.empty() ? "" : ", ") + std::string(row.name);
  return out;
}

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::Safe:
      return "safe";
    case Verdict::Violated:
      return "violated";
    case Verdict::Unknown:
      return "unknown";
    case Verdict::Error:
      return "error";
  }
  return "unknown";
}

std::optional<Verdict> verdict_named(std::string_view name) {
  for (Verdict v : {Verdict::Safe, Verdict::Violated, Verdict::Unknown, Verdict::Error})
    if (verdict_name(v) == name) return v;
  return std::nullopt;
}

}  // namespace locklab
