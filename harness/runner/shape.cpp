#include "shape.h"

namespace locklab {

ClusterShape shape_for(bool multi_node, bool needs_replica, const Topology& topology) {
  ClusterShape shape;
  shape.replicas = topology.replicas;
  shape.sentinels = topology.sentinels;
  shape.persistence = topology.persistence;
  shape.masters = !multi_node ? 1 : topology.nodes >= 3 ? topology.nodes : 5;
  if (needs_replica && shape.replicas == 0) shape.replicas = 1;
  return shape;
}

}  // namespace locklab
