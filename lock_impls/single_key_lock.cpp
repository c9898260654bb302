#include "single_key_lock.h"

#include "compare_and_delete_text.h"
#include "redis_lock_util.h"

namespace locklab {

SingleKeyLock::SingleKeyLock(const LockContext& context)
    : context_(context), redis_(context.connect(0)), rng_(context.seed) {}

AcquireResult SingleKeyLock::acquire(const std::string& name, milliseconds ttl, milliseconds wait) {
  Clock& clock = *context_.clock;
  const int64_t deadline = clock.now_ns() + nanoseconds_of(wait);
  const std::string owner = random_owner(rng_);
  for (;;) {
    Attempt tried = attempt(name, owner, ttl, clock.now_ns());
    if (tried.result) return std::move(*tried.result);
    if (clock.now_ns() >= deadline) return {Outcome::Refused, std::nullopt, tried.why_not};
    clock.sleep_for(retry_delay(rng_));
  }
}

ChangeResult SingleKeyLock::release(const std::string& name, const Lease& lease) {
  return run_owner_script(*redis_, scripts::compare_and_delete, {name}, {lease.owner});
}

ChangeResult SingleKeyLock::extend(const std::string& name, Lease& lease, milliseconds ttl) {
  return extend_owned_key(*redis_, *context_.clock, name, lease, ttl);
}

SingleKeyLock::Attempt SingleKeyLock::set_nx_px(const std::string& name, const std::string& owner,
                                                milliseconds ttl, int64_t started_ns) {
  Reply reply;
  try {
    reply = redis_->command({"SET", name, owner, "NX", "PX", std::to_string(ttl.count())});
  } catch (const RedisError& e) {
    return {unknown_or_refused(e)};
  }
  if (reply.is_ok()) return acquired(owner, ttl, started_ns);
  if (reply.is_error()) return {AcquireResult{Outcome::Refused, std::nullopt, reply.str}};
  return {};
}

SingleKeyLock::Attempt SingleKeyLock::acquired(const std::string& owner, milliseconds ttl,
                                               int64_t started_ns, std::optional<int64_t> token) {
  Lease lease{.owner = owner, .token = token, .validity = ttl, .acquired_at_ns = started_ns};
  return {AcquireResult{Outcome::Done, lease, ""}};
}

}  // namespace locklab
