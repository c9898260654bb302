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
#include "simulated_link.h"
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

// A redis-server on a virtual clock and a client's connection to it over a
// simulated link, as a virtual run's client has (simulated_link.h).
struct LinkedServer {
  ServerClock clock;  // made on virtual time: its env() adds the virtual clock
  RedisServer server{[this] {
    RedisServerOptions options;
    options.env = clock.env();
    return options;
  }()};
  SimulatedLink link;

  ConnectionOptions client_options() {
    ConnectionOptions options;
    options.answers_take_time = true;
    options.command_timeout = milliseconds(1000);
    options.link = &link;
    return options;
  }
  // The server's own answer, not through the link.
  Reply direct(const std::vector<std::string>& argv) {
    return HiredisConnection(server.endpoint()).command(argv);
  }
};

// What a failed command threw: its message and whether it may have run.
struct Failure {
  std::string what;
  bool maybe_executed = false;
  int64_t after_ns = -1;  // from the command's sending
};

Failure failure_of(Connection& redis, const std::vector<std::string>& argv) {
  const int64_t sent = monotonic_ns();
  try {
    redis.command(argv);
  } catch (const RedisError& e) {
    return {e.what(), e.maybe_executed(), monotonic_ns() - sent};
  }
  return {"no error", false, monotonic_ns() - sent};
}

TEST(SimulatedLink, ARequestIntoABlackHoleIsLostAndTimesOutAtItsTimeoutOfVirtualTime) {
  VirtualTime time;
  VirtualTimeBinding bound(&time);
  LinkedServer redis;
  Failure lost;
  Reply after_heal;
  run_fibers({[&] {
    HiredisConnection client(redis.server.endpoint(), redis.client_options());
    EXPECT_TRUE(client.command({"SET", "before", "1"}).is_ok());
    redis.link.blackhole();
    lost = failure_of(client, {"SET", "inside", "1"});
    redis.link.pass();
    after_heal = client.command({"SET", "after", "1"});
  }});
  EXPECT_EQ(lost.after_ns, 1000 * kMs) << "the lost request waits its 1 s timeout, of virtual time";
  EXPECT_TRUE(lost.maybe_executed) << lost.what << ": the client cannot tell it was lost";
  EXPECT_NE(lost.what.find("timed out after 1000 ms"), std::string::npos) << lost.what;
  EXPECT_TRUE(after_heal.is_ok()) << "the healed link carries a new connection";
  EXPECT_EQ(redis.direct({"EXISTS", "before"}).integer, 1);
  EXPECT_EQ(redis.direct({"EXISTS", "inside"}).integer, 0) << "a request into a black hole ran";
  EXPECT_EQ(redis.direct({"EXISTS", "after"}).integer, 1);
}

TEST(SimulatedLink, AHealResetsTheConnectionThatLostARequestAtOnce) {
  VirtualTime time;
  VirtualTimeBinding bound(&time);
  LinkedServer redis;
  Failure lost;
  redis.link.blackhole();
  run_fibers({[&] {
                HiredisConnection client(redis.server.endpoint(), redis.client_options());
                lost = failure_of(client, {"SET", "inside", "1"});
              },
              [&] {
                sleep_for(milliseconds(300));
                redis.link.pass();
              }});
  EXPECT_EQ(lost.after_ns, 300 * kMs) << lost.what;
  EXPECT_TRUE(lost.maybe_executed);
  EXPECT_NE(lost.what.find("reset"), std::string::npos) << lost.what;
  EXPECT_EQ(redis.direct({"EXISTS", "inside"}).integer, 0);
}

TEST(SimulatedLink, ARefusingLinkResetsOpenConnectionsAndRefusesNewOnesUntilItHeals) {
  VirtualTime time;
  VirtualTimeBinding bound(&time);
  LinkedServer redis;
  Failure refused;
  Reply healed;
  run_fibers({[&] {
    HiredisConnection client(redis.server.endpoint(), redis.client_options());
    EXPECT_TRUE(client.command({"SET", "before", "1"}).is_ok());
    redis.link.reject();
    refused = failure_of(client, {"SET", "refused", "1"});
    redis.link.pass();
    healed = client.command({"SET", "healed", "1"});
  }});
  EXPECT_FALSE(refused.maybe_executed) << refused.what << ": a refused connect sends nothing";
  EXPECT_NE(refused.what.find("refused"), std::string::npos) << refused.what;
  EXPECT_EQ(refused.after_ns, 0) << "a refusal costs no time";
  EXPECT_TRUE(healed.is_ok());
  EXPECT_EQ(redis.direct({"EXISTS", "refused"}).integer, 0);
}

TEST(SimulatedLink, ACutClosesTheOpenConnectionOnceAndTheNextCommandOpensAnother) {
  VirtualTime time;
  VirtualTimeBinding bound(&time);
  LinkedServer redis;
  long long first_id = -1, second_id = -1, third_id = -1;
  run_fibers({[&] {
    HiredisConnection client(redis.server.endpoint(), redis.client_options());
    first_id = client.command({"CLIENT", "ID"}).integer;
    redis.link.cut();
    second_id = client.command({"CLIENT", "ID"}).integer;
    third_id = client.command({"CLIENT", "ID"}).integer;
  }});
  EXPECT_NE(second_id, first_id) << "the cut connection was used again";
  EXPECT_EQ(third_id, second_id) << "a cut acts once";
}

