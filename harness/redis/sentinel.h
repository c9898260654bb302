// Redis Sentinel on loopback: a group of real redis-sentinel processes
// watching one master, for failover faults; plus the replication helpers a
// failover scenario needs (wait for a replica to catch up, promote by hand).
//
// Sentinel learns replicas from the master's INFO (at connect, then about
// every 10 s) and other sentinels from hello messages (every 2 s). Failover
// takes about 2 s on loopback only once every sentinel knows the replica and
// the others, so start the group after the replica is in sync and call
// wait_until_replicas_known() before the fault.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "connection.h"
#include "process.h"
#include "temp_dir.h"

namespace locklab {

struct SentinelOptions {
  std::string master_name = "locklab";
  int sentinels = 3;
  int quorum = 2;
  std::chrono::milliseconds down_after{1000};
  std::chrono::milliseconds failover_timeout{3000};
  int parallel_syncs = 1;
  std::map<std::string, std::string> env;  // e.g. a ServerClock's env()
  std::chrono::milliseconds start_timeout{5000};
};

class SentinelGroup {
 public:
  // Starts the sentinels (each on a free port, with its config in its own
  // temp dir) monitoring `master`, and returns once each answers. Throws
  // std::runtime_error naming the sentinel and its last log line on failure.
  explicit SentinelGroup(Endpoint master, SentinelOptions options = {});
  // Kills every sentinel and removes its dir.
  ~SentinelGroup();
  SentinelGroup(const SentinelGroup&) = delete;
  SentinelGroup& operator=(const SentinelGroup&) = delete;

  const std::string& master_name() const { return options_.master_name; }
  std::vector<Endpoint> endpoints() const;
  std::vector<pid_t> pids() const;
  std::vector<std::filesystem::path> dirs() const;  // config and log of each sentinel

  // The master as a client finds it: the answer of the first sentinel that
  // answers SENTINEL GET-MASTER-ADDR-BY-NAME. Throws RedisError if none does.
  Endpoint master_address() const;

  // Returns once every sentinel lists at least `replicas` reachable replicas
  // and knows every other sentinel (failover needs both). Throws
  // std::runtime_error with what each sentinel knows after `timeout`.
  void wait_until_replicas_known(size_t replicas, std::chrono::milliseconds timeout) const;

  // Returns the new master once a majority of sentinels answer, all that
  // answer name the same master other than `old_master`, and that server
  // reports role master. Throws std::runtime_error with what each sentinel
  // says after `timeout`.
  Endpoint wait_for_failover(const Endpoint& old_master, std::chrono::milliseconds timeout) const;

 private:
  struct Sentinel {
    std::unique_ptr<TempDir> dir;
    Endpoint endpoint;
    std::unique_ptr<ChildProcess> process;
  };
  void start(Sentinel& sentinel, const Endpoint& master, int index);

  SentinelOptions options_;
  std::vector<Sentinel> sentinels_;
};

// Promotes `replica` by hand, as an operator would (REPLICAOF NO ONE): it
// stops replicating and accepts writes at once, whatever it has not received
// is lost. Throws std::runtime_error if it refuses or does not report role
// master afterwards, RedisError if unreachable.
void promote_replica(const Endpoint& replica);

// Returns once `replica` has a live link to its master and has applied a
// write made on `master` by this call (a probe key, set and deleted): from
// then on new writes stream to it at once. Throws
// std::runtime_error with both offsets after `timeout`.
void wait_until_replica_synced(const Endpoint& master, const Endpoint& replica,
                               std::chrono::milliseconds timeout);

}  // namespace locklab
