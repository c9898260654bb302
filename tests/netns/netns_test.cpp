// The netns backend against real redis-servers in their own namespaces: each
// fault is proven by what a client in the root namespace measures, and the
// clean-up by what is left in /run/netns, /sys/class/net and the state dir.
#include "netns.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "fault_proxy.h"
#include "hiredis_connection.h"
#include "process.h"
#include "redis_server.h"
#include "temp_dir.h"

namespace locklab {
namespace {

using namespace std::chrono;
namespace fs = std::filesystem;

#define SKIP_WITHOUT_NETNS()                                                                     \
  do {                                                                                           \
    if (auto why = netns_unavailable_reason())                                                   \
      GTEST_SKIP() << "netns backend unavailable here (" << *why << "); the lab uses the proxy"; \
  } while (0)

bool netns_exists(const std::string& name) {
  return fs::exists(fs::path("/run/netns") / name);
}
bool link_exists(const std::string& name) {
  return fs::exists(fs::path("/sys/class/net") / name);
}

// Namespaces named for `pid` by the lab's scheme.
std::vector<std::string> namespaces_of(pid_t pid) {
  std::vector<std::string> names;
  std::error_code ec;
  const std::string prefix = "ll-" + std::to_string(pid) + "-";
  for (const auto& e : fs::directory_iterator("/run/netns", ec))
    if (e.path().filename().string().rfind(prefix, 0) == 0)
      names.push_back(e.path().filename().string());
  return names;
}

bool state_file_names(const std::string& name) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(netns_state_dir(), ec)) {
    std::ifstream in(e.path());
    std::stringstream s;
    s << in.rdbuf();
    if (s.str().find(name + "\n") != std::string::npos) return true;
  }
  return false;
}

// Runs a tool and returns its output (stdout and stderr).
std::string output_of(const std::vector<std::string>& argv) {
  TempDir dir("locklab-netns-test");
  ChildProcess child(ProcessSpec{.argv = argv, .env = {}, .cwd = {}, .output = dir.path() / "out"});
  for (int i = 0; i < 10000 && child.running(); ++i) std::this_thread::sleep_for(milliseconds(1));
  std::ifstream in(dir.path() / "out");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

RedisServerOptions server_in(const NetnsNode& node) {
  RedisServerOptions options;
  options.port = NetnsNode::kPort;
  options.host = node.node_address();
  options.bind = "0.0.0.0";
  options.run_prefix = node.run_prefix();
  options.name = "netns-test";
  return options;
}

Endpoint client_endpoint(const NetnsNode& node, size_t client) {
  return {node.client_address(client), NetnsNode::kPort};
}

milliseconds elapsed_since(steady_clock::time_point start) {
  return duration_cast<milliseconds>(steady_clock::now() - start);
}

class NetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_NETNS();
    node = std::make_unique<NetnsNode>(2);
    server = std::make_unique<RedisServer>(server_in(*node));
  }
  void TearDown() override {
    server.reset();
    node.reset();
  }
  std::unique_ptr<NetnsNode> node;
  std::unique_ptr<RedisServer> server;
};

TEST_F(NetnsTest, EachClientReachesTheNodeAtItsOwnAddress) {
  for (size_t c = 0; c < 2; ++c) {
    HiredisConnection redis(client_endpoint(*node, c));
    EXPECT_EQ(redis.command({"PING"}).str, "PONG");
  }
  // Loopback of the root namespace is not where the server is.
  EXPECT_NE(server->endpoint().host, "127.0.0.1");
  EXPECT_EQ(server->connect()->command({"PING"}).str, "PONG");
}

