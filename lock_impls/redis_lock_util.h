// Small pieces several lock algorithms share.
#pragma once

#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "lock.h"

namespace locklab {

// The EVAL command line for `script` (for sending it without waiting).
std::vector<std::string> eval_command(std::string_view script, const std::vector<std::string>& keys,
                                      const std::vector<std::string>& args);

// Runs a Lua script with EVAL. Throws RedisError like Connection::command().
Reply eval_script(Connection& redis, std::string_view script, const std::vector<std::string>& keys,
                  const std::vector<std::string>& args);

// For scripts that return 1 when they changed our lock and 0 when it was not
// ours: Done / Refused, and Unknown (or Refused, if never sent) on RedisError.
ChangeResult run_owner_script(Connection& redis, std::string_view script,
                              const std::vector<std::string>& keys,
                              const std::vector<std::string>& args);

// Extend for the single-key locks: resets the key's TTL by compare-and-pexpire
// if it still holds lease.owner and, when it did, renews the lease from the
// moment the extend began (validity = ttl).
ChangeResult extend_owned_key(Connection& redis, Clock& clock, const std::string& name,
                              Lease& lease, milliseconds ttl);

// The old recipes' unlock: DEL the key, whoever holds it now. Done when a
// key was deleted (not necessarily ours: the reply cannot say whose it was),
// Refused with "not-owner" when there was none.
ChangeResult delete_whatever_is_there(Connection& redis, const std::string& name);

// The acquire result for a command that failed with `e`: Unknown if it may
// have run, Refused if it certainly did not.
AcquireResult unknown_or_refused(const RedisError& e);

// The same for release and extend.
ChangeResult change_unknown_or_refused(const RedisError& e);

// `d` in nanoseconds, the unit of Clock readings.
inline int64_t nanoseconds_of(milliseconds d) {
  return d.count() * 1'000'000;
}

// A short random pause between acquire attempts (spreads contending clients).
milliseconds retry_delay(std::mt19937_64& rng);

}  // namespace locklab
