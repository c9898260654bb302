#include "netns.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "hiredis_connection.h"
#include "process.h"
#include "temp_dir.h"

namespace locklab {

const char* const kNoNetemMessage =
    "this kernel has no sch_netem (tc qdisc netem), so the netns backend cannot delay; "
    "delay faults use the fault proxy";

namespace {

constexpr size_t kMaxClients = 200;
constexpr int kSlots = 256;
// Bands of the prio qdisc a delayed client's traffic is steered into: band 1
// is everyone else, so at most 15 clients of a node can be delayed apart.
constexpr size_t kDelayBands = 15;

std::string subnet_address(int slot, int host) {
  return "10.213." + std::to_string(slot) + "." + std::to_string(host);
}

std::string hex(size_t n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%zx", n);
  return buf;
}

std::string join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs a short tool, bounded in time; the exit code, or -1 if it hung.
int run_tool(const std::vector<std::string>& argv, const std::filesystem::path& output) {
  ChildProcess child(ProcessSpec{.argv = argv, .env = {}, .cwd = {}, .output = output});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto status = child.poll())
      return WIFEXITED(*status) ? WEXITSTATUS(*status) : 128 + WTERMSIG(*status);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  child.kill();
  return -1;
}

bool pid_alive(pid_t pid) {
  return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM);
}

struct StateEntry {
  pid_t pid = -1;
  std::string netns;
  std::string veth;
};

std::optional<StateEntry> read_state(const std::filesystem::path& file) {
  std::ifstream in(file);
  StateEntry entry;
  std::string key;
  while (in >> key) {
    if (key == "pid")
      in >> entry.pid;
    else if (key == "netns")
      in >> entry.netns;
    else if (key == "veth")
      in >> entry.veth;
  }
  if (entry.pid <= 0) return std::nullopt;
  return entry;
}

// Only names this lab's scheme gives to that pid's nodes may be deleted.
bool owned_by(const std::string& name, pid_t pid) {
  const std::string prefix = "ll-" + std::to_string(pid) + "-";
  return name.rfind(prefix, 0) == 0 && name.size() <= 15;
}

std::mutex& sweep_mutex() {
  static std::mutex m;
  return m;
}