TEST_F(NetnsTest, BlackholeHangsThatClientOnlyAndPassHeals) {
  const ConnectionOptions timeouts{milliseconds(300), milliseconds(300)};
  HiredisConnection c0(client_endpoint(*node, 0), timeouts);
  HiredisConnection c1(client_endpoint(*node, 1), timeouts);
  ASSERT_EQ(c0.command({"PING"}).str, "PONG");

  node->link(0).blackhole();
  auto start = steady_clock::now();
  EXPECT_THROW(c0.command({"PING"}), RedisError);
  // It hung until its own timeout: the packets vanished, nothing refused them.
  EXPECT_GE(elapsed_since(start), milliseconds(250));
  HiredisConnection fresh(client_endpoint(*node, 0), timeouts);
  EXPECT_THROW(fresh.command({"PING"}), RedisError);
  EXPECT_EQ(c1.command({"PING"}).str, "PONG");
  EXPECT_EQ(server->connect()->command({"PING"}).str, "PONG");

  node->link(0).pass();
  HiredisConnection healed(client_endpoint(*node, 0), timeouts);
  EXPECT_EQ(healed.command({"PING"}).str, "PONG");
  EXPECT_EQ(c0.command({"PING"}).str, "PONG");  // reconnects
  const std::string rules = output_of({"ip", "netns", "exec", node->name(), "iptables", "-S"});
  EXPECT_EQ(rules.find(node->client_address(0)), std::string::npos) << rules;
}

TEST_F(NetnsTest, RejectResetsAndRefusesInsteadOfTimingOut) {
  // Timeouts far longer than the test, so only a refusal or a reset can end a command.
  const ConnectionOptions patient{seconds(30), seconds(30)};
  HiredisConnection c0(client_endpoint(*node, 0), patient);
  ASSERT_EQ(c0.command({"PING"}).str, "PONG");

  node->link(0).reject();
  try {
    c0.command({"PING"});
    ADD_FAILURE() << "a command on an open connection crossed a reject";
  } catch (const RedisError& e) {
    EXPECT_TRUE(lower(e.what()).find("reset") != std::string::npos ||
                lower(e.what()).find("refused") != std::string::npos ||
                lower(e.what()).find("closed") != std::string::npos)
        << e.what();
  }
  HiredisConnection fresh(client_endpoint(*node, 0), patient);
  try {
    fresh.command({"PING"});
    ADD_FAILURE() << "a new connection crossed a reject";
  } catch (const RedisError& e) {
    EXPECT_NE(lower(e.what()).find("refused"), std::string::npos) << e.what();
  }
  HiredisConnection c1(client_endpoint(*node, 1), patient);
  EXPECT_EQ(c1.command({"PING"}).str, "PONG");

  node->link(0).pass();
  HiredisConnection healed(client_endpoint(*node, 0), patient);
  EXPECT_EQ(healed.command({"PING"}).str, "PONG");
}

TEST_F(NetnsTest, CutClosesThatClientsConnectionsOnce) {
  HiredisConnection c0(client_endpoint(*node, 0));
  HiredisConnection c1(client_endpoint(*node, 1));
  ASSERT_EQ(c0.command({"PING"}).str, "PONG");
  ASSERT_EQ(c1.command({"PING"}).str, "PONG");
  auto admin = server->connect();
  auto connected = [&](size_t client) {
    const std::string list = admin->command({"CLIENT", "LIST"}).str;
    return list.find("laddr=" + node->client_address(client) + ":") != std::string::npos;
  };
  ASSERT_TRUE(connected(0));

  node->link(0).cut();
  EXPECT_FALSE(connected(0));
  EXPECT_TRUE(connected(1));
  HiredisConnection again(client_endpoint(*node, 0));
  EXPECT_EQ(again.command({"PING"}).str, "PONG");
}

