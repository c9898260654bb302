// What recording costs a client, without Redis or the host in the figure:
// the six events of one set-nx-px acquisition (acquire, write and release,
// each invoked and answered, with the fields and values a client gives them
// in harness/runner/client.cpp) appended to a log that records them and to
// one that records nothing. Both build the events; the difference is the
// recording. `lock_bench recording` measures the same cost inside the real
// loop, where it shares the thread with sockets and Redis's replies.
//
//   recorder_bench [Google Benchmark flags]
//
// Under `valgrind --tool=callgrind` its instruction counts repeat exactly
// whatever else the machine does (docs/PERFORMANCE.md, section 2).
// A benchmark, not a test: nothing here asserts on time.
#include <benchmark/benchmark.h>

#include <string>

#include "recorder.h"
#include "temp_dir.h"

namespace {

using locklab::history::Event;
using locklab::history::ProcessLog;
using locklab::history::Recorder;
using locklab::history::Type;

Event event(Type type, const char* f, const std::string& lock, int64_t now) {
  Event e;
  e.type = type;
  e.f = f;
  e.lock = lock;
  e.client_time_ns = now;
  return e;
}

// One acquisition's events, as a client records them.
void record_acquisition(ProcessLog& log, const std::string& lock, const std::string& owner,
                        int64_t n) {
  Event invoke = event(Type::Invoke, "acquire", lock, n);
  invoke.value["ttl_ms"] = 10000;
  invoke.value["wait_ms"] = 5000;
  log.append(std::move(invoke));
  Event acquired = event(Type::Ok, "acquire", lock, n + 1);
  acquired.owner = owner;
  acquired.token = n;
  acquired.value["validity_ms"] = 9998;
  acquired.value["reentry"] = 1;
  acquired.value["attempt_ns"] = n * 1000;
  log.append(std::move(acquired));
  nlohmann::json value;
  value["read"] = n;
  value["write"] = n + 1;
  Event write = event(Type::Invoke, "write", lock, n + 2);
  write.token = n;
  write.value = value;
  log.append(std::move(write));
  Event written = event(Type::Ok, "write", lock, n + 3);
  written.token = n;
  written.value = std::move(value);
  log.append(std::move(written));
  Event release = event(Type::Invoke, "release", lock, n + 4);
  release.owner = owner;
  log.append(std::move(release));
  Event released = event(Type::Ok, "release", lock, n + 5);
  released.owner = owner;
  released.value["result"] = "released";
  log.append(std::move(released));
}

// range(0): 1 records (a spool in a temp dir), 0 records nothing.
void Acquisition(benchmark::State& state) {
  locklab::TempDir dir("locklab-recorder-bench");
  Recorder recorder(state.range(0) ? dir.path() : std::filesystem::path());
  ProcessLog& log = recorder.log_for("c17");
  const std::string lock = "lock-17", owner = "4f3a9c21e07b5d6811c0d2e3f4a5b6c7";
  int64_t n = 0;
  for (auto _ : state) record_acquisition(log, lock, owner, n++);
  state.SetItemsProcessed(int64_t(state.iterations()));
  state.SetLabel(state.range(0) ? "recorded" : "not recorded");
}
BENCHMARK(Acquisition)->Arg(0)->Arg(1);

}  // namespace

BENCHMARK_MAIN();
