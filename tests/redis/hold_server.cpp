// Test helper: starts a RedisServer, prints "<redis pid> <port>" and waits to
// be killed. Used to prove that no redis-server outlives a killed lab.
#include <unistd.h>

#include <iostream>

#include "process.h"
#include "redis_server.h"

int main() {
  locklab::install_termination_cleanup();
  locklab::RedisServer server;
  std::cout << server.pid() << " " << server.port() << std::endl;
  for (;;) pause();
}
