// A lab process that builds one node namespace with a server in it, prints
// "<namespace> <host veth>" and waits (at most a minute) to be killed.
#include <chrono>
#include <iostream>
#include <thread>

#include "netns.h"
#include "process.h"
#include "redis_server.h"

int main() {
  locklab::install_termination_cleanup();
  try {
    locklab::NetnsNode node(2);
    locklab::RedisServerOptions options;
    options.port = locklab::NetnsNode::kPort;
    options.host = node.node_address();
    options.bind = "0.0.0.0";
    options.run_prefix = node.run_prefix();
    options.name = "holder";
    locklab::RedisServer server(options);
    node.link(0).blackhole();
    std::cout << node.name() << " " << node.host_veth() << std::endl;
    std::this_thread::sleep_for(std::chrono::minutes(1));
  } catch (const std::exception& e) {
    std::cerr << "netns_holder: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
