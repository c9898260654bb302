// The Redis side of one algorithm run: the real servers a scenario's topology
// asks for, started fresh for the run and stopped with it, and the links the
// nemesis can break. When the run's faults act on client links, every client
// reaches every server through a fault proxy of its own (client × server), so
// a partition is a set of proxies turned into black holes; otherwise clients
// connect to the servers directly, as fast as the network allows (a proxy
// hop doubles every command's round trip and costs a thread's CPU). On
// virtual time the client links are simulated by the clients' connections
// instead (simulated_link.h). Every replica replicates through a proxy.
//
// With the netns backend (shape.netns) each server runs in a network
// namespace of its own instead (netns.h) and client c reaches it at an
// address of its own there, so a link is a set of iptables rules and netem
// qdiscs rather than a proxy; a replica replicates through a proxy at the
// lab's end of its veth, and Sentinels run in the lab's namespace. Where that
// backend cannot run, the cluster says why once on stderr and uses the proxies.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "connection.h"
#include "fault_proxy.h"
#include "fault_targets.h"
#include "netns.h"
#include "process.h"
#include "redis_server.h"
#include "scenario.h"
#include "sentinel.h"
#include "server_clock.h"
#include "shape.h"
#include "simulated_link.h"
#include "target.h"

namespace locklab {

class Cluster final : public FaultTargets {
 public:
  // Starts the servers (masters 0…m-1, then the replicas of master 0), waits
  // for replicas to sync and sentinels to know them, and builds one proxy per
  // client × server. Throws std::runtime_error if anything cannot start.
  Cluster(const ClusterShape& shape, int clients, uint64_t seed);
  // The same over an external target's servers, which it neither starts nor
  // stops: `shape` says how many of its masters the run uses; client links
  // are proxies in front of them like before. With Sentinels, server 0 is
  // whichever server they name master now (an earlier run may have failed it
  // over) and every listed replica is a server of the run; `shape.sentinels`
  // > 0 first waits until they could fail over. Replicas the run uses must be
  // in sync first (a probe key under the target's prefix). Faults acting on
  // server processes are never asked of it (the runner reports them
  // unavailable first); failovers are, when the target allows them.
  Cluster(const Target& target, const ClusterShape& shape, int clients, uint64_t seed);
  ~Cluster() override;

  // FaultTargets (see fault_targets.h).
  size_t master_count() const override { return masters_; }
  size_t server_count() const override { return addresses_.size(); }
  // Throws std::logic_error on an external target (no server process of the lab's).
  RedisServer& server(size_t i) override;
  Endpoint server_endpoint(size_t i) override { return addresses_.at(i); }
  ConnectionOptions server_auth() const override { return auth_; }
  ServerClock* server_clock(size_t i) override {
    return clocks_.empty() ? nullptr : clocks_.at(i).get();
  }
  bool hold_server(size_t server) override;
  bool release_server(size_t server) override;
  FaultProxy& replication_link(size_t replica) override { return *replication_links_.at(replica); }
  // Throws std::logic_error when the cluster was built without client links.
  NetworkLink& link(size_t client, size_t server) override;
  // Whether the servers run in network namespaces.
  bool uses_netns() const { return !nodes_.empty(); }
  bool has_sentinels() const override { return sentinels_ || external_sentinels_; }
  void promote(size_t server) override;
  Endpoint start_sentinel_failover() override;
  size_t await_sentinel_failover(const Endpoint& old_master,
                                 std::chrono::milliseconds timeout) override;
  SentinelGroup* sentinels() { return sentinels_.get(); }

  // Client `client`'s simulated link to lock node `node` (shape.simulated_links),
  // for its connection to carry; nullptr when its links are proxies or none.
  SimulatedLink* simulated_link(size_t client, size_t node);

  // Where client `client` sends traffic for lock node `node` right now: its
  // proxy to that master (or the master itself, without client links), or, for node 0 after a
  // failover, to whichever server is master now (asked of Sentinel, like a real client would).
  Endpoint client_endpoint(size_t client, size_t node);

  // An address for node `node` that stays valid for the whole run, for a
  // lock that is given its addresses once (an adapter): with replicas, node
  // 0's is a relay in front of the client's proxies that moves to the new
  // master at a failover (redirect_node0); otherwise it is client_endpoint().
  Endpoint stable_endpoint(size_t client, size_t node);

  // After a failover: node 0 is served by server `server` from now on.
  void redirect_node0(size_t server) override;

  // The index of the server at `server`. Throws RedisError if no server of
  // this cluster listens there.
  size_t server_index(const Endpoint& server) const;

 private:
  void build_links(const ClusterShape& shape, int clients, uint64_t seed);
  // Where client `client` reaches server `server` over its own link.
  Endpoint link_endpoint(size_t client, size_t server) const;
  Endpoint current_master() const;

  size_t masters_ = 0;
  std::vector<std::unique_ptr<NetnsNode>> nodes_;   // [master], with the netns backend
  std::vector<Endpoint> addresses_;                 // of every server, in server order
  std::optional<SentinelView> external_sentinels_;  // an external target's
  ConnectionOptions auth_;                          // an external target's credentials
  // Replicas of an external target promoted by the run, and the master each
  // is put back under when the run ends, or when the lab is ended by a signal.
  std::vector<std::pair<Endpoint, Endpoint>> to_demote_;
  std::vector<std::unique_ptr<CleanupOnSignal>> demote_on_signal_;
  std::vector<std::unique_ptr<ServerClock>> clocks_;
  std::vector<std::unique_ptr<RedisServer>> servers_;
  std::vector<std::unique_ptr<FaultProxy>> replication_links_;
  std::vector<std::vector<std::unique_ptr<FaultProxy>>> links_;               // [client][server]
  std::vector<std::vector<std::unique_ptr<SimulatedLink>>> simulated_links_;  // [client][server]
  std::vector<std::unique_ptr<FaultProxy>> node0_relays_;  // [client], with replicas
  std::unique_ptr<SentinelGroup> sentinels_;
  std::mutex mu_;
  size_t node0_server_ = 0;
};

// The servers of one run: `target`'s when there is one (the lab starts
// nothing), otherwise fresh ones of `shape`.
std::unique_ptr<Cluster> make_cluster(const Target* target, const ClusterShape& shape, int clients,
                                      uint64_t seed);

}  // namespace locklab