// Held, across every lab on the machine, while a slot is taken or the
// records are swept: a sweep reads a record, decides and removes it with no
// lab taking that slot in between. (Without it, a sweep that read a dead
// lab's record could remove it after another lab had swept it too and taken
// the slot again, and a third lab would get the same subnet.)
class StateDirLock {
 public:
  explicit StateDirLock(const std::filesystem::path& dir) {
    const auto file = dir / "lock";
    fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw std::runtime_error("cannot open " + file.string() + ": " + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd_);
      throw std::runtime_error("cannot lock " + file.string() + ": " + std::strerror(error));
    }
  }
  ~StateDirLock() { ::close(fd_); }
  StateDirLock(const StateDirLock&) = delete;
  StateDirLock& operator=(const StateDirLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

std::optional<std::string> netns_unavailable_reason() {
  // CAP_NET_ADMIN alone is not enough: `ip netns add` also mounts under /run.
  if (::geteuid() != 0) return "network namespaces need root (CAP_NET_ADMIN)";
  for (const char* tool : {"ip", "iptables", "tc"})
    if (!program_available(tool))
      return std::string(tool) + " is not installed (apt-get install iproute2 iptables)";
  return std::nullopt;
}

std::filesystem::path netns_state_dir() {
  if (const char* dir = std::getenv("LOCKLAB_NETNS_STATE"); dir && *dir) return dir;
  return "/run/locklab-netns";
}

size_t sweep_netns_leftovers() {
  std::lock_guard l(sweep_mutex());
  const auto dir = netns_state_dir();
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return 0;
  StateDirLock locked(dir);
  size_t removed = 0;
  for (const auto& file : std::filesystem::directory_iterator(dir, ec)) {
    if (file.path().filename().string().rfind("slot-", 0) != 0) continue;
    auto entry = read_state(file.path());
    if (!entry) {
      // Written by a lab killed between creating the file and writing it:
      // nothing was created yet. Left to age a minute in case it is being written.
      auto age = std::filesystem::file_time_type::clock::now() -
                 std::filesystem::last_write_time(file.path(), ec);
      if (!ec && age > std::chrono::minutes(1)) std::filesystem::remove(file.path(), ec);
      continue;
    }
    if (pid_alive(entry->pid)) continue;
    if (!entry->veth.empty() && owned_by(entry->veth, entry->pid))
      run_tool({"ip", "link", "del", entry->veth}, {});
    if (!entry->netns.empty() && owned_by(entry->netns, entry->pid))
      run_tool({"ip", "netns", "del", entry->netns}, {});
    std::filesystem::remove(file.path(), ec);
    ++removed;
  }
  return removed;
}

// One client's link: the iptables rules it added in the node's namespace
// (removed by pass()) and its netem band.
class NetnsLink final : public NetworkLink {
 public:
  NetnsLink(NetnsNode& node, size_t client)
      : node_(node), client_(client), address_(node.client_address(client)) {}
  ~NetnsLink() override = default;

  void pass() override {
    std::lock_guard l(mu_);
    clear_rules();
  }

  void blackhole() override {
    std::lock_guard l(mu_);
    clear_rules();
    add_rule({"INPUT", "-d", address_, "-j", "DROP"});
    add_rule({"OUTPUT", "-s", address_, "-j", "DROP"});
  }

  void reject() override {
    std::lock_guard l(mu_);
    clear_rules();
    add_rule({"INPUT", "-p", "tcp", "-d", address_, "-j", "REJECT", "--reject-with", "tcp-reset"});
    // Nothing the server had queued reaches the client, but the resets do.
    add_rule({"OUTPUT", "-p", "tcp", "-s", address_, "--tcp-flags", "RST", "NONE", "-j", "DROP"});
  }

  void cut() override {
    // The server closes them (FIN), as a proxy's cut does; the lab's own
    // address is not this client's, so its connection survives.
    HiredisConnection admin(Endpoint{node_.node_address(), NetnsNode::kPort});
    admin.command({"CLIENT", "KILL", "LADDR", address_ + ":" + std::to_string(NetnsNode::kPort)});
  }

  void delay(Direction direction, std::chrono::milliseconds fixed,
             std::chrono::milliseconds jitter) override {
    std::lock_guard l(mu_);
    const bool off = fixed.count() == 0 && jitter.count() == 0;
    if (off && !delayed_) return;
    if (!node_.netem_available()) throw std::runtime_error(kNoNetemMessage);
    if (client_ >= kDelayBands)
      throw std::runtime_error("the netns backend delays at most " + std::to_string(kDelayBands) +
                               " clients of a node apart");
    prepare_bands();
    const std::string band = "1:" + hex(client_ + 2);
    const std::string handle = hex(client_ + 16) + ":";
    auto netem = [&](bool on) {
      std::vector<std::string> args = {"netem", "delay",
                                       std::to_string(on ? fixed.count() : 0) + "ms"};
      if (on && jitter.count() > 0) args.push_back(std::to_string(jitter.count()) + "ms");
      return args;
    };
    auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
      a.insert(a.end(), b.begin(), b.end());
      return a;
    };
    const bool to_server = direction != Direction::ToClient;
    const bool to_client = direction != Direction::ToServer;
    node_.run(
        with({"tc", "qdisc", "replace", "dev", node_.host_veth_, "parent", band, "handle", handle},
             netem(to_server && !off)));
    node_.run_inside(
        with({"tc", "qdisc", "replace", "dev", node_.node_veth_, "parent", band, "handle", handle},
             netem(to_client && !off)));
    delayed_ = !off;
  }

 private:
  void add_rule(std::vector<std::string> spec) {
    std::vector<std::string> argv = {"iptables", "-w", "-A"};
    argv.insert(argv.end(), spec.begin(), spec.end());
    node_.run_inside(argv);
    rules_.push_back(std::move(spec));
  }

  void clear_rules() {
    for (auto it = rules_.rbegin(); it != rules_.rend(); ++it) {
      std::vector<std::string> argv = {"iptables", "-w", "-D"};
      argv.insert(argv.end(), it->begin(), it->end());
      node_.run_inside(argv);
    }
    rules_.clear();
  }

  // Client c's packets (to .(10+c) on the way in, from it on the way out)
  // go to band c+2 of a prio qdisc on each end of the veth; the others stay
  // in band 1, undelayed.
  void prepare_bands() {
    std::lock_guard l(node_.tc_mu_);
    if (!node_.prio_ready_) {
      std::vector<std::string> prio = {"root", "handle", "1:", "prio", "bands", "16", "priomap"};
      for (int i = 0; i < 16; ++i) prio.push_back("0");
      std::vector<std::string> host = {"tc", "qdisc", "add", "dev", node_.host_veth_};
      host.insert(host.end(), prio.begin(), prio.end());
      node_.run(host);
      std::vector<std::string> inside = {"tc", "qdisc", "add", "dev", node_.node_veth_};
      inside.insert(inside.end(), prio.begin(), prio.end());
      node_.run_inside(inside);
      node_.prio_ready_ = true;
    }
    if (!filtered_) {
      const std::string band = "1:" + hex(client_ + 2);
      node_.run({"tc", "filter", "add", "dev", node_.host_veth_, "parent", "1:", "protocol", "ip",
                 "prio", "1", "u32", "match", "ip", "dst", address_ + "/32", "flowid", band});
      node_.run_inside({"tc", "filter", "add", "dev", node_.node_veth_, "parent", "1:", "protocol",
                        "ip", "prio", "1", "u32", "match", "ip", "src", address_ + "/32", "flowid",
                        band});
      filtered_ = true;
    }
  }

  NetnsNode& node_;
  const size_t client_;
  const std::string address_;
  std::mutex mu_;
  std::vector<std::vector<std::string>> rules_;
  bool filtered_ = false;
  bool delayed_ = false;
};

