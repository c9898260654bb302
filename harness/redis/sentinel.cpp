#include "sentinel.h"

#include <fstream>
#include <functional>
#include <optional>
#include <stdexcept>
#include <thread>

#include "hiredis_connection.h"
#include "redis_server.h"

namespace locklab {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr milliseconds kPollInterval{100};
constexpr ConnectionOptions kQueryOptions{milliseconds(200), milliseconds(500)};

Reply query(const Endpoint& endpoint, const std::vector<std::string>& argv,
            const ConnectionOptions& auth = {}) {
  ConnectionOptions options = kQueryOptions;
  options.username = auth.username;
  options.password = auth.password;
  HiredisConnection connection(endpoint, options);
  return connection.command(argv);
}

// The value of `field` in an INFO reply ("field:value\r\n" lines).
std::optional<std::string> info_field(const std::string& info, const std::string& field) {
  std::string key = field + ":";
  size_t at = 0;
  while ((at = info.find(key, at)) != std::string::npos) {
    if (at == 0 || info[at - 1] == '\n') {
      size_t start = at + key.size();
      size_t end = info.find_first_of("\r\n", start);
      return info.substr(start, end == std::string::npos ? std::string::npos : end - start);
    }
    at += key.size();
  }
  return std::nullopt;
}

long long info_number(const Endpoint& server, const std::string& field,
                      const ConnectionOptions& auth) {
  Reply info = query(server, {"INFO", "replication"}, auth);
  auto value = info_field(info.str, field);
  if (!value) throw std::runtime_error(server.str() + ": INFO replication has no " + field);
  return std::stoll(*value);
}

std::string role_of(const Endpoint& server, const ConnectionOptions& auth = {}) {
  Reply role = query(server, {"ROLE"}, auth);
  if (role.type != Reply::Type::Array || role.elements.empty())
    throw std::runtime_error(server.str() + ": unexpected ROLE reply " + role.describe());
  return role.elements[0].str;
}

// A flat [field, value, field, value...] array from SENTINEL REPLICAS.
std::string flat_field(const Reply& entry, const std::string& field) {
  for (size_t i = 0; i + 1 < entry.elements.size(); i += 2)
    if (entry.elements[i].str == field) return entry.elements[i + 1].str;
  return "";
}

}  // namespace

SentinelGroup::SentinelGroup(Endpoint master, SentinelOptions options)
    : options_(std::move(options)) {
  if (!program_available("redis-sentinel"))
    throw std::runtime_error("redis-sentinel is not installed (apt-get install redis-sentinel)");
  sentinels_.resize(size_t(options_.sentinels));
  for (size_t i = 0; i < sentinels_.size(); ++i) start(sentinels_[i], master, int(i));
}

SentinelGroup::~SentinelGroup() {
  for (Sentinel& sentinel : sentinels_)
    if (sentinel.process) sentinel.process->kill();
}

