// An external target (`--target FILE`): Redis endpoints the lab did not
// start and must not manage — one node, a master with replicas watched by
// Sentinel, or independent masters for Redlock. The file says what the lab
// may do to them beyond sending its own keys' commands; the format is
// harness/runner/TARGET.md.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "connection.h"
#include "fault.h"

namespace locklab {

struct Target {
  std::filesystem::path file;
  std::string name;                // for messages and results ("staging-redis")
  std::vector<Endpoint> masters;   // independent masters; node 0 first
  std::vector<Endpoint> replicas;  // replicas of masters[0]
  std::vector<Endpoint> sentinels;
  std::string master_name;  // Sentinel's name for masters[0]
  // Every key the lab writes starts with it; each run adds its own suffix, and
  // removes that run's keys (and nothing else) when it ends.
  std::string key_prefix;
  bool allow_failover = false;
  bool allow_debug_sleep = false;
  bool allow_flush = false;
  // Read from the environment variables the file names, never from the file.
  std::string username;
  std::string password;
  std::string username_env, password_env;

  // "target 'NAME' (FILE)", for messages.
  std::string describe() const;
  // Connection options with the credentials.
  ConnectionOptions connection_options() const;
  // Every data node: masters, then replicas.
  std::vector<Endpoint> servers() const;
  // What the lab can do to these servers (fault_kind.h): what it does on
  // its own side (client clocks and links), and what the file allows and
  // names (DEBUG SLEEP, a promotion, a replica, Sentinels); never their
  // clocks, processes or replication links, which are not the lab's.
  Needs provides() const;
};

// Thrown for a target file that cannot be used or a target that does not
// answer; what() is one line naming the file and the field or endpoint.
class TargetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads and validates a target file; reads the credentials from the
// environment variables it names (a named variable that is unset is an error).
Target load_target(const std::filesystem::path& file);

// Connects to every endpoint (with the credentials) and PINGs it; without
// Sentinels, masters must report role master and replicas role slave;
// Sentinels must know master_name and name a master the file lists. Throws
// TargetError naming the first endpoint that does not answer, refuses the
// credentials or has another role.
void check_target_reachable(const Target& target);

// Empties `target` (FLUSHALL on each of its servers: replicas refuse it and
// follow their master), for a file that allows it (allow_flush). Throws
// TargetError naming the first server that fails.
void flush_target(const Target& target);

// The Redis version `target`'s first master reports (INFO server); "" when
// it cannot be asked.
std::string target_redis_version(const Target& target);

// Why `target` cannot give a fault what it needs, or nullopt when it can
// (the first need it lacks, in kNeeds' order, says why).
std::optional<std::string> unavailable_on(const Fault& fault, const Target& target);

}  // namespace locklab
