// wait-synced: set-nx-px followed by WAIT, the Redis command that blocks
// until the preceding writes of this connection reached `replicas` replicas
// or `timeout` ms passed (WAIT's documentation: "synchronous replication ...
// does not make Redis a strongly consistent store"). The acquisition counts
// only when enough replicas acknowledged the key; otherwise we delete it again
// (compare-and-delete) and retry until the wait runs out.
//
// Parameters: "replicas" (default 1) and "wait_timeout_ms" (default 100; at
// least 1, as WAIT 0 would block forever; keep it below the connection's
// command timeout).
//
// Known weakness: it narrows the failover window of FAILURE-STORIES 8 but
// does not close it: an acknowledged replica may still lose the key (it is
// not fsynced), the failover may promote a replica that did not acknowledge,
// and the lease is still a timeout (pauses, FAILURE-STORIES 5).
//
// Steps:
//   "after-set"  SET NX PX succeeded on the master, WAIT not yet sent
#include "wait_synced.h"

#include <algorithm>

#include "compare_and_delete_text.h"
#include "redis_lock_util.h"

namespace locklab {
namespace {

class WaitSynced final : public Lock {
 public:
  explicit WaitSynced(const LockContext& context)
      : context_(context),
        redis_(context.connect(0)),
        rng_(context.seed),
        replicas_(context.param("replicas").value_or(1)),
        wait_timeout_ms_(std::max<int64_t>(1, context.param("wait_timeout_ms").value_or(100))) {}

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
      if (reply.is_error()) return {Outcome::Refused, std::nullopt, reply.str};
      std::string why_not = "held by another client";
      if (reply.is_ok()) {
        context_.step("after-set");
        std::string wait_error;
        long long acknowledged = 0;
        try {
          Reply acks = redis_->command(
              {"WAIT", std::to_string(replicas_), std::to_string(wait_timeout_ms_)});
          if (acks.is_error()) wait_error = acks.str;
          acknowledged = acks.integer;
        } catch (const RedisError& e) {
          wait_error = e.what();
        }
        if (wait_error.empty() && acknowledged >= replicas_)
          return {Outcome::Done, Lease{.owner = owner, .validity = ttl, .acquired_at_ns = started},
                  ""};
        why_not = !wait_error.empty()
                      ? "WAIT: " + wait_error
                      : std::to_string(acknowledged) + " of " + std::to_string(replicas_) +
                            " replicas acknowledged within " + std::to_string(wait_timeout_ms_) +
                            " ms";
        ChangeResult undo = run_owner_script(*redis_, scripts::compare_and_delete, {name}, {owner});
        if (undo.outcome == Outcome::Unknown)
          return {Outcome::Unknown, std::nullopt,
                  why_not + "; and deleting our key again: " + undo.error};
      }
      if (clock.now_ns() >= deadline) return {Outcome::Refused, std::nullopt, why_not};
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
  int64_t replicas_;
  int64_t wait_timeout_ms_;
};

}  // namespace

std::unique_ptr<Lock> make_wait_synced(const LockContext& context) {
  return std::make_unique<WaitSynced>(context);
}

}  // namespace locklab
