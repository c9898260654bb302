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
// Known weakness: it narrows the failover window of docs/FAILURE-STORIES.md, story 8 but
// does not close it: an acknowledged replica may still lose the key (it is
// not fsynced), the failover may promote a replica that did not acknowledge,
// and the lease is still a timeout (pauses, docs/FAILURE-STORIES.md, story 5).
//
// Timeouts and retries: WAIT's timeout is the parameter above. Redis's WAIT
// documentation suggests no value; Redisson (3.17), a client that WAITs
// after taking a lock, waits 1 s for all available replicas under a 3 s
// response timeout. We default to 100 ms because the lab's connections time out after
// 1 s, and WAIT must answer before that to be told apart from a lost reply;
// a replica in sync acknowledges within a millisecond or so (WAIT asks it at
// once with REPLCONF GETACK), so the timeout only sets how long an attempt
// whose replicas cannot answer takes, not whether it counts. Such an attempt
// deletes its key and is retried like set-nx-px's (5-25 ms later, until the
// wait runs out).
//
// Steps:
//   "after-set"  SET NX PX succeeded on the master, WAIT not yet sent
// Below: one acquire attempt; the retry loop, release and extend are
// SingleKeyLock's (single_key_lock.h).
#include "wait_synced.h"

#include <algorithm>

#include "single_key_lock.h"

namespace locklab {
namespace {

class WaitSynced final : public SingleKeyLock {
 public:
  explicit WaitSynced(const LockContext& context)
      : SingleKeyLock(context),
        replicas_(context.param("replicas").value_or(1)),
        wait_timeout_ms_(std::max<int64_t>(1, context.param("wait_timeout_ms").value_or(100))) {}

  std::vector<std::string> steps() const override { return wait_synced_steps(); }

 private:
  Attempt attempt(const std::string& name, const std::string& owner, milliseconds ttl,
                  int64_t started_ns) override {
    Attempt set = set_nx_px(name, owner, ttl, started_ns);
    if (!set.result || set.result->outcome != Outcome::Done) return set;
    context_.step("after-set");
    std::string wait_error;
    long long acknowledged = 0;
    try {
      Reply acks =
          redis_->command({"WAIT", std::to_string(replicas_), std::to_string(wait_timeout_ms_)});
      if (acks.is_error()) wait_error = acks.str;
      acknowledged = acks.integer;
    } catch (const RedisError& e) {
      wait_error = e.what();
    }
    if (wait_error.empty() && acknowledged >= replicas_) return set;
    std::string why_not = !wait_error.empty()
                              ? "WAIT: " + wait_error
                              : std::to_string(acknowledged) + " of " + std::to_string(replicas_) +
                                    " replicas acknowledged within " +
                                    std::to_string(wait_timeout_ms_) + " ms";
    // Not synced: delete our key again, so an acquisition that does not count holds nothing.
    ChangeResult undo = release(name, Lease{.owner = owner});
    if (undo.outcome == Outcome::Unknown)
      return {AcquireResult{Outcome::Unknown, std::nullopt,
                            why_not + "; and deleting our key again: " + undo.error}};
    return {std::nullopt, why_not};
  }

  const int64_t replicas_;
  const int64_t wait_timeout_ms_;
};

}  // namespace

const std::vector<std::string>& wait_synced_steps() {
  static const std::vector<std::string> steps = {"after-set"};
  return steps;
}

std::unique_ptr<Lock> make_wait_synced(const LockContext& context) {
  return std::make_unique<WaitSynced>(context);
}

}  // namespace locklab
