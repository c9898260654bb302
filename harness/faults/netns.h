// The kernel-level network backend: each Redis node in a network namespace
// of its own, reached from the lab (in the root namespace) over a veth pair.
// Node slot K gets the private subnet 10.213.K.0/24: the root side of the
// veth is .1, the node's address for the lab itself is .2, and client c
// reaches the node at .(10+c), so that one client's link can be broken with
// iptables rules in the node's namespace matching that address alone.
//
// Partitions are iptables DROP (packets vanish: commands hang until their
// timeout) or REJECT --reject-with tcp-reset (fail fast); delays are tc netem
// qdiscs where the kernel has sch_netem; a cut asks the server to close the
// client's connections. Everything needs root (CAP_NET_ADMIN).
//
// What a node creates is recorded before it is created, in a state file
// `slot-K` under netns_state_dir() naming the owning pid and the namespace
// and veth (both named `ll-<pid>-K…`). The destructor removes everything;
// a SIGINT/SIGTERM of the lab removes it through the core clean-up; after a
// SIGKILL, sweep_netns_leftovers() (run when a lab first builds a node)
// removes the entries of labs that are no longer alive, and only those.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "network_link.h"

namespace locklab {

class CleanupOnSignal;
class TempDir;

// The one-line reason this process cannot build namespaces (not root, ip or
// iptables missing), or nullopt when it can.
std::optional<std::string> netns_unavailable_reason();

// Where the state files live: $LOCKLAB_NETNS_STATE, else /run/locklab-netns.
std::filesystem::path netns_state_dir();

// Removes the namespaces and veths recorded by labs whose pid is dead, and
// their state files; entries of live labs and names outside the record are
// never touched. Returns how many entries were removed.
size_t sweep_netns_leftovers();

// What a message says when a delay needs netem and the kernel has none.
extern const char* const kNoNetemMessage;

class NetnsNode {
 public:
  // The port every node's server listens on inside its namespace.
  static constexpr int kPort = 6379;

  // Creates the namespace and veth, with one address per client (at most
  // 200). Throws std::runtime_error with the failing command's own message.
  explicit NetnsNode(size_t clients);
  ~NetnsNode();
  NetnsNode(const NetnsNode&) = delete;
  NetnsNode& operator=(const NetnsNode&) = delete;

  const std::string& name() const { return name_; }
  const std::string& host_veth() const { return host_veth_; }
  // The node's address for the lab's own connections (never broken).
  std::string node_address() const;
  // The lab's end of the veth (root namespace): the one address a process in
  // the namespace reaches the lab at (a replica, its replication proxy).
  std::string lab_address() const;
  // The address client `client` reaches the node at.
  std::string client_address(size_t client) const;
  // Prefix to an argv that runs a program inside the namespace.
  std::vector<std::string> run_prefix() const;
  // Client `client`'s link to this node.
  NetworkLink& link(size_t client);

  // Runs `argv` (an ip / iptables / tc command), waiting at most 10 s.
  // Throws std::runtime_error with the command and its output when it fails.
  void run(const std::vector<std::string>& argv);
  // Same, inside this node's namespace.
  void run_inside(std::vector<std::string> argv);
  bool try_run(const std::vector<std::string>& argv);

  // Whether the kernel has sch_netem (probed once per process, on a node).
  bool netem_available();

 private:
  void teardown() noexcept;

  int slot_ = -1;
  std::string name_;
  std::string host_veth_;
  std::string node_veth_;
  std::filesystem::path state_file_;
  std::unique_ptr<TempDir> log_dir_;
  std::vector<std::unique_ptr<NetworkLink>> links_;
  std::unique_ptr<CleanupOnSignal> on_signal_;
  std::mutex run_mu_;  // one tool at a time per node: they share the log file
  std::mutex tc_mu_;   // the prio qdiscs every delayed client of the node shares
  bool prio_ready_ = false;
  friend class NetnsLink;
};

}  // namespace locklab