void SentinelGroup::start(Sentinel& sentinel, const Endpoint& master, int index) {
  std::string name = "sentinel-" + std::to_string(index);
  sentinel.dir = std::make_unique<TempDir>("locklab-" + name);
  auto config = sentinel.dir->path() / "sentinel.conf";
  auto log = sentinel.dir->path() / "sentinel.log";
  const std::string& group = options_.master_name;
  for (int attempt = 0;; ++attempt) {
    sentinel.endpoint = Endpoint{"127.0.0.1", free_loopback_port()};
    {
      // Sentinel rewrites its config file as it learns; a fresh one each attempt.
      std::ofstream out(config, std::ios::trunc);
      out << "port " << sentinel.endpoint.port << "\n"
          << "bind 127.0.0.1\n"
          // Other sentinels reach it here, whichever address it meets a node from.
          << "sentinel announce-ip 127.0.0.1\n"
          << "protected-mode no\n"
          << "daemonize no\n"
          << "logfile \"\"\n"
          << "dir " << sentinel.dir->path().string() << "\n"
          << "sentinel monitor " << group << " " << master.host << " " << master.port << " "
          << options_.quorum << "\n"
          << "sentinel down-after-milliseconds " << group << " " << options_.down_after.count()
          << "\n"
          << "sentinel failover-timeout " << group << " "
          << options_.failover_timeout_until_expected.count() << "\n"
          << "sentinel parallel-syncs " << group << " " << options_.parallel_syncs << "\n";
      if (!out) throw std::runtime_error(name + ": cannot write " + config.string());
    }
    sentinel.process = std::make_unique<ChildProcess>(ProcessSpec{
        .argv = {"redis-sentinel", config.string()}, .env = options_.env, .output = log});

    auto deadline = steady_clock::now() + options_.start_timeout;
    std::string last_error = "no answer";
    bool exited = false;
    while (steady_clock::now() < deadline) {
      if (!sentinel.process->running()) {
        exited = true;
        break;
      }
      try {
        // The pid tells our sentinel from another process on the same port.
        Reply info = query(sentinel.endpoint, {"INFO", "server"});
        if (info_field(info.str, "process_id") == std::to_string(sentinel.process->pid())) return;
        last_error = "another process answers on " + sentinel.endpoint.str();
      } catch (const RedisError& e) {
        last_error = e.what();
      }
      std::this_thread::sleep_for(milliseconds(20));
    }
    std::string why = exited ? last_log_line(log) : last_error;
    sentinel.process.reset();
    bool port_taken = why.find("in use") != std::string::npos ||
                      why.find("Failed listening") != std::string::npos;
    if (!port_taken || attempt >= 4)
      throw std::runtime_error(name + " on " + sentinel.endpoint.str() + " did not start: " + why);
  }
}

void SentinelGroup::expect_failover() const {
  const std::string timeout = std::to_string(options_.failover_timeout.count());
  std::string errors;
  size_t took = 0;
  for (const Sentinel& sentinel : sentinels_) {
    try {
      Reply reply = query(sentinel.endpoint,
                          {"SENTINEL", "SET", options_.master_name, "failover-timeout", timeout});
      if (reply.is_ok()) {
        ++took;
        continue;
      }
      errors += " " + sentinel.endpoint.str() + ": " + reply.describe() + ";";
    } catch (const RedisError& e) {
      errors += std::string(" ") + e.what() + ";";
    }
  }
  if (took == 0)
    throw std::runtime_error("no sentinel of '" + options_.master_name +
                             "' took failover-timeout " + timeout + ":" + errors);
}

std::vector<Endpoint> SentinelGroup::endpoints() const {
  std::vector<Endpoint> out;
  for (const Sentinel& sentinel : sentinels_) out.push_back(sentinel.endpoint);
  return out;
}

std::vector<pid_t> SentinelGroup::pids() const {
  std::vector<pid_t> out;
  for (const Sentinel& sentinel : sentinels_) out.push_back(sentinel.process->pid());
  return out;
}

std::vector<std::filesystem::path> SentinelGroup::dirs() const {
  std::vector<std::filesystem::path> out;
  for (const Sentinel& sentinel : sentinels_) out.push_back(sentinel.dir->path());
  return out;
}

Endpoint SentinelView::master_address() const {
  std::string errors;
  for (const Endpoint& sentinel : sentinels) {
    try {
      Reply reply = query(sentinel, {"SENTINEL", "GET-MASTER-ADDR-BY-NAME", master_name});
      if (reply.type == Reply::Type::Array && reply.elements.size() == 2)
        return Endpoint{reply.elements[0].str, std::stoi(reply.elements[1].str)};
      errors += " " + sentinel.str() + ": " + reply.describe() + ";";
    } catch (const RedisError& e) {
      errors += std::string(" ") + e.what() + ";";
    }
  }
  throw RedisError("no sentinel names the master of '" + master_name + "':" + errors, false);
}