NetnsNode::NetnsNode(size_t clients) {
  if (auto why = netns_unavailable_reason()) throw std::runtime_error("netns backend: " + *why);
  if (clients > kMaxClients)
    throw std::runtime_error("the netns backend gives a node at most " +
                             std::to_string(kMaxClients) + " client addresses");
  {
    static std::once_flag swept;
    std::call_once(swept, [] { sweep_netns_leftovers(); });
  }
  const auto dir = netns_state_dir();
  std::filesystem::create_directories(dir);
  const pid_t pid = ::getpid();
  {
    const StateDirLock locked(dir);  // no sweep between taking a slot and recording it
    for (int slot = 0; slot < kSlots && slot_ < 0; ++slot) {
      auto file = dir / ("slot-" + std::to_string(slot));
      int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd < 0) {
        if (errno == EEXIST) continue;
        throw std::runtime_error("cannot create " + file.string() + ": " + std::strerror(errno));
      }
      slot_ = slot;
      state_file_ = file;
      name_ = "ll-" + std::to_string(pid) + "-" + std::to_string(slot);
      host_veth_ = name_ + "h";
      node_veth_ = name_ + "n";
      // Recorded before anything exists, so a kill at any later step leaves a
      // record the sweep can act on.
      const std::string record =
          "pid " + std::to_string(pid) + "\nnetns " + name_ + "\nveth " + host_veth_ + "\n";
      const bool written = ::write(fd, record.data(), record.size()) == ssize_t(record.size());
      ::close(fd);
      if (!written) {
        std::error_code ignored;
        std::filesystem::remove(file, ignored);
        throw std::runtime_error("cannot write " + file.string());
      }
    }
  }
  if (slot_ < 0)
    throw std::runtime_error("every netns slot in " + dir.string() +
                             " is taken (by live labs; see sweep_netns_leftovers)");
  on_signal_ = std::make_unique<CleanupOnSignal>([this] { teardown(); });
  try {
    log_dir_ = std::make_unique<TempDir>("locklab-netns");
    run({"ip", "netns", "add", name_});
    run({"ip", "link", "add", host_veth_, "type", "veth", "peer", "name", node_veth_});
    run({"ip", "link", "set", node_veth_, "netns", name_});
    run({"ip", "addr", "add", subnet_address(slot_, 1) + "/24", "dev", host_veth_});
    run({"ip", "link", "set", host_veth_, "up"});
    // One batch for the many addresses: a process per address is slow.
    const auto batch = log_dir_->path() / "addresses.batch";
    {
      std::ofstream out(batch);
      out << "link set lo up\n";
      out << "addr add " << subnet_address(slot_, 2) << "/24 dev " << node_veth_ << "\n";
      for (size_t c = 0; c < clients; ++c)
        out << "addr add " << subnet_address(slot_, int(10 + c)) << "/24 dev " << node_veth_
            << "\n";
      out << "link set " << node_veth_ << " up\n";
    }
    run({"ip", "-n", name_, "-batch", batch.string()});
  } catch (...) {
    teardown();
    throw;
  }
  for (size_t c = 0; c < clients; ++c) links_.push_back(std::make_unique<NetnsLink>(*this, c));
}

