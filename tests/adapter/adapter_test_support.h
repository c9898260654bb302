// What the adapter tests share: where the adapters are, and a client built the
// way the lab builds one (its own pause gate and clock, its endpoints).
#pragma once

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "adapter_lock.h"
#include "clock.h"
#include "pause_gate.h"

namespace locklab::testing {

using namespace std::chrono_literals;

// The example adapter users copy, run by the interpreter that has redis-py.
inline AdapterConfig example_adapter() {
  return {.command = std::string("/usr/bin/python3 ") + EXAMPLE_ADAPTERS_DIR "/redis_py_lock.py"};
}

// One of the broken adapters beside this file; `timeout` is both the reply
// and the start timeout.
inline AdapterConfig broken_adapter(const std::string& script,
                                    std::chrono::milliseconds timeout = 10s) {
  return {.command = std::string("/bin/sh ") + ADAPTER_TEST_DIR "/" + script,
          .reply_timeout = timeout,
          .start_timeout = timeout};
}

// One client `id` whose lock is the adapter of `config`, reaching Redis node i
// at servers[i].
struct AdapterClient {
  AdapterClient(const AdapterConfig& config, const std::string& id,
                const std::vector<Endpoint>& servers) {
    LockContext context;
    context.client_id = id;
    context.node_count = servers.size();
    context.endpoint = [servers](size_t node) { return servers.at(node); };
    context.clock = &clock;
    context.gate = &gate;
    lock = std::make_unique<AdapterLock>(config, context);
  }

  PauseGate gate;
  SkewableClock clock{&gate};
  std::unique_ptr<AdapterLock> lock;  // last: it uses the gate and clock
};

// The scheduler state of process `pid` ('R', 'S', 'T' stopped, ...), or '?'.
inline char process_state(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  size_t paren = text.rfind(')');
  return paren == std::string::npos || paren + 2 >= text.size() ? '?' : text[paren + 2];
}

}  // namespace locklab::testing
