// The shape of a run's cluster: how many masters, replicas and Sentinels a
// lock gets under a scenario's topology, and what the servers and links must
// offer its faults. Pure: the scenario parser checks faults against it, the
// run's plan decides it, the Cluster starts it.
#pragma once

#include "lock.h"
#include "scenario.h"

namespace locklab {

struct ClusterShape {
  int masters = 1;
  int replicas = 0;
  int sentinels = 0;
  bool persistence = false;
  bool server_clocks = false;  // start servers under the clock shim
  bool client_links = true;    // a fault proxy per client × server (else direct)
  // On virtual time the client links are simulated_link.h's, carried by the
  // clients' connections, not proxies (whose threads keep real time).
  bool simulated_links = false;
  bool netns = false;         // asked for the netns backend (Topology::network)
  bool delay_faults = false;  // the run delays links (netns needs netem for that)
};

// The servers a lock runs on under `topology`: a multi-node lock (Redlock)
// runs over topology.nodes independent masters (5 when the scenario names
// fewer than 3), every other lock on one master; a lock that needs a replica
// gets at least one.
ClusterShape shape_for(bool multi_node, bool needs_replica, const Topology& topology);

// The same for the built-in algorithm `algorithm`.
inline ClusterShape shape_for(const AlgorithmInfo& algorithm, const Topology& topology) {
  return shape_for(algorithm.multi_node, algorithm.needs_replica, topology);
}

}  // namespace locklab
