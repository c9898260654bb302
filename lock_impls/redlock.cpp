// redlock: the Redlock algorithm of the Redis documentation ("Distributed
// Locks with Redis", section "The Redlock Algorithm"), over N >= 3
// independent masters:
//
//   1. get the current time (client clock);
//   2. try SET key <random> NX PX ttl on all N instances, with a per-instance
//      timeout small compared with the TTL. We send to every instance first,
//      then await all the replies together under one deadline (the start of
//      the round plus the per-instance timeout), so unreachable instances
//      cost one timeout per round, however many there are. An instance that
//      errs or whose reply misses the deadline counts as not acquired (and,
//      since the SET may have run there, as a lost reply);
//   3. elapsed = now - start; validity = ttl - elapsed - drift, where
//      drift = ttl * 0.01 + 2 ms; the lock is acquired only if a majority
//      (N/2 + 1) said OK and validity > 0;
//   4. otherwise unlock all instances (also those that said nothing) and
//      retry after a random delay, until the wait runs out.
//   Release: compare-and-delete on all instances.
//   Extend: compare-and-pexpire on all instances; kept only with a majority
//   and a positive validity, counted from the start of the extend.
//
// Timeouts and retries: the per-instance timeout is the parameter
// "instance_timeout_ms" (at least 1 ms); by default 50 ms, but at most a
// tenth of the TTL. The documentation asks for a timeout much smaller than
// the TTL ("if the auto-release time is 10 seconds, the timeout could be in
// the ~ 5-50 milliseconds range") so that a down instance does not eat the
// validity. We take the top of that range rather than a fixed fraction of
// the TTL (a TTL of 1 s would give 1-5 ms): replies on loopback take well
// under a millisecond, but on a loaded machine a healthy instance's reply is
// sometimes tens of ms late, and a timeout below that makes healthy
// instances count as failed. The cap keeps it small for short TTLs. The same
// one-deadline round, with the timeout of the lock's last acquire or extend,
// bounds extend, the unlock after a failed attempt, and release. The deadline
// runs on the monotonic clock, as a socket timeout does (the validity uses
// the client's clock, as the documentation says); a reply that arrived while
// the client was paused counts. Reconnecting to an instance (a missed
// deadline drops its connection) is bounded by the connection's connect
// timeout. A failed attempt is retried after a random 5-25 ms
// (retry_delay(), as the other locks here) until the wait runs out. The
// documentation asks only for "a random delay"; redlock-rb waits 200 ms plus
// up to 50, node-redlock 200 plus or minus 100. The lab's clients give a lock
// back for only a few ms (think_ms) between holds, and a waiter that looks
// every ~200 ms mostly misses those gaps and starves within a scenario's few
// seconds. The delay decides who holds the lock next, not whether two can
// hold it at once.
//
// Known weaknesses (docs/FAILURE-STORIES.md, stories 6, 7, 9; Kleppmann 2016): safety rests
// on bounded clock drift and bounded pauses. A clock jump on one instance, an
// instance restarting empty before the TTL, or a client pause after the
// validity check lets two clients hold the lock at once; there is no fencing
// token.
//
// Steps:
//   "after-send"            SET sent to every instance, no reply read yet
//   "after-validity-check"  majority and validity > 0: about to return Done
#include "redlock.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "clock.h"
#include "compare_and_delete_text.h"
#include "compare_and_pexpire_text.h"
#include "redis_lock_util.h"

namespace locklab {
namespace {

constexpr milliseconds kDefaultInstanceTimeout{50};

// How one command sent to every instance went.
struct Tally {
  size_t yes = 0;   // instances that answered as hoped (OK / 1)
  size_t lost = 0;  // instances whose reply was lost after the command may have run
};

class Redlock final : public Lock {
 public:
  explicit Redlock(const LockContext& context)
      : context_(context),
        rng_(context.seed),
        configured_timeout_(context.param("instance_timeout_ms")) {
    for (size_t i = 0; i < context.node_count; ++i) instances_.push_back(context.connect(i));
  }

  std::vector<std::string> steps() const override { return redlock_steps(); }

  AcquireResult acquire(const std::string& name, milliseconds ttl, milliseconds wait) override {
    Clock& clock = *context_.clock;
    const int64_t deadline = clock.now_ns() + nanoseconds_of(wait);
    const std::string owner = random_owner(rng_);
    const milliseconds timeout = remember_timeout(name, ttl);
    for (;;) {
      const int64_t started = clock.now_ns();
      Tally locked = on_all_instances({"SET", name, owner, "NX", "PX", std::to_string(ttl.count())},
                                      timeout, "after-send");
      const milliseconds validity = validity_left(ttl, started);
      if (locked.yes >= quorum() && validity.count() > 0) {
        context_.step("after-validity-check");
        return {Outcome::Done,
                Lease{.owner = owner, .validity = validity, .acquired_at_ns = started}, ""};
      }
      Tally unlocked = unlock_all(name, owner, timeout);
      if (clock.now_ns() >= deadline) {
        std::string what = "locked " + std::to_string(locked.yes) + " of " +
                           std::to_string(instances_.size()) + " instances (quorum " +
                           std::to_string(quorum()) + ", instance timeout " +
                           std::to_string(timeout.count()) + " ms), validity " +
                           std::to_string(validity.count()) + " ms";
        if (unlocked.lost > 0)
          return {
              Outcome::Unknown, std::nullopt,
              what + "; unlock replies lost on " + std::to_string(unlocked.lost) + " instances"};
        return {Outcome::Refused, std::nullopt, what};
      }
      clock.sleep_for(retry_delay(rng_));
    }
  }