void SentinelView::wait_until_replicas_known(size_t replicas, milliseconds timeout) const {
  auto deadline = steady_clock::now() + timeout;
  std::string status;
  for (;;) {
    bool ready = true;
    status.clear();
    for (const Endpoint& sentinel : sentinels) {
      size_t reachable = 0, peers = 0;
      std::string master_flags;
      try {
        Reply known = query(sentinel, {"SENTINEL", "REPLICAS", master_name});
        for (const Reply& entry : known.elements) {
          std::string flags = flat_field(entry, "flags");
          if (flags.find("s_down") == std::string::npos &&
              flags.find("disconnected") == std::string::npos)
            ++reachable;
        }
        peers = query(sentinel, {"SENTINEL", "SENTINELS", master_name}).elements.size();
        master_flags = flat_field(query(sentinel, {"SENTINEL", "MASTER", master_name}), "flags");
      } catch (const RedisError& e) {
        status += " " + sentinel.str() + ": " + e.what() + ";";
        ready = false;
        continue;
      }
      const bool failing_over = master_flags.find("failover") != std::string::npos;
      status += " " + sentinel.str() + " knows " + std::to_string(reachable) + " replicas, " +
                std::to_string(peers) + " sentinels" +
                (failing_over ? ", failover in progress;" : ";");
      if (reachable < replicas || peers + 1 < sentinels.size() || failing_over) ready = false;
    }
    if (ready) return;
    if (steady_clock::now() >= deadline)
      throw std::runtime_error("sentinels of '" + master_name + "' were not ready (" +
                               std::to_string(replicas) + " replicas known, no failover) within " +
                               std::to_string(timeout.count()) + " ms:" + status);
    std::this_thread::sleep_for(kPollInterval);
  }
}

Endpoint SentinelView::wait_for_failover(const Endpoint& old_master, milliseconds timeout) const {
  auto deadline = steady_clock::now() + timeout;
  std::string status;
  for (;;) {
    status.clear();
    std::optional<Endpoint> agreed;
    bool disagree = false;
    size_t answered = 0;
    for (const Endpoint& sentinel : sentinels) {
      try {
        Reply reply = query(sentinel, {"SENTINEL", "GET-MASTER-ADDR-BY-NAME", master_name});
        if (reply.type != Reply::Type::Array || reply.elements.size() != 2) {
          status += " " + sentinel.str() + ": " + reply.describe() + ";";
          continue;
        }
        Endpoint named{reply.elements[0].str, std::stoi(reply.elements[1].str)};
        status += " " + sentinel.str() + " says " + named.str() + ";";
        ++answered;
        if (named == old_master || (agreed && !(named == *agreed))) disagree = true;
        agreed = named;
      } catch (const RedisError& e) {
        status += " " + sentinel.str() + ": " + e.what() + ";";
      }
    }
    // A dead sentinel must not block the answer; a split vote must.
    if (!disagree && agreed && answered * 2 > sentinels.size()) {
      try {
        if (role_of(*agreed, data_auth) == "master") return *agreed;
        status += " " + agreed->str() + " is not master yet;";
      } catch (const std::exception& e) {
        status += std::string(" ") + e.what() + ";";
      }
    }
    if (steady_clock::now() >= deadline)
      throw std::runtime_error("no failover away from " + old_master.str() + " within " +
                               std::to_string(timeout.count()) + " ms:" + status);
    std::this_thread::sleep_for(kPollInterval);
  }
}

