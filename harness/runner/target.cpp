#include "target.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "fault_kind.h"
#include "hiredis_connection.h"
#include "json_fields.h"

namespace locklab {
namespace {

using nlohmann::json;

using Fields = JsonFields<TargetError>;

std::vector<Endpoint> endpoints(Fields& doc, const std::string& field) {
  std::vector<Endpoint> out;
  const json* list = doc.find(field);
  if (!list) return out;
  if (!list->is_array()) doc.fail(field, "must be an array of \"host:port\" strings");
  for (size_t i = 0; i < list->size(); ++i) {
    const json& e = (*list)[i];
    const std::string where = field + "[" + std::to_string(i) + "]";
    if (!e.is_string()) doc.fail(where, "must be a \"host:port\" string");
    try {
      out.push_back(Endpoint::parse(e.get<std::string>()));
    } catch (const std::exception& error) {
      doc.fail(where, error.what());
    }
  }
  return out;
}

std::string from_env(const Fields& doc, const std::string& field, const std::string& variable) {
  if (variable.empty()) return {};
  const char* value = std::getenv(variable.c_str());
  if (!value) doc.fail(field, "names the environment variable " + variable + ", which is not set");
  return value;
}

// PINGs `endpoint` and, when `role` is not empty, checks that it reports
// that replication role ("master" or "slave", as ROLE says).
void ping(const Endpoint& endpoint, const ConnectionOptions& options, const Target& target,
          const std::string& role) {
  try {
    HiredisConnection connection(endpoint, options);
    const Reply reply = connection.command({"PING"});
    if (reply.type == Reply::Type::Error) throw RedisError(reply.str, false);
    if (role.empty()) return;
    const Reply roles = connection.command({"ROLE"});
    if (roles.is_error()) return;  // an ACL user without ROLE: the role cannot be told
    const std::string actual = roles.elements.empty() ? roles.describe() : roles.elements[0].str;
    if (actual != role)
      throw RedisError("reports role " + actual + ", where the file lists a " +
                           (role == "master" ? "master" : "replica"),
                       false);
  } catch (const std::exception& e) {
    throw TargetError(target.describe() + ": endpoint " + endpoint.str() + ": " + e.what());
  }
}

}  // namespace

std::string Target::describe() const {
  return "target '" + name + "' (" + file.string() + ")";
}

ConnectionOptions Target::connection_options() const {
  ConnectionOptions options;
  options.username = username;
  options.password = password;
  return options;
}

std::vector<Endpoint> Target::servers() const {
  std::vector<Endpoint> all = masters;
  all.insert(all.end(), replicas.begin(), replicas.end());
  return all;
}

Target load_target(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw TargetError("target " + file.string() + ": cannot read the file");
  std::stringstream text;
  text << in.rdbuf();
  json document;
  try {
    document = json::parse(text.str());
  } catch (const json::parse_error& e) {
    throw TargetError("target " + file.string() + ": not JSON: " + e.what());
  }
  Fields doc(document, file, "", Nulls::Refused);
  Target t;
  t.file = file;
  t.name = doc.text("name").value_or(file.stem().string());
  if (t.name.empty()) t.name = file.stem().string();
  t.masters = endpoints(doc, "masters");
  if (t.masters.empty()) doc.fail("masters", "needs at least one \"host:port\"");
  t.replicas = endpoints(doc, "replicas");
  t.sentinels = endpoints(doc, "sentinels");
  t.master_name = doc.text("master_name").value_or("");
  if (!t.sentinels.empty() && t.master_name.empty())
    doc.fail("master_name", "is required with sentinels (the name they monitor masters[0] by)");
  if (!t.replicas.empty() && t.masters.size() > 1)
    doc.fail("replicas", "are of a single master; give one master with replicas");
  t.key_prefix = doc.text("key_prefix").value_or("");
  if (t.key_prefix.empty())
    doc.fail("key_prefix", "is required: every key the lab writes starts with it");
  t.allow_failover = doc.boolean("allow_failover").value_or(false);
  t.allow_debug_sleep = doc.boolean("allow_debug_sleep").value_or(false);
  t.allow_flush = doc.boolean("allow_flush").value_or(false);
  t.username_env = doc.text("username_env").value_or("");
  t.password_env = doc.text("password_env").value_or("");
  if (!t.username_env.empty() && t.password_env.empty())
    doc.fail("password_env", "is required with username_env (AUTH needs a password)");
  t.username = from_env(doc, "username_env", t.username_env);
  t.password = from_env(doc, "password_env", t.password_env);
  doc.text("$schema");
  doc.text("description");
  doc.done();
  return t;
}

void check_target_reachable(const Target& target) {
  const ConnectionOptions options = target.connection_options();
  // Behind Sentinel, an earlier failover may have swapped the roles.
  const bool fixed_roles = target.sentinels.empty();
  for (const Endpoint& e : target.masters) ping(e, options, target, fixed_roles ? "master" : "");
  for (const Endpoint& e : target.replicas) ping(e, options, target, fixed_roles ? "slave" : "");
  for (const Endpoint& e : target.sentinels) {
    try {
      HiredisConnection connection(e, ConnectionOptions{});
      const Reply reply =
          connection.command({"SENTINEL", "get-master-addr-by-name", target.master_name});
      if (reply.type != Reply::Type::Array || reply.elements.size() != 2)
        throw RedisError("does not monitor a master named '" + target.master_name + "'", false);
      // Clients go where Sentinel says, so that must be a server of the file.
      const Endpoint master{reply.elements[0].str, std::stoi(reply.elements[1].str)};
      const auto servers = target.servers();
      if (std::find(servers.begin(), servers.end(), master) == servers.end())
        throw RedisError("names " + master.str() + " master of '" + target.master_name +
                             "', which is neither in masters nor in replicas",
                         false);
    } catch (const std::exception& error) {
      throw TargetError(target.describe() + ": sentinel " + e.str() + ": " + error.what());
    }
  }
}

void flush_target(const Target& target) {
  if (!target.allow_flush) throw std::logic_error(target.describe() + " does not allow flushes");
  for (const Endpoint& server : target.servers()) {
    try {
      HiredisConnection connection(server, target.connection_options());
      const Reply reply = connection.command({"FLUSHALL"});
      const bool replica = reply.is_error() && reply.str.rfind("READONLY", 0) == 0;
      if (reply.is_error() && !replica) throw RedisError(reply.str, false);
    } catch (const std::exception& e) {
      throw TargetError(target.describe() + ": endpoint " + server.str() +
                        ": FLUSHALL: " + e.what());
    }
  }
}

std::string target_redis_version(const Target& target) {
  try {
    HiredisConnection connection(target.masters.front(), target.connection_options());
    const Reply info = connection.command({"INFO", "server"});
    const size_t at = info.str.find("redis_version:");
    if (at == std::string::npos) return "";
    const size_t from = at + std::string("redis_version:").size();
    return info.str.substr(from, info.str.find_first_of("\r\n", from) - from);
  } catch (const std::exception&) {
    return "";
  }
}

Needs Target::provides() const {
  // The clients, their clocks and the proxies in front of the servers are the lab's.
  Needs out = Need::ClientClock | Need::ClientLinks | Need::LinkLatency;
  if (allow_debug_sleep) out |= Need::DebugCommand;
  if (allow_failover) out |= Need::Promotion;
  if (!replicas.empty()) out |= Need::Replica;
  if (!sentinels.empty()) out |= Need::Sentinels;
  return out;
}

std::optional<std::string> unavailable_on(const Fault& fault, const Target& target) {
  const Needs missing = fault.needs().without(target.provides());
  if (missing.empty()) return std::nullopt;
  const std::string head =
      std::string(fault.name()) + " is unavailable for " + target.describe() + ": ";
  for (Need need : kNeeds) {
    if (!missing.has(need)) continue;
    switch (need) {
      case Need::ClientClock:
      case Need::ClientLinks:
      case Need::LinkLatency:
        break;  // the lab's own side: always there
      case Need::ServerClock:
      case Need::ServerProcess:
        return head +
               "it needs control of the server processes (their clocks, signals or lifetime), "
               "which the lab has only over servers it started";
      case Need::DebugCommand:
        return head + "the file does not allow DEBUG SLEEP (allow_debug_sleep)";
      case Need::Promotion:
        return head + "the file does not allow failovers (allow_failover)";
      case Need::ReplicationLinks:
        return head + "it cuts the servers' replication links, which the lab does not control";
      case Need::Replica:
        return head + "the file names no replica to promote";
      case Need::Sentinels:
        return head + "a Sentinel failover needs the target's Sentinels, and the file names none";
    }
  }
  return head + "it needs what the target cannot give";
}

}  // namespace locklab
