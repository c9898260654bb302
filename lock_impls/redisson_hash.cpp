// redisson-hash: the re-entrant lock of Redisson (RLock / RedissonLock, Java).
//
//   - The lock is a hash; the field `<client id>:<thread>` holds how many
//     times that thread has taken it. Acquire, release and renewal are Lua
//     scripts (redisson_lock.lua, redisson_unlock.lua, redisson_renew.lua).
//   - A holder that gave no lease time is kept alive by a watchdog, which
//     re-extends the lease every lease/3 while the lock is held, and stops
//     when the lock is fully released, or when a renewal fails (as Redisson
//     does: it logs and cancels the renewal). The lease then has no deadline
//     of its own (Lease::validity = nullopt).
//   - A waiter subscribes to the lock's channel
//     (`redisson_lock__channel:{name}`), on which the final release publishes,
//     tries again, and then waits for that message, at most the TTL the
//     failed attempt returned.
//
// The watchdog runs beside the client from its first acquire on (a
// BackgroundTask: a fiber beside the client's, or a thread), owned by this
// object, with its own connection and the client's clock: a stop-the-world
// pause of the client (its clock and connections pass its PauseGate)
// freezes the watchdog too. Destroying the object stops the watchdog (a
// crashed client's lock then expires after one lease); while the client's
// PauseGate is closed, destruction waits for it.
//
// Known weaknesses (docs/FAILURE-STORIES.md, stories 10, 11): a pause longer than the lease
// freezes renewal with the client, the lease expires, another client acquires,
// and the paused client resumes believing it holds the lock; a partition makes
// renewals time out while the client keeps working unless it asks
// renewal_failed(). No fencing token.
//
// Timeouts and retries: as Redisson's RedissonLock. The watchdog renews
// every lease/3 (Redisson: internalLockLeaseTime / 3, 10 s of its default
// 30 s lockWatchdogTimeout) and gives up at the first failed renewal; a
// waiter sleeps until the unlock message or the holder's remaining TTL,
// whichever comes first, then tries again, until its wait runs out
// (tryLock(waitTime)). Two differences, both of the lab's connections rather
// than of the recipe: a command times out after 1 s and is not retried
// (Redisson: a 3 s response timeout, and retryAttempts for sending), so a
// renewal through a partition fails sooner; and the waiter learns of the
// message by a PING every 10 ms on its subscribed connection (below) instead
// of being pushed it, so it wakes up to 10 ms later than Redisson would.
//
// Steps: none.
#include "redisson_hash.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "fibers.h"
#include "redis_lock_util.h"
#include "redisson_lock_text.h"
#include "redisson_renew_text.h"
#include "redisson_unlock_text.h"