// A TCP socket of `node`'s namespace connected to `to`, with PING answered
// through it. Only socket() must run in the namespace: the socket keeps it.
int ns_socket_connected_to(const NetnsNode& node, const Endpoint& to) {
  int fd = -1;
  std::thread([&] {
    int ns = ::open(("/run/netns/" + node.name()).c_str(), O_RDONLY | O_CLOEXEC);
    if (ns >= 0 && ::setns(ns, CLONE_NEWNET) == 0) fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (ns >= 0) ::close(ns);
  }).join();
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(uint16_t(to.port));
  ::inet_pton(AF_INET, to.host.c_str(), &address.sin_addr);
  char reply[16] = {};
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::send(fd, "PING\r\n", 6, 0) != 6 || ::recv(fd, reply, sizeof reply, 0) != 7) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool close_seen(int fd) {
  pollfd p{fd, short(POLLIN | POLLRDHUP), 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP));
}

// The failover's promise to a client: by the time the proxy's cut returns,
// the client's kernel has the close, so its next command reconnects instead
// of going out on the dead connection. Here the client's namespace drops
// the proxy's FIN until the rule goes, as a busy CPU can hold it back.
TEST_F(NetnsTest, AProxysCutReturnsOnlyOnceTheClientHasTheClose) {
  FaultProxy proxy(Endpoint{node->node_address(), NetnsNode::kPort}, 1, node->lab_address());
  const int client = ns_socket_connected_to(*node, proxy.endpoint());
  ASSERT_GE(client, 0) << "a client in the namespace reaches the proxy: " << std::strerror(errno);
  const std::vector<std::string> drop_fin = {
      "iptables",    "-p",  "tcp", "--sport", std::to_string(proxy.endpoint().port),
      "--tcp-flags", "FIN", "FIN", "-j",      "DROP"};
  auto rule = [&](const char* how) {
    std::vector<std::string> argv = drop_fin;
    argv.insert(argv.begin() + 1, {how, "INPUT"});
    node->run_inside(argv);
  };
  rule("-A");
  bool seen_when_cut_returned = false;
  std::thread cutter([&] {
    proxy.cut();
    seen_when_cut_returned = close_seen(client);
  });
  // Before TCP's first retransmission (200 ms): the FIN that gets through
  // is a retransmitted one, well inside the cut's bound.
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_FALSE(close_seen(client)) << "the rule holds the FIN back";
  rule("-D");
  cutter.join();
  EXPECT_TRUE(seen_when_cut_returned);
  ::close(client);
}

TEST_F(NetnsTest, DelayAddsAtLeastTheDelay) {
  if (!node->netem_available()) GTEST_SKIP() << kNoNetemMessage;
  HiredisConnection c0(client_endpoint(*node, 0));
  ASSERT_EQ(c0.command({"PING"}).str, "PONG");
  node->link(0).delay(Direction::Both, milliseconds(100));
  auto start = steady_clock::now();
  EXPECT_EQ(c0.command({"PING"}).str, "PONG");
  // 100 ms each way.
  EXPECT_GE(elapsed_since(start), milliseconds(200));
  node->link(0).delay(Direction::Both, milliseconds(0));
}

