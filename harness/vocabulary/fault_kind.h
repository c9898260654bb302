// The fault vocabulary: every kind of fault the lab can inject, one table row
// each: what it acts on, what it needs of a run, its parameters, how explore
// draws it, how reports draw it. The scenario parser, the run's plan, the
// nemesis, the target's availability check, explore, sweep, the history's
// FORMAT.md and the reports read this table; nothing else lists the kinds.
//
// Adding a kind: one enumerator, one row in kFaultKinds (fault_kind.cpp, in
// enum order, which the compiler checks), and one case in
// Nemesis::start_fault's switch, which does not compile (-Werror=switch)
// until the new kind is handled. No other switch over FaultKind exists
// (tests/nemesis/fault_kind_test.cpp keeps it so).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "word_table.h"

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

// How a partition stops traffic: its `how`.
enum class PartitionHow {
  Blackhole,  // packets vanish and requests hang
  Reject,     // connections are refused
};
inline constexpr auto kPartitionHows = word_table<PartitionHow>({
    {PartitionHow::Blackhole, "blackhole", "packets vanish and requests hang"},
    {PartitionHow::Reject, "reject", "connections are refused"},
});

// How a failover replaces node 0's master: its `mode`.
enum class FailoverMode {
  Sentinel,  // kill the master and let Sentinel promote
  Manual,    // REPLICAOF NO ONE, and the other replicas follow the new master
};
inline constexpr auto kFailoverModes = word_table<FailoverMode>({
    {FailoverMode::Sentinel, "sentinel", "kill the master and let Sentinel promote"},
    {FailoverMode::Manual, "manual",
     "REPLICAOF NO ONE, and the other replicas follow the new master"},
});

// What a fault acts on; decides which of `clients` / `nodes` it reads.
enum class FaultTarget {
  Client,       // clients (`clients`; empty = every client, or the trigger client)
  Server,       // servers (`nodes`; empty = every master)
  Link,         // the client × server proxies (`clients` × `nodes`)
  Replication,  // the replication links of node 0's replicas (`nodes`: which, 0 = the first;
                // empty = all)
  Cluster,      // node 0's master group as a whole (`nodes`: the one replica promoted)
};
inline constexpr auto kFaultTargets = word_table<FaultTarget>({
    {FaultTarget::Client, "client", "clients"},
    {FaultTarget::Server, "server", "servers"},
    {FaultTarget::Link, "link", "the client × server links"},
    {FaultTarget::Replication, "replication", "the replication links of node 0's replicas"},
    {FaultTarget::Cluster, "cluster", "node 0's master group as a whole"},
});

// What a fault needs of a run beyond clients and a server to talk to. The
// run's plan provides it (servers under the clock shim, links through fault
// proxies, a replica, Sentinels…), or says why the run cannot have it (a
// target the lab did not start, a topology without a replica).
enum class Need : unsigned {
  ClientClock = 1u << 0,       // the clients' clocks (an adapter's, through the clock shim)
  ClientLinks = 1u << 1,       // the client × server links (fault proxies or namespaces)
  LinkLatency = 1u << 2,       // links that delay traffic (namespaces: the kernel's netem)
  ServerClock = 1u << 3,       // servers running under the clock shim
  ServerProcess = 1u << 4,     // the server processes themselves: signals, kill, restart
  DebugCommand = 1u << 5,      // DEBUG SLEEP, which a server must allow
  Replica = 1u << 6,           // a replica of node 0
  ReplicationLinks = 1u << 7,  // the links from node 0's replicas to their master
  Promotion = 1u << 8,         // the right to make a replica the master (a failover)
  Sentinels = 1u << 9,         // Sentinel watching node 0
};

// A set of needs.
class Needs {
 public:
  constexpr Needs() = default;
  constexpr Needs(Need need) : bits_(static_cast<unsigned>(need)) {}  // NOLINT: a set of one
  constexpr bool has(Need need) const { return bits_ & static_cast<unsigned>(need); }
  constexpr bool empty() const { return bits_ == 0; }
  // Every need of this set that `other` lacks.
  constexpr Needs without(Needs other) const { return Needs(bits_ & ~other.bits_); }
  constexpr Needs operator|(Needs other) const { return Needs(bits_ | other.bits_); }
  Needs& operator|=(Needs other) {
    bits_ |= other.bits_;
    return *this;
  }
  constexpr bool operator==(const Needs&) const = default;

