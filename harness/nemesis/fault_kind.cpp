#include "fault_kind.h"

#include <array>

namespace locklab {
namespace {

constexpr double kMaxMs = 3'600'000;

const FaultParam kDeltaMs{"delta_ms",
                          ParamType::Integer,
                          "ms",
                          -kMaxMs,
                          kMaxMs,
                          0,
                          {},
                          true,
                          "how far the clock jumps (negative: backwards)"};
const FaultParam kRate{"rate",
                       ParamType::Number,
                       "×",
                       0,
                       1000,
                       1.0,
                       {},
                       true,
                       "how fast the clock runs: 2 = twice as fast, 0.5 = half"};

// One row per kind, in enum order (checked below).
const std::array<FaultKindInfo, kFaultKindCount> kFaultKinds = {{
    {FaultKind::Pause,
     "pause",
     FaultTarget::Client,
     DurationRule::Required,
     true,
     false,
     {},
     "#475569",
     "stop-the-world pause of a client: its threads, watchdog and connections freeze"},
    {FaultKind::CrashClient,
     "crash-client",
     FaultTarget::Client,
     DurationRule::None,
     false,
     true,
     {},
     "#92400e",
     "the client dies at its next step and releases nothing"},
    {FaultKind::ClockJump,
     "clock-jump",
     FaultTarget::Client,
     DurationRule::Optional,
     true,
     true,
     {kDeltaMs},
     "#0d9488",
     "the client's clock jumps (back again after duration_ms, if given)"},
    {FaultKind::ClockRate,
     "clock-rate",
     FaultTarget::Client,
     DurationRule::Required,
     true,
     false,
     {kRate},
     "#0d9488",
     "the client's clock runs at `rate` times real time"},
    {FaultKind::ServerClockJump,
     "server-clock-jump",
     FaultTarget::Server,
     DurationRule::Optional,
     true,
     true,
     {kDeltaMs},
     "#0f766e",
     "a redis-server's wall clock jumps, so its keys expire early or late"},
    {FaultKind::ServerClockRate,
     "server-clock-rate",
     FaultTarget::Server,
     DurationRule::Required,
     true,
     false,
     {kRate},
     "#0f766e",
     "a redis-server's wall clock runs at `rate` times real time"},
    {FaultKind::SigstopNode,
     "sigstop-node",
     FaultTarget::Server,
     DurationRule::Required,
     true,
     false,
     {},
     "#334155",
     "a redis-server is stopped (SIGSTOP) and continued afterwards"},
    {FaultKind::DebugSleep,
     "debug-sleep",
     FaultTarget::Server,
     DurationRule::Required,
     false,
     false,
     {},
     "#334155",
     "a redis-server blocks in DEBUG SLEEP for duration_ms"},
    {FaultKind::CrashNode,
     "crash-node",
     FaultTarget::Server,
     DurationRule::None,
     false,
     false,
     {{"restart_after_ms",
       ParamType::Integer,
       "ms",
       0,
       kMaxMs,
       0,
       {},
       true,
       "restart the killed server after this long (absent: it stays down)"}},
     "#92400e",
     "a redis-server is killed (SIGKILL), losing what it did not persist"},
    {FaultKind::Partition,
     "partition",
     FaultTarget::Link,
     DurationRule::Optional,
     true,
     false,
     {{"how",
       ParamType::Choice,
       "",
       0,
       0,
       0,
       {"blackhole", "reject"},
       false,
       "blackhole: packets vanish and requests hang; reject: connections are refused"}},
     "#9333ea",
     "the links between the clients and servers stop carrying traffic"},
    {FaultKind::Delay,
     "delay",
     FaultTarget::Link,
     DurationRule::Optional,
     true,
     false,
     {{"delay_ms",
       ParamType::Integer,
       "ms",
       0,
       kMaxMs,
       0,
       {},
       true,
       "added latency in each direction"},
      {"jitter_ms",
       ParamType::Integer,
       "ms",
       0,
       kMaxMs,
       0,
       {},
       true,
       "up to this much more, at random (order is kept)"}},
     "#d97706",
     "the links between the clients and servers delay traffic"},
    {FaultKind::Cut,
     "cut",
     FaultTarget::Link,
     DurationRule::None,
     false,
     true,
     {},
     "#7e22ce",
     "open connections between the clients and servers are closed (new ones may follow)"},
    {FaultKind::CutReplication,
     "cut-replication",
     FaultTarget::Replication,
     DurationRule::Optional,
     true,
     false,
     {},
     "#a21caf",
     "node 0's replicas stop receiving its replication stream"},
    {FaultKind::Failover,
     "failover",
     FaultTarget::Cluster,
     DurationRule::None,
     false,
     true,
     {{"mode",
       ParamType::Choice,
       "",
       0,
       0,
       0,
       {"sentinel", "manual"},
       false,
       "sentinel: kill the master and let Sentinel promote; manual: REPLICAOF NO ONE"}},
     "#ea580c",
     "node 0's master is replaced by its first replica"},
}};

static_assert(kFaultKindCount == static_cast<size_t>(FaultKind::Failover) + 1,
              "kFaultKindCount must count every FaultKind");

}  // namespace

std::span<const FaultKindInfo> fault_kinds() {
  return kFaultKinds;
}

const FaultKindInfo& info(FaultKind kind) {
  return kFaultKinds.at(static_cast<size_t>(kind));
}

std::optional<FaultKind> fault_kind_named(std::string_view name) {
  for (const auto& row : kFaultKinds)
    if (row.name == name) return row.kind;
  return std::nullopt;
}

const FaultKindInfo* fault_kind_info(std::string_view name) {
  for (const auto& row : kFaultKinds)
    if (row.name == name) return &row;
  return nullptr;
}

std::string fault_kind_names() {
  std::string out;
  for (const auto& row : kFaultKinds) out += (out.empty() ? "" : ", ") + std::string(row.name);
  return out;
}

const FaultParam* find_param(FaultKind kind, std::string_view param) {
  for (const auto& p : info(kind).params)
    if (p.name == param) return &p;
  return nullptr;
}

std::string_view target_name(FaultTarget target) {
  switch (target) {
    case FaultTarget::Client:
      return "client";
    case FaultTarget::Server:
      return "server";
    case FaultTarget::Link:
      return "link";
    case FaultTarget::Replication:
      return "replication";
    case FaultTarget::Cluster:
      return "cluster";
  }
  return "?";
}

std::string_view fault_colour(std::string_view name) {
  const FaultKindInfo* row = fault_kind_info(name);
  return row ? row->colour : "#6b7280";
}

std::string fault_kinds_markdown() {
  std::string out =
      "| kind | target | duration_ms | undone | parameters | what it does |\n"
      "| --- | --- | --- | --- | --- | --- |\n";
  for (const auto& row : kFaultKinds) {
    std::string params;
    for (const auto& p : row.params) {
      std::string text = "`" + std::string(p.name) + "`";
      if (p.type == ParamType::Choice) {
        std::string choices;
        for (auto c : p.choices) choices += (choices.empty() ? "" : "\\|") + std::string(c);
        text += " (" + choices + ")";
      } else if (!p.unit.empty()) {
        text += " (" + std::string(p.unit) + ")";
      }
      params += (params.empty() ? "" : ", ") + text;
    }
    const char* duration = row.duration == DurationRule::Required   ? "required"
                           : row.duration == DurationRule::Optional ? "optional"
                                                                    : "—";
    out += "| `" + std::string(row.name) + "` | " + std::string(target_name(row.target)) + " | " +
           duration + " | " + (row.undoable ? "yes" : "no") + " | " +
           (params.empty() ? "—" : params) + " | " + std::string(row.meaning) + " |\n";
  }
  return out;
}

}  // namespace locklab
