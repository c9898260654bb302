#include "redis_lock_util.h"

#include "compare_and_pexpire_text.h"

namespace locklab {

std::string random_owner(std::mt19937_64& rng) {
  static constexpr char kHex[] = "0123456789abcdef";
  // Two 64-bit draws in hex, zero-padded, the first draw last (as the
  // owners of earlier versions were, so a seed still makes the same run).
  std::string owner(32, '0');
  for (int half = 1; half >= 0; --half)
    for (uint64_t bits = rng(), i = 0; i < 16; ++i, bits >>= 4)
      owner[size_t(half * 16 + 15 - i)] = kHex[bits & 0xf];
  return owner;
}

std::vector<std::string> eval_command(std::string_view script, const std::vector<std::string>& keys,
                                      const std::vector<std::string>& args) {
  // Plain EVAL: the scripts are a few hundred bytes, and Redis caches the
  // compiled script by its hash, so EVALSHA would save little and add a path.
  std::vector<std::string> argv;
  argv.reserve(3 + keys.size() + args.size());
  argv.emplace_back("EVAL");
  argv.emplace_back(script);
  argv.push_back(std::to_string(keys.size()));
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

Reply eval_script(Connection& redis, std::string_view script, const std::vector<std::string>& keys,
                  const std::vector<std::string>& args) {
  return redis.command(eval_command(script, keys, args));
}

ChangeResult run_owner_script(Connection& redis, std::string_view script,
                              const std::vector<std::string>& keys,
                              const std::vector<std::string>& args) {
  try {
    Reply reply = eval_script(redis, script, keys, args);
    if (reply.is_error()) return {Outcome::Refused, reply.str, std::nullopt};
    if (reply.type == Reply::Type::Integer && reply.integer == 1)
      return {Outcome::Done, "", std::nullopt};
    return {Outcome::Refused, "not-owner", std::nullopt};
  } catch (const RedisError& e) {
    return change_unknown_or_refused(e);
  }
}

ChangeResult extend_owned_key(Connection& redis, Clock& clock, const std::string& name,
                              Lease& lease, milliseconds ttl) {
  const int64_t now = clock.now_ns();
  ChangeResult result = run_owner_script(redis, scripts::compare_and_pexpire, {name},
                                         {lease.owner, std::to_string(ttl.count())});
  if (result.outcome == Outcome::Done) {
    lease.validity = ttl;
    lease.acquired_at_ns = now;
  }
  return result;
}

AcquireResult unknown_or_refused(const RedisError& e) {
  return {e.maybe_executed() ? Outcome::Unknown : Outcome::Refused, std::nullopt, e.what()};
}

ChangeResult delete_whatever_is_there(Connection& redis, const std::string& name) {
  Reply reply;
  try {
    reply = redis.command({"DEL", name});
  } catch (const RedisError& e) {
    return change_unknown_or_refused(e);
  }
  if (reply.is_error()) return {Outcome::Refused, reply.str, std::nullopt};
  if (reply.integer == 0) return {Outcome::Refused, "not-owner", 0};
  return {Outcome::Done, "", reply.integer};
}

ChangeResult change_unknown_or_refused(const RedisError& e) {
  return {e.maybe_executed() ? Outcome::Unknown : Outcome::Refused, e.what(), std::nullopt};
}

milliseconds retry_delay(std::mt19937_64& rng) {
  return milliseconds(5 + std::uniform_int_distribution<int>(0, 20)(rng));
}

}  // namespace locklab
