#include "cluster.h"

#include <unistd.h>

#include <atomic>
#include <iostream>
#include <mutex>
#include <set>
#include <thread>

#include "hiredis_connection.h"
#include "lock.h"

namespace locklab {

namespace {
// Puts a replica the run promoted back under its master; says so when it cannot.
void put_back(const Endpoint& replica, const Endpoint& master, const ConnectionOptions& auth) {
  try {
    make_replica_of(replica, master, auth);
  } catch (const std::exception& e) {
    std::cerr << "locklab: could not put " << replica.str() << " back under its master "
              << master.str() << " after the run's failover: " << e.what() << "\n";
  }
}
}  // namespace

namespace {
// Each reason once per lab: a suite would otherwise repeat it for every run.
void say_once(const std::string& message) {
  static std::mutex mu;
  static std::set<std::string> said;
  std::lock_guard l(mu);
  if (said.insert(message).second) std::cerr << "locklab: " << message << "\n";
}
}  // namespace

Cluster::Cluster(const ClusterShape& shape, int clients, uint64_t seed) : masters_(shape.masters) {
  const int total = shape.masters + shape.replicas;
  bool netns = shape.netns;
  if (netns) {
    if (auto why = netns_unavailable_reason()) {
      say_once(*why + "; using the fault proxy");
      netns = false;
    }
  }
  if (netns) {
    for (int i = 0; i < total; ++i) nodes_.push_back(std::make_unique<NetnsNode>(size_t(clients)));
    if (shape.delay_faults && !nodes_.front()->netem_available()) {
      say_once(kNoNetemMessage);
      nodes_.clear();
      netns = false;
    }
  }
  if (shape.server_clocks)
    for (int i = 0; i < total; ++i) clocks_.push_back(std::make_unique<ServerClock>());
  auto options_for = [&](int i, std::string name) {
    RedisServerOptions options;
    options.persistence = shape.persistence;
    options.name = std::move(name);
    if (!clocks_.empty()) options.env = clocks_[i]->env();
    if (!nodes_.empty() && i < int(nodes_.size())) {
      // Any port is free in a namespace of its own; every address there is the node's.
      options.port = NetnsNode::kPort;
      options.host = nodes_[i]->node_address();
      options.bind = "0.0.0.0";
      options.run_prefix = nodes_[i]->run_prefix();
    }
    return options;
  };
  for (int i = 0; i < shape.masters; ++i)
    servers_.push_back(std::make_unique<RedisServer>(options_for(i, "node" + std::to_string(i))));
  for (int r = 0; r < shape.replicas; ++r) {
    const int index = shape.masters + r;
    RedisServerOptions options = options_for(index, "node0-replica" + std::to_string(r));
    if (nodes_.empty()) {
      replication_links_.push_back(
          std::make_unique<FaultProxy>(servers_[0]->endpoint(), seed + 7 * r));
    } else {
      // In its namespace the replica reaches the lab only at the lab's end of
      // its veth; the replication proxy listens there.
      replication_links_.push_back(std::make_unique<FaultProxy>(
          servers_[0]->endpoint(), seed + 7 * r, nodes_[size_t(index)]->lab_address()));
    }
    options.replica_of = replication_links_.back()->endpoint();
    options.announce_self = true;
    servers_.push_back(std::make_unique<RedisServer>(options));
  }
  for (int r = 0; r < shape.replicas; ++r)
    wait_until_replica_synced(servers_[0]->endpoint(), servers_[shape.masters + r]->endpoint(),
                              std::chrono::seconds(10));
  if (shape.sentinels > 0) {
    SentinelOptions options;
    options.sentinels = shape.sentinels;
    sentinels_ = std::make_unique<SentinelGroup>(servers_[0]->endpoint(), options);
    sentinels_->wait_until_replicas_known(size_t(shape.replicas), std::chrono::seconds(20));
  }
  for (const auto& server : servers_) addresses_.push_back(server->endpoint());
  build_links(shape, clients, seed);
}

Cluster::Cluster(const Target& target, const ClusterShape& shape, int clients, uint64_t seed)
    : masters_(shape.masters), auth_(target.connection_options()) {
  if (size_t(shape.masters) > target.masters.size() ||
      size_t(shape.replicas) > target.replicas.size())
    throw std::logic_error("the run asks more servers of " + target.describe() + " than it has");
  if (!target.sentinels.empty()) {
    external_sentinels_ = SentinelView{target.sentinels, target.master_name, auth_};
    if (shape.sentinels > 0)
      external_sentinels_->wait_until_replicas_known(1, std::chrono::seconds(60));
    // Clients find the master through Sentinel, so every server may be it.
    const Endpoint master = external_sentinels_->master_address();
    addresses_.push_back(master);
    for (const Endpoint& server : target.servers())
      if (!(server == master)) addresses_.push_back(server);
    if (addresses_.size() > target.servers().size())
      throw std::runtime_error(target.describe() + ": Sentinel names " + master.str() +
                               " master of '" + target.master_name +
                               "', and the file lists it neither in masters nor in replicas");
  } else {
    addresses_.assign(target.masters.begin(), target.masters.begin() + shape.masters);
    addresses_.insert(addresses_.end(), target.replicas.begin(),
                      target.replicas.begin() + shape.replicas);
  }
  // A probe key of this cluster's own: parallel runs share the target.
  static std::atomic<uint64_t> probes{0};
  const std::string probe = target.key_prefix + "replication-probe:" + std::to_string(::getpid()) +
                            ":" + std::to_string(probes++);
  for (int r = 0; r < shape.replicas; ++r)
    wait_until_replica_synced(addresses_[0], addresses_.at(size_t(masters_ + r)),
                              std::chrono::seconds(30), auth_, probe);
  build_links(shape, clients, seed);
}

void Cluster::build_links(const ClusterShape& shape, int clients, uint64_t seed) {
  const size_t total = addresses_.size();
  if (shape.client_links && shape.simulated_links && nodes_.empty()) {
    for (int c = 0; c < clients; ++c) {
      simulated_links_.emplace_back();
      for (size_t s = 0; s < total; ++s)
        simulated_links_.back().push_back(
            std::make_unique<SimulatedLink>(seed * 131 + uint64_t(c) * total + s));
    }
    return;
  }
  for (int c = 0; c < clients && shape.client_links && nodes_.empty(); ++c) {
    links_.emplace_back();
    for (size_t s = 0; s < total; ++s)
      links_.back().push_back(
          std::make_unique<FaultProxy>(addresses_[s], seed * 131 + uint64_t(c) * total + s));
  }
  // Relays only where node 0 may move, for locks given their addresses once.
  if (total > masters_ && (shape.client_links || !nodes_.empty()))
    for (int c = 0; c < clients; ++c)
      node0_relays_.push_back(std::make_unique<FaultProxy>(link_endpoint(size_t(c), 0)));
}

Endpoint Cluster::link_endpoint(size_t client, size_t server) const {
  if (!nodes_.empty()) return Endpoint{nodes_.at(server)->client_address(client), NetnsNode::kPort};
  if (links_.empty()) return addresses_.at(server);
  return links_.at(client).at(server)->endpoint();
}

// Proxies first, so no client traffic is in flight while servers stop.
Cluster::~Cluster() {
  node0_relays_.clear();
  links_.clear();
  for (const auto& [replica, master] : to_demote_) put_back(replica, master, auth_);
  demote_on_signal_.clear();
  sentinels_.reset();
  replication_links_.clear();
  servers_.clear();
  // After the servers: a namespace a process still runs in outlives its deletion.
  nodes_.clear();
  clocks_.clear();
}

RedisServer& Cluster::server(size_t i) {
  if (servers_.empty())
    throw std::logic_error("server " + std::to_string(i) +
                           " belongs to an external target: the lab does not control it");
  return *servers_.at(i);
}

Endpoint Cluster::current_master() const {
  if (sentinels_) return sentinels_->master_address();
  return external_sentinels_.value().master_address();
}

size_t Cluster::server_index(const Endpoint& server) const {
  for (size_t i = 0; i < addresses_.size(); ++i)
    if (addresses_[i] == server) return i;
  throw RedisError("Sentinel names " + server.str() + ", which is not a server of this run", false);
}

Endpoint Cluster::client_endpoint(size_t client, size_t node) {
  size_t server = node;
  if (node == 0) {
    if (has_sentinels()) {
      server = server_index(current_master());
    } else {
      std::lock_guard l(mu_);
      server = node0_server_;
    }
  }
  return link_endpoint(client, server);
}

NetworkLink& Cluster::link(size_t client, size_t server) {
  if (!nodes_.empty()) return nodes_.at(server)->link(client);
  if (!simulated_links_.empty()) return *simulated_links_.at(client).at(server);
  if (links_.empty())
    throw std::logic_error("this cluster was built without client links (no link fault asked)");
  return *links_.at(client).at(server);
}

bool Cluster::hold_server(size_t server) {
  for (auto& links : simulated_links_) links.at(server)->hold();
  return !simulated_links_.empty();
}

bool Cluster::release_server(size_t server) {
  for (auto& links : simulated_links_) links.at(server)->release();
  return !simulated_links_.empty();
}

SimulatedLink* Cluster::simulated_link(size_t client, size_t node) {
  if (simulated_links_.empty()) return nullptr;
  // Virtual runs have no replicas: node `node` is server `node`.
  return simulated_links_.at(client).at(node).get();
}

Endpoint Cluster::stable_endpoint(size_t client, size_t node) {
  if (node == 0 && !node0_relays_.empty()) return node0_relays_.at(client)->endpoint();
  return client_endpoint(client, node);
}

void Cluster::redirect_node0(size_t server) {
  size_t before;
  {
    std::lock_guard l(mu_);
    before = node0_server_;
    node0_server_ = server;
  }
  for (size_t c = 0; c < node0_relays_.size(); ++c) {
    node0_relays_[c]->retarget(link_endpoint(c, server));
    // Their open connections lead to the old master: closed here and now, so
    // that a client's next command finds its connection closed and
    // reconnects to the new one. Left to the cut of the old master's links,
    // the close would reach the client only once the relay's own thread
    // passed it on, and a command sent meanwhile would be lost on the way.
    if (before != server) node0_relays_[c]->cut();
  }
}

void Cluster::promote(size_t server) {
  const Endpoint replica = addresses_.at(server);
  if (servers_.empty())
    if (auto master = master_of(replica, auth_)) {
      std::lock_guard l(mu_);
      to_demote_.emplace_back(replica, *master);
      demote_on_signal_.push_back(std::make_unique<CleanupOnSignal>(
          [replica, master = *master, auth = auth_] { put_back(replica, master, auth); }));
    }
  promote_replica(replica, auth_);
  // The other replicas follow the new master, as Sentinel (or an operator)
  // makes them: their links now lead there, and the open ones are closed so
  // that they reconnect and resynchronise from it. Replicas of a target stay
  // as they are (they are put back only by their own failover).
  if (!servers_.empty())
    for (size_t r = 0; r < replication_links_.size(); ++r) {
      if (masters_ + r == server) continue;
      replication_links_[r]->retarget(replica);
      replication_links_[r]->cut();
    }
}

Endpoint Cluster::start_sentinel_failover() {
  if (!has_sentinels()) throw std::runtime_error("this run has no sentinels");
  const Endpoint master = current_master();
  if (sentinels_) {
    sentinels_->expect_failover();
    servers_.at(server_index(master))->kill();
  } else {
    external_sentinels_->force_failover(std::chrono::seconds(20));
  }
  return master;
}

size_t Cluster::await_sentinel_failover(const Endpoint& old_master,
                                        std::chrono::milliseconds timeout) {
  const SentinelView view = sentinels_ ? sentinels_->view() : external_sentinels_.value();
  const size_t now = server_index(view.wait_for_failover(old_master, timeout));
  redirect_node0(now);
  return now;
}

std::unique_ptr<Cluster> make_cluster(const Target* target, const ClusterShape& shape, int clients,
                                      uint64_t seed) {
  if (target) return std::make_unique<Cluster>(*target, shape, clients, seed);
  return std::make_unique<Cluster>(shape, clients, seed);
}

}  // namespace locklab
