// The fault vocabulary: every kind of fault the lab can inject, one table row
// each. The scenario parser, the nemesis, sweep, the history's FORMAT.md and
// the reports read this table; nothing else lists the kinds.
//
// Adding a kind: one enumerator, one row in kFaultKinds (fault_kind.cpp), and
// one case in Nemesis::apply's switch, which does not compile (-Werror=switch)
// until the new kind is handled.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace locklab {

enum class FaultKind {
  Pause,            // stop-the-world pause of a client (watchdog included)
  CrashClient,      // a client dies at its next step, releasing nothing
  ClockJump,        // a client's clock jumps
  ClockRate,        // a client's clock runs fast or slow
  ServerClockJump,  // a redis-server's wall clock jumps (clock shim)
  ServerClockRate,  // a redis-server's wall clock runs fast or slow
  SigstopNode,      // a redis-server is stopped with SIGSTOP
  DebugSleep,       // a redis-server blocks in DEBUG SLEEP
  CrashNode,        // a redis-server is killed, optionally restarted later
  Partition,        // client ↔ server links drop (blackhole) or refuse (reject)
  Delay,            // client ↔ server links delay traffic
  Cut,              // client ↔ server connections are closed once
  CutReplication,   // the replicas' links to their master drop traffic
  Failover,         // node 0's master is replaced by its replica
};
inline constexpr size_t kFaultKindCount = 14;

// What a fault acts on; decides which of `clients` / `nodes` it reads.
enum class FaultTarget {
  Client,       // clients (`clients`; empty = every client, or the trigger client)
  Server,       // servers (`nodes`; empty = every master)
  Link,         // the client × server proxies (`clients` × `nodes`)
  Replication,  // the replication links of node 0's replicas
  Cluster,      // node 0's master group as a whole
};

// Whether `duration_ms` is required, allowed, or meaningless for a kind.
enum class DurationRule { Required, Optional, None };

enum class ParamType { Integer, Number, Choice };

// One parameter of a fault kind, as written in a scenario's fault object.
struct FaultParam {
  std::string_view name;  // the JSON field, e.g. "delta_ms"
  ParamType type = ParamType::Integer;
  std::string_view unit;                  // "ms", "×" (a rate), "" for choices
  double min = 0, max = 0;                // inclusive bounds (Number: min exclusive when min == 0)
  double fallback = 0;                    // the value when the field is absent (Integer, Number)
  std::vector<std::string_view> choices;  // ParamType::Choice; the first is the default
  bool sweepable = false;                 // `locklab sweep --param` may vary it
  std::string_view meaning;
};

struct FaultKindInfo {
  FaultKind kind;
  std::string_view name;  // the scenario's and the history's `kind` / `f`
  FaultTarget target;
  DurationRule duration;
  // The nemesis can take it back when duration_ms ends (or at the end of the run).
  bool undoable = false;
  // A moment rather than an interval: drawn as a mark when no end was recorded.
  bool instant = false;
  std::vector<FaultParam> params;  // kind-specific parameters, beside the common fields
  std::string_view colour;         // the reports' colour for it (one per family)
  std::string_view meaning;        // one line for people
};

// Every kind, in enum order.
std::span<const FaultKindInfo> fault_kinds();

// The row of `kind`.
const FaultKindInfo& info(FaultKind kind);

// The kind named `name`, or nullopt.
std::optional<FaultKind> fault_kind_named(std::string_view name);

// The row named `name` (a history's nemesis `f`), or nullptr.
const FaultKindInfo* fault_kind_info(std::string_view name);

// "pause, crash-client, …": every name, in table order, for messages.
std::string fault_kind_names();

// The parameter `param` of `kind`, or nullptr when the kind has none such.
const FaultParam* find_param(FaultKind kind, std::string_view param);

// "client", "server", …
std::string_view target_name(FaultTarget target);

// The reports' colour for a recorded nemesis `f` (grey for names the table
// does not know, e.g. from another tool's history).
std::string_view fault_colour(std::string_view name);

// The fault vocabulary as a Markdown table (one row per kind), as FORMAT.md
// and `locklab faults` show it.
std::string fault_kinds_markdown();

}  // namespace locklab
