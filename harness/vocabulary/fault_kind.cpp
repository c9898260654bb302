#include "fault_kind.h"

#include <array>
#include <vector>

namespace locklab {
namespace {

constexpr double kMaxMs = 3'600'000;

constexpr FaultParam kDeltaMs{.name = "delta_ms",
                              .unit = "ms",
                              .min = -kMaxMs,
                              .max = kMaxMs,
                              .sweepable = true,
                              .meaning = "how far the clock jumps (negative: backwards)"};
constexpr FaultParam kRate{.name = "rate",
                           .type = ParamType::Number,
                           .unit = "×",
                           .max = 1000,
                           .fallback = 1.0,
                           .sweepable = true,
                           .meaning = "how fast the clock runs: 2 = twice as fast, 0.5 = half"};

// Each kind's parameters and explore's ranges (in multiples of the lease
// unless said otherwise), named so the rows below can point at them.
constexpr FaultParam kJumpParams[] = {kDeltaMs};
constexpr FaultParam kRateParams[] = {kRate};
constexpr FaultParam kCrashNodeParams[] = {
    {.name = "restart_after_ms",
     .unit = "ms",
     .max = kMaxMs,
     .sweepable = true,
     .meaning = "restart the killed server after this long (absent: it stays down)"}};
constexpr auto kPartitionHowNames = kPartitionHows.name_array();
constexpr FaultParam kPartitionParams[] = {
    {.name = "how",
     .type = ParamType::Choice,
     .choices = kPartitionHowNames,
     .meaning = "blackhole: packets vanish and requests hang; reject: connections are refused"}};
constexpr FaultParam kDelayParams[] = {
    {.name = "delay_ms",
     .unit = "ms",
     .max = kMaxMs,
     .sweepable = true,
     .meaning = "added latency in each direction"},
    {.name = "jitter_ms",
     .unit = "ms",
     .max = kMaxMs,
     .sweepable = true,
     .meaning = "up to this much more, at random (order is kept)"}};
constexpr auto kFailoverModeNames = kFailoverModes.name_array();
constexpr Needs kFailoverModeNeeds[] = {Need::Sentinels, Needs()};
// A manual failover is quicker, so explore tries more of them.
constexpr int kFailoverModeWeights[] = {20, 80};
constexpr FaultParam kFailoverParams[] = {
    {.name = "mode",
     .type = ParamType::Choice,
     .choices = kFailoverModeNames,
     .meaning = "sentinel: kill the master and let Sentinel promote; manual: REPLICAOF NO ONE, "
                "and the other replicas follow the new master",
     .choice_needs = kFailoverModeNeeds,
     .choice_weights = kFailoverModeWeights}};

constexpr DrawnRange kPauseRanges[] = {{"duration_ms", 0.1, 5.0}};
constexpr DrawnRange kJumpRanges[] = {{"delta_ms", 0.1, 5.0},
                                      {"duration_ms", 0.1, 3.0, true, true}};
constexpr DrawnRange kRateRanges[] = {{"rate", 0.25, 4.0, false}, {"duration_ms", 0.5, 5.0}};
constexpr DrawnRange kSleepRanges[] = {{"duration_ms", 0.1, 3.0}};
constexpr DrawnRange kRestartRanges[] = {{"restart_after_ms", 0.1, 3.0, true, true}};
constexpr DrawnRange kPartitionRanges[] = {{"duration_ms", 0.1, 5.0, true, true}};
constexpr DrawnRange kDelayRanges[] = {
    {"delay_ms", 0.01, 1.0}, {"jitter_ms", 0.0, 0.5}, {"duration_ms", 0.5, 5.0, true, true}};
constexpr DrawnRange kCutReplicationRanges[] = {{"duration_ms", 0.5, 5.0, true, true}};

using FaultKindTable = WordTable<FaultKindInfo, &FaultKindInfo::kind, kFaultKindCount>;

// One row per kind, in enum order (checked when compiled).
constexpr FaultKindTable kFaultKinds({
    {.kind = FaultKind::Pause,
     .name = "pause",
     .target = FaultTarget::Client,
     .duration = DurationRule::Required,
     .undoable = true,
     .colour = "#475569",
     .meaning = "stop-the-world pause of a client: its threads, watchdog and connections freeze",
     .explore_weight = 6,
     .explore_ranges = kPauseRanges},
    {.kind = FaultKind::CrashClient,
     .name = "crash-client",
     .target = FaultTarget::Client,
     .duration = DurationRule::None,
     .instant = true,
     .moment = true,
     .colour = "#92400e",
     .meaning = "the client dies at its next step and releases nothing",
     .explore_weight = 2},
    {.kind = FaultKind::ClockJump,
     .name = "clock-jump",
     .target = FaultTarget::Client,
     .needs = Need::ClientClock,
     .duration = DurationRule::Optional,
     .undoable = true,
     .instant = true,
     .params = kJumpParams,
     .colour = "#0d9488",
     .meaning = "the client's clock jumps (back again after duration_ms or at its until, if given)",
     .explore_weight = 4,
     .explore_ranges = kJumpRanges},
    {.kind = FaultKind::ClockRate,
     .name = "clock-rate",
     .target = FaultTarget::Client,
     .needs = Need::ClientClock,
     .duration = DurationRule::Required,
     .undoable = true,
     .params = kRateParams,
     .colour = "#0d9488",
     .meaning = "the client's clock runs at `rate` times real time",
     .explore_weight = 3,
     .explore_ranges = kRateRanges},
    {.kind = FaultKind::ServerClockJump,
     .name = "server-clock-jump",
     .target = FaultTarget::Server,
     .needs = Need::ServerClock,
     .duration = DurationRule::Optional,
     .undoable = true,
     .instant = true,
     .params = kJumpParams,
     .colour = "#0f766e",
     .meaning = "a redis-server's wall clock jumps, so its keys expire early or late",
     .explore_weight = 3,
     .explore_ranges = kJumpRanges},
    {.kind = FaultKind::ServerClockRate,
     .name = "server-clock-rate",
     .target = FaultTarget::Server,
     .needs = Need::ServerClock,
     .duration = DurationRule::Required,
     .undoable = true,
     .params = kRateParams,
     .colour = "#0f766e",
     .meaning = "a redis-server's wall clock runs at `rate` times real time",
     .explore_weight = 2,
     .explore_ranges = kRateRanges},
    {.kind = FaultKind::SigstopNode,
     .name = "sigstop-node",
     .target = FaultTarget::Server,
     .needs = Need::ServerProcess,
     .duration = DurationRule::Required,
     .undoable = true,
     .colour = "#334155",
     .meaning = "a redis-server is stopped (SIGSTOP) and continued afterwards",
     .explore_weight = 3,
     .explore_ranges = kPauseRanges},
    {.kind = FaultKind::DebugSleep,
     .name = "debug-sleep",
     .target = FaultTarget::Server,
     .needs = Need::DebugCommand,
     .duration = DurationRule::Required,
     .colour = "#334155",
     .meaning = "a redis-server blocks in DEBUG SLEEP for duration_ms",
     .explore_weight = 2,
     .explore_ranges = kSleepRanges},
    {.kind = FaultKind::CrashNode,
     .name = "crash-node",
     .target = FaultTarget::Server,
     .needs = Need::ServerProcess,
     .duration = DurationRule::None,
     .params = kCrashNodeParams,
     .colour = "#92400e",
     .meaning = "a redis-server is killed (SIGKILL), losing what it did not persist",
     .explore_weight = 2,
     .explore_ranges = kRestartRanges},
    {.kind = FaultKind::Partition,
     .name = "partition",
     .target = FaultTarget::Link,
     .needs = Need::ClientLinks,
     .duration = DurationRule::Optional,
     .undoable = true,
     .params = kPartitionParams,
     .colour = "#9333ea",
     .meaning = "the links between the clients and servers stop carrying traffic",
     .explore_weight = 3,
     .explore_ranges = kPartitionRanges},
    {.kind = FaultKind::Delay,
     .name = "delay",
     .target = FaultTarget::Link,
     .needs = Need::ClientLinks | Need::LinkLatency,
     .duration = DurationRule::Optional,
     .undoable = true,
     .params = kDelayParams,
     .colour = "#d97706",
     .meaning = "the links between the clients and servers delay traffic",
     .explore_weight = 2,
     .explore_ranges = kDelayRanges},
    {.kind = FaultKind::Cut,
     .name = "cut",
     .target = FaultTarget::Link,
     .needs = Need::ClientLinks,
     .duration = DurationRule::None,
     .instant = true,
     .moment = true,
     .colour = "#7e22ce",
     .meaning = "open connections between the clients and servers are closed (new ones may follow)",
     .explore_weight = 1},
    {.kind = FaultKind::CutReplication,
     .name = "cut-replication",
     .target = FaultTarget::Replication,
     .needs = Need::Replica | Need::ReplicationLinks,
     .duration = DurationRule::Optional,
     .undoable = true,
     .colour = "#a21caf",
     .real_time_only = "replication keeps its own pace, in real time",
     .meaning = "node 0's replicas (all, or those in `nodes`) stop receiving its replication "
                "stream",
     .explore_weight = 2,
     .explore_ranges = kCutReplicationRanges},
    {.kind = FaultKind::Failover,
     .name = "failover",
     .target = FaultTarget::Cluster,
     // Clients reach the new master through their links, which follow it.
     .needs = Need::Replica | Need::Promotion | Need::ClientLinks,
     .duration = DurationRule::None,
     .instant = true,
     .params = kFailoverParams,
     .colour = "#ea580c",
     .real_time_only = "replication and Sentinel keep their own pace, in real time",
     .meaning = "node 0's master is replaced by one of its replicas (the first, or the one in "
                "`nodes`: manual mode only)",
     .explore_weight = 2},
});

static_assert(kFaultKindCount == static_cast<size_t>(FaultKind::Failover) + 1,
              "kFaultKindCount must count every FaultKind");

}  // namespace

std::span<const FaultKindInfo> fault_kinds() {
  return kFaultKinds.rows();
}

const FaultKindInfo& info(FaultKind kind) {
  return kFaultKinds[kind];
}

std::string_view name(FaultKind kind) {
  return kFaultKinds.name(kind);
}

std::optional<FaultKind> fault_kind_named(std::string_view name) {
  return kFaultKinds.named(name);
}

const FaultKindInfo* fault_kind_info(std::string_view name) {
  return kFaultKinds.find(name);
}

std::string fault_kind_names() {
  return kFaultKinds.list();
}

const FaultParam* find_param(FaultKind kind, std::string_view param) {
  for (const auto& p : info(kind).params)
    if (p.name == param) return &p;
  return nullptr;
}

std::string_view need_meaning(Need need) {
  switch (need) {
    case Need::ClientClock:
      return "the clients' clocks";
    case Need::ClientLinks:
      return "the links between clients and servers";
    case Need::LinkLatency:
      return "links that delay traffic";
    case Need::ServerClock:
      return "the servers' clocks";
    case Need::ServerProcess:
      return "control of the server processes";
    case Need::DebugCommand:
      return "DEBUG SLEEP on the servers";
    case Need::Replica:
      return "a replica of node 0";
    case Need::ReplicationLinks:
      return "the replicas' links to their master";
    case Need::Promotion:
      return "the right to promote a replica";
    case Need::Sentinels:
      return "Sentinel watching node 0";
  }
  return "?";
}

std::string_view target_name(FaultTarget target) {
  return kFaultTargets.name(target);
}

std::string_view fault_colour(std::string_view name) {
  const FaultKindInfo* row = fault_kind_info(name);
  return row ? row->colour : "#6b7280";
}

std::string fault_kinds_markdown() {
  std::string out =
      "| kind | target | duration_ms | undone | parameters | needs | what it does |\n"
      "| --- | --- | --- | --- | --- | --- | --- |\n";
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
    std::string needs;
    auto add = [&needs](Needs set, const std::string& when) {
      for (Need need : kNeeds)
        if (set.has(need))
          needs += (needs.empty() ? "" : "; ") + std::string(need_meaning(need)) + when;
    };
    add(row.needs, "");
    for (const auto& p : row.params)
      for (size_t c = 0; c < p.choice_needs.size(); ++c)
        add(p.choice_needs[c], " (" + std::string(p.name) + " " + std::string(p.choices[c]) + ")");
    const std::string duration(kDurationRules.name(row.duration));
    out += "| `" + std::string(row.name) + "` | " + std::string(target_name(row.target)) + " | " +
           duration + " | " + (row.undoable ? "yes" : "no") + " | " +
           (params.empty() ? "—" : params) + " | " + (needs.empty() ? "—" : needs) + " | " +
           std::string(row.meaning) + " |\n";
  }
  return out;
}

}  // namespace locklab
