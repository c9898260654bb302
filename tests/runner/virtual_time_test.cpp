// Runs on virtual time against real redis-server: the server reads the
// virtual wall clock, the clock stands still while the server serves a
// request, the nemesis fires at exact virtual times, and a scenario and seed
// repeat their history byte for byte. (tests/core/virtual_time_test.cpp
// covers the scheduler alone.)
#include "virtual_time.h"

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "clock.h"
#include "fibers.h"
#include "hiredis_connection.h"
#include "redis_server.h"
#include "runner.h"
#include "server_clock.h"
#include "temp_dir.h"

namespace locklab {
namespace {

using nlohmann::json;
using namespace std::chrono;

constexpr int64_t kMs = 1'000'000;

std::string file_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every line of `history` as JSON.
std::vector<json> events_of(const std::filesystem::path& history) {
  std::vector<json> events;
  std::ifstream in(history);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) events.push_back(json::parse(line));
  return events;
}

TEST(VirtualTimeRedis, TheServerReadsTheVirtualWallClockAndItStandsStillWhileItServes) {
  VirtualTime time;
  VirtualTimeBinding bound(&time);
  ServerClock clock;  // made on virtual time: its env() adds the virtual clock
  RedisServerOptions options;
  options.env = clock.env();
  RedisServer server(options);
  std::atomic<bool> answered{false};
  bool answered_when_sleeper_woke = false;
  int64_t server_ms_before = -1, server_ms_after = -1, waited_ns = -1;
  auto server_ms = [](Connection& redis) {
    const Reply t = redis.command({"TIME"});
    return std::stoll(t.elements.at(0).str) * 1000 + std::stoll(t.elements.at(1).str) / 1000;
  };
  run_fibers({[&] {
                ConnectionOptions as_a_client;
                as_a_client.answers_take_time = true;
                HiredisConnection redis(server.endpoint(), as_a_client);
                server_ms_before = server_ms(redis);
                const int64_t sent = monotonic_ns();
                // The server takes 300 ms of real time over it.
                redis.command({"DEBUG", "SLEEP", "0.3"});
                waited_ns = monotonic_ns() - sent;
                answered = true;
                server_ms_after = server_ms(redis);
              },
              [&] {
                sleep_for(milliseconds(1));
                answered_when_sleeper_woke = answered;
              }});
  EXPECT_EQ(server_ms_before, VirtualTime::kStartWallNs / kMs + 0)
      << "the server's TIME is not the virtual wall clock";
  EXPECT_TRUE(answered_when_sleeper_woke) << "the clock moved while the server served DEBUG SLEEP";
  EXPECT_EQ(waited_ns, 100'000) << "a request costs its round trip, and nothing more";
  // TIME, DEBUG SLEEP and TIME again: three round trips of 0.1 ms.
  EXPECT_EQ(server_ms_after - server_ms_before, 0);
}

// A scenario file in `dir` with `faults`, told to set-nx-px.
std::filesystem::path story(const TempDir& dir, const json& faults, int64_t seed = 7) {
  const json scenario{{"name", "virtual-story"},
                      {"clients", 2},
                      {"duration_ms", 3000},
                      {"seed", seed},
                      {"algorithms", {"set-nx-px", "redisson-hash"}},
                      {"workload", {{"locks", {"L"}}, {"ttl_ms", 500}, {"work_ms", 20}}},
                      {"faults", faults}};
  const auto file = dir.path() / ("story-" + std::to_string(seed) + ".json");
  std::ofstream(file) << scenario.dump(2);
  return file;
}

ScenarioResults run_virtual(const std::filesystem::path& file, const std::filesystem::path& out) {
  RunOptions options;
  options.out_dir = out;
  options.servers.time = TimeMode::Virtual;
  return run_scenario(load_scenario(file), options);
}

TEST(VirtualTimeRedis, FaultsFireAtTheirVirtualTimes) {
  TempDir dir("locklab-vt-test");
  const json faults =
      json::array({{{"kind", "pause"}, {"at_ms", 700}, {"duration_ms", 300}, {"clients", {"c1"}}},
                   {{"kind", "crash-node"}, {"at_ms", 1200}, {"restart_after_ms", 450}},
                   {{"kind", "server-clock-jump"}, {"at_ms", 2000}, {"delta_ms", 2000}}});
  const ScenarioResults results = run_virtual(story(dir, faults), dir.path() / "out");
  for (const RunResult& run : results.runs) {
    ASSERT_FALSE(run.error) << *run.error;
    EXPECT_EQ(run.time, "virtual");
    std::vector<std::tuple<std::string, std::string, int64_t>> nemesis;
    for (const json& e : events_of(dir.path() / "out" / run.history))
      if (e["process"] == "nemesis")
        nemesis.emplace_back(e["f"], e["value"]["phase"], e["time_ns"].get<int64_t>());
    const std::vector<std::tuple<std::string, std::string, int64_t>> expected{
        {"pause", "start", 700 * kMs},
        {"pause", "end", 1000 * kMs},
        {"crash-node", "start", 1200 * kMs},
        {"crash-node", "end", 1650 * kMs},
        {"server-clock-jump", "start", 2000 * kMs}};
    EXPECT_EQ(nemesis, expected) << run.algorithm;
  }
}

TEST(VirtualTimeRedis, AScenarioAndSeedRepeatTheirHistoryByteForByte) {
  TempDir dir("locklab-vt-test");
  const json faults = json::array({{{"kind", "pause"},
                                    {"when", {{"client", "c1"}, {"step", "before-write"}}},
                                    {"duration_ms", 800}}});
  const auto file = story(dir, faults);
  for (int i = 0; i < 3; ++i) run_virtual(file, dir.path() / ("run" + std::to_string(i)));
  for (const char* lock : {"set-nx-px", "redisson-hash"}) {
    const std::string first = file_text(dir.path() / "run0" / lock / "history.jsonl");
    EXPECT_GT(first.size(), 1000u) << lock;
    for (int i = 1; i < 3; ++i)
      EXPECT_EQ(file_text(dir.path() / ("run" + std::to_string(i)) / lock / "history.jsonl"), first)
          << lock << ": run " << i << " told another history";
  }
  // Another seed is another story: the comparison above can fail.
  run_virtual(story(dir, faults, 8), dir.path() / "other");
  EXPECT_NE(file_text(dir.path() / "other" / "set-nx-px" / "history.jsonl"),
            file_text(dir.path() / "run0" / "set-nx-px" / "history.jsonl"));
}

}  // namespace
}  // namespace locklab
