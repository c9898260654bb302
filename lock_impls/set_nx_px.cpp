// set-nx-px: the single-instance lock of the Redis documentation
// ("Distributed Locks with Redis", section "Correct Implementation with a
// Single Instance"): SET key <random> NX PX ttl to acquire; a Lua script that
// deletes the key only if it still holds our random value to release.
//
// Known weakness: the lease is a timeout. A client paused (GC, SIGSTOP) past
// the TTL still believes it holds the lock while another client holds it; and
// an asynchronous replica promoted before it received the key grants it again.
#include "set_nx_px.h"

#include "compare_and_delete_text.h"
#include "redis_lock_util.h"

namespace locklab {
namespace {

class SetNxPx final : public Lock {
 public:
  explicit SetNxPx(const LockContext& context)
      : context_(context), redis_(context.connect(0)), rng_(context.seed) {}

  AcquireResult acquire(const std::string& name, milliseconds ttl, milliseconds wait) override {
    Clock& clock = *context_.clock;
    const int64_t deadline = clock.now_ns() + nanoseconds_of(wait);
    const std::string owner = random_owner(rng_);
    for (;;) {
      const int64_t started = clock.now_ns();
      Reply reply;
      try {
        reply = redis_->command({"SET", name, owner, "NX", "PX", std::to_string(ttl.count())});
      } catch (const RedisError& e) {
        return unknown_or_refused(e);
      }
      if (reply.is_ok()) {
        return {Outcome::Done, Lease{.owner = owner, .validity = ttl, .acquired_at_ns = started},
                ""};
      }
      if (reply.is_error()) return {Outcome::Refused, std::nullopt, reply.str};
      if (clock.now_ns() >= deadline)
        return {Outcome::Refused, std::nullopt, "held by another client"};
      clock.sleep_for(retry_delay(rng_));
    }
  }

  ChangeResult release(const std::string& name, const Lease& lease) override {
    return run_owner_script(*redis_, scripts::compare_and_delete, {name}, {lease.owner});
  }

  ChangeResult extend(const std::string& name, Lease& lease, milliseconds ttl) override {
    return extend_owned_key(*redis_, *context_.clock, name, lease, ttl);
  }

 private:
  LockContext context_;
  std::unique_ptr<Connection> redis_;
  std::mt19937_64 rng_;
};

}  // namespace

std::unique_ptr<Lock> make_set_nx_px(const LockContext& context) {
  return std::make_unique<SetNxPx>(context);
}

}  // namespace locklab