TEST_F(NetnsTest, DelayWithoutNetemSaysSoInOneLine) {
  if (node->netem_available()) GTEST_SKIP() << "this kernel has netem";
  try {
    node->link(0).delay(Direction::Both, milliseconds(100));
    FAIL() << "delay without netem did not fail";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("sch_netem"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
  // Turning off a delay that never started is no fault.
  EXPECT_NO_THROW(node->link(0).delay(Direction::Both, milliseconds(0)));
}

TEST(NetnsCleanup, DestroyingTheNodeRemovesNamespaceVethRulesAndRecord) {
  SKIP_WITHOUT_NETNS();
  std::string name, veth;
  {
    NetnsNode node(1);
    RedisServer server(server_in(node));
    node.link(0).blackhole();
    name = node.name();
    veth = node.host_veth();
    ASSERT_TRUE(netns_exists(name));
    ASSERT_TRUE(link_exists(veth));
    ASSERT_TRUE(state_file_names(name));
  }
  // The rules lived in the namespace: no namespace, no rules.
  EXPECT_FALSE(netns_exists(name));
  EXPECT_FALSE(link_exists(veth));
  EXPECT_FALSE(state_file_names(name));
}

// Starts a holder lab and returns it once it has built its namespace.
std::unique_ptr<ChildProcess> start_holder(std::string& name, std::string& veth) {
  auto holder = std::make_unique<ChildProcess>(ProcessSpec{
      .argv = {NETNS_HOLDER_PATH}, .env = {}, .cwd = {}, .output = {}, .pipe_stdio = true});
  std::string line;
  char c = 0;
  while (::read(holder->stdout_fd(), &c, 1) == 1 && c != '\n') line += c;
  std::istringstream in(line);
  in >> name >> veth;
  return holder;
}

TEST(NetnsCleanup, SigtermOfTheLabRemovesItsNamespaces) {
  SKIP_WITHOUT_NETNS();
  std::string name, veth;
  auto holder = start_holder(name, veth);
  ASSERT_FALSE(name.empty()) << "netns_holder did not start";
  ASSERT_TRUE(netns_exists(name));
  holder->stop(seconds(20));
  EXPECT_FALSE(netns_exists(name));
  EXPECT_FALSE(link_exists(veth));
  EXPECT_FALSE(state_file_names(name));
}

TEST(NetnsCleanup, StartupSweepRemovesWhatAKilledLabLeft) {
  SKIP_WITHOUT_NETNS();
  std::string name, veth;
  auto holder = start_holder(name, veth);
  ASSERT_FALSE(name.empty()) << "netns_holder did not start";
  const pid_t pid = holder->pid();
  holder->kill();
  // SIGKILL leaves everything behind...
  ASSERT_TRUE(netns_exists(name));
  ASSERT_TRUE(state_file_names(name));
  // ...except the server, which dies with its parent (PR_SET_PDEATHSIG); a
  // namespace a process still lives in would outlast its removal.
  for (int i = 0; i < 200; ++i) {
    if (output_of({"ip", "netns", "pids", name}).empty()) break;
    std::this_thread::sleep_for(milliseconds(10));
  }
  // The first node a lab builds runs the start-up sweep; this live node
  // itself is not touched by it (nor by another sweep).
  NetnsNode mine(1);
  sweep_netns_leftovers();
  EXPECT_FALSE(netns_exists(name));
  EXPECT_FALSE(link_exists(veth));
  EXPECT_FALSE(state_file_names(name));
  EXPECT_TRUE(namespaces_of(pid).empty());
  EXPECT_TRUE(netns_exists(mine.name()));
  EXPECT_TRUE(link_exists(mine.host_veth()));
  EXPECT_TRUE(state_file_names(mine.name()));
}

// A dead pid: a child that has ended and been reaped.
pid_t dead_pid() {
  ChildProcess done(ProcessSpec{.argv = {"true"}});
  for (int i = 0; i < 5000 && done.running(); ++i) std::this_thread::sleep_for(milliseconds(1));
  return done.pid();
}

TEST(NetnsCleanup, SweepNeverRemovesWhatTheRecordDoesNotOwn) {
  SKIP_WITHOUT_NETNS();
  const pid_t dead = dead_pid();
  // A namespace the record names but the naming scheme does not give to that pid.
  const std::string foreign = "lltest-" + std::to_string(::getpid());
  ASSERT_EQ(output_of({"ip", "netns", "add", foreign}), "");
  fs::create_directories(netns_state_dir());
  const fs::path record = netns_state_dir() / "slot-foreign-test";
  {
    std::ofstream out(record);
    out << "pid " << dead << "\nnetns " << foreign << "\nveth " << foreign << "\n";
  }
  sweep_netns_leftovers();
  EXPECT_TRUE(netns_exists(foreign));
  EXPECT_FALSE(fs::exists(record));
  output_of({"ip", "netns", "del", foreign});
}

// Labs that start together, each sweeping what a killed lab left before it
// takes a slot, never take one slot twice: a sweep that read a dead lab's
// record must not remove it after another lab has taken that slot again.
// (The machine's own state directory: labs of other tests take slots too.)
TEST(NetnsCleanup, LabsStartingTogetherNeverShareASlot) {
  SKIP_WITHOUT_NETNS();
  const pid_t dead = dead_pid();
  fs::create_directories(netns_state_dir());
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    // A killed lab's records in the first three free slots (taken as a lab
    // takes one: a record that exists is never overwritten).
    for (int slot = 0, left = 3; left > 0 && slot < 64; ++slot) {
      const fs::path file = netns_state_dir() / ("slot-" + std::to_string(slot));
      const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd < 0) continue;
      const std::string name = "ll-" + std::to_string(dead) + "-" + std::to_string(slot);
      const std::string record =
          "pid " + std::to_string(dead) + "\nnetns " + name + "\nveth " + name + "h\n";
      EXPECT_EQ(::write(fd, record.data(), record.size()), ssize_t(record.size()));
      ::close(fd);
      --left;
    }
    std::vector<std::unique_ptr<ChildProcess>> holders;
    for (int i = 0; i < 4; ++i)
      holders.push_back(std::make_unique<ChildProcess>(ProcessSpec{
          .argv = {NETNS_HOLDER_PATH}, .env = {}, .cwd = {}, .output = {}, .pipe_stdio = true}));
    std::set<std::string> slots;
    for (auto& holder : holders) {
      std::string line;
      char c = 0;
      while (::read(holder->stdout_fd(), &c, 1) == 1 && c != '\n') line += c;
      const std::string name = line.substr(0, line.find(' '));
      EXPECT_FALSE(name.empty()) << "netns_holder did not start";
      if (name.empty()) continue;
      const std::string slot = name.substr(name.rfind('-') + 1);
      EXPECT_TRUE(slots.insert(slot).second) << "slot " << slot << " taken twice";
      EXPECT_TRUE(state_file_names(name)) << "the record of a live lab was swept: " << name;
    }
    // SIGTERM: each removes its namespace and record.
    for (auto& holder : holders) holder->stop(seconds(20));
  }
}

