// setnx-expire: the naive two-step lock found in countless blog posts and
// early libraries: `SETNX key <random>`, then a separate `EXPIRE key <ttl>`
// (seconds, rounded up). Release and extend compare our random value first
// (Lua compare-and-delete / compare-and-pexpire), as set-nx-px does.
//
// Known weakness (FAILURE-STORIES 4): the two commands are not atomic. A
// client that crashes (or loses its connection) between them leaves a key
// with no expiry: the lock is held forever and every other client waits in
// vain. SET key value NX PX ttl made this pattern unnecessary in Redis 2.6.12.
//
// Steps:
//   "after-setnx"  SETNX succeeded, EXPIRE not yet sent
#include "setnx_expire.h"

#include "compare_and_delete_text.h"
#include "redis_lock_util.h"

namespace locklab {
namespace {

class SetnxExpire final : public Lock {
 public:
  explicit SetnxExpire(const LockContext& context)
      : context_(context), redis_(context.connect(0)), rng_(context.seed) {}

  AcquireResult acquire(const std::string& name, milliseconds ttl, milliseconds wait) override {
    Clock& clock = *context_.clock;
    const int64_t deadline = clock.now_ns() + nanoseconds_of(wait);
    const std::string owner = random_owner(rng_);
    const std::string seconds = std::to_string((ttl.count() + 999) / 1000);
    for (;;) {
      const int64_t started = clock.now_ns();
      Reply reply;
      try {
        reply = redis_->command({"SETNX", name, owner});
      } catch (const RedisError& e) {
        return unknown_or_refused(e);
      }
      if (reply.is_error()) return {Outcome::Refused, std::nullopt, reply.str};
      if (reply.integer == 1) {
        context_.step("after-setnx");
        std::string failure;
        try {
          Reply expire = redis_->command({"EXPIRE", name, seconds});
          if (expire.is_error()) failure = expire.str;
        } catch (const RedisError& e) {
          failure = e.what();
        }
        // The key is ours and may have no expiry: neither held nor free.
        if (!failure.empty())
          return {Outcome::Unknown, std::nullopt, "EXPIRE after SETNX: " + failure};
        return {Outcome::Done, Lease{.owner = owner, .validity = ttl, .acquired_at_ns = started},
                ""};
      }
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

std::unique_ptr<Lock> make_setnx_expire(const LockContext& context) {
  return std::make_unique<SetnxExpire>(context);
}

}  // namespace locklab