TEST(SimulatedLink, AnAnswerGivenBeforeTheLinkBrokeIsDelivered) {
  VirtualTime time;
  VirtualTimeBinding bound(&time);
  LinkedServer redis;
  Reply answer;
  Failure after;
  run_fibers({[&] {
    HiredisConnection client(redis.server.endpoint(), redis.client_options());
    client.send({"SET", "sent", "1"});
    // The nemesis acts only once every request out is answered: the
    // answer is on its way back when the link breaks.
    redis.link.reject();
    answer = client.receive();
    after = failure_of(client, {"GET", "sent"});
  }});
  EXPECT_TRUE(answer.is_ok()) << answer.describe();
  EXPECT_FALSE(after.maybe_executed) << after.what;
  EXPECT_NE(after.what.find("refused"), std::string::npos) << after.what;
}

// The server's clock when it ran TIME, in ms since the virtual clock's start.
int64_t server_ms(const Reply& time) {
  return std::stoll(time.elements.at(0).str) * 1000 + std::stoll(time.elements.at(1).str) / 1000 -
         VirtualTime::kStartWallNs / kMs;
}

TEST(SimulatedLink, ADelayedRequestRunsWhenItArrivesAndItsAnswerTakesTheDelayBack) {
  VirtualTime time;
  VirtualTimeBinding bound(&time);
  LinkedServer redis;
  int64_t sent_ms = -1, ran_ms = -1, answered_ns = -1;
  run_fibers({[&] {
    HiredisConnection client(redis.server.endpoint(), redis.client_options());
    client.command({"PING"});
    redis.link.delay(Direction::Both, milliseconds(100), milliseconds(0));
    const int64_t sent = monotonic_ns();
    sent_ms = (sent - time.now_ns() + time.wall_ns()) / kMs - VirtualTime::kStartWallNs / kMs;
    ran_ms = server_ms(client.command({"TIME"}));
    answered_ns = monotonic_ns() - sent;
  }});
  EXPECT_EQ(ran_ms - sent_ms, 100) << "the server ran it when it arrived";
  EXPECT_EQ(answered_ns, 200 * kMs + 100'000) << "100 ms there, 100 ms back, and its round trip";
}

TEST(SimulatedLink, ARequestWhoseClientGaveUpStillArrives) {
  VirtualTime time;
  VirtualTimeBinding bound(&time);
  LinkedServer redis;
  Failure gave_up;
  long long before_arrival = -1, after_arrival = -1;
  run_fibers({[&] {
    HiredisConnection client(redis.server.endpoint(), redis.client_options());
    client.command({"PING"});
    redis.link.delay(Direction::ToServer, milliseconds(1500), milliseconds(0));
    gave_up = failure_of(client, {"SET", "late", "1"});
    before_arrival = redis.direct({"EXISTS", "late"}).integer;
    sleep_for(milliseconds(600));
    after_arrival = redis.direct({"EXISTS", "late"}).integer;
  }});
  EXPECT_EQ(gave_up.after_ns, 1000 * kMs) << gave_up.what;
  EXPECT_TRUE(gave_up.maybe_executed) << "a request on its way may still run";
  EXPECT_EQ(before_arrival, 0);
  EXPECT_EQ(after_arrival, 1) << "the request the client gave up on never reached the server";
}

TEST(SimulatedLink, ARequestOnItsWayIntoABlackHoleIsLost) {
  VirtualTime time;
  VirtualTimeBinding bound(&time);
  LinkedServer redis;
  Failure lost;
  run_fibers({[&] {
                HiredisConnection client(redis.server.endpoint(), redis.client_options());
                client.command({"PING"});
                redis.link.delay(Direction::Both, milliseconds(200), milliseconds(0));
                lost = failure_of(client, {"SET", "swallowed", "1"});
              },
              [&] {
                sleep_for(milliseconds(50));  // the SET is on its way (the PING took 0.1 ms)
                redis.link.blackhole();
              }});
  EXPECT_EQ(lost.after_ns, 1000 * kMs) << lost.what;
  EXPECT_EQ(redis.direct({"EXISTS", "swallowed"}).integer, 0);
}

TEST(SimulatedLink, AHeldServerRunsTheRequestsThatReachedItAtItsRelease) {
  VirtualTime time;
  VirtualTimeBinding bound(&time);
  LinkedServer redis;
  int64_t answered_ns = -1;
  long long while_held = -1;
  redis.link.hold();
  run_fibers({[&] {
                HiredisConnection client(redis.server.endpoint(), redis.client_options());
                const int64_t sent = monotonic_ns();
                client.command({"SET", "held", "1"});
                answered_ns = monotonic_ns() - sent;
              },
              [&] {
                sleep_for(milliseconds(300));
                while_held = redis.direct({"EXISTS", "held"}).integer;
                redis.link.release();
              }});
  EXPECT_EQ(while_held, 0) << "a held server ran a request";
  EXPECT_EQ(answered_ns, 300 * kMs + 100'000);
  EXPECT_EQ(redis.direct({"EXISTS", "held"}).integer, 1);
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

TEST(VirtualTimeRedis, APartitionActsOnVirtualTimeThroughTheClientsConnections) {
  TempDir dir("locklab-vt-test");
  // c1 holds L and works past its lease while cut off from the server: c2
  // takes L once the 500 ms lease ends, and c1's release is refused.
  const json faults =
      json::array({{{"kind", "pause"}, {"at_ms", 0}, {"duration_ms", 100}, {"clients", {"c2"}}},
                   {{"kind", "partition"},
                    {"when", {{"client", "c1"}, {"step", "acquired"}}},
                    {"duration_ms", 1500},
                    {"clients", {"c1"}}}});
  const ScenarioResults results = run_virtual(story(dir, faults), dir.path() / "out");
  for (const RunResult& run : results.runs) {
    ASSERT_FALSE(run.error) << *run.error;
    EXPECT_EQ(run.time, "virtual") << run.algorithm;
    ASSERT_EQ(run.faults.size(), 2u);
    EXPECT_TRUE(run.faults[1].fired) << run.algorithm;
    int64_t partition_start = -1, partition_end = -1;
    for (const json& e : events_of(dir.path() / "out" / run.history))
      if (e["process"] == "nemesis" && e["f"] == "partition")
        (e["value"]["phase"] == "start" ? partition_start : partition_end) = e["time_ns"];
    EXPECT_EQ(partition_end - partition_start, 1500 * kMs) << run.algorithm;
  }
}

TEST(VirtualTimeRedis, RedlockAcrossBlackHolesRepeatsItsHistoryByteForByte) {
  TempDir dir("locklab-vt-test");
  // Each client reaches three masters of five: every round of Redlock's
  // waits out its lost requests, under one deadline a round.
  const json scenario{
      {"name", "virtual-black-holes"},
      {"clients", 2},
      {"duration_ms", 4000},
      {"seed", 5},
      {"algorithms", {"redlock"}},
      {"topology", {{"nodes", 5}}},
      {"workload", {{"locks", {"L"}}, {"ttl_ms", 1500}, {"wait_ms", 2500}, {"work_ms", 300}}},
      {"faults",
       {{{"kind", "partition"}, {"at_ms", 0}, {"clients", {"c1"}}, {"nodes", {3, 4}}},
        {{"kind", "partition"}, {"at_ms", 0}, {"clients", {"c2"}}, {"nodes", {0, 1}}}}}};
  const auto file = dir.path() / "black-holes.json";
  std::ofstream(file) << scenario.dump(2);
  for (int i = 0; i < 2; ++i) run_virtual(file, dir.path() / ("run" + std::to_string(i)));
  const std::string first = file_text(dir.path() / "run0" / "redlock" / "history.jsonl");
  EXPECT_NE(first.find("\"f\":\"acquire\""), std::string::npos);
  EXPECT_EQ(file_text(dir.path() / "run1" / "redlock" / "history.jsonl"), first)
      << "a round's deadline was measured on another clock than the one its waits keep";
}

TEST(VirtualTimeRedis, AStoppedServerLetsItsWaitingRequestsInInOneOrderEveryRun) {
  TempDir dir("locklab-vt-test");
  // Three clients queue at a stopped server; each run lets them in alike.
  const json scenario{
      {"name", "virtual-stopped-server"},
      {"clients", 3},
      {"duration_ms", 4000},
      {"seed", 3},
      {"algorithms", {"set-nx-px", "fenced"}},
      {"workload", {{"locks", {"L"}}, {"ttl_ms", 3000}, {"wait_ms", 1000}, {"work_ms", 5}}},
      {"faults",
       {{{"kind", "sigstop-node"}, {"at_ms", 500}, {"duration_ms", 1000}},
        {{"kind", "debug-sleep"}, {"at_ms", 2000}, {"duration_ms", 1000}}}}};
  const auto file = dir.path() / "stopped.json";
  std::ofstream(file) << scenario.dump(2);
  for (int i = 0; i < 3; ++i) run_virtual(file, dir.path() / ("run" + std::to_string(i)));
  for (const char* lock : {"set-nx-px", "fenced"}) {
    const std::string first = file_text(dir.path() / "run0" / lock / "history.jsonl");
    EXPECT_NE(first.find("\"f\":\"sigstop-node\""), std::string::npos) << lock;
    for (int i = 1; i < 3; ++i)
      EXPECT_EQ(file_text(dir.path() / ("run" + std::to_string(i)) / lock / "history.jsonl"), first)
          << lock << ": run " << i << " let the waiting requests in in another order";
  }
}

}  // namespace
}  // namespace locklab
