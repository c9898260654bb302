#include "cluster.h"

#include <thread>

#include "lock.h"

namespace locklab {

ClusterShape shape_for(const std::string& algorithm, const Topology& topology) {
  ClusterShape shape{1, topology.replicas};
  for (const auto& info : algorithms()) {
    if (info.id != algorithm) continue;
    if (info.multi_node) shape.masters = topology.nodes >= 3 ? topology.nodes : 5;
    if (info.needs_replica && shape.replicas == 0) shape.replicas = 1;
  }
  return shape;
}

Cluster::Cluster(int masters, int replicas, bool persistence) {
  for (int i = 0; i < masters; ++i) {
    RedisServerOptions options;
    options.persistence = persistence;
    options.name = "node" + std::to_string(i);
    masters_.push_back(std::make_unique<RedisServer>(options));
  }
  for (int i = 0; i < replicas; ++i) {
    RedisServerOptions options;
    options.persistence = persistence;
    options.name = "node0-replica" + std::to_string(i);
    options.replica_of = masters_[0]->endpoint();
    replicas_.push_back(std::make_unique<RedisServer>(options));
  }
  if (replicas > 0) wait_for_replicas(std::chrono::seconds(10));
}

Endpoint Cluster::client_endpoint(size_t /*client*/, size_t node) const {
  return masters_.at(node)->endpoint();
}

void Cluster::wait_for_replicas(std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  for (auto& replica : replicas_) {
    auto redis = replica->connect();
    for (;;) {
      Reply info = redis->command({"INFO", "replication"});
      if (info.str.find("master_link_status:up") != std::string::npos) break;
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error("replica on port " + std::to_string(replica->port()) +
                                 " did not sync with its master within " +
                                 std::to_string(limit.count()) + " ms");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

}  // namespace locklab
