// The Redis side of one algorithm run: the real servers a scenario's topology
// asks for, started fresh for the run and stopped with it, and how each
// client reaches each node.
#pragma once

#include <memory>
#include <vector>

#include "connection.h"
#include "redis_server.h"
#include "scenario.h"

namespace locklab {

class Cluster {
 public:
  // Starts `masters` independent masters (node 0 … masters-1) and `replicas`
  // replicas of node 0. Throws std::runtime_error if a server cannot start.
  Cluster(int masters, int replicas, bool persistence);

  size_t node_count() const { return masters_.size(); }
  RedisServer& node(size_t i) { return *masters_.at(i); }
  std::vector<std::unique_ptr<RedisServer>>& replicas() { return replicas_; }

  // Where client traffic to node `i` goes (later: the client's fault proxy).
  Endpoint client_endpoint(size_t client, size_t node) const;

  // Waits until every replica reports a finished sync with node 0.
  void wait_for_replicas(std::chrono::milliseconds limit);

 private:
  std::vector<std::unique_ptr<RedisServer>> masters_;
  std::vector<std::unique_ptr<RedisServer>> replicas_;
};

// How many masters and replicas `algorithm` needs under `topology`: Redlock
// runs over topology.nodes masters (5 when the scenario names fewer than 3);
// an algorithm that needs a replica gets at least one.
struct ClusterShape {
  int masters = 1;
  int replicas = 0;
};
ClusterShape shape_for(const std::string& algorithm, const Topology& topology);

}  // namespace locklab
