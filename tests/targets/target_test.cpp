// `--target`: the lab against redis-servers it did not start (started here,
// by the test, and stopped by it).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "process.h"
#include "redis_server.h"
#include "sentinel.h"
#include "temp_dir.h"

namespace locklab {
namespace {

using nlohmann::json;

struct Outcome {
  int status = -1;
  std::string err;
};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Outcome locklab(const std::string& env, const std::string& args, const TempDir& dir) {
  const auto err = dir.path() / "stderr";
  const std::string command =
      env + " " + LOCKLAB_PATH + " " + args + " >/dev/null 2>" + err.string() + " </dev/null";
  const int raw = std::system(command.c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(err)};
}

std::filesystem::path write_target(const TempDir& dir, json target) {
  target["name"] = "test-target";
  if (!target.contains("key_prefix")) target["key_prefix"] = "lab:";
  const auto file = dir.path() / "target.json";
  std::ofstream(file) << target.dump(2);
  return file;
}

std::string scenario(const std::string& name) {
  return std::string(SOURCE_DIR) + "/scenarios/" + name;
}

// A server that wants `password` (requirepass); the test's own connections send it.
RedisServerOptions password_protected(const std::string& password) {
  RedisServerOptions options;
  options.extra_args = {"--requirepass", password};
  options.password = password;
  return options;
}

Reply command(const RedisServer& server, const std::vector<std::string>& argv) {
  return server.connect()->command(argv);
}

TEST(Target, RunOnExternalNodeWorksKeepsOthersKeysAndLeavesServerRunning) {
  TempDir dir("target-test");
  RedisServer server;
  command(server, {"SET", "someone-else", "keep"});
  const auto target = write_target(dir, {{"masters", {server.endpoint().str()}}});
  const auto out = dir.path() / "out";
  const Outcome o = locklab(
      "",
      "run " + scenario("smoke.json") + " --target " + target.string() + " --out " + out.string(),
      dir);
  ASSERT_EQ(o.status, 0) << o.err;
  const json results = json::parse(slurp(out / "results.json"));
  EXPECT_EQ(results["runs"][0]["outcome"], "met") << results.dump(2);
  EXPECT_EQ(results["runs"][0]["target"], "test-target") << results.dump(2);
  EXPECT_NE(slurp(out / "report.html").find("on target test-target"), std::string::npos);
  // The run's own keys were under the prefix, and are gone; nothing else was touched.
  std::ifstream history(out / "set-nx-px" / "history.jsonl");
  std::string line;
  int acquires = 0;
  while (std::getline(history, line)) {
    const json e = json::parse(line);
    if (e["process"] == "nemesis") continue;
    EXPECT_EQ(e["lock"].get<std::string>().rfind("lab:", 0), 0u) << line;
    acquires += e["f"] == "acquire" && e["type"] == "ok";
  }
  EXPECT_GT(acquires, 0);
  ASSERT_TRUE(server.running());
  EXPECT_EQ(command(server, {"GET", "someone-else"}).str, "keep");
  EXPECT_EQ(command(server, {"DBSIZE"}).integer, 1);
}

TEST(Target, SuiteReportsCellsNeedingServerControlUnavailable) {
  TempDir dir("target-test");
  RedisServer server;
  const auto target = write_target(dir, {{"masters", {server.endpoint().str()}}});
  const auto out = dir.path() / "out";
  const Outcome o =
      locklab("",
              "suite " + scenario("stalled-server.json") + " " + scenario("short-pause.json") +
                  " --target " + target.string() + " -a set-nx-px --out " + out.string(),
              dir);
  const json results = json::parse(slurp(out / "results.json"));
  int unavailable = 0, ran = 0;
  for (const auto& cell : results["cells"]) {
    if (cell["scenario"] == "stalled-server") {
      EXPECT_EQ(cell["outcome"], "not-applicable") << cell.dump(2);
      const json doc = json::parse(slurp(out / cell["results"].get<std::string>()));
      for (const auto& run : doc["runs"]) {
        const std::string why = run.value("not_applicable", "");
        EXPECT_NE(why.find("unavailable for target 'test-target'"), std::string::npos) << why;
        EXPECT_TRUE(why.find("sigstop-node") != std::string::npos ||
                    why.find("debug-sleep") != std::string::npos)
            << why;
      }
      ++unavailable;
    } else {
      EXPECT_NE(cell["outcome"], "not-applicable") << cell.dump(2);
      EXPECT_EQ(cell["errors"], 0) << cell.dump(2);
      ++ran;
    }
  }
  EXPECT_GT(unavailable, 0) << results.dump(2);
  EXPECT_GT(ran, 0) << results.dump(2);
  EXPECT_NE(o.status, 2) << o.err;
  EXPECT_TRUE(server.running());
}

// Redlock over five masters the lab did not start: the partition of two of
// them is the lab's own proxy, so it still applies, and it fires.
TEST(Target, RedlockOverExternalMastersWithProxyPartition) {
  TempDir dir("target-test");
  std::vector<std::unique_ptr<RedisServer>> servers;
  json masters = json::array();
  for (int i = 0; i < 5; ++i) {
    servers.push_back(std::make_unique<RedisServer>());
    masters.push_back(servers.back()->endpoint().str());
  }
  const auto target = write_target(dir, {{"masters", masters}});
  const auto out = dir.path() / "out";
  const Outcome o =
      locklab("",
              "run " + scenario("redlock-minority-partition.json") + " -a redlock --target " +
                  target.string() + " --out " + out.string(),
              dir);
  const json results = json::parse(slurp(out / "results.json"));
  const json& run = results["runs"][0];
  EXPECT_EQ(run["error"], nullptr) << run.dump(2);
  EXPECT_FALSE(run.contains("not_applicable")) << run.dump(2);
  EXPECT_TRUE(run["exercised"].get<bool>()) << run.dump(2);
  EXPECT_NE(o.status, 2) << o.err;
  for (const auto& server : servers) {
    EXPECT_TRUE(server->running());
    EXPECT_EQ(command(*server, {"DBSIZE"}).integer, 0);
  }
}

// A master with a replica behind Sentinels: clients find the master through
// them; a failover story is unavailable (the file does not allow it).
TEST(Target, SentinelTargetRunsAndFailoverIsUnavailable) {
  TempDir dir("target-test");
  RedisServer master;
  RedisServerOptions replica_options;
  replica_options.replica_of = master.endpoint();
  RedisServer replica(replica_options);
  wait_until_replica_synced(master.endpoint(), replica.endpoint(), std::chrono::seconds(10));
  SentinelGroup sentinels(master.endpoint());
  json sentinel_list = json::array();
  for (const auto& e : sentinels.endpoints()) sentinel_list.push_back(e.str());
  const auto target = write_target(dir, {{"masters", {master.endpoint().str()}},
                                         {"replicas", {replica.endpoint().str()}},
                                         {"sentinels", sentinel_list},
                                         {"master_name", sentinels.master_name()}});
  const auto out = dir.path() / "out";
  const Outcome o =
      locklab("",
              "suite " + scenario("smoke.json") + " " + scenario("sentinel-failover.json") +
                  " -a set-nx-px --target " + target.string() + " --out " + out.string(),
              dir);
  const json results = json::parse(slurp(out / "results.json"));
  for (const auto& cell : results["cells"]) {
    EXPECT_EQ(cell["errors"], 0) << cell.dump(2);
    if (cell["scenario"] == "smoke") {
      EXPECT_EQ(cell["outcome"], "met") << cell.dump(2);
    } else {
      EXPECT_EQ(cell["outcome"], "not-applicable") << cell.dump(2);
      const json doc = json::parse(slurp(out / cell["results"].get<std::string>()));
      const std::string why = doc["runs"][0].value("not_applicable", "");
      EXPECT_NE(why.find("unavailable for target 'test-target'"), std::string::npos) << why;
    }
  }
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(master.running());
  EXPECT_TRUE(replica.running());

  // Clients go where Sentinel says: a master the file does not list is refused up front.
  const auto partial = write_target(dir, {{"masters", {replica.endpoint().str()}},
                                          {"sentinels", sentinel_list},
                                          {"master_name", sentinels.master_name()}});
  const Outcome refused =
      locklab("",
              "run " + scenario("smoke.json") + " --target " + partial.string() + " --out " +
                  (dir.path() / "partial").string(),
              dir);
  EXPECT_EQ(refused.status, 2) << refused.err;
  EXPECT_NE(refused.err.find("names " + master.endpoint().str() + " master of"), std::string::npos)
      << refused.err;
  EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;
}

// A two-client story whose only fault is a failover of `mode` right after
// c1's acquire (the canonical failover stories also cut replication, which
// the lab cannot do to a target).
std::filesystem::path failover_story(const TempDir& dir, const std::string& mode) {
  json story = json::parse(slurp(scenario("failover-before-replication.json")));
  story["name"] = "failover-on-target";
  story["algorithms"] = {"set-nx-px"};
  story["topology"] = {{"nodes", 1}, {"replicas", 1}, {"sentinels", mode == "sentinel" ? 3 : 0}};
  story["duration_ms"] = mode == "sentinel" ? 6000 : 3000;
  story["faults"] = {
      {{"kind", "pause"}, {"at_ms", 0}, {"clients", {"c2"}}, {"duration_ms", 300}},
      {{"kind", "failover"}, {"mode", mode}, {"when", {{"client", "c1"}, {"step", "acquired"}}}}};
  // Whether c2 then takes the lock depends on whether the key replicated
  // first; the tests are about the failover, not the verdict.
  story["expect"] = {{"default", {{"verdict", "safe"}}}};
  const auto file = dir.path() / ("failover-" + mode + ".json");
  std::ofstream(file) << story.dump(2);
  return file;
}

// The nemesis events of the failover in one run's history: start, end.
std::vector<json> failover_events(const std::filesystem::path& history) {
  std::vector<json> out;
  std::ifstream in(history);
  std::string line;
  while (std::getline(in, line)) {
    const json e = json::parse(line);
    if (e["process"] == "nemesis" && e["f"] == "failover") out.push_back(e);
  }
  return out;
}

// A password-protected master and its replica, in sync, as a team's staging
// pair would be; `auth` is what commands to either send.
struct ProtectedPair {
  RedisServer master{password_protected("s3cret")};
  RedisServer replica{replica_options(master.endpoint())};
  ConnectionOptions auth{.password = "s3cret"};

