// fenced: set-nx-px plus a fencing token, as Kleppmann's "How to do
// distributed locking" (2016) asks of any lease lock: every acquisition gets a
// number from INCR on a per-lock counter (`<name>:fence`), in the same Lua
// script as the SET NX PX, so tokens strictly increase across holders. The
// protected resource remembers the highest token it has seen and rejects
// writes carrying a lower one.
//
// Known weakness: the lease itself is still a timeout, so a paused client
// still believes it holds the lock after it expired (FAILURE-STORIES 5); the
// token only lets a resource that checks it reject the stale writes. A
// counter on an asynchronous replica can also go back after a failover.
//
// Steps: none; acquire is a single script.
#include "fenced.h"

#include "compare_and_delete_text.h"
#include "fenced_acquire_text.h"
#include "redis_lock_util.h"

namespace locklab {
namespace {

class Fenced final : public Lock {
 public:
  explicit Fenced(const LockContext& context)
      : context_(context), redis_(context.connect(0)), rng_(context.seed) {}

  AcquireResult acquire(const std::string& name, milliseconds ttl, milliseconds wait) override {
    Clock& clock = *context_.clock;
    const int64_t deadline = clock.now_ns() + nanoseconds_of(wait);
    const std::string owner = random_owner(rng_);
    for (;;) {
      const int64_t started = clock.now_ns();
      Reply reply;
      try {
        reply = eval_script(*redis_, scripts::fenced_acquire, {name, name + ":fence"},
                            {owner, std::to_string(ttl.count())});
      } catch (const RedisError& e) {
        return unknown_or_refused(e);
      }
      if (reply.is_error()) return {Outcome::Refused, std::nullopt, reply.str};
      if (reply.type == Reply::Type::Integer) {
        Lease lease{
            .owner = owner, .token = reply.integer, .validity = ttl, .acquired_at_ns = started};
        return {Outcome::Done, lease, ""};
      }
      if (clock.now_ns() >= deadline)
        return {Outcome::Refused, std::nullopt, "held by another client"};
      clock.sleep_for(retry_delay(rng_));
    }
  }

  ChangeResult release(const std::string& name, const Lease& lease) override {
    return run_owner_script(*redis_, scripts::compare_and_delete, {name}, {lease.owner});
  }

  // Extending keeps the token: the lease is the same acquisition.
  ChangeResult extend(const std::string& name, Lease& lease, milliseconds ttl) override {
    return extend_owned_key(*redis_, *context_.clock, name, lease, ttl);
  }

 private:
  LockContext context_;
  std::unique_ptr<Connection> redis_;
  std::mt19937_64 rng_;
};

}  // namespace

std::unique_ptr<Lock> make_fenced(const LockContext& context) {
  return std::make_unique<Fenced>(context);
}

}  // namespace locklab
