#include "lock_test_support.h"

#include <csignal>
#include <stdexcept>
#include <thread>

#include "gated_connection.h"
#include "hiredis_connection.h"

namespace locklab::testing {

TestClient::TestClient(const std::string& algorithm, const std::string& id,
                       const std::vector<Endpoint>& servers, ClientOptions options) {
  // hiredis writes with write(2): a write to a killed server must fail with
  // EPIPE, not end the test with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  LockContext context;
  context.client_id = id;
  context.node_count = servers.size();
  context.clock = &clock;
  context.gate = &gate;
  context.connect = [this, servers, timeouts = options.timeouts](size_t node) {
    return std::make_unique<GatedConnection>(
        std::make_unique<HiredisConnection>(servers.at(node), timeouts), gate);
  };
  context.step = [this](std::string_view step) {
    if (on_step) on_step(step);
  };
  context.seed = std::hash<std::string>{}(algorithm + "/" + id);
  context.param = [params = options.params](std::string_view name) -> std::optional<int64_t> {
    auto it = params.find(std::string(name));
    if (it == params.end()) return std::nullopt;
    return it->second;
  };
  lock_ = make_lock(algorithm, context);
}

std::vector<std::unique_ptr<RedisServer>> start_servers(size_t count) {
  std::vector<std::unique_ptr<RedisServer>> servers;
  for (size_t i = 0; i < count; ++i)
    servers.push_back(
        std::make_unique<RedisServer>(RedisServerOptions{.name = "node" + std::to_string(i)}));
  return servers;
}

std::vector<Endpoint> endpoints_of(const std::vector<std::unique_ptr<RedisServer>>& servers) {
  std::vector<Endpoint> endpoints;
  for (const auto& server : servers) endpoints.push_back(server->endpoint());
  return endpoints;
}

Reply redis_command(const RedisServer& server, const std::vector<std::string>& argv) {
  return server.connect()->command(argv);
}

void wait_for_replica(const RedisServer& master) {
  // "In sync" as WAIT sees it: the replica acknowledges a fresh write. Its
  // state=online in INFO comes a little before that.
  auto redis = master.connect();
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    redis->command({"SET", "locklab:replica-probe", "1"});
    if (redis->command({"WAIT", "1", "100"}).integer >= 1) {
      redis->command({"DEL", "locklab:replica-probe"});
      return;
    }
  }
  throw std::runtime_error("no replica of " + master.endpoint().str() +
                           " acknowledged writes within 10 s");
}

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace locklab::testing
