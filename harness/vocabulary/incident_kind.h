// What a library left behind that its caller never saw: the incidents an
// adapter reports (harness/adapter/PROTOCOL.md, "Incidents"). They are not
// violations: the lab survives them because its adapters catch them, but an
// application on its runtime's defaults would not have, or would not have
// noticed. One table: history, results.json, JUnit and the reports spell them
// from here.
#pragma once

#include <optional>
#include <string_view>

#include "word_table.h"

namespace locklab {

enum class IncidentKind {
  kUnhandledRejection,  // a promise rejected with nobody to handle it (Node)
  kUncaughtException,   // an exception that ended a thread or task of the library
};

struct IncidentKindInfo {
  IncidentKind kind;
  std::string_view name;     // as the protocol, the history and results.json spell it
  std::string_view meaning;  // one line for people
  // What it would have done to an application on the runtime's defaults,
  // as a cell tells it ("…; <consequence>").
  std::string_view consequence;
};

inline constexpr WordTable<IncidentKindInfo, &IncidentKindInfo::kind, 2> kIncidentKinds({
    {IncidentKind::kUnhandledRejection, "unhandled-rejection",
     "the library left a rejected promise that nobody handled",
     "an application on Node's defaults (--unhandled-rejections=throw) would have crashed here"},
    {IncidentKind::kUncaughtException, "uncaught-exception",
     "an exception ended one of the library's own threads or tasks",
     "the thread or task died with it; on the runtime's defaults an application sees only a "
     "stack trace on stderr"},
});

inline std::string_view incident_name(IncidentKind kind) {
  return kIncidentKinds.name(kind);
}

// The kind named `name`; nullopt for any other text.
inline std::optional<IncidentKind> incident_named(std::string_view name) {
  return kIncidentKinds.named(name);
}

}  // namespace locklab