 private:
  constexpr explicit Needs(unsigned bits) : bits_(bits) {}
  unsigned bits_ = 0;
};

constexpr Needs operator|(Need a, Need b) {
  return Needs(a) | Needs(b);
}

// Every need, in the order messages name them.
inline constexpr Need kNeeds[] = {Need::ClientClock, Need::ClientLinks,      Need::LinkLatency,
                                  Need::ServerClock, Need::ServerProcess,    Need::DebugCommand,
                                  Need::Promotion,   Need::ReplicationLinks, Need::Replica,
                                  Need::Sentinels};

// "a replica of node 0", … (for messages).
std::string_view need_meaning(Need need);

// Whether `duration_ms` is required, allowed, or meaningless for a kind.
enum class DurationRule { Required, Optional, None };
inline constexpr auto kDurationRules = word_table<DurationRule>({
    {DurationRule::Required, "required", "a fault of the kind must give duration_ms"},
    {DurationRule::Optional, "optional", "it may give duration_ms, or last to the end of the run"},
    {DurationRule::None, "—", "it has no duration_ms"},
});

enum class ParamType { Integer, Number, Choice };

// One parameter of a fault kind, as written in a scenario's fault object.
struct FaultParam {
  std::string_view name;  // the JSON field, e.g. "delta_ms"
  ParamType type = ParamType::Integer;
  std::string_view unit;    // "ms", "×" (a rate), "" for choices
  double min = 0, max = 0;  // inclusive bounds (Number: min exclusive when min == 0)
  double fallback = 0;      // the value when the field is absent (Integer, Number)
  std::span<const std::string_view> choices;  // ParamType::Choice; the first is the default
  bool sweepable = false;                     // `locklab sweep --param` may vary it
  std::string_view meaning;
  // ParamType::Choice: what each choice needs on top of the kind's needs
  // (parallel to `choices`; empty: nothing more), and how often explore
  // draws each (parallel to `choices`; empty: as often as the others).
  std::span<const Needs> choice_needs;
  std::span<const int> choice_weights;
};

// A numeric field explore draws for a kind, and from where: [low, high], in
// multiples of the lease when `per_ttl`, else as is (a clock rate).
struct DrawnRange {
  std::string_view param;  // "duration_ms", "delta_ms", "rate", …
  double low = 0, high = 0;
  bool per_ttl = true;
  bool optional = false;  // sometimes left out (a jump that is never undone)
};

struct FaultKindInfo {
  FaultKind kind;
  std::string_view name;  // the scenario's and the history's `kind` / `f`
  FaultTarget target;
  Needs needs;  // what every fault of the kind needs (a choice may add more)
  DurationRule duration;
  // The nemesis can take it back when duration_ms ends (or at the end of the run).
  bool undoable = false;
  // A moment rather than an interval: drawn as a mark when no end was recorded.
  bool instant = false;
  // Over once applied: nothing of it stays to undo or to end (a client's
  // crash, a cut). Its history event says so ("moment"), so that checkers do
  // not take it for a fault still in force. A kind without an end that is not
  // a moment (a server killed for good, a clock moved for good) lasts to the
  // end of the run.
  bool moment = false;
  std::span<const FaultParam> params;  // kind-specific parameters, beside the common fields
  std::string_view colour;             // the reports' colour for it (one per family)
  // Why it cannot act on a run's virtual time (harness/core/virtual_time.h);
  // empty: it acts on it as on real time.
  std::string_view real_time_only;
  std::string_view meaning;  // one line for people
  // How `locklab explore` draws it: how often against the other kinds (the
  // faults that break leases more often than the rarer machinery), and the
  // numeric fields it draws.
  int explore_weight = 1;
  std::span<const DrawnRange> explore_ranges;
};

// Every kind, in enum order.
std::span<const FaultKindInfo> fault_kinds();

// The row of `kind`.
const FaultKindInfo& info(FaultKind kind);

// The name of `kind` ("crash-client"), as scenarios and histories spell it.
std::string_view name(FaultKind kind);

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