// A lab command run to its end, with the namespaces it was seen to hold.
struct WatchedLab {
  std::optional<int> status;
  std::string err;
  size_t most_namespaces = 0;  // at one moment while it ran
  size_t namespaces_left = 0;  // after it ended
};

WatchedLab run_lab(std::vector<std::string> args, const TempDir& out) {
  args.insert(args.begin(), LOCKLAB_PATH);
  ChildProcess lab(
      ProcessSpec{.argv = args, .env = {}, .cwd = {}, .output = out.path() / "stderr"});
  WatchedLab watched;
  // Its namespaces, seen while it runs, prove it ran on this backend.
  for (int i = 0; i < 12000 && !(watched.status = lab.poll()); ++i) {
    watched.most_namespaces = std::max(watched.most_namespaces, namespaces_of(lab.pid()).size());
    std::this_thread::sleep_for(milliseconds(10));
  }
  std::ifstream err(out.path() / "stderr");
  std::stringstream text;
  text << err.rdbuf();
  watched.err = text.str();
  watched.namespaces_left = namespaces_of(lab.pid()).size();
  return watched;
}

bool exited_with(const WatchedLab& lab, int code) {
  return lab.status && WIFEXITED(*lab.status) && WEXITSTATUS(*lab.status) == code;
}

TEST(NetnsScenario, PartitionStoryReachesItsVerdictInNamespaces) {
  SKIP_WITHOUT_NETNS();
  TempDir out("locklab-netns-run");
  const WatchedLab lab =
      // Two locks show it (the watchdog's renewals and a plain lease both cut
      // off); the comparison tells the story to every lock.
      run_lab({"run", std::string(SCENARIOS_DIR) + "/redisson-renewal-partition.json", "-a",
               "redisson-hash", "-a", "set-nx-px", "--network", "netns", "--out",
               (out.path() / "run").string()},
              out);
  ASSERT_TRUE(lab.status.has_value()) << "the run did not end in 2 minutes";
  EXPECT_TRUE(exited_with(lab, 0)) << lab.err;
  EXPECT_NE(lab.err.find("expected violated, met"), std::string::npos) << lab.err;
  EXPECT_EQ(lab.err.find("using the fault proxy"), std::string::npos) << lab.err;
  EXPECT_GT(lab.most_namespaces, 0u);
  EXPECT_EQ(lab.namespaces_left, 0u);
}

