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
#include <optional>
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
  // Sentinel's failover-timeout once a failover is expected
  // (SentinelGroup::expect_failover): how long each of its steps may take.
  std::chrono::milliseconds failover_timeout{3000};
  // Its failover-timeout until then. Sentinel also waits that long before it
  // re-points a replica that replicates from an address other than the
  // master's (+fix-slave-config, at its next INFO of the replica, every
  // 10 s): with 3 s, a replica behind the lab's replication proxy would be
  // sent to the master itself about 10 s after Sentinel met it, and a cut of
  // its link would cut nothing from then on.
  std::chrono::milliseconds failover_timeout_until_expected{std::chrono::hours(1)};
  int parallel_syncs = 1;
  std::map<std::string, std::string> env;  // e.g. a ServerClock's env()
  std::chrono::milliseconds start_timeout{5000};
};

// Sentinels as a client sees them: their addresses and the name they know
// one master by, whoever started them (this lab, or a team for its own
// Redis). `data_auth` is what commands sent to the data nodes themselves
// (ROLE, to confirm a promotion) authenticate with.
struct SentinelView {
  std::vector<Endpoint> sentinels;
  std::string master_name;
  ConnectionOptions data_auth;

  // The master as a client finds it: the answer of the first sentinel that
  // answers SENTINEL GET-MASTER-ADDR-BY-NAME. Throws RedisError if none does.
  Endpoint master_address() const;

  // Returns once every sentinel lists at least `replicas` reachable replicas,
  // knows every other sentinel of the view, and no failover is in progress
  // (failover needs all three). Throws std::runtime_error with what each
  // sentinel knows after `timeout`.
  void wait_until_replicas_known(size_t replicas, std::chrono::milliseconds timeout) const;

  // Returns the new master once a majority of sentinels answer, all that
  // answer name the same master other than `old_master`, and that server
  // reports role master. Throws std::runtime_error with what each sentinel
  // says after `timeout`.
  Endpoint wait_for_failover(const Endpoint& old_master, std::chrono::milliseconds timeout) const;

  // Asks a sentinel to fail the master over now (SENTINEL FAILOVER), as an
  // operator would: Sentinel promotes a replica and demotes the old master,
  // which keeps running. Retries while a failover is in progress or no
  // replica is fit yet. Throws std::runtime_error with the last refusal after
  // `timeout`.
  void force_failover(std::chrono::milliseconds timeout) const;
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

  // This group as its clients see it (SentinelView, above).
  SentinelView view() const { return {endpoints(), master_name(), {}}; }
  Endpoint master_address() const { return view().master_address(); }
  void wait_until_replicas_known(size_t replicas, std::chrono::milliseconds timeout) const {
    view().wait_until_replicas_known(replicas, timeout);
  }
  Endpoint wait_for_failover(const Endpoint& old_master, std::chrono::milliseconds timeout) const {
    return view().wait_for_failover(old_master, timeout);
  }
  // Sets every sentinel's failover-timeout to options.failover_timeout,
  // before the lab fails the master: a sentinel that does not answer (one
  // the story stopped) is passed over. Throws std::runtime_error when none
  // takes it.
  void expect_failover() const;

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
void promote_replica(const Endpoint& replica, const ConnectionOptions& auth = {});

// The master `server` replicates from, as it names it (INFO replication's
// master_host and master_port), or nullopt when it is a master itself.
// Throws RedisError if unreachable.
std::optional<Endpoint> master_of(const Endpoint& server, const ConnectionOptions& auth = {});

// Makes `server` a replica of `master` (REPLICAOF host port): it drops what
// it holds and resynchronises. Throws std::runtime_error if it refuses.
void make_replica_of(const Endpoint& server, const Endpoint& master,
                     const ConnectionOptions& auth = {});

// Returns once `replica` has a live link to its master and has applied a
// write made on `master` by this call once the link was up (key `probe`, set
// and deleted): from then on new writes stream to it at once. Throws
// std::runtime_error with the replica's link and offset after `timeout`.
void wait_until_replica_synced(const Endpoint& master, const Endpoint& replica,
                               std::chrono::milliseconds timeout,
                               const ConnectionOptions& auth = {},
                               const std::string& probe = "locklab:replication-probe");

}  // namespace locklab