  ProtectedPair() {
    wait_until_replica_synced(master.endpoint(), replica.endpoint(), std::chrono::seconds(10),
                              auth);
  }
  static RedisServerOptions replica_options(const Endpoint& master) {
    RedisServerOptions options = password_protected("s3cret");
    options.name = "replica";
    options.replica_of = master;
    options.extra_args.insert(options.extra_args.end(), {"--masterauth", "s3cret"});
    return options;
  }
};

// allow_failover, manual mode: the lab promotes the target's replica with the
// target's credentials, clients move to it, and when the run ends the replica
// goes back under its master, with no key of the run left anywhere.
TEST(Target, ManualFailoverWhenAllowedPromotesTheReplicaAndPutsItBack) {
  TempDir dir("target-test");
  ProtectedPair pair;
  auto& [master, replica, auth] = pair;
  command(master, {"SET", "someone-else", "keep"});
  const auto story = failover_story(dir, "manual");
  for (const bool allowed : {false, true}) {
    SCOPED_TRACE(allowed);
    const auto target = write_target(dir, {{"masters", {master.endpoint().str()}},
                                           {"replicas", {replica.endpoint().str()}},
                                           {"password_env", "LOCKLAB_TEST_PASSWORD"},
                                           {"allow_failover", allowed}});
    const auto out = dir.path() / (allowed ? "allowed" : "refused");
    const Outcome o = locklab(
        "LOCKLAB_TEST_PASSWORD=s3cret",
        "run " + story.string() + " --target " + target.string() + " --out " + out.string(), dir);
    EXPECT_NE(o.status, 2) << o.err;
    const json run = json::parse(slurp(out / "results.json"))["runs"][0];
    if (!allowed) {
      EXPECT_EQ(run["outcome"], "not-applicable") << run.dump(2);
      EXPECT_NE(run.value("not_applicable", "").find("allow_failover"), std::string::npos)
          << run.dump(2);
      continue;
    }
    EXPECT_EQ(run["error"], nullptr) << run.dump(2) << o.err;
    EXPECT_FALSE(run.contains("not_applicable")) << run.dump(2);
    EXPECT_TRUE(run["exercised"].get<bool>()) << run.dump(2);
    // Its start, and its end once the replica answers as master.
    EXPECT_EQ(failover_events(out / "set-nx-px" / "history.jsonl").size(), 2u);
    // The replica was really promoted, and is a replica of the master again.
    EXPECT_NE(slurp(replica.dir() / "server.log").find("MASTER MODE enabled"), std::string::npos);
    EXPECT_EQ(master_of(replica.endpoint(), auth), master.endpoint());
    wait_until_replica_synced(master.endpoint(), replica.endpoint(), std::chrono::seconds(10),
                              auth);
    for (const RedisServer* server : {&master, &replica}) {
      EXPECT_EQ(server->connect()->command({"DBSIZE"}).integer, 1);
      EXPECT_EQ(server->connect()->command({"GET", "someone-else"}).str, "keep");
    }
  }
  EXPECT_TRUE(master.running());
  EXPECT_TRUE(replica.running());
}

// Ended by a signal mid-run (after the promotion), the lab still puts the
// replica back and removes the run's keys: the target is left as it was found.
TEST(Target, AnInterruptedFailoverRunLeavesTheTargetAsItWas) {
  TempDir dir("target-test");
  ProtectedPair pair;
  auto& [master, replica, auth] = pair;
  json story = json::parse(slurp(failover_story(dir, "manual")));
  story["duration_ms"] = 30000;
  const auto story_file = dir.path() / "long-failover.json";
  std::ofstream(story_file) << story.dump(2);
  const auto target = write_target(dir, {{"masters", {master.endpoint().str()}},
                                         {"replicas", {replica.endpoint().str()}},
                                         {"password_env", "LOCKLAB_TEST_PASSWORD"},
                                         {"allow_failover", true}});
  ChildProcess lab(ProcessSpec{.argv = {LOCKLAB_PATH, "run", story_file.string(), "--target",
                                        target.string(), "--out", (dir.path() / "out").string()},
                               .env = {{"LOCKLAB_TEST_PASSWORD", "s3cret"}},
                               .cwd = {},
                               .output = dir.path() / "lab.log"});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (master_of(replica.endpoint(), auth) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_FALSE(master_of(replica.endpoint(), auth))
      << "no promotion: " << slurp(dir.path() / "lab.log");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the clients write on it
  lab.signal(SIGINT);
  std::optional<int> status;
  for (int i = 0; i < 1000 && !(status = lab.poll()); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(status) << "the lab did not end within 10 s of SIGINT";
  EXPECT_EQ(master_of(replica.endpoint(), auth), master.endpoint());
  wait_until_replica_synced(master.endpoint(), replica.endpoint(), std::chrono::seconds(10), auth);
  for (const RedisServer* server : {&master, &replica})
    EXPECT_EQ(server->connect()->command({"DBSIZE"}).integer, 0) << server->endpoint().str();
}

// allow_failover, Sentinel mode: the lab asks the target's Sentinels for a
// failover (it kills nothing) and clients follow the new master; the next run
// finds the master where Sentinel now says it is, and fails it over back.
TEST(Target, SentinelFailoverWhenAllowedAndTheNextRunFollowsTheMovedMaster) {
  TempDir dir("target-test");
  RedisServer master;
  RedisServerOptions replica_options;
  replica_options.name = "replica";
  replica_options.replica_of = master.endpoint();
  RedisServer replica(replica_options);
  wait_until_replica_synced(master.endpoint(), replica.endpoint(), std::chrono::seconds(10));
  SentinelGroup sentinels(master.endpoint());
  sentinels.wait_until_replicas_known(1, std::chrono::seconds(20));
  // A team's Sentinels give up a failover step after failover-timeout (3
  // min by default): the lab's own wait an hour until they expect a
  // failover, and the lab never sets a target's, so these are set here as
  // a team's would be, short enough for a step that stalls (Sentinel waits
  // on replicas it knows of) to end within the run's 30 s.
  sentinels.expect_failover();
  json sentinel_list = json::array();
  for (const auto& e : sentinels.endpoints()) sentinel_list.push_back(e.str());
  const auto target = write_target(dir, {{"masters", {master.endpoint().str()}},
                                         {"replicas", {replica.endpoint().str()}},
                                         {"sentinels", sentinel_list},
                                         {"master_name", sentinels.master_name()},
                                         {"allow_failover", true}});
  const auto story = failover_story(dir, "sentinel");
  Endpoint expected_new = replica.endpoint();
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round);
    const auto out = dir.path() / ("round" + std::to_string(round));
    const Outcome o = locklab(
        "", "run " + story.string() + " --target " + target.string() + " --out " + out.string(),
        dir);
    EXPECT_NE(o.status, 2) << o.err;
    const json run = json::parse(slurp(out / "results.json"))["runs"][0];
    EXPECT_EQ(run["error"], nullptr) << run.dump(2) << o.err;
    EXPECT_TRUE(run["exercised"].get<bool>()) << run.dump(2);
    const auto events = failover_events(out / "set-nx-px" / "history.jsonl");
    ASSERT_EQ(events.size(), 2u) << o.err;
    const json& end = events[1]["value"];
    EXPECT_FALSE(end.contains("error")) << end.dump();
    EXPECT_EQ(end.value("new_master", ""), expected_new.str()) << end.dump();
    EXPECT_EQ(sentinels.master_address(), expected_new);
    expected_new = expected_new == replica.endpoint() ? master.endpoint() : replica.endpoint();
  }
  // In a suite with --jobs 2 the failover run has the target to itself: the
  // other cell, on the same target, still measures a clean lock.
  const auto suite_out = dir.path() / "suite";
  const Outcome o = locklab("",
                            "suite " + scenario("smoke.json") + " " + story.string() +
                                " -a set-nx-px --jobs 2 --target " + target.string() + " --out " +
                                suite_out.string(),
                            dir);
  EXPECT_NE(o.status, 2) << o.err;
  const json suite = json::parse(slurp(suite_out / "results.json"));
  for (const auto& cell : suite["cells"]) {
    EXPECT_EQ(cell["errors"], 0) << cell.dump(2);
    if (cell["scenario"] == "smoke") {
      EXPECT_EQ(cell["outcome"], "met") << cell.dump(2);
    }
  }
  EXPECT_EQ(sentinels.master_address(), replica.endpoint());
  // Neither server was stopped, and the runs' keys are gone.
  EXPECT_TRUE(master.running());
  EXPECT_TRUE(replica.running());
  EXPECT_EQ(command(replica, {"DBSIZE"}).integer, 0);
}

// allow_flush: each run starts on an empty target; without it, nothing of
// anyone else's is touched (RunOnExternalNode… above).
TEST(Target, AllowFlushEmptiesTheTargetBeforeEachRun) {
  TempDir dir("target-test");
  RedisServer server;
  command(server, {"SET", "left-by-an-earlier-run", "x"});
  const auto target =
      write_target(dir, {{"masters", {server.endpoint().str()}}, {"allow_flush", true}});
  const auto out = dir.path() / "out";
  const Outcome o =
      locklab("",
              "suite " + scenario("smoke.json") + " " + scenario("short-pause.json") +
                  " -a set-nx-px --jobs 2 --target " + target.string() + " --out " + out.string(),
              dir);
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(command(server, {"EXISTS", "left-by-an-earlier-run"}).integer, 0);
  EXPECT_EQ(command(server, {"DBSIZE"}).integer, 0);
  const std::string stats = command(server, {"INFO", "commandstats"}).str;
  EXPECT_NE(stats.find("cmdstat_flushall:calls=2,"), std::string::npos) << stats;
}

// DEBUG SLEEP reaches a target's server only when its file allows it.
TEST(Target, DebugSleepOnlyWhenAllowed) {
  TempDir dir("target-test");
  RedisServer server(password_protected("s3cret"));
  json story = json::parse(slurp(scenario("smoke.json")));
  story["algorithms"] = {"set-nx-px"};
  story["faults"] = {
      {{"kind", "debug-sleep"}, {"at_ms", 500}, {"nodes", {0}}, {"duration_ms", 500}}};
  const auto story_file = dir.path() / "story.json";
  std::ofstream(story_file) << story.dump(2);
  for (const bool allowed : {false, true}) {
    SCOPED_TRACE(allowed);
    const auto target = write_target(dir, {{"masters", {server.endpoint().str()}},
                                           {"password_env", "LOCKLAB_TEST_PASSWORD"},
                                           {"allow_debug_sleep", allowed}});
    const auto out = dir.path() / (allowed ? "allowed" : "refused");
    const Outcome o = locklab(
        "LOCKLAB_TEST_PASSWORD=s3cret",
        "run " + story_file.string() + " --target " + target.string() + " --out " + out.string(),
        dir);
    EXPECT_EQ(o.status, 0) << o.err;
    const json run = json::parse(slurp(out / "results.json"))["runs"][0];
    if (allowed) {
      EXPECT_EQ(run["outcome"], "met") << run.dump(2);
      EXPECT_TRUE(run["exercised"].get<bool>()) << run.dump(2);
      // The server really ran it (with the credentials from the environment).
      const std::string stats = command(server, {"INFO", "commandstats"}).str;
      EXPECT_NE(stats.find("cmdstat_debug:calls=1,"), std::string::npos) << stats;
    } else {
      EXPECT_EQ(run["outcome"], "not-applicable") << run.dump(2);
      EXPECT_NE(run.value("not_applicable", "").find("allow_debug_sleep"), std::string::npos)
          << run.dump(2);
    }
  }
}

// explore runs its generated cells on the target, trying only faults it can take.
TEST(Target, ExploreRunsOnTarget) {
  TempDir dir("target-test");
  RedisServer server;
  const auto target = write_target(dir, {{"masters", {server.endpoint().str()}}});
  const auto out = dir.path() / "explore";
  // Seeking stale writes, which an unfenced lock cannot show, nothing is
  // shrunk: the test stays short whatever the two runs measure.
  const Outcome o = locklab("",
                            "explore set-nx-px --runs 2 --seed 5 --kinds stale-write --target " +
                                target.string() + " --out " + out.string(),
                            dir);
  EXPECT_EQ(o.status, 0) << o.err;
  const json explored = json::parse(slurp(out / "explore.json"));
  EXPECT_EQ(explored["runs_total"], 2);
  const json& kinds = explored["options"]["fault_kinds"];
  EXPECT_FALSE(kinds.empty());
  for (const std::string kind : {"sigstop-node", "crash-node", "server-clock-jump", "failover"}) {
    EXPECT_EQ(std::find(kinds.begin(), kinds.end(), kind), kinds.end()) << kinds.dump();
    EXPECT_EQ(o.err.find(kind), std::string::npos) << o.err;
  }
  EXPECT_TRUE(server.running());
}

TEST(Target, RequirepassFromEnvironment) {
  TempDir dir("target-test");
  RedisServer server(password_protected("s3cret"));
  const auto target = write_target(
      dir, {{"masters", {server.endpoint().str()}}, {"password_env", "LOCKLAB_TEST_PASSWORD"}});
  EXPECT_EQ(slurp(target).find("s3cret"), std::string::npos);
  const auto out = dir.path() / "out";
  const std::string args =
      "run " + scenario("smoke.json") + " --target " + target.string() + " --out " + out.string();
  const Outcome good = locklab("LOCKLAB_TEST_PASSWORD=s3cret", args, dir);
  EXPECT_EQ(good.status, 0) << good.err;

  const Outcome wrong = locklab("LOCKLAB_TEST_PASSWORD=wrong", args, dir);
  EXPECT_EQ(wrong.status, 2);
  EXPECT_NE(wrong.err.find(server.endpoint().str()), std::string::npos) << wrong.err;
  EXPECT_EQ(std::count(wrong.err.begin(), wrong.err.end(), '\n'), 1) << wrong.err;

  const Outcome unset = locklab("env -u LOCKLAB_TEST_PASSWORD", args, dir);
  EXPECT_EQ(unset.status, 2);
  EXPECT_NE(unset.err.find("LOCKLAB_TEST_PASSWORD"), std::string::npos) << unset.err;
}

TEST(Target, AclUserFromEnvironment) {
  TempDir dir("target-test");
  RedisServer server;
  {
    // A user confined to the lab's prefix; the default user disabled last,
    // after this connection has become the new user.
    auto admin = server.connect();
    ASSERT_TRUE(
        admin->command({"ACL", "SETUSER", "lab", "on", ">pw-of-lab", "~lab:*", "&*", "+@all"})
            .is_ok());
    ASSERT_TRUE(admin->command({"AUTH", "lab", "pw-of-lab"}).is_ok());
    ASSERT_TRUE(admin->command({"ACL", "SETUSER", "default", "off"}).is_ok());
  }
  const auto target = write_target(dir, {{"masters", {server.endpoint().str()}},
                                         {"username_env", "LOCKLAB_TEST_USER"},
                                         {"password_env", "LOCKLAB_TEST_PASSWORD"}});
  const auto out = dir.path() / "out";
  const std::string args =
      "run " + scenario("smoke.json") + " --target " + target.string() + " --out " + out.string();
  const Outcome good = locklab("LOCKLAB_TEST_USER=lab LOCKLAB_TEST_PASSWORD=pw-of-lab", args, dir);
  EXPECT_EQ(good.status, 0) << good.err;
  const json results = json::parse(slurp(out / "results.json"));
  EXPECT_EQ(results["runs"][0]["outcome"], "met") << results.dump(2);

  const Outcome wrong = locklab("LOCKLAB_TEST_USER=lab LOCKLAB_TEST_PASSWORD=nope", args, dir);
  EXPECT_EQ(wrong.status, 2);
  EXPECT_NE(wrong.err.find(server.endpoint().str()), std::string::npos) << wrong.err;

  // An adapter is handed the same credentials (LOCKLAB_REDIS_USERNAME/PASSWORD).
  const auto adapter_out = dir.path() / "adapter";
  const Outcome adapter =
      locklab("LOCKLAB_TEST_USER=lab LOCKLAB_TEST_PASSWORD=pw-of-lab",
              "run " + scenario("smoke.json") + " --adapter '/usr/bin/python3 " + SOURCE_DIR +
                  "/examples/adapters/redis_py_lock.py' --like set-nx-px --target " +
                  target.string() + " --out " + adapter_out.string(),
              dir);
  EXPECT_EQ(adapter.status, 0) << adapter.err;
  const json run = json::parse(slurp(adapter_out / "results.json"))["runs"][0];
  EXPECT_EQ(run["outcome"], "met") << run.dump(2);
  EXPECT_GT(run["stats"]["acquires_ok"].get<int>(), 0) << run.dump(2);
}

// A "replica" that is a master (or the reverse) would make a failover
// meaningless: refused before anything runs.
TEST(Target, ServersWithAnotherRoleThanTheFileSaysAreRefused) {
  TempDir dir("target-test");
  RedisServer master, not_a_replica;
  const auto target = write_target(dir, {{"masters", {master.endpoint().str()}},
                                         {"replicas", {not_a_replica.endpoint().str()}}});
  const Outcome o = locklab("",
                            "run " + scenario("smoke.json") + " --target " + target.string() +
                                " --out " + (dir.path() / "out").string(),
                            dir);
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find(not_a_replica.endpoint().str() + ": reports role master, where the file "
                                                        "lists a replica"),
            std::string::npos)
      << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
}

TEST(Target, UnreachableEndpointIsOneLineNamingIt) {
  TempDir dir("target-test");
  const std::string endpoint = "127.0.0.1:" + std::to_string(free_loopback_port());
  const auto target = write_target(dir, {{"masters", {endpoint}}});
  const Outcome o = locklab("",
                            "run " + scenario("smoke.json") + " --target " + target.string() +
                                " --out " + (dir.path() / "out").string(),
                            dir);
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find(endpoint), std::string::npos) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
}

TEST(Target, BadFileNamesTheField) {
  TempDir dir("target-test");
  const auto target = write_target(dir, {{"masters", {"127.0.0.1:1"}}, {"key_prefix", ""}});
  const Outcome o =
      locklab("", "run " + scenario("smoke.json") + " --target " + target.string(), dir);
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("key_prefix"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace locklab