// Replicas and Sentinel in namespaces too: the failover stories (cut
// replication, promote by hand or by Sentinel) reach their verdicts with
// master and replica each in a namespace of its own.
TEST(NetnsScenario, FailoverStoriesRunWithTheReplicaInItsOwnNamespace) {
  SKIP_WITHOUT_NETNS();
  for (const std::string story : {"failover-before-replication", "sentinel-failover"}) {
    SCOPED_TRACE(story);
    TempDir out("locklab-netns-run");
    const WatchedLab lab =
        run_lab({"run", std::string(SCENARIOS_DIR) + "/" + story + ".json", "-a", "set-nx-px",
                 "--network", "netns", "--out", (out.path() / "run").string()},
                out);
    ASSERT_TRUE(lab.status.has_value()) << "the run did not end in 2 minutes";
    EXPECT_TRUE(exited_with(lab, 0)) << lab.err;
    EXPECT_NE(lab.err.find("expected violated, met"), std::string::npos) << lab.err;
    EXPECT_EQ(lab.err.find("using the fault proxy"), std::string::npos) << lab.err;
    EXPECT_EQ(lab.most_namespaces, 2u) << "one for the master, one for the replica";
    EXPECT_EQ(lab.namespaces_left, 0u);
  }
  // An adapter, given node 0's address once, follows the promotion too (its relay moves).
  TempDir out("locklab-netns-run");
  const WatchedLab lab =
      run_lab({"run", std::string(SCENARIOS_DIR) + "/failover-before-replication.json", "--adapter",
               "/usr/bin/python3 " + std::string(EXAMPLES_DIR) + "/adapters/redis_py_lock.py",
               "--like", "set-nx-px", "--network", "netns", "--out", (out.path() / "run").string()},
              out);
  EXPECT_TRUE(exited_with(lab, 0)) << lab.err;
  EXPECT_NE(lab.err.find("expected violated, met"), std::string::npos) << lab.err;
  EXPECT_EQ(lab.most_namespaces, 2u);
}

// explore --network netns: every generated scenario runs in namespaces, and
// the exploration says so.
TEST(NetnsScenario, ExploreRunsGeneratedScenariosInNamespaces) {
  SKIP_WITHOUT_NETNS();
  TempDir out("locklab-netns-explore");
  const WatchedLab lab = run_lab(
      {"explore", "set-nx-px", "--faults", "partition", "--runs", "2", "--seed", "3", "--kinds",
       "stale-write", "--network", "netns", "--out", (out.path() / "explore").string()},
      out);
  ASSERT_TRUE(lab.status.has_value()) << "the exploration did not end in 2 minutes";
  EXPECT_TRUE(exited_with(lab, 0)) << lab.err;
  EXPECT_EQ(lab.err.find("using the fault proxy"), std::string::npos) << lab.err;
  EXPECT_GT(lab.most_namespaces, 0u);
  std::ifstream doc(out.path() / "explore" / "explore.json");
  const nlohmann::json explored = nlohmann::json::parse(doc);
  EXPECT_EQ(explored["options"]["network"], "netns");
  EXPECT_EQ(explored["runs_total"], 2);
  EXPECT_EQ(lab.namespaces_left, 0u);
}

}  // namespace
}  // namespace locklab
