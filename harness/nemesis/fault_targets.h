// What the nemesis may act on in a run's cluster: the narrow interface the
// runner's Cluster implements, so that the nemesis depends on the fault
// tools and the servers, never on the runner.
#pragma once

#include <chrono>
#include <cstddef>

#include "connection.h"

namespace locklab {

class FaultProxy;
class NetworkLink;
class RedisServer;
class ServerClock;

class FaultTargets {
 public:
  virtual ~FaultTargets() = default;

  // Servers are numbered masters first (0 … master_count()-1), then the
  // replicas of master 0.
  virtual size_t master_count() const = 0;
  virtual size_t server_count() const = 0;
  virtual RedisServer& server(size_t server) = 0;

  // Where server `server` listens, and what a command sent to it directly
  // authenticates with: servers the lab did not start have no RedisServer,
  // yet some faults (DEBUG SLEEP, when allowed) only need to reach them.
  virtual Endpoint server_endpoint(size_t server) = 0;
  virtual ConnectionOptions server_auth() const { return {}; }

  // The clock of server `server`, or nullptr when the servers were not
  // started under the clock shim.
  virtual ServerClock* server_clock(size_t server) = 0;

  // The link between client `client` (0-based) and server `server`: a fault
  // proxy, or rules in the server's network namespace (the backend is how a
  // fault is done, never which).
  virtual NetworkLink& link(size_t client, size_t server) = 0;

  // Server `server` stops reading, as SIGSTOP or DEBUG SLEEP stop it, when
  // the clients' links are simulated (on virtual time): every client's
  // link to it holds what reaches it until release_server(). False when
  // they are not: the caller stops the server itself.
  virtual bool hold_server(size_t /*server*/) { return false; }
  // Undoes hold_server(); false when the links are not simulated.
  virtual bool release_server(size_t /*server*/) { return false; }

  // The proxy replica `replica` (server master_count() + replica) replicates through.
  virtual FaultProxy& replication_link(size_t replica) = 0;

  // Whether Sentinel watches master 0.
  virtual bool has_sentinels() const = 0;

  // Makes replica `server` a master at once, as an operator would (REPLICAOF
  // NO ONE), and points node 0's other replicas at it, as Sentinel would. On
  // servers the lab did not start, only the replica changes, and it is put
  // back under its master when the run ends.
  virtual void promote(size_t server) = 0;

  // Starts a Sentinel failover of node 0's master and returns where that
  // master is: kills it when the lab started it; otherwise asks Sentinel to
  // fail it over (SENTINEL FAILOVER), and it keeps running until Sentinel
  // demotes it. Throws std::runtime_error when Sentinel refuses.
  virtual Endpoint start_sentinel_failover() = 0;

  // Waits (at most `timeout`) until Sentinel reports a master other than
  // `old_master`, points node 0's clients at it and returns its server
  // index. Throws std::runtime_error when no failover happened in time.
  virtual size_t await_sentinel_failover(const Endpoint& old_master,
                                         std::chrono::milliseconds timeout) = 0;

  // Node 0 is served by server `server` from now on (after a failover).
  virtual void redirect_node0(size_t server) = 0;
};

}  // namespace locklab