void SentinelView::force_failover(milliseconds timeout) const {
  auto deadline = steady_clock::now() + timeout;
  std::string refusals;
  for (;;) {
    refusals.clear();
    for (const Endpoint& sentinel : sentinels) {
      try {
        Reply reply = query(sentinel, {"SENTINEL", "FAILOVER", master_name});
        if (reply.is_ok()) return;
        refusals += " " + sentinel.str() + ": " + reply.describe() + ";";
      } catch (const RedisError& e) {
        refusals += std::string(" ") + e.what() + ";";
      }
    }
    // -INPROG (a failover still under way) and -NOGOODSLAVE (no replica fit
    // yet, e.g. one just demoted) pass; anything else will not.
    if (steady_clock::now() >= deadline)
      throw std::runtime_error("no sentinel of '" + master_name + "' started a failover within " +
                               std::to_string(timeout.count()) + " ms:" + refusals);
    std::this_thread::sleep_for(kPollInterval);
  }
}

void promote_replica(const Endpoint& replica, const ConnectionOptions& auth) {
  Reply reply = query(replica, {"REPLICAOF", "NO", "ONE"}, auth);
  if (!reply.is_ok())
    throw std::runtime_error(replica.str() + " refused REPLICAOF NO ONE: " + reply.describe());
  std::string role = role_of(replica, auth);
  if (role != "master")
    throw std::runtime_error(replica.str() + " reports role " + role + " after REPLICAOF NO ONE");
}

std::optional<Endpoint> master_of(const Endpoint& server, const ConnectionOptions& auth) {
  Reply info = query(server, {"INFO", "replication"}, auth);
  if (info_field(info.str, "role") != "slave") return std::nullopt;
  auto host = info_field(info.str, "master_host");
  auto port = info_field(info.str, "master_port");
  if (!host || !port) throw std::runtime_error(server.str() + ": INFO replication names no master");
  return Endpoint{*host, std::stoi(*port)};
}

void make_replica_of(const Endpoint& server, const Endpoint& master,
                     const ConnectionOptions& auth) {
  Reply reply = query(server, {"REPLICAOF", master.host, std::to_string(master.port)}, auth);
  if (!reply.is_ok())
    throw std::runtime_error(server.str() + " refused REPLICAOF " + master.str() + ": " +
                             reply.describe());
}

void wait_until_replica_synced(const Endpoint& master, const Endpoint& replica,
                               milliseconds timeout, const ConnectionOptions& auth,
                               const std::string& probe) {
  const auto deadline = steady_clock::now() + timeout;
  std::string status;
  // The replica's link and offset, once `done` says so; throws at the deadline.
  auto poll_replica = [&](const std::function<bool(const std::optional<std::string>& link,
                                                   long long offset)>& done) {
    for (;;) {
      try {
        Reply info = query(replica, {"INFO", "replication"}, auth);
        auto link = info_field(info.str, "master_link_status");
        auto offset = info_field(info.str, "slave_repl_offset");
        status = "link " + link.value_or("?") + ", replica offset " + offset.value_or("?");
        if (done(link, offset ? std::stoll(*offset) : -1)) return;
      } catch (const RedisError& e) {
        status = e.what();
      }
      if (steady_clock::now() >= deadline)
        throw std::runtime_error("replica " + replica.str() + " did not catch up with " +
                                 master.str() + " within " + std::to_string(timeout.count()) +
                                 " ms: " + status);
      std::this_thread::sleep_for(milliseconds(20));
    }
  };
  // A write made before the full sync ends arrives inside the snapshot, and
  // the replica then reports the offset although the stream does not flow:
  // after a full sync the master holds new writes back until the replica's
  // first REPLCONF ACK, up to a second later. So first the link, then a write
  // made now and seen by the replica, which proves the stream flows.
  poll_replica([](const auto& link, long long) { return link == "up"; });
  if (!query(master, {"SET", probe, "1"}, auth).is_ok() ||
      query(master, {"DEL", probe}, auth).integer != 1)
    throw std::runtime_error("cannot write the replication probe key on " + master.str());
  const long long target = info_number(master, "master_repl_offset", auth);
  poll_replica(
      [target](const auto& link, long long offset) { return link == "up" && offset >= target; });
}

}  // namespace locklab
