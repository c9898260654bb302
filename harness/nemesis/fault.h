// A fault as a value: what, where, when, for how long. Scenarios list them;
// the nemesis applies and undoes them and records both in the history.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace locklab {

// A client step that fires a fault: the nth time `client` reaches `step`
// ("acquired", "before-write", "after-send", …).
struct StepTrigger {
  std::string client;
  std::string step;
  int nth = 1;
};

struct Fault {
  // pause | crash-client | clock-jump | clock-rate              (clients)
  // server-clock-jump | server-clock-rate | sigstop-node |
  // debug-sleep | crash-node                                     (servers)
  // partition | delay | cut                                      (client ↔ server links)
  // cut-replication                                              (replica ↔ master links)
  // failover                                                     (node 0's master)
  std::string kind;
  std::optional<int64_t> at_ms;        // from the start of the run, or
  std::optional<StepTrigger> when;     // right after a client step
  std::optional<int64_t> duration_ms;  // undone after this long (absent: lasts to the end)
  std::vector<std::string>
      clients;             // targets; empty = every client (the trigger client for pause/crash)
  std::vector<int> nodes;  // server indices; empty = every master
  // Parameters, by kind.
  int64_t delta_ms = 0;                 // *-clock-jump
  double rate = 1.0;                    // *-clock-rate
  int64_t delay_ms = 0, jitter_ms = 0;  // delay
  std::string how = "blackhole";        // partition: blackhole | reject
  std::optional<int64_t>
      restart_after_ms;  // crash-node: restart after this long (absent: stays down)
  std::string mode =
      "sentinel";  // failover: sentinel (kill the master, Sentinel promotes) | manual

  // The fault as recorded in the history's nemesis events.
  nlohmann::json describe() const;
};

// True if some fault needs the servers started under the clock shim.
bool needs_server_clocks(const std::vector<Fault>& faults);

}  // namespace locklab