NetnsNode::~NetnsNode() {
  links_.clear();
  teardown();
  on_signal_.reset();
}

void NetnsNode::teardown() noexcept {
  static std::mutex mu;
  std::lock_guard l(mu);
  if (state_file_.empty()) return;
  try {
    // Deleting one end deletes the pair (and its qdiscs) at once, whereas the
    // namespace's own devices go away later, in the kernel's own time.
    run_tool({"ip", "link", "del", host_veth_}, {});
    run_tool({"ip", "netns", "del", name_}, {});
  } catch (...) {
    // Left for the next lab's sweep: the state file stays.
    return;
  }
  std::error_code ignored;
  std::filesystem::remove(state_file_, ignored);
  state_file_.clear();
}

std::string NetnsNode::lab_address() const {
  return subnet_address(slot_, 1);
}

std::string NetnsNode::node_address() const {
  return subnet_address(slot_, 2);
}

std::string NetnsNode::client_address(size_t client) const {
  return subnet_address(slot_, int(10 + client));
}

std::vector<std::string> NetnsNode::run_prefix() const {
  return {"ip", "netns", "exec", name_};
}

NetworkLink& NetnsNode::link(size_t client) {
  return *links_.at(client);
}

void NetnsNode::run(const std::vector<std::string>& argv) {
  std::lock_guard l(run_mu_);
  const auto log = log_dir_->path() / "tool.log";
  std::error_code ignored;
  std::filesystem::remove(log, ignored);
  const int code = run_tool(argv, log);
  if (code == 0) return;
  std::string output = read_file(log);
  while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
  throw std::runtime_error(
      "netns backend: `" + join(argv) + "` " +
      (code < 0 ? std::string("did not finish in 10 s") : "failed (" + std::to_string(code) + ")") +
      (output.empty() ? "" : ": " + output));
}

void NetnsNode::run_inside(std::vector<std::string> argv) {
  auto prefix = run_prefix();
  argv.insert(argv.begin(), prefix.begin(), prefix.end());
  run(argv);
}

bool NetnsNode::try_run(const std::vector<std::string>& argv) {
  return run_tool(argv, {}) == 0;
}

bool NetnsNode::netem_available() {
  static std::mutex mu;
  static std::optional<bool> known;
  std::lock_guard l(mu);
  if (!known) {
    // Probed on this namespace's loopback, which nothing else uses.
    known = try_run({"ip", "netns", "exec", name_, "tc", "qdisc", "add", "dev", "lo", "root",
                     "netem", "delay", "0ms"});
    if (*known) try_run({"ip", "netns", "exec", name_, "tc", "qdisc", "del", "dev", "lo", "root"});
  }
  return *known;
}

}  // namespace locklab
