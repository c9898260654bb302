// What every lock test needs: real redis-server processes, and clients built
// the way the lab builds them (a pausable, skewable clock; connections that
// pass the client's PauseGate; a step hook the test can set).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "clock.h"
#include "connection.h"
#include "lock.h"
#include "pause_gate.h"
#include "redis_server.h"

namespace locklab::testing {

using namespace std::chrono_literals;

struct ClientOptions {
  ConnectionOptions timeouts{std::chrono::milliseconds(300), std::chrono::milliseconds(500)};
  std::map<std::string, int64_t> params;  // LockContext::param
};

// One lock client: algorithm `algorithm` as client `id` against `servers`
// (node i = servers[i]).
class TestClient {
 public:
  TestClient(const std::string& algorithm, const std::string& id,
             const std::vector<Endpoint>& servers, ClientOptions options = {});
  TestClient(const TestClient&) = delete;
  TestClient& operator=(const TestClient&) = delete;

  Lock& lock() { return *lock_; }

  PauseGate gate;                                 // close() = stop-the-world pause of this client
  SkewableClock clock{&gate};                     // jump()/set_rate() = client clock skew
  std::function<void(std::string_view)> on_step;  // called at the lock's named steps, if set

 private:
  std::unique_ptr<Lock> lock_;  // last: it uses the gate and clock above
};

// `count` fresh servers on free loopback ports.
std::vector<std::unique_ptr<RedisServer>> start_servers(size_t count);
std::vector<Endpoint> endpoints_of(const std::vector<std::unique_ptr<RedisServer>>& servers);

// One command on a fresh direct connection (the test's own view of Redis).
Reply redis_command(const RedisServer& server, const std::vector<std::string>& argv);

// Blocks until a replica of `master` acknowledges writes (throws after 10 s).
void wait_for_replica(const RedisServer& master);

// Wall-clock ms as an unskewed client sees it.
int64_t wall_ms();

}  // namespace locklab::testing