  // Done when at least one instance still held our value and deleted it (the
  // majority may already have expired it: there was still something of ours
  // to give up); Refused when none held it; Unknown when none confirmed and a
  // reply was lost.
  ChangeResult release(const std::string& name, const Lease& lease) override {
    Tally unlocked = unlock_all(name, lease.owner, timeout_for(name));
    if (unlocked.yes > 0) return {Outcome::Done, "", std::nullopt};
    if (unlocked.lost > 0) return {Outcome::Unknown, "unlock replies lost", std::nullopt};
    return {Outcome::Refused, "not-owner", std::nullopt};
  }

  // The lease counts as extended only as the Redis documentation says: on a
  // majority, within the validity computed from the start of the extend.
  // Otherwise Refused (the instances that did extend keep our key until
  // their TTL), or Unknown when replies lost could have made a majority.
  ChangeResult extend(const std::string& name, Lease& lease, milliseconds ttl) override {
    const int64_t started = context_.clock->now_ns();
    Tally extended = on_all_instances(eval_command(scripts::compare_and_pexpire, {name},
                                                   {lease.owner, std::to_string(ttl.count())}),
                                      remember_timeout(name, ttl), "");
    const milliseconds validity = validity_left(ttl, started);
    if (extended.yes >= quorum() && validity.count() > 0) {
      lease.validity = validity;
      lease.acquired_at_ns = started;
      return {Outcome::Done, "", std::nullopt};
    }
    const std::string what = "extended on " + std::to_string(extended.yes) + " of " +
                             std::to_string(instances_.size()) + " instances";
    if (extended.yes + extended.lost >= quorum()) return {Outcome::Unknown, what, std::nullopt};
    return {Outcome::Refused, "not-owner: " + what, std::nullopt};
  }

 private:
  size_t quorum() const { return instances_.size() / 2 + 1; }

  // The per-instance timeout for a lock taken or extended for `ttl` (see the
  // file header), remembered for `name`'s later release.
  milliseconds remember_timeout(const std::string& name, milliseconds ttl) {
    milliseconds timeout = configured_timeout_ ? milliseconds(*configured_timeout_)
                                               : std::min(kDefaultInstanceTimeout, ttl / 10);
    timeout = std::max(timeout, milliseconds(1));
    timeouts_[name] = timeout;
    return timeout;
  }

  // The per-instance timeout of `name`'s last acquire or extend here (the
  // default one, when there was none).
  milliseconds timeout_for(const std::string& name) const {
    auto it = timeouts_.find(name);
    if (it != timeouts_.end()) return it->second;
    return std::max(milliseconds(configured_timeout_.value_or(kDefaultInstanceTimeout.count())),
                    milliseconds(1));
  }

  milliseconds validity_left(milliseconds ttl, int64_t started) {
    const int64_t elapsed = context_.clock->now_ns() - started;
    const int64_t drift = nanoseconds_of(ttl) / 100 + nanoseconds_of(milliseconds(2));
    return std::chrono::duration_cast<milliseconds>(
        std::chrono::nanoseconds(nanoseconds_of(ttl) - elapsed - drift));
  }

  Tally unlock_all(const std::string& name, const std::string& owner, milliseconds timeout) {
    return on_all_instances(eval_command(scripts::compare_and_delete, {name}, {owner}), timeout,
                            "");
  }

  // Sends `argv` to every instance, then (after `step`, if named) reads every
  // reply, all under one deadline: `timeout` after the round began. An
  // instance that cannot be reached, or whose reply misses the deadline,
  // simply does not count; a reply that arrived in time is taken even when
  // reading it comes after the deadline.
  Tally on_all_instances(const std::vector<std::string>& argv, milliseconds timeout,
                         std::string_view step) {
    // The lab's monotonic clock (the run's virtual clock on virtual time,
    // which the connections wait on too), not the client's skewable one.
    const int64_t deadline = monotonic_ns() + std::chrono::nanoseconds(timeout).count();
    std::vector<bool> sent(instances_.size(), false);
    Tally tally;
    for (size_t i = 0; i < instances_.size(); ++i) {
      try {
        instances_[i]->send(argv);
        sent[i] = true;
      } catch (const RedisError& e) {
        if (e.maybe_executed()) ++tally.lost;
      }
    }
    if (!step.empty()) context_.step(step);
    for (size_t i = 0; i < instances_.size(); ++i) {
      if (!sent[i]) continue;
      const auto left =
          std::chrono::ceil<milliseconds>(std::chrono::nanoseconds(deadline - monotonic_ns()));
      try {
        Reply reply = instances_[i]->receive_within(std::max(left, milliseconds(0)));
        if (reply.is_ok() || (reply.type == Reply::Type::Integer && reply.integer == 1))
          ++tally.yes;
      } catch (const RedisError&) {
        ++tally.lost;  // sent, so it may have run
      }
    }
    return tally;
  }

  LockContext context_;
  std::mt19937_64 rng_;
  const std::optional<int64_t> configured_timeout_;     // "instance_timeout_ms", if given
  std::vector<std::unique_ptr<Connection>> instances_;  // one per independent master
  std::map<std::string, milliseconds> timeouts_;        // per lock name, for release
};

}  // namespace

const std::vector<std::string>& redlock_steps() {
  static const std::vector<std::string> steps = {"after-send", "after-validity-check"};
  return steps;
}

std::unique_ptr<Lock> make_redlock(const LockContext& context) {
  if (context.node_count < 3)
    throw std::invalid_argument("redlock needs at least 3 independent Redis masters, got " +
                                std::to_string(context.node_count));
  return std::make_unique<Redlock>(context);
}

}  // namespace locklab