namespace locklab {
namespace {

// Redisson's default lockWatchdogTimeout: the lease a release re-applies when
// this client has no record of the lock (it never acquired it here).
constexpr milliseconds kDefaultLeaseTime{30'000};
// How often a waiter looks at its subscription, and the watchdog at its clock.
constexpr milliseconds kPollInterval{10};

std::string unlock_channel(const std::string& name) {
  return "redisson_lock__channel:{" + name + "}";
}

// The kind of a pub/sub push ("subscribe", "message", "pong"), or "".
std::string push_kind(const Reply& reply) {
  if (reply.type != Reply::Type::Array || reply.elements.empty()) return "";
  return reply.elements[0].str;
}

class RedissonHash final : public Lock {
 public:
  explicit RedissonHash(const LockContext& context)
      : context_(context), redis_(context.connect(0)) {}

  ~RedissonHash() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    work_.notify_all();
  }

  AcquireResult acquire(const std::string& name, milliseconds ttl, milliseconds wait) override {
    Clock& clock = *context_.clock;
    const int64_t deadline = clock.now_ns() + nanoseconds_of(wait);
    const std::string field = this_thread_field();
    std::unique_ptr<Connection> unlocks;  // subscribed to the unlock channel while we wait
    for (;;) {
      const int64_t started = clock.now_ns();
      Reply reply;
      try {
        reply = eval_script(*redis_, scripts::redisson_lock, {name},
                            {std::to_string(ttl.count()), field});
      } catch (const RedisError& e) {
        return unknown_or_refused(e);
      }
      if (reply.type != Reply::Type::Array || reply.elements.size() != 2)
        return {Outcome::Refused, std::nullopt,
                "unexpected reply to the lock script: " + reply.describe()};
      if (reply.elements[0].integer == 1) {
        start_renewing(name, field, ttl, started);
        Lease lease{
            .owner = field, .acquired_at_ns = started, .reentry = int(reply.elements[1].integer)};
        return {Outcome::Done, lease, ""};
      }
      const int64_t now = clock.now_ns();
      if (now >= deadline) return {Outcome::Refused, std::nullopt, "held by another client"};
      if (!unlocks) {
        unlocks = subscribe(name);
        // Try again at once: an unlock published before we subscribed is missed.
        if (unlocks) continue;
      }
      int64_t budget = deadline - now;
      const long long holder_ttl = reply.elements[1].integer;  // -1: the key has no expiry
      if (holder_ttl >= 0) budget = std::min(budget, nanoseconds_of(milliseconds(holder_ttl)));
      wait_for_unlock(unlocks, budget);
    }
  }

  // Done for one level; the watchdog stops at the last one.
  ChangeResult release(const std::string& name, const Lease& lease) override {
    milliseconds lease_time = kDefaultLeaseTime;
    {
      std::lock_guard lock(mu_);
      auto it = holdings_.find(name);
      if (it != holdings_.end()) {
        lease_time = it->second.lease_time;
        it->second.generation = ++generations_;  // a renewal racing this release is ignored
      }
    }
    Reply reply;
    try {
      reply = eval_script(*redis_, scripts::redisson_unlock, {name, unlock_channel(name)},
                          {"0", std::to_string(lease_time.count()), lease.owner});
    } catch (const RedisError& e) {
      return change_unknown_or_refused(e);
    }
    if (reply.is_error()) return {Outcome::Refused, reply.str};
    if (reply.type == Reply::Type::Integer && reply.integer > 0)
      return {.outcome = Outcome::Done, .remaining = int(reply.integer)};
    forget(name);
    if (reply.is_nil()) return {Outcome::Refused, "not-owner"};
    if (reply.type != Reply::Type::Integer)
      return {Outcome::Unknown, "unexpected reply to the unlock script: " + reply.describe()};
    return {.outcome = Outcome::Done, .remaining = 0};
  }

  // Renews the lease to `ttl` now; the watchdog uses `ttl` from then on.
  ChangeResult extend(const std::string& name, Lease& lease, milliseconds ttl) override {
    const int64_t now = context_.clock->now_ns();
    ChangeResult result = run_owner_script(*redis_, scripts::redisson_renew, {name},
                                           {std::to_string(ttl.count()), lease.owner});
    if (result.outcome == Outcome::Done) {
      std::lock_guard lock(mu_);
      auto it = holdings_.find(name);
      if (it != holdings_.end()) {
        it->second.lease_time = ttl;
        it->second.next_renewal_ns = now + nanoseconds_of(ttl) / 3;
      }
    }
    return result;
  }

  bool reentrant() const override { return true; }

  bool reports_renewals() const override { return true; }

  bool renewal_failed(const std::string& name) override {
    std::lock_guard lock(mu_);
    auto it = holdings_.find(name);
    return it != holdings_.end() && it->second.renewal_failed;
  }

 private:
  // A lock this client holds, as the watchdog sees it.
  struct Holding {
    std::string field;
    milliseconds lease_time{0};
    int64_t next_renewal_ns = 0;  // client clock
    bool renewing = true;         // false once a renewal failed
    bool renewal_failed = false;
    uint64_t generation = 0;  // changed by every acquire and release
  };

  // One renewal the watchdog is about to send.
  struct Renewal {
    std::string name;
    std::string field;
    milliseconds lease_time;
    int64_t due_ns;
    uint64_t generation;
  };

  std::string this_thread_field() {
    std::lock_guard lock(mu_);
    auto [it, added] = thread_numbers_.try_emplace(current_task_id(), thread_numbers_.size() + 1);
    return context_.client_id + ":" + std::to_string(it->second);
  }

  void start_renewing(const std::string& name, const std::string& field, milliseconds lease_time,
                      int64_t acquired_ns) {
    {
      std::lock_guard lock(mu_);
      holdings_[name] = Holding{.field = field,
                                .lease_time = lease_time,
                                .next_renewal_ns = acquired_ns + nanoseconds_of(lease_time) / 3,
                                .generation = ++generations_};
    }
    work_.notify_one();
    // Started by the first acquire, as Redisson schedules its renewal task:
    // so it runs beside the client's fiber (or thread), not the creator's.
    if (!watchdog_) watchdog_.emplace([this] { watch(); });
  }

  void forget(const std::string& name) {
    std::lock_guard lock(mu_);
    holdings_.erase(name);
  }

  // A connection subscribed to `name`'s unlock channel, or nullptr when that
  // fails (the waiter then sleeps for the holder's TTL instead).
  std::unique_ptr<Connection> subscribe(const std::string& name) {
    std::unique_ptr<Connection> connection = context_.connect(0);
    try {
      if (push_kind(connection->command({"SUBSCRIBE", unlock_channel(name)})) == "subscribe")
        return connection;
    } catch (const RedisError&) {
    }
    return nullptr;
  }

  // Waits until an unlock message arrives or `budget_ns` passed (client
  // clock). hiredis' blocking reads have no per-call timeout, so rather than
  // block in a read we PING every kPollInterval: a subscribed connection
  // answers PING after any message already queued, so none is missed. A
  // message is not the reply to a command, so after one the connection's
  // replies no longer pair with its commands: we drop it, and the next wait
  // subscribes again.
  void wait_for_unlock(std::unique_ptr<Connection>& unlocks, int64_t budget_ns) {
    Clock& clock = *context_.clock;
    if (!unlocks) {
      clock.sleep_for(std::chrono::nanoseconds(budget_ns));
      return;
    }
    const int64_t end = clock.now_ns() + budget_ns;
    try {
      for (;;) {
        unlocks->send({"PING"});
        // Anything but the pong (an unlock message, or something unexpected) ends the wait.
        if (push_kind(unlocks->receive()) != "pong") break;
        const int64_t left = end - clock.now_ns();
        if (left <= 0) return;
        clock.sleep_for(
            std::min(std::chrono::nanoseconds(left), std::chrono::nanoseconds(kPollInterval)));
      }
    } catch (const RedisError&) {
    }
    unlocks.reset();
  }

  // The watchdog: renews every held lock every lease/3 until it is released
  // or a renewal fails.
  void watch() {
    std::unique_ptr<Connection> redis = context_.connect(0);
    Clock& clock = *context_.clock;
    for (;;) {
      std::optional<Renewal> next = next_renewal();
      if (!next) return;
      const int64_t now = clock.now_ns();
      if (now < next->due_ns) {
        clock.sleep_for(std::min(std::chrono::nanoseconds(next->due_ns - now),
                                 std::chrono::nanoseconds(kPollInterval)));
        continue;
      }
      Outcome outcome = Outcome::Refused;
      try {
        Reply reply = eval_script(*redis, scripts::redisson_renew, {next->name},
                                  {std::to_string(next->lease_time.count()), next->field});
        if (reply.type == Reply::Type::Integer && reply.integer == 1) outcome = Outcome::Done;
      } catch (const RedisError&) {
        // A timed-out renewal counts as failed, as in Redisson; the history
        // says its outcome is unknown.
        outcome = Outcome::Unknown;
      }
      context_.renewed(next->name, next->lease_time, now, outcome);
      record_renewal(*next, outcome == Outcome::Done, now);
    }
  }

  // The earliest renewal due; blocks while there is nothing to renew.
  // nullopt when the watchdog is asked to stop.
  std::optional<Renewal> next_renewal() {
    std::unique_lock lock(mu_);
    auto renewing = [&] {
      return std::any_of(holdings_.begin(), holdings_.end(),
                         [](const auto& entry) { return entry.second.renewing; });
    };
    work_.wait(lock, [&] { return stopping_ || renewing(); });
    if (stopping_) return std::nullopt;
    std::optional<Renewal> earliest;
    for (const auto& [name, holding] : holdings_) {
      if (!holding.renewing) continue;
      if (!earliest || holding.next_renewal_ns < earliest->due_ns)
        earliest = Renewal{name, holding.field, holding.lease_time, holding.next_renewal_ns,
                           holding.generation};
    }
    return earliest;
  }

  void record_renewal(const Renewal& renewal, bool renewed, int64_t sent_ns) {
    std::lock_guard lock(mu_);
    auto it = holdings_.find(renewal.name);
    if (it == holdings_.end() || it->second.generation != renewal.generation) return;
    if (renewed) {
      it->second.next_renewal_ns = sent_ns + nanoseconds_of(renewal.lease_time) / 3;
    } else {
      it->second.renewing = false;
      it->second.renewal_failed = true;
    }
  }

  LockContext context_;
  std::unique_ptr<Connection> redis_;  // the client thread's connection
  // Guards everything below it; never held across a wait but work_'s,
  // which releases it (a fiber must not hold a thread's mutex while it waits).
  std::mutex mu_;
  FiberCondition work_;  // a lock to renew was added, or stop
  bool stopping_ = false;
  std::map<std::string, Holding> holdings_;
  uint64_t generations_ = 0;
  std::map<std::uintptr_t, size_t> thread_numbers_;  // by current_task_id()
  // Last: joined before the members it uses go away.
  std::optional<BackgroundTask> watchdog_;
};

}  // namespace

std::unique_ptr<Lock> make_redisson_hash(const LockContext& context) {
  return std::make_unique<RedissonHash>(context);
}

}  // namespace locklab
